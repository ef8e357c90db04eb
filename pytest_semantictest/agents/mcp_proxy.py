"""The recording MCP proxy for stdio: an agent starts it in place of its MCP server, it starts the server.

    <python> .../mcp_proxy.py --traces <trace file> -- python my_server.py --flag

An agent the plugin starts finds this prefix in ``SEMANTICTEST_MCP_PROXY`` (a command line, split like
a shell's) and puts it before its stdio MCP server's command. The proxy relays every line between the
agent and the server byte for byte (``_meta``, protocol versions, ids: untouched, whichever protocol
version they speak) and writes to the trace file, in the highbar trace contract v1 the plugin reads:

- a ``hello`` when it starts, unless the file has one (so the agent counts as observed; one hello, since
  a later one would forget the tools declared since the first);
- a ``tools`` declaration of the names a ``tools/list`` answer gave (not a call);
- a ``tool`` record for each ``tools/call`` answered: ``fn``, ``args``, ``result`` (the
  ``structuredContent``, else the text), ``error`` (a JSON-RPC error or an ``isError`` result),
  ``started_at``/``ended_at``, and ``context``: the plain keys of the request's ``params._meta``, so an
  agent that forwards the test id it was sent (``X-Highbar-Test``) as ``_meta.test`` tags its calls.
  Other requests (``tools/list`` a client sends of its own, ``ping``, ...) are not calls and are not
  recorded as such.

Its configuration is on its command line, not in the environment: MCP clients give a stdio server only
a handful of environment variables. It runs as a script by path (standard library only), so it needs
nothing importable in the environment the agent's SDK leaves it. The server gets the proxy's
environment as it is. When the agent closes the proxy's stdin, the server's stdin is closed; the proxy
ends with the server's exit status; SIGTERM is passed on to the server.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from typing import IO, Any

ENV_VAR = "SEMANTICTEST_MCP_PROXY"


def proxy_prefix(traces: str) -> str:
    """The command line an agent puts before its stdio MCP server's command (``SEMANTICTEST_MCP_PROXY``)."""
    import shlex

    return shlex.join([sys.executable, os.path.abspath(__file__), "--traces", traces, "--"])


class Recorder:
    """Pairs each ``tools/call`` request with its answer and appends the records to the trace file."""

    def __init__(self, traces: str) -> None:
        self.traces = traces
        self.pending: dict[str, tuple[str, Any, dict[str, Any], float]] = {}
        self.lists: set[str] = set()
        self.lock = threading.Lock()

    def write(self, record: dict[str, Any]) -> None:
        line = (json.dumps({"v": 1, **record}, ensure_ascii=False, default=str) + "\n").encode()
        fd = os.open(self.traces, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)  # one write: lines of proxies writing at once never interleave
        finally:
            os.close(fd)

    def sent(self, line: bytes) -> None:
        for message in _messages(line):
            key = _key(message.get("id"))
            if key is None or not isinstance(message.get("method"), str):
                continue
            params = _dict(message.get("params"))
            with self.lock:
                if message["method"] == "tools/call":
                    meta = _dict(params.get("_meta"))
                    context = {k: v for k, v in meta.items() if "/" not in k}
                    self.pending[key] = (
                        str(params.get("name")),
                        params.get("arguments") or {},
                        context,
                        time.time(),
                    )
                elif message["method"] == "tools/list":
                    self.lists.add(key)

    def received(self, line: bytes) -> None:
        for message in _messages(line):
            key = _key(message.get("id"))
            if key is None or "method" in message:
                continue
            with self.lock:
                call = self.pending.pop(key, None)
                listed = key in self.lists
                self.lists.discard(key)
            if listed and isinstance(message.get("result"), dict):
                self.write({"type": "tools", "names": _tool_names(message["result"].get("tools"))})
            if call is not None:
                self.write(_tool_record(call, message))


def _tool_names(tools: Any) -> list[Any]:
    """The names a ``tools/list`` result lists."""
    return [t.get("name") for t in tools or [] if isinstance(t, dict) and isinstance(t.get("name"), str)]


def _tool_record(call: tuple[str, Any, dict[str, Any], float], answer: dict[str, Any]) -> dict[str, Any]:
    name, args, context, started = call
    record: dict[str, Any] = {
        "type": "tool",
        "fn": name,
        "args": args if isinstance(args, dict) else {"arguments": args},
        "started_at": started,
        "ended_at": time.time(),
        "context": context,
    }
    error = answer.get("error")
    result = _dict(answer.get("result"))
    texts = [
        c.get("text") for c in result.get("content") or [] if isinstance(c, dict) and c.get("type") == "text"
    ]
    text = "\n".join(t for t in texts if isinstance(t, str))
    if isinstance(error, dict):
        record["error"] = f"JSON-RPC error {error.get('code')}: {error.get('message')}"
    elif result.get("isError") is True:
        record["error"] = f"tool error (isError): {text}"
    else:
        record["result"] = result.get("structuredContent", text)
    return record


def _messages(line: bytes) -> list[dict[str, Any]]:
    """The JSON-RPC messages of one line (a batch is a list); nothing for a line that is not JSON."""
    try:
        data = json.loads(line)
    except ValueError:
        return []
    items = data if isinstance(data, list) else [data]
    return [m for m in items if isinstance(m, dict)]


def _has_hello(traces: str) -> bool:
    try:
        with open(traces, "rb") as f:
            for line in f:
                if b'"hello"' in line and _dict(next(iter(_messages(line)), None)).get("type") == "hello":
                    return True
    except OSError:
        pass
    return False


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _key(value: object) -> str | None:
    return None if value is None or isinstance(value, bool) else json.dumps(value)


def _pump(source: IO[bytes], sink: IO[bytes], observe: Any, on_end: Any) -> None:
    try:
        for line in iter(source.readline, b""):
            try:  # before it is passed on: a request's answer can come back before this thread runs again
                observe(line)
            except Exception as exc:  # noqa: BLE001  # recording must never break the relay
                sys.stderr.write(f"semantictest mcp proxy: cannot record a message: {exc}\n")
            try:
                sink.write(line)
                sink.flush()
            except (BrokenPipeError, ValueError, OSError):
                break
    finally:
        on_end()


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 4 or args[0] != "--traces" or args[2] != "--":
        sys.stderr.write("usage: mcp_proxy.py --traces <trace file> -- <server command> [args...]\n")
        return 2
    recorder = Recorder(args[1])
    try:
        server = subprocess.Popen(args[3:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    except OSError as exc:
        sys.stderr.write(f"semantictest mcp proxy: cannot start the MCP server {args[3]!r}: {exc}\n")
        return 127
    if not _has_hello(recorder.traces):  # a second hello would forget the tools other servers declared
        recorder.write(
            {"type": "hello", "sdk": "semantictest-mcp-proxy", "pid": os.getpid(), "ts": time.time()}
        )
    signal.signal(signal.SIGTERM, lambda *_: server.terminate())
    assert server.stdin is not None and server.stdout is not None

    def close_server_stdin() -> None:
        with contextlib.suppress(OSError):
            server.stdin.close()  # type: ignore[union-attr]

    upstream = threading.Thread(
        target=_pump, args=(sys.stdin.buffer, server.stdin, recorder.sent, close_server_stdin), daemon=True
    )
    upstream.start()
    _pump(server.stdout, sys.stdout.buffer, recorder.received, lambda: None)
    return server.wait()


if __name__ == "__main__":
    sys.exit(main())
