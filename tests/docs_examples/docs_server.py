"""The APIs the docs' suites call, on loopback: the example agent (examples/agents/chat_agent.py) plus
the endpoints the docs name that it does not serve, answering as the docs describe them.

A chat endpoint (``/chat``, ``/v1/chat/completions``, the ``/agents/*`` of the tool-calls page) answers
from a small script keyed by the last user message: when the scripted answer calls tools it streams
them (OpenAI SSE chunks, as a tool-calling agent does); otherwise ``/chat`` answers JSON
``{"message", "reply"}`` and ``/v1/chat/completions`` falls back to the example agent.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from chat_agent import ROUTES, TOKEN, USERS, AgentHandler, AgentServer
from chat_rules import Reply, ToolCall, message_text, openai_chunks, openai_completion

USER_1 = {
    **USERS[0],
    "age": 31,
    "roles": ["user", "admin"],
    "phone": "1-770-736-8031",
    "address": {"street": "Kulas Light", "city": "Gwenborough", "zipcode": "92998-3874"},
}

# last user message (lower case, starts with) -> (text, [(tool, args)]); tools only where the docs' test expects them
SCRIPT: list[tuple[str, str, list[tuple[str, dict[str, Any]]]]] = [
    ("it's #12345", "Let me look up order #12345 for you.", [("lookup_order", {"order_id": "12345"})]),
    (
        "next friday",
        "Searching flights from Boston to Seattle for next Friday.",
        [("search_flights", {"origin": "Boston", "destination": "Seattle", "date": "next Friday"})],
    ),
    (
        "search for users named alice and send them an email",
        "I found Alice and sent her an email with the details.",
        [
            ("search_users", {"query": "Alice"}),
            ("send_email", {"to": "alice@example.com", "subject": "Hello Alice"}),
        ],
    ),
    (
        "search for users with premium subscription",
        "",
        [("search_users", {"filter": "premium", "limit": 10})],
    ),
    ("search for users with the name alice", "", [("search_users", {"query": "Alice"})]),
    (
        "schedule a meeting with the engineering team",
        "",
        [
            ("search_calendar", {"date": "tomorrow"}),
            (
                "create_event",
                {"title": "Engineering sync", "date": "tomorrow", "time": "14:00", "duration": 60},
            ),
        ],
    ),
    (
        "look up my order #12345",
        "Your order #12345 has shipped; I emailed you the tracking details.",
        [("search_orders", {"order_id": "12345"}), ("send_email", {"subject": "Order #12345 update"})],
    ),
]
TOOLS_WHEN_OFFERED = {  # the same request with and without a tools list
    "schedule a meeting for tomorrow at 2pm": (
        "I've scheduled the meeting for tomorrow at 2pm and sent the invitation.",
        [("search_calendar", {"date": "tomorrow"}), ("create_event", {"title": "Meeting", "time": "14:00"})],
    ),
}
AGENTS: dict[str, tuple[str, list[tuple[str, dict[str, Any]]]]] = {
    "support": (
        "I can help you close your account: I have sent you a confirmation email.",
        [("search_user", {"query": "current user"}), ("send_email", {"template": "account_deletion"})],
    ),
    "database": (
        "Here are the premium users.",
        [
            ("authenticate", {"user": "agent"}),
            ("connect_database", {"name": "users"}),
            ("execute_query", {"sql": "SELECT * FROM users WHERE plan = 'premium'"}),
        ],
    ),
    "orders": (
        "Order #12345 has shipped and the customer was notified.",
        [
            ("get_order", {"order_id": "12345"}),
            ("check_inventory", {"sku": "LAPTOP-1"}),
            ("create_shipment", {"order_id": "12345"}),
            ("send_notification", {"order_id": "12345"}),
        ],
    ),
}


def _reply(text: str, calls: list[tuple[str, dict[str, Any]]]) -> Reply:
    return Reply(
        text or None, [ToolCall(f"call_{i + 1}", name, args) for i, (name, args) in enumerate(calls)]
    )


def scripted(body: Any) -> Reply | None:
    """The scripted answer to a chat body (``{messages}``, a bare message list, or ``{message}``)."""
    messages = (
        body if isinstance(body, list) else (body or {}).get("messages") if isinstance(body, dict) else None
    )
    if isinstance(messages, list):
        said = [message_text(m) for m in messages if isinstance(m, dict) and m.get("role") == "user"]
        last = said[-1] if said else ""
    else:
        last = str((body or {}).get("message", "")) if isinstance(body, dict) else ""
    low = last.strip().lower()
    for start, text, calls in SCRIPT:
        if low.startswith(start):
            return _reply(text, calls)
    if low in TOOLS_WHEN_OFFERED:
        text, calls = TOOLS_WHEN_OFFERED[low]
        offered = isinstance(body, dict) and bool(body.get("tools"))
        return _reply(text, calls if offered else [])
    return None


class DocsHandler(AgentHandler):
    """The example agent's routes behind the docs' own endpoints."""

    def parsed(self) -> Any:
        try:
            return json.loads(self.body or b"null")
        except ValueError:
            return None

    def stream(self, reply: Reply) -> None:
        self.send_stream(
            "text/event-stream", openai_chunks(reply, "docs-agent", [{"role": "user", "content": ""}])
        )

    def chat(self) -> None:
        body = self.parsed()
        reply = scripted(body)
        if reply is not None and reply.tool_calls:
            return self.stream(reply)
        text = reply.content if reply is not None else "Hi! How can I help you today?"
        self.send_json(200, {"message": text, "reply": text})

    def completions(self) -> None:
        body = self.parsed()
        reply = scripted(body)
        if reply is None:
            return self.chat_completions()
        if isinstance(body, dict) and body.get("stream"):
            return self.stream(reply)
        self.send_json(
            200, openai_completion(reply, str(body.get("model", "docs-agent")), body.get("messages", []))
        )

    def agent(self, name: str) -> None:
        self.stream(_reply(*AGENTS[name]))

    def create_user(self) -> None:
        body = self.parsed() if isinstance(self.parsed(), dict) else {}
        self.send_json(201, {"id": 11, **body})

    def user(self, user_id: str) -> None:
        self.send_json(200, USER_1 if user_id == "1" else {"id": int(user_id), "name": "Test User"})

    def job(self, job_id: str) -> None:
        done = self.server.bump(f"docs-job:{job_id}") >= 3
        state = "completed" if done else "processing"
        self.send_json(
            200,
            {
                "id": job_id,
                "status": state,
                "state": state,
                "progress": 100 if done else 40,
                "result": "42 rows processed" if done else None,
            },
        )

    def start_job(self) -> None:
        self.send_json(201, {"id": f"job-{self.server.bump('docs-jobs')}", "status": "queued"})

    def protected(self) -> None:
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            return self.send_json(401, {"error": "unauthorized"})
        self.send_json(200, {"secret": "the protected resource"})


def _ok(body: Any) -> Callable[[AgentHandler], None]:
    return lambda h, *_: h.send_json(200, body)


DocsHandler.routes = [
    ("POST", r"/chat", DocsHandler.chat),
    ("GET", r"/chat", DocsHandler.chat),
    ("POST", r"/v1/chat/completions", DocsHandler.completions),
    ("POST", r"/agents/(support|database|orders)", DocsHandler.agent),
    ("GET", r"/agents/(support|database|orders)", DocsHandler.agent),
    (
        "POST",
        r"/summarize",
        _ok(
            {
                "summary": "Revenue grew 20%, a new product launched and the company plans to "
                "expand into two new markets."
            }
        ),
    ),
    (
        "POST",
        r"/explain-code",
        _ok(
            {
                "explanation": "It adds up the numbers of an array with reduce: the "
                "accumulator a starts at 0 and each element b is added to it."
            }
        ),
    ),
    ("GET", r"/users/(\d+)", DocsHandler.user),
    ("POST", r"/users", DocsHandler.create_user),
    ("DELETE", r"/users/(\d+)", _ok({"deleted": True})),
    ("GET", r"/v1/users", _ok(USERS)),
    ("GET", r"/", _ok({"name": "Example API", "version": "v1"})),
    ("GET", r"/endpoint", _ok({"ok": True})),
    ("POST", r"/auth/logout", _ok({"ok": True})),
    ("GET", r"/protected", DocsHandler.protected),
    ("GET", r"/jobs/([\w.-]+)", DocsHandler.job),
    ("POST", r"/jobs", DocsHandler.start_job),
    *ROUTES,
]


def start() -> tuple[AgentServer, str]:
    """The docs' APIs on a free loopback port; returns ``(server, base_url)``."""
    server = AgentServer(("127.0.0.1", 0), DocsHandler)
    threading.Thread(target=server.serve_forever, args=(0.05,), name="docs-apis", daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def environment(base: str) -> dict[str, str]:
    """The environment the copies read their endpoints (and keys) from."""
    return {
        "BASE_URL": base,
        "API_URL": base,
        "CHAT_API_URL": base,
        "AI_API": base,
        "AI_API_URL": base,
        "SHOP_API": base,
        "TUTOR_API": base,
        "YOUR_NEXTJS_API": base,
        "OPENAI_API_URL": f"{base}/v1",
        "OPENAI_URL": f"{base}/v1/chat/completions",
        "AI_AGENT_URL": f"{base}/agents/support",
        "DB_AGENT_URL": f"{base}/agents/database",
        "AGENT_URL": f"{base}/agents/orders",
        "API_KEY": TOKEN,
        "OPENAI_API_KEY": "sk-docs-examples-not-a-real-key",
    }
