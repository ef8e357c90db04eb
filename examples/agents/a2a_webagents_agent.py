"""An example A2A agent in the WebAgents SDK's dialect (stdlib only): the agent card at
``GET /.well-known/agent.json``; ``POST /tasks`` answers with Server-Sent Events ``task.started``,
``task.message`` deltas and ``task.completed`` (or ``task.failed``); ``GET /tasks/{id}``,
``DELETE /tasks/{id}``, ``GET /tasks/{id}/artifacts``.

Behaviour: the last user text ``X`` is answered ``Echo: X`` in word deltas; ``fail`` fails the task;
a text starting with ``wait`` is answered after half a second (``max_in_flight`` counts the tasks that
ran at once, for the look-ahead's tests).
Broken copies for the tests (``mode``): ``wrong_text``, ``drop_final`` (the stream ends after the
deltas), ``hang`` (stays running).

Run: ``python examples/agents/a2a_webagents_agent.py --port 0`` (prints ``LISTENING http://127.0.0.1:<port>``).
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from request_log import Noted

MODES = ("ok", "wrong_text", "drop_final", "hang")
CARD = {
    "name": "echo-agent",
    "description": "Echoes what the user says (WebAgents A2A dialect example)",
    "url": "/",
    "version": "0.2.1",
    "protocolVersion": "0.2.1",
    "capabilities": {
        "streaming": True,
        "pushNotifications": False,
        "stateTransitionHistory": True,
        "artifacts": True,
    },
    "authentication": [{"type": "none", "description": "No authentication required"}],
    "defaultInputModes": ["text"],
    "defaultOutputModes": ["text", "file", "data"],
    "skills": [],
}


def _text_of(body: dict[str, Any]) -> str:
    messages = body.get("messages") or ([body["message"]] if isinstance(body.get("message"), dict) else [])
    users = [m for m in messages if isinstance(m, dict) and m.get("role", "user") == "user"]
    parts = users[-1].get("parts", []) if users else []
    return "".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))


class Handler(Noted, BaseHTTPRequestHandler):
    agent = "a2a-webagents"
    server: Server

    def log_message(self, *args: Any) -> None:
        pass

    def _json(self, status: int, data: Any) -> None:
        raw = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def do_GET(self) -> None:
        if self.path == "/.well-known/agent.json":
            return self._json(200, CARD)
        match = re.fullmatch(r"/tasks/([\w-]+)(/artifacts)?", self.path)
        task = self.server.tasks.get(match.group(1)) if match else None
        if task is None:
            return self._json(404, {"error": "Task not found"})
        if match and match.group(2):
            content = task.get("result", {}).get("content", "")
            return self._json(
                200,
                {
                    "task_id": task["id"],
                    "artifacts": [
                        {
                            "id": f"artifact_{task['id']}",
                            "type": "text",
                            "mimeType": "text/plain",
                            "data": content,
                        }
                    ],
                },
            )
        return self._json(200, task)

    def do_DELETE(self) -> None:
        match = re.fullmatch(r"/tasks/([\w-]+)", self.path)
        task = self.server.tasks.get(match.group(1)) if match else None
        if task is None:
            return self._json(404, {"error": "Task not found"})
        cancelled = task["status"] == "running"
        task["status"] = "cancelled" if cancelled else task["status"]
        return self._json(200, {"id": task["id"], "status": task["status"], "cancelled": cancelled})

    def do_POST(self) -> None:
        if self.path != "/tasks":
            return self._json(404, {"error": "not found"})
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        except ValueError:
            return self._json(400, {"error": "invalid JSON"})
        mode = self.server.mode
        task = {"id": str(uuid.uuid4()), "status": "running", "createdAt": time.time()}
        self.server.tasks[task["id"]] = task
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        self._event("task.started", {"id": task["id"], "status": "running", "createdAt": task["createdAt"]})
        text = _text_of(body)
        if text == "fail":
            task.update(status="failed", error="the agent was asked to fail")
            return self._event("task.failed", {"id": task["id"], "status": "failed", "error": task["error"]})
        if mode == "hang":
            time.sleep(30)
        if text.startswith("wait"):
            with self.server.lock:
                self.server.in_flight += 1
                self.server.max_in_flight = max(self.server.max_in_flight, self.server.in_flight)
            time.sleep(0.5)
            with self.server.lock:
                self.server.in_flight -= 1
        answer = f"Echo: {text[::-1] if mode == 'wrong_text' else text}"
        for word in re.findall(r"\S+\s*", answer):
            self._event("task.message", {"role": "agent", "parts": [{"type": "text", "text": word}]})
        if mode == "drop_final":
            return
        task.update(status="completed", result={"content": answer})
        self._event("task.completed", {"id": task["id"], "status": "completed", "completedAt": time.time()})

    def _event(self, name: str, data: dict[str, Any]) -> None:
        self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, mode: str) -> None:
        super().__init__(("127.0.0.1", port), Handler)
        self.mode = mode
        self.tasks: dict[str, dict[str, Any]] = {}
        self.lock = threading.Lock()
        self.in_flight = self.max_in_flight = 0

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up mid-stream (a test that timed out on purpose) is no error of ours."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def start_server(port: int = 0, mode: str = "ok") -> tuple[Server, str]:
    server = Server(port, mode)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


if __name__ == "__main__":
    from transport_main import serve_main  # the script's folder is on sys.path

    serve_main(__doc__.splitlines()[0], start_server, MODES)
