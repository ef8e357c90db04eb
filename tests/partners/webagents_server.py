"""The WebAgents SDK (``webagents``) served offline, as a test partner: run with the partner SDKs'
Python (``SEMANTICTEST_PARTNER_PYTHON``; the SDK cannot share our environment).

Every agent the published compliance corpus and our example files name is a real ``BaseAgent`` with
the SDK's own transports (completions, A2A, realtime) and its own OpenAI skill, pointed at a
streaming fake LLM on loopback (an OpenAI-compatible ``/v1/chat/completions``). The fake model is
deterministic: it calls ``get_weather`` or ``calculate`` when those tools are offered and the user asks
for weather or arithmetic, answers a tool result with a sentence holding it, and otherwise echoes
the last user message as ``Echo: <text>``; streamed in several chunks when asked to stream.

Prints ``LISTENING http://127.0.0.1:<port>`` when ready; the agents are at ``/<name>/...``. Stopped
by a signal (the test's fixture terminates it).
"""

from __future__ import annotations

import json
import re
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

AGENTS = (
    "echo-agent",
    "verbose-agent",
    "tool-agent",
    "router",
    "weather-agent",
    "calculator-agent",
    "report-agent",
    "protected-agent",
    "client-agent",
    "minimal-agent",
)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


def answer(body: dict[str, Any]) -> dict[str, Any]:
    """The fake model's message: a tool call or text. It honours ``tool_choice`` (``none``, ``required``,
    a named function), so a request whose choice is not followed shows the server dropped it."""
    messages = body.get("messages") or []
    tools = [t.get("function", {}).get("name") for t in body.get("tools") or [] if isinstance(t, dict)]
    choice = body.get("tool_choice")
    last = messages[-1] if messages else {}
    if last.get("role") == "tool":
        return {"role": "assistant", "content": f"The result is: {_text(last.get('content'))}"}
    user = _text(next((m.get("content") for m in reversed(messages) if m.get("role") == "user"), ""))
    if isinstance(choice, dict) and choice.get("function", {}).get("name") in tools:
        return _call(choice["function"]["name"], {})
    city = re.search(r"weather (?:in|for) ([A-Z][\w ]*?)(?:[?.!,]|$)", user)
    sums = re.search(r"(\d+)\s*([+*/-])\s*(\d+)", user)
    if choice != "none":
        if city and "get_weather" in tools:
            return _call("get_weather", {"location": city.group(1).strip()})
        if sums and "calculate" in tools:
            return _call("calculate", {"expression": sums.group(0)})
        if choice == "required" and tools:
            return _call(str(tools[0]), {})
    said = " ".join(_text(m.get("content")) for m in messages if m.get("role") == "user")
    name = re.search(r"[Mm]y name is (\w+)", said)
    if name and "my name" in user.lower():
        return {"role": "assistant", "content": f"Your name is {name.group(1)}."}
    if sums:
        return {"role": "assistant", "content": f"{sums.group(0)} = {_arithmetic(sums.group(0))}"}
    again = " (context kept)" if sum(m.get("role") == "user" for m in messages) > 1 else ""
    return {"role": "assistant", "content": f"Echo: {user}{again}"}


def _arithmetic(expression: str) -> str:
    match = re.fullmatch(r"(\d+)\s*([+*/-])\s*(\d+)", expression.strip())
    if match is None:
        raise ValueError(f"not an arithmetic expression: {expression!r}")
    a, op, b = match.groups()
    x, y = int(a), int(b)
    return str({"+": x + y, "-": x - y, "*": x * y, "/": x / y if y else "undefined"}[op])


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    call = {
        "id": f"call_{name}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


class FakeLLM(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        return None

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
        last = (body.get("messages") or [{}])[-1]
        if _text(last.get("content")).strip() == "fail":  # the model fails: the agent's run fails
            self.send_response(500)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"{}")
            return
        message = answer(body)
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        usage = {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}
        base = {"id": "chatcmpl-fake", "created": 0, "model": body.get("model") or "fake"}
        if not body.get("stream"):
            data = json.dumps(
                {
                    **base,
                    "object": "chat.completion",
                    "usage": usage,
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                }
            ).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        chunk = {**base, "object": "chat.completion.chunk"}
        deltas: list[dict[str, Any]] = []
        if message.get("tool_calls"):
            call = message["tool_calls"][0]
            deltas.append({"role": "assistant", "tool_calls": [{"index": 0, **call}]})
        else:
            words = re.findall(r"\S+\s*", message["content"]) or [""]
            deltas.extend(
                {"role": "assistant", "content": w} if i == 0 else {"content": w} for i, w in enumerate(words)
            )
        for delta in deltas:
            self._event({**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
        self._event({**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        self._event({**chunk, "choices": [], "usage": usage})
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

    def _event(self, payload: dict[str, Any]) -> None:
        self.wfile.write(f"data: {json.dumps(payload)}\n\n".encode())
        self.wfile.flush()


def main(keys_dir: str) -> None:
    llm = ThreadingHTTPServer(("127.0.0.1", 0), FakeLLM)
    threading.Thread(target=llm.serve_forever, daemon=True).start()
    llm_url = f"http://127.0.0.1:{llm.server_address[1]}/v1"

    import uvicorn
    from webagents.agents.core.base_agent import BaseAgent
    from webagents.agents.skills.core.llm.openai.skill import OpenAISkill
    from webagents.agents.skills.core.transport import (
        A2ATransportSkill,
        CompletionsTransportSkill,
        RealtimeTransportSkill,
    )
    from webagents.agents.tools.decorators import tool
    from webagents.server.core.app import create_server

    @tool
    def get_weather(location: str) -> str:
        """The weather at a location."""
        return f"Sunny, 22 C in {location}"

    @tool
    def calculate(expression: str) -> str:
        """Evaluate an arithmetic expression."""
        return _arithmetic(expression)

    def agent(name: str) -> Any:
        # the specialists run their tools themselves; tool-agent's tools are the client's (sent in each request)
        tools = {"weather-agent": [get_weather], "calculator-agent": [calculate]}
        return BaseAgent(
            name=name,
            instructions=f"You are {name}.",
            tools=tools.get(name, []),
            skills={
                "llm": OpenAISkill({"base_url": llm_url, "api_key": "fake-llm-key", "model": "gpt-4o-mini"}),
                "completions": CompletionsTransportSkill(),
                "a2a": A2ATransportSkill(),
                "realtime": RealtimeTransportSkill(),
            },
        )

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    agents = {name: agent(name) for name in AGENTS}
    server = create_server(
        agents=list(agents.values()),
        # the SDK mounts agents' WebSocket handlers (realtime) only on its dynamic-agent route
        dynamic_agents=agents.get,
        url_prefix="/agents",  # where the published corpus's own paths put agents: /agents/<name>/...
        public_url=url,
        keys_dir=keys_dir,
        quiet=True,
        heartbeat=False,
    )
    uv = uvicorn.Server(uvicorn.Config(server.app, log_level="warning", ws="websockets"))
    threading.Thread(target=lambda: _announce(uv, url), daemon=True).start()
    uv.run(sockets=[sock])


def _announce(uv: Any, url: str) -> None:
    import time

    while not uv.started:
        time.sleep(0.02)
    print(f"LISTENING {url}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
