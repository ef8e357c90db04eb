"""An example MCP server for the MCP examples, written with the official SDK's own server class.

It runs on the SDK's current major version (2.x, ``MCPServer``) and on 1.x (``FastMCP``), which
servers in the wild still run, from the same code:

    python examples/mcp/mcp_server.py                          # stdio (what a client starts)
    python examples/mcp/mcp_server.py --http --port 8790       # streamable HTTP at /mcp

Tools: ``add`` (structured result), ``echo``, ``forecast`` (an object result), ``divide`` (raises
on a zero divisor: a result with ``isError``), ``slow`` (sleeps its ``seconds``, at most 2).
A resource ``notes://readme`` and a prompt ``greet``.

Faults for the tests, chosen with ``--mode``: ``exit`` (the process exits on any tool call),
``hang`` (any tool call never returns), ``wrong`` (``add`` answers one too many).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

try:  # the SDK's current major version
    from mcp.server.mcpserver import MCPServer as Server
except ImportError:  # 1.x
    from mcp.server.fastmcp import FastMCP as Server  # type: ignore[no-redef]


def build(mode: str = "ok", host: str = "127.0.0.1", port: int = 8790) -> Server:
    kwargs = {"host": host, "port": port} if _v1() else {}  # 1.x: set here; 2.x: given to run()
    server = Server("example-mcp", instructions="Arithmetic, echo and a weather forecast.", **kwargs)

    def fault() -> None:
        if mode == "exit":
            sys.stderr.write("example-mcp: exiting on a tool call (--mode exit)\n")
            sys.stderr.flush()
            os._exit(3)

    @server.tool(description="Add two integers.")
    async def add(a: int, b: int) -> int:
        fault()
        if mode == "hang":
            await asyncio.Event().wait()
        return a + b + (1 if mode == "wrong" else 0)

    @server.tool(description="Say the text back.")
    def echo(text: str) -> str:
        fault()
        return f"Echo: {text}"

    @server.tool(description="The forecast for a city.")
    def forecast(city: str, days: int = 1) -> dict[str, object]:
        fault()
        return {"city": city, "days": days, "sky": "sunny", "high_c": 21}

    @server.tool(description="Divide a by b.")
    def divide(a: float, b: float) -> float:
        fault()
        if b == 0:
            raise ValueError("division by zero")
        return a / b

    @server.tool(description="Sleep for some seconds (at most 2), then answer.")
    async def slow(seconds: float) -> str:
        await asyncio.sleep(min(max(seconds, 0.0), 2.0))
        return "done"

    @server.resource(
        "notes://readme", name="readme", description="What this server is.", mime_type="text/plain"
    )
    def readme() -> str:
        return "An example MCP server for pytest-semantictest."

    @server.prompt(description="A greeting for someone.")
    def greet(name: str) -> str:
        return f"Please greet {name} warmly."

    return server


def _v1() -> bool:
    return Server.__name__ == "FastMCP"


def _exit_with_parent() -> None:
    """A server another process serves over HTTP for a while must not outlive it (killed, crashed)."""
    import threading
    import time

    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http", action="store_true", help="serve streamable HTTP at /mcp instead of stdio")
    parser.add_argument("--port", type=int, default=8790)
    parser.add_argument("--mode", choices=("ok", "exit", "hang", "wrong"), default="ok")
    parser.add_argument("--tag", default="", help="ignored: lets a test find this process in /proc")
    parser.add_argument(
        "--exit-with-parent", action="store_true", help="exit when the process that started this one ends"
    )
    args = parser.parse_args(argv)
    server = build(args.mode, port=args.port)
    if args.exit_with_parent:
        _exit_with_parent()
    if not args.http:
        server.run()
    elif _v1():
        server.run("streamable-http")
    else:
        server.run("streamable-http", host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
