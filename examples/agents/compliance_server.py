"""Example server for compliance Markdown suites (stdlib only): OpenAI-style chat completions where
``model`` names the agent, SSE streams ending with ``data: [DONE]``, handoff and auth events,
per-agent endpoints with token auth, and an admin API to create agents.

Run: ``python examples/agents/compliance_server.py --port 8765`` (prints ``LISTENING <url>``), or
import and call :func:`start_server`. Contract:

- ``POST /chat/completions`` (and ``/v1/chat/completions``): ``{model, messages, stream?, tools?,
  tool_choice?, parallel_tool_calls?}``; 400 ``invalid_request_error`` for bad JSON, a missing
  model or empty messages; 404 ``model_not_found`` for an unknown agent; 503 when it is offline.
  Events of the turn (``handoff``, ``auth.*``) are the body's ``events`` array, or SSE data
  payloads with a ``type`` before the chunks; ``model`` is the agent that answered.
- ``POST /agents/<name>/chat/completions``: the same for one agent; an agent with an AuthSkill in
  ``validate`` mode wants ``Authorization: Bearer <RS256 JWT>`` (401 ``authentication_error``,
  ``invalid_token``, ``token_expired``; 403 ``insufficient_scope``).
- ``POST /agents/<name>/auth/token`` (``grant_type=client_credentials``), ``GET
  /agents/<name>/.well-known/jwks.json`` and ``.../openid-configuration``, ``POST
  /agents/<name>/admin/action`` (needs scope ``admin``).
- ``GET /agents``, ``GET|PUT|DELETE /agents/<name>`` (``{instructions, tools, handoffs, skills,
  extra, available}``), ``POST /reset`` (the built-in agents again), ``GET /health``,
  ``GET /echo-headers`` (the request's headers).
- Streams stop when the client goes away (a closed connection is noticed before each chunk is
  written, or by the failed write), quietly. ``GET /streams`` lists every stream served:
  ``{agent, parts, sent, completed, client_gone}`` (SSE events the answer had, events written,
  whether it ended with ``[DONE]``, whether the client disconnected first); also ``server.streams``.
- ``--api-key KEY``: chat endpoints then want ``Authorization: Bearer KEY``.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import select
import signal
import socket
import sys
import threading
from typing import Any
from urllib.parse import parse_qs

try:
    from . import compliance_auth
    from .chat_agent import AgentHandler, AgentServer, BadRequest
    from .chat_rules import Reply, openai_chunks, openai_completion
    from .compliance_agents import Agent, Answer, Runner, builtin_agents
    from .compliance_agents import BadRequest as AgentBadRequest
except ImportError:  # run as a script, or imported with examples/agents on sys.path
    import compliance_auth  # type: ignore[no-redef]
    from chat_agent import AgentHandler, AgentServer, BadRequest  # type: ignore[no-redef]
    from chat_rules import Reply, openai_chunks, openai_completion  # type: ignore[no-redef]
    from compliance_agents import Agent, Answer, Runner, builtin_agents  # type: ignore
    from compliance_agents import BadRequest as AgentBadRequest

ROLES = {"system", "developer", "user", "assistant", "tool"}


def error(kind: str, message: str, code: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "code": code or kind, **extra}}


class ComplianceServer(AgentServer):
    """The agent registry (built-in agents, changed through the admin API) and the API key."""

    def __init__(self, address: tuple[str, int], api_key: str | None = None) -> None:
        super().__init__(address, ComplianceHandler)
        self.api_key = api_key
        self.agents: dict[str, Agent] = builtin_agents()
        self.lock = threading.Lock()
        self.streams: list[dict[str, Any]] = []
        """Every SSE stream served: agent, parts, sent, completed, client_gone."""

    @property
    def url(self) -> str:
        return f"http://{self.server_address[0]}:{self.server_address[1]}"


class ComplianceHandler(AgentHandler):
    server: ComplianceServer
    agent = "compliance"

    # -- chat -------------------------------------------------------------------------------------

    def chat(self, agent_name: str | None = None) -> None:
        if agent_name is None and not self._api_key_ok():
            return
        body = self.json_body()
        if not isinstance(body, dict):
            raise BadRequest("Request body must be a JSON object")
        name = body.get("model") or agent_name
        if not isinstance(name, str) or not name:
            return self.send_json(
                400,
                error(
                    "invalid_request_error",
                    "you must provide a model parameter (the agent name)",
                    "missing_model",
                    param="model",
                ),
            )
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise BadRequest("'messages' is required and must be a non-empty array")
        for n, message in enumerate(messages):
            if not isinstance(message, dict) or message.get("role") not in ROLES:
                raise BadRequest(f"messages[{n}] must be an object with a role ({', '.join(sorted(ROLES))})")
        with self.server.lock:
            agent = self.server.agents.get(name)
            agents = dict(self.server.agents)
        if agent is None:
            return self.send_json(
                404,
                error(
                    "invalid_request_error",
                    f"The model '{name}' does not exist (no such agent)",
                    "model_not_found",
                    param="model",
                ),
            )
        if not agent.available:
            return self.send_json(
                503, error("server_error", f"Agent '{name}' is unavailable", "agent_unavailable")
            )
        if agent_name is not None and not self._token_ok(agent, agent.auth.get("required_scopes") or []):
            return
        session = "sess_" + hashlib.sha1(json.dumps(messages, sort_keys=True).encode()).hexdigest()[:12]
        try:
            answer = Runner(agents, self.server.url, str(body.get("user") or session)).run(agent, body)
        except AgentBadRequest as exc:
            raise BadRequest(str(exc)) from None
        self._answer(answer, body, messages)

    def _answer(self, answer: Answer, body: dict[str, Any], messages: list[dict[str, Any]]) -> None:
        reply = Reply(answer.content, answer.tool_calls)
        if not body.get("stream"):
            completion = openai_completion(reply, answer.agent, messages)
            if answer.events:
                completion["events"] = answer.events
            return self.send_json(200, completion)
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        events = [f"data: {json.dumps(e, ensure_ascii=False)}\n\n" for e in answer.events]
        self._stream(answer.agent, [*events, *openai_chunks(reply, answer.agent, messages, include_usage)])

    def _stream(self, agent: str, parts: list[str]) -> None:
        """Each part as its own HTTP chunk; stop quietly (and record it) when the client went away."""
        record: dict[str, Any] = {
            "agent": agent,
            "parts": len(parts),
            "sent": 0,
            "completed": False,
            "client_gone": False,
        }
        with self.server.lock:
            self.server.streams.append(record)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for part in parts:
                if self._client_gone():
                    break
                data = part.encode()
                self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()
                record["sent"] += 1
            else:
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
                record["completed"] = True
        except (BrokenPipeError, ConnectionResetError):
            pass
        if not record["completed"]:
            record["client_gone"] = True
            self.close_connection = True

    def _client_gone(self) -> bool:
        """Whether the client closed its end (nothing else is sent to us while we answer)."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    def _api_key_ok(self) -> bool:
        key = self.server.api_key
        if key is None or self.headers.get("Authorization") == f"Bearer {key}":
            return True
        self.send_json(
            401,
            error("authentication_error", "invalid or missing API key", "invalid_api_key"),
            {"WWW-Authenticate": "Bearer"},
        )
        return False

    def _token_ok(self, agent: Agent, required: list[str]) -> bool:
        """Bearer-token checks for agents with an AuthSkill in validate mode (others need none)."""
        if agent.auth.get("mode") != "validate" and not required:
            return True
        header = self.headers.get("Authorization") or ""
        if not header.startswith("Bearer "):
            self.send_json(
                401,
                error(
                    "authentication_error",
                    "Authentication required: send Authorization: Bearer <token>",
                    "missing_token",
                ),
                {"WWW-Authenticate": 'Bearer realm="agents"'},
            )
            return False
        try:
            claims = compliance_auth.verify(header[len("Bearer ") :].strip())
        except compliance_auth.TokenError as exc:
            kind = "authentication_error" if exc.code == "token_expired" else "invalid_token"
            self.send_json(
                401,
                error(kind, str(exc), exc.code),
                {"WWW-Authenticate": f'Bearer error="invalid_token", error_description="{exc}"'},
            )
            return False
        missing = [s for s in required if s not in compliance_auth.scopes(claims)]
        if missing:
            self.send_json(
                403,
                error(
                    "insufficient_scope",
                    f"the token lacks the scope(s) {', '.join(missing)}",
                    "insufficient_scope",
                    required_scopes=required,
                ),
            )
            return False
        return True

    # -- agent endpoints ----------------------------------------------------------------------------

    def _agent(self, name: str) -> Agent | None:
        with self.server.lock:
            agent = self.server.agents.get(name)
        if agent is None:
            self.send_json(404, error("not_found_error", f"no agent named '{name}'", "agent_not_found"))
        return agent

    def agent_chat(self, name: str) -> None:
        if self._agent(name) is not None:
            self.chat(name)

    def admin_action(self, name: str) -> None:
        agent = self._agent(name)
        if agent is not None and self._token_ok(agent, ["admin"]):
            self.send_json(200, {"status": "ok", "agent": name, "request": self.json_body()})

    def issuer(self, name: str) -> str:
        return f"{self.server.url}/agents/{name}"

    def jwks(self, name: str) -> None:
        if self._agent(name) is not None:
            self.send_json(200, compliance_auth.jwks())

    def openid(self, name: str) -> None:
        if self._agent(name) is not None:
            self.send_json(200, compliance_auth.openid_configuration(self.issuer(name)))

    def token(self, name: str) -> None:
        agent = self._agent(name)
        if agent is None:
            return
        if not agent.auth:
            return self.send_json(400, error("invalid_client", f"agent '{name}' has no AuthSkill"))
        if "json" in (self.headers.get("Content-Type") or ""):
            form = {k: str(v) for k, v in (self.json_body() or {}).items()}
        else:
            form = {k: v[0] for k, v in parse_qs(self.body.decode("utf-8", "replace")).items()}
        if form.get("grant_type") != "client_credentials":
            return self.send_json(
                400, error("unsupported_grant_type", "grant_type must be client_credentials")
            )
        allowed = list(agent.auth.get("scopes") or agent.auth.get("required_scopes") or [])
        wanted = form.get("scope", " ".join(allowed)).split()
        if any(s not in allowed for s in wanted):
            return self.send_json(400, error("invalid_scope", f"scopes allowed: {', '.join(allowed)}"))
        token = compliance_auth.mint(self.issuer(name), name, wanted)
        self.send_json(
            200,
            {"access_token": token, "token_type": "Bearer", "expires_in": 3600, "scope": " ".join(wanted)},
        )

    # -- admin --------------------------------------------------------------------------------------

    def list_agents(self) -> None:
        with self.server.lock:
            self.send_json(200, {"agents": [a.config() for a in self.server.agents.values()]})

    def get_agent(self, name: str) -> None:
        agent = self._agent(name)
        if agent is not None:
            self.send_json(200, agent.config())

    def put_agent(self, name: str) -> None:
        data = self.json_body()
        if not isinstance(data, dict):
            raise BadRequest(
                "an agent is a JSON object: {instructions, tools, handoffs, skills, extra, available}"
            )
        agent = Agent.from_config(name, data)
        with self.server.lock:
            created = name not in self.server.agents
            self.server.agents[name] = agent
        self.send_json(201 if created else 200, agent.config())

    def delete_agent(self, name: str) -> None:
        with self.server.lock:
            found = self.server.agents.pop(name, None)
        self.send_json(
            200 if found else 404, {"deleted": name} if found else error("not_found_error", "no such agent")
        )

    def list_streams(self) -> None:
        with self.server.lock:
            self.send_json(200, {"streams": [dict(record) for record in self.server.streams]})

    def reset(self) -> None:
        with self.server.lock:
            self.server.agents = builtin_agents()
        self.send_json(200, {"agents": sorted(self.server.agents)})


