"""A pydantic-ai weather agent instrumented with OpenTelemetry, offline: its model is a local function
(pydantic-ai's FunctionModel), its tool calls are visible only in the spans it exports (OTLP over
HTTP, configured by the standard ``OTEL_EXPORTER_OTLP_*`` variables), never in its reply.

    python otel_agent.py [PORT]        # prints "listening on http://127.0.0.1:PORT", then serves

``POST /chat`` with ``{"message": "..."}`` answers ``{"reply": "..."}``; ``POST /chat/completions``
(an OpenAI chat completion request: its last user message) answers a chat completion without tool
calls (they ran inside the agent); ``GET /health`` answers 200. The request's ``traceparent`` header
is continued, so a test's spans carry the test's trace id.

Switches (environment): ``WEATHER_AGENT_CITY`` makes the agent ask the tool for that city whatever
the user said (a fault); ``WEATHER_AGENT_NO_CONTEXT=1`` ignores incoming trace context (each request
starts a trace of its own, as many agents do); ``WEATHER_AGENT_BARRIER=N`` holds each request until N
are in flight at once (up to 10 s), so tests can make requests overlap for certain.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry import context, propagate, trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

provider = TracerProvider(resource=Resource.create({"service.name": "weather-agent"}))
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)

FORECAST = {"paris": "sunny, 21 °C", "oslo": "snow, -3 °C", "tokyo": "rain, 14 °C"}


def _user_text(messages: list[ModelMessage]) -> str:
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if part.part_kind == "user-prompt" and isinstance(part.content, str):
                    return part.content
    return ""


def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Ask the weather tool once for the city named in the question, then answer with its result."""
    last = messages[-1]
    returned = [p for p in getattr(last, "parts", []) if isinstance(p, ToolReturnPart)]
    if returned:
        return ModelResponse(parts=[TextPart(f"The weather: {returned[0].content}.")])
    found = re.search(r"\b(?:in|for)\s+([A-Z][a-z]+)", _user_text(messages))
    if found is None:
        return ModelResponse(parts=[TextPart("Which city?")])
    city = os.environ.get("WEATHER_AGENT_CITY") or found.group(1)
    return ModelResponse(parts=[ToolCallPart("get_weather", {"city": city, "unit": "celsius"})])


Agent.instrument_all()  # every agent run, model request and tool call becomes a span
agent = Agent(FunctionModel(model), name="weather")


@agent.tool_plain
def get_weather(city: str, unit: str = "celsius") -> str:
    """The weather in a city."""
    return FORECAST.get(city.lower(), "unknown")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002  (quiet)
        pass

    def _send(self, status: int, data: object) -> None:
        body = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._send(200 if self.path == "/health" else 404, {"ok": self.path == "/health"})

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
            completions = self.path.rstrip("/").endswith("/chat/completions")
            message = _last_user(body) if completions else str(body.get("message", ""))
        except (ValueError, AttributeError):
            return self._send(400, {"error": "the body must be JSON with a 'message' (or 'messages')"})
        if BARRIER is not None:
            with contextlib.suppress(threading.BrokenBarrierError):  # (the others never came: go on)
                BARRIER.wait(timeout=10)
        carrier = {k.lower(): v for k, v in self.headers.items()}  # (propagators look names up in lower case)
        incoming = (
            context.Context() if os.environ.get("WEATHER_AGENT_NO_CONTEXT") else propagate.extract(carrier)
        )
        token = context.attach(incoming)  # the test's trace continues here (unless switched off)
        try:
            result = asyncio.run(agent.run(message))
        finally:
            context.detach(token)
        if not completions:
            return self._send(200, {"reply": result.output})
        self._send(
            200,
            {
                "id": "chatcmpl-weather",
                "object": "chat.completion",
                "model": str(body.get("model") or "weather"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": result.output},
                        "finish_reason": "stop",
                    }
                ],
            },
        )


def _last_user(body: dict[str, object]) -> str:
    messages = body.get("messages")
    users = (
        [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
        if isinstance(messages, list)
        else []
    )
    if not users:
        raise ValueError("no user message")
    content = users[-1].get("content")
    return content if isinstance(content, str) else json.dumps(content)


_parties = int(os.environ.get("WEATHER_AGENT_BARRIER") or 0)
BARRIER = threading.Barrier(_parties) if _parties > 1 else None


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # (the default 5 resets connections when many tests ask at once)


def main() -> None:
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    server = Server(("127.0.0.1", port), Handler)
    print(f"listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    finally:
        provider.shutdown()


if __name__ == "__main__":
    main()
