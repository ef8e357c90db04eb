"""A scripted expense assistant speaking OpenAI chat completions (stdlib only), for the Yao tests.

In process: ``with ScriptedAgent() as agent: agent.url`` (``.../v1/chat/completions``); every
request (path, body, headers) is recorded. As a process: ``python scripted_agent.py --port N``.

It speaks the highbar protocol too: ``POST /chat...`` (``agent.highbar_url``) with ``{"message"}``
answers ``{"response", "tool_calls", "awaiting_input"}``, keeping each conversation by its
``X-Highbar-Test`` id; "break" there is an HTTP 500. ``POST /session/setup`` ``{test, name}`` and
``/session/teardown`` ``{test, session_id}`` are for session hooks (see ``SESSION_HOOKS``): they are
counted in ``agent.sessions``.

It answers the latest user message, looking at the history where it matters:

- "expense" -> asks the type of expense (awaiting input)
- "travel" with "$<amount>" -> calls ``create_expense`` (result ``{id, status: draft}``), asks to submit
- "yes"/"confirm" after a draft -> calls ``submit_expense`` (result ``{status: submitted}``),
  "Expense submitted. Reference: EXP-2025-001", ``awaiting_input: false``
- "submitted early" -> "Your expense is submitted." with no tool call (an out-of-order claim)
- "json please" -> a JSON reply; "what did I say first" -> quotes the first user message
- "slow <seconds>" -> sleeps first; "bye" -> ends (``awaiting_input: false``)
- "my account" -> "Your account is <the request body's ``account``>"
- image attachments -> "I see an image: <name>"; anything else -> "Hi! How can I help?"
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REFERENCE = "EXP-2025-001"


def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return str(content or "")


def _call(name: str, args: dict[str, Any], result: Any) -> dict[str, Any]:
    return {
        "id": f"call_{name}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args), "result": result},
    }


def answer(body: dict[str, Any]) -> tuple[str, list[dict[str, Any]], bool | None, float]:
    """(text, tool calls, awaiting_input, delay) for a chat request."""
    messages = body.get("messages") or []
    users = [m for m in messages if m.get("role") == "user"]
    last = users[-1] if users else {}
    text = _text(last.get("content")).lower()
    earlier = " ".join(_text(m.get("content")) for m in messages[:-1] if m.get("role") == "assistant").lower()
    slow = re.search(r"slow (\d+(?:\.\d+)?)", text)
    delay = float(slow.group(1)) if slow else 0.0
    images = (
        [p for p in last.get("content") or [] if isinstance(p, dict) and p.get("type") == "image_url"]
        if isinstance(last.get("content"), list)
        else []
    )
    if images:
        url = images[0]["image_url"]["url"]
        return f"I see an image ({url.split(';')[0]}).", [], True, delay
    if "my account" in text:
        return f"Your account is {body.get('account')}.", [], True, delay
    if "what did i say first" in text:
        return f"You first said: {_text(users[0].get('content'))}", [], True, delay
    if "json please" in text:
        return json.dumps({"status": "ok", "count": 3, "items": ["a", "b"], "ratio": 0.5}), [], True, delay
    if "submitted early" in text:
        return "Your expense is submitted.", [], True, delay
    amount = re.search(r"\$\s?([\d,]+)", text)
    if "travel" in text and amount:
        value = int(amount.group(1).replace(",", ""))
        call = _call(
            "create_expense", {"type": "travel", "amount": value}, {"id": "EXP-1", "status": "draft"}
        )
        return f"I created a draft travel expense of ${value}. Shall I submit it?", [call], True, delay
    if re.search(r"\b(yes|confirm)\b", text) and "draft" in earlier:
        call = _call("submit_expense", {"id": "EXP-1"}, {"status": "submitted", "reference": REFERENCE})
        return f"Expense submitted. Reference: {REFERENCE}", [call], False, delay
    if "expense" in text:
        return "What type of expense would you like to submit?", [], True, delay
    if "bye" in text:
        return "Goodbye!", [], False, delay
    return "Hi! How can I help?", [], True, delay


class _Server(ThreadingHTTPServer):
    daemon_threads = True


class ScriptedAgent:
    def __init__(self, port: int = 0) -> None:
        self.port = port
        self.requests: list[dict[str, Any]] = []
        self.sessions: list[dict[str, Any]] = []  # {"hook": setup|teardown, "test", "name", "session_id"}
        self.conversations: dict[str, list[dict[str, Any]]] = {}  # highbar: messages by X-Highbar-Test
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    def start(self) -> ScriptedAgent:
        agent = self

        class Handler(BaseHTTPRequestHandler):
            disable_nagle_algorithm = True

            def do_GET(self) -> None:
                self._send(200, b'{"ok": true}')

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                headers = {k.lower(): v for k, v in self.headers.items()}
                with agent._lock:
                    agent.requests.append({"path": self.path, "body": body, "headers": headers})
                    if self.path.startswith("/session/"):
                        self._send(200, json.dumps(agent._session(self.path, body)).encode())
                        return
                if self.path.startswith("/chat"):
                    self._highbar(body, headers.get("x-highbar-test", ""))
                    return
                text, calls, awaiting, delay = answer(body)
                if delay:
                    time.sleep(delay)
                message: dict[str, Any] = {"role": "assistant", "content": text}
                if calls:
                    message["tool_calls"] = calls
                reply = {
                    "id": "chatcmpl-1",
                    "object": "chat.completion",
                    "model": body.get("model", "agent"),
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                }
                if awaiting is not None:
                    reply["awaiting_input"] = awaiting
                self._send(200, json.dumps(reply).encode())

            def _highbar(self, body: dict[str, Any], test: str) -> None:
                message = str(body.get("message", ""))
                if "break" in message.lower():
                    self._send(500, b'{"error": "the agent broke"}')
                    return
                with agent._lock:
                    history = agent.conversations.setdefault(test, [])
                    history.append({"role": "user", "content": message})
                    text, calls, awaiting, delay = answer({**body, "messages": list(history)})
                    history.append({"role": "assistant", "content": text})
                if delay:
                    time.sleep(delay)
                plain = [
                    {
                        "name": c["function"]["name"],
                        "arguments": json.loads(c["function"]["arguments"]),
                        "result": c["function"]["result"],
                    }
                    for c in calls
                ]
                self._send(
                    200,
                    json.dumps({"response": text, "tool_calls": plain, "awaiting_input": awaiting}).encode(),
                )

            def _send(self, status: int, payload: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self._server = _Server(("127.0.0.1", self.port), Handler)
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def _session(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        hook = path.rsplit("/", 1)[-1]
        session_id = body.get("session_id") or f"s{sum(1 for s in self.sessions if s['hook'] == 'setup') + 1}"
        self.sessions.append(
            {"hook": hook, "test": body.get("test"), "name": body.get("name"), "session_id": session_id}
        )
        return {"session_id": session_id}

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> ScriptedAgent:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1/chat/completions"

    @property
    def highbar_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/chat"

    def user_messages(self) -> list[str]:
        """The latest user message of every request, in order."""
        out = []
        for request in self.requests:
            users = [m for m in request["body"].get("messages") or [] if m.get("role") == "user"]
            out.append(_text(users[-1].get("content")) if users else "")
        return out


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    port = parser.parse_args().port
    server = ScriptedAgent(port).start()
    print(f"scripted agent on {port}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()