_NAME = r"([\w.-]+)"
ComplianceHandler.routes = [
    ("GET", r"/health", lambda h: h.send_json(200, {"status": "ok"})),
    ("GET", r"/streams", ComplianceHandler.list_streams),
    ("GET", r"/echo-headers", lambda h: h.send_json(200, {k.lower(): v for k, v in h.headers.items()})),
    ("POST", r"(?:/v1)?/chat/completions", lambda h: h.chat()),
    ("POST", rf"/agents/{_NAME}/chat/completions", ComplianceHandler.agent_chat),
    ("POST", rf"/agents/{_NAME}/admin/action", ComplianceHandler.admin_action),
    ("POST", rf"/agents/{_NAME}/auth/token", ComplianceHandler.token),
    ("GET", rf"/agents/{_NAME}/\.well-known/jwks\.json", ComplianceHandler.jwks),
    ("GET", rf"/agents/{_NAME}/\.well-known/openid-configuration", ComplianceHandler.openid),
    ("GET", r"/agents", ComplianceHandler.list_agents),
    ("GET", rf"/agents/{_NAME}", ComplianceHandler.get_agent),
    ("PUT", rf"/agents/{_NAME}", ComplianceHandler.put_agent),
    ("DELETE", rf"/agents/{_NAME}", ComplianceHandler.delete_agent),
    ("POST", r"/reset", ComplianceHandler.reset),
]


