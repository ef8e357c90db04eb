"""A small agent to test: OpenAI chat completions at /v1/chat/completions, and /health.

It answers the weather with a get_weather tool call, remembers a name you tell it (from the
conversation it is sent), and echoes anything else. Run: python agent.py --port 8770
"""

import argparse
import json
import re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def reply(messages):
    """The assistant message for a conversation (the whole history, as chat completions send it)."""
    said = [m.get("content") or "" for m in messages if m.get("role") == "user"]
    last = said[-1] if said else ""
    weather = re.search(r"weather in ([A-Z][a-z]+)", last)
    if weather:
        call = {"name": "get_weather", "arguments": json.dumps({"city": weather[1]})}
        text = f"It is sunny in {weather[1]}."
        return {
            "role": "assistant",
            "content": text,
            "tool_calls": [{"id": "call_1", "type": "function", "function": call}],
        }
    if "my name" in last.lower() and "?" in last:
        names = [m[1] for text in said for m in [re.search(r"[Mm]y name is (\w+)", text)] if m]
        return {"role": "assistant", "content": f"Your name is {names[-1]}." if names else "You did not say."}
    return {"role": "assistant", "content": f"You said: {last}"}


class Handler(BaseHTTPRequestHandler):
    def send(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/health":
            return self.send(200, {"status": "ok"})
        self.send(404, {"error": "not found"})

    def do_POST(self):
        if self.path.rstrip("/") != "/v1/chat/completions":
            return self.send(404, {"error": "not found"})
        try:
            request = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            messages = request["messages"]
        except (ValueError, KeyError, TypeError):
            return self.send(400, {"error": {"message": "expected a JSON body with messages"}})
        message = reply(messages)
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        self.send(
            200,
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "model": request.get("model") or "my-agent",
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            },
        )

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=8770)
    port = parser.parse_args().port
    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
