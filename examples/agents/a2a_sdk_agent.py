"""An example A2A agent on the official ``a2a-sdk`` server (JSON-RPC 2.0, the A2A v0.3 methods
``message/send``, ``message/stream``, ``tasks/get``, ``tasks/cancel``; the agent card at
``/.well-known/agent-card.json``).

Behaviour, deterministic: a user text ``X`` is answered with a task that goes ``submitted`` ->
``working`` (status message "thinking") -> a text artifact ``Echo: X`` streamed in two chunks ->
``completed`` (`` (context kept)`` added to the answer to a later message of one context). A text
starting with ``data:`` is answered with a data artifact ``{"echo": rest}``;
``fail`` ends the task ``failed``; ``slow`` stays ``working`` for 30 seconds.

Run: ``python examples/agents/a2a_sdk_agent.py --port 0`` (prints ``LISTENING http://127.0.0.1:<port>``),
or import :func:`start_server` (a uvicorn server in a daemon thread).
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from typing import Any

from a2a.helpers.proto_helpers import (
    new_data_part,
    new_task_from_user_message,
    new_text_message,
    new_text_part,
)
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Role
from request_log import noted_asgi

RPC_PATH = "/"


MODES = ("ok", "wrong_text", "drop_final", "rpc_error", "hang")
"""Broken copies for the tests: a wrong answer, no final status, a JSON-RPC error, a task that stays working."""


class EchoExecutor(AgentExecutor):
    """Echoes the user's text as a streamed text artifact of a task."""

    def __init__(self, mode: str = "ok") -> None:
        self.mode = mode
        self.contexts: set[str] = set()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input().strip()
        if self.mode == "rpc_error":  # no Task enqueued: the SDK answers with a JSON-RPC error
            await updater_of(event_queue, context).start_work()
            return
        updater = updater_of(event_queue, context)
        if context.current_task is None and context.message is not None:
            await event_queue.enqueue_event(new_task_from_user_message(context.message))
        await updater.start_work(new_text_message("thinking", role=Role.ROLE_AGENT))
        if text == "slow" or self.mode == "hang":
            await asyncio.sleep(30)
        if text == "fail":
            await updater.failed(new_text_message("the agent was asked to fail", role=Role.ROLE_AGENT))
            return
        if text.startswith("data:"):
            await updater.add_artifact([new_data_part({"echo": text[5:].strip()})], name="data")
            await updater.complete()
            return
        answer = f"Echo: {text}" if self.mode != "wrong_text" else f"Echo: {text[::-1]}"
        if context.context_id in self.contexts:  # a later message of a conversation
            answer += " (context kept)"
        self.contexts.add(context.context_id or "")
        half = len(answer) // 2
        await updater.add_artifact([new_text_part(answer[:half])], artifact_id="answer", name="answer")
        await updater.add_artifact(
            [new_text_part(answer[half:])], artifact_id="answer", name="answer", append=True, last_chunk=True
        )
        if self.mode != "drop_final":
            await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await updater_of(event_queue, context).cancel()


def updater_of(event_queue: EventQueue, context: RequestContext) -> TaskUpdater:
    return TaskUpdater(event_queue, context.task_id or "", context.context_id or "")


def agent_card(url: str) -> AgentCard:
    return AgentCard(
        name="echo-agent",
        description="Echoes what the user says (an a2a-sdk example)",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=url + RPC_PATH, protocol_binding="JSONRPC", protocol_version="0.3")
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text"],
        default_output_modes=["text"],
        skills=[AgentSkill(id="echo", name="echo", description="Echo the user's text", tags=["echo"])],
    )


def app(url: str, mode: str = "ok") -> Any:
    """The Starlette application: the card and the JSON-RPC endpoint (v0.3 methods enabled); each request
    is noted in the request log (``request_log``) when one is asked for."""
    from starlette.applications import Starlette

    card = agent_card(url)
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(mode), task_store=InMemoryTaskStore(), agent_card=card
    )
    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, RPC_PATH, enable_v0_3_compat=True),
    ]
    return noted_asgi(Starlette(routes=routes), "a2a-sdk")


class Server:
    """A uvicorn server in a daemon thread; ``shutdown()`` stops it."""

    def __init__(self, application_of: Any, port: int = 0, mode: str = "ok") -> None:
        import uvicorn

        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", port))
        self.url = f"http://127.0.0.1:{self.socket.getsockname()[1]}"
        config = uvicorn.Config(
            application_of(self.url, mode), log_level="warning", lifespan="off", ws="websockets-sansio"
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.socket]}, daemon=True)

    def start(self) -> Server:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started and time.monotonic() < deadline:
            time.sleep(0.01)
        return self

    def shutdown(self) -> None:
        self.server.should_exit = True
        self.thread.join(5)
        self.socket.close()  # uvicorn leaves a socket it was given open


def start_server(port: int = 0, mode: str = "ok") -> tuple[Server, str]:
    server = Server(app, port, mode).start()
    return server, server.url


if __name__ == "__main__":
    from transport_main import serve_main  # the script's folder is on sys.path

    serve_main(__doc__.splitlines()[0], start_server, MODES)