def start_server(
    port: int = 0, host: str = "127.0.0.1", api_key: str | None = None
) -> tuple[ComplianceServer, str]:
    """Serve in a daemon thread; returns ``(server, base_url)``. Stop with ``server.shutdown()``."""
    server = ComplianceServer((host, port), api_key)
    threading.Thread(target=server.serve_forever, args=(0.05,), name="compliance-server", daemon=True).start()
    return server, server.url


def placeholder_tokens(base_url: str) -> dict[str, str]:
    """Placeholder values the published auth file uses, minted with the server's (example) key."""
    issuer = f"{base_url}/agents/client-agent"
    return {
        "valid_jwt_token": compliance_auth.mint(issuer, "compliance-tests", ["read"]),
        "expired_jwt_token": compliance_auth.mint(issuer, "compliance-tests", ["read"], expires_in=-3600),
        "token_with_read_scope": compliance_auth.mint(issuer, "compliance-tests", ["read"]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Example server for compliance Markdown suites.")
    parser.add_argument("--port", type=int, default=8765, help="port to listen on (0 = pick a free port)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--api-key", default=None, help="require this bearer token on the chat endpoints")
    parser.add_argument(
        "--print-tokens",
        action="store_true",
        help="print export lines for the auth placeholders (VALID_JWT_TOKEN, ...) and exit",
    )
    args = parser.parse_args(argv)
    if args.print_tokens:
        for name, value in placeholder_tokens(f"http://{args.host}:{args.port}").items():
            print(f"export {name.upper()}={value}")
        return 0
    server = ComplianceServer((args.host, args.port), args.api_key)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(f"LISTENING {server.url}", flush=True)
    with contextlib.suppress(KeyboardInterrupt), server:
        server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
