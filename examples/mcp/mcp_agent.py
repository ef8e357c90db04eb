"""An example agent whose tools are an MCP server's, for the highbar and Yao examples over MCP tools.

It speaks highbar's agent protocol (``POST /chat`` ``{"message": ...}`` -> ``{"response": ...}``,
``GET /health``) and has no tracing SDK at all: the plugin sees its tool calls through the recording
MCP proxy. At start it opens one MCP session (the official SDK's client) with
``examples/mcp/mcp_server.py`` over stdio, putting ``SEMANTICTEST_MCP_PROXY`` (set by the plugin for
the agents it starts) before the server's command. Its "model" is a few rules, so the examples run
offline: "add 2 and 40" calls ``add``, "weather in Paris" calls ``forecast``.

Each tools/call carries the test id the plugin sent (``X-Highbar-Test``) as ``_meta.test``, which the
proxy puts into the trace record's context: tests running at once keep their own calls apart.

    python examples/mcp/mcp_agent.py --port 8793 [--mode wrong] [--untagged] [--protocol handshake]

``--mode wrong`` sends the city in lower case (a wrong argument, for the tests).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shlex
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

SERVER = Path(__file__).with_name("mcp_server.py")


class Agent:
    def __init__(self, mode: str, tagged: bool, protocol: str, server_python: str, tag: str = "") -> None:
        self.mode, self.tagged = mode, tagged
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        prefix = shlex.split(os.environ.get("SEMANTICTEST_MCP_PROXY", ""))
        command = [*prefix, server_python, str(SERVER), *(["--tag", tag] if tag else [])]
        params = StdioServerParameters(command=command[0], args=command[1:])
        self.client = Client(params, mode="legacy" if protocol == "handshake" else "auto", cache=None)
        self.run(self.client.__aenter__())

    def run(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(60)

    def close(self) -> None:
        self.run(self.client.__aexit__(None, None, None))

    def answer(self, message: str, test_id: str | None) -> str:
        meta = {"test": test_id} if test_id and self.tagged else None
        numbers = re.findall(r"-?\d+", message)
        if re.search(r"\badd\b|\bplus\b", message, re.I) and len(numbers) >= 2:
            result = self.run(
                self.client.call_tool("add", {"a": int(numbers[0]), "b": int(numbers[1])}, meta=meta)
            )
            return f"The sum is {result.structured_content['result']}."
        city = re.search(r"(?:weather|forecast)\s+(?:in|for)\s+([A-Z][\w-]*)", message, re.I)
        if city:
            name = city.group(1).lower() if self.mode == "wrong" else city.group(1)
            result = self.run(self.client.call_tool("forecast", {"city": name}, meta=meta))
            data = result.structured_content or {}
            return f"It is {data.get('sky')} in {data.get('city')}, up to {data.get('high_c')} C."
        return "I can add numbers and tell the weather."


def serve(agent: Agent, port: int) -> None:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            self._send(200, {"status": "ok"} if self.path == "/health" else {"error": "not found"})

        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            reply = agent.answer(str(body.get("message", "")), self.headers.get("X-Highbar-Test"))
            self._send(200, {"response": reply})

        def _send(self, status: int, data: dict[str, Any]) -> None:
            raw = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    try:
        server.serve_forever()
    finally:
        agent.close()


def main() -> None:
    parser = argparse.ArgumentParser(description="An example agent whose tools are an MCP server's.")
    parser.add_argument("--port", type=int, default=8793)
    parser.add_argument("--mode", choices=("ok", "wrong"), default="ok")
    parser.add_argument("--untagged", action="store_true", help="do not pass the test id in _meta")
    parser.add_argument("--protocol", choices=("auto", "handshake"), default="auto")
    parser.add_argument("--server-python", default=sys.executable, help="the Python that runs the MCP server")
    parser.add_argument(
        "--tag", default="", help="passed to the server: lets a test find the processes in /proc"
    )
    args = parser.parse_args()
    agent = Agent(args.mode, not args.untagged, args.protocol, args.server_python, args.tag)
    import signal

    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    with contextlib.suppress(KeyboardInterrupt):
        serve(agent, args.port)


if __name__ == "__main__":
    main()
