"""An example Realtime agent: the OpenAI Realtime protocol over a WebSocket at ``/realtime`` (as the
WebAgents SDK serves it), on the ``websockets`` package's server.

Events: ``session.created`` on connect; ``session.update`` -> ``session.updated``;
``conversation.item.create`` -> ``conversation.item.created``; ``response.create`` ->
``response.created``, ``response.output_item.added``, ``response.text.delta`` (one a word),
``response.text.done``, ``response.done`` (status ``completed``); ``response.cancel``; anything
else -> an ``error`` event. The answer to the last user text ``X`` is ``Echo: X`` (``Echo: X (turn
N)`` from the second response of a session on, so a multi-turn case sees one session); a text
``weather in Paris`` is answered with a ``get_weather`` function call.

Broken copies for the tests (``mode``): ``wrong_text``, ``close_mid`` (closes with code 1011 after
the first delta), ``error_event`` (an ``error`` instead of the response), ``hang`` (no response).
Run: ``python examples/agents/realtime_agent.py --port 0`` (prints ``LISTENING ws://127.0.0.1:<port>``).
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import uuid
from typing import Any

from request_log import note

MODES = ("ok", "wrong_text", "close_mid", "error_event", "hang")


async def _session(socket: Any, mode: str) -> None:
    from websockets.exceptions import ConnectionClosed

    try:  # noqa: SIM105
        await _events(socket, mode)
    except ConnectionClosed:  # the client went away, or close_mid closed it
        pass


async def _events(socket: Any, mode: str) -> None:
    note("realtime", "WEBSOCKET", socket.request.path)
    if socket.request.path.split("?")[0] != "/realtime":
        await socket.close(1008, "no such endpoint: use /realtime")
        return
    session = {"id": f"sess_{uuid.uuid4().hex[:8]}", "modalities": ["text"], "instructions": ""}
    items: list[dict[str, Any]] = []
    responses = 0

    async def send(kind: str, **data: Any) -> None:
        await socket.send(json.dumps({"type": kind, "event_id": f"evt_{uuid.uuid4().hex[:8]}", **data}))

    await send("session.created", session=session)
    async for raw in socket:
        event = json.loads(raw)
        kind = event.get("type")
        note("realtime", "EVENT", str(kind))
        if kind == "session.update":
            session.update(event.get("session") or {})
            await send("session.updated", session=session)
        elif kind == "conversation.item.create":
            item = {"id": f"item_{uuid.uuid4().hex[:8]}", **(event.get("item") or {})}
            items.append(item)
            await send("conversation.item.created", item=item)
        elif kind == "response.create":
            responses += 1
            if mode == "error_event":
                await send("error", error={"type": "server_error", "message": "the model is unavailable"})
                continue
            if mode == "hang":
                await asyncio.sleep(30)
            if not await _respond(send, socket, items, responses, mode):
                return
        elif kind == "response.cancel":
            await send("response.cancelled")
        else:
            await send("error", error={"type": "invalid_event", "message": f"Unknown event type: {kind}"})


async def _respond(send: Any, socket: Any, items: list[dict[str, Any]], number: int, mode: str) -> bool:
    """Answer a ``response.create``; False when the socket was closed mid-reply."""
    texts = [c.get("text", "") for i in items if i.get("role") == "user" for c in i.get("content", [])]
    text = texts[-1] if texts else ""
    response_id = f"resp_{uuid.uuid4().hex[:8]}"
    await send("response.created", response={"id": response_id, "status": "in_progress", "output": []})
    weather = re.match(r"weather in (\w+)", text)
    if weather:
        arguments = json.dumps({"location": weather.group(1)})
        call = {"type": "function_call", "name": "get_weather", "call_id": "call_1", "arguments": arguments}
        await send(
            "response.function_call_arguments.delta",
            response_id=response_id,
            call_id="call_1",
            delta=arguments,
        )
        await send(
            "response.function_call_arguments.done",
            response_id=response_id,
            call_id="call_1",
            name="get_weather",
            arguments=arguments,
        )
        await send("response.done", response={"id": response_id, "status": "completed", "output": [call]})
        return True
    answer = f"Echo: {text[::-1] if mode == 'wrong_text' else text}" + (
        f" (turn {number})" if number > 1 else ""
    )
    await send(
        "response.output_item.added", response_id=response_id, item={"type": "message", "role": "assistant"}
    )
    for n, word in enumerate(re.findall(r"\S+\s*", answer)):
        await send("response.text.delta", response_id=response_id, delta=word)
        if mode == "close_mid" and n == 0:
            await socket.close(1011, "the agent crashed")
            return False
    await send("response.text.done", response_id=response_id, text=answer)
    message = {"type": "message", "role": "assistant", "content": [{"type": "text", "text": answer}]}
    await send("response.done", response={"id": response_id, "status": "completed", "output": [message]})
    return True


class Server:
    """A websockets server on its own event loop in a daemon thread; ``shutdown()`` stops it."""

    def __init__(self, port: int = 0, mode: str = "ok") -> None:
        self.port, self.mode = port, mode
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.stop: asyncio.Future[None] | None = None
        self.url = ""
        self.thread = threading.Thread(
            target=self.loop.run_until_complete, args=(self._serve(),), daemon=True
        )

    async def _serve(self) -> None:
        from websockets.asyncio.server import serve

        self.stop = self.loop.create_future()
        async with serve(lambda s: _session(s, self.mode), "127.0.0.1", self.port) as server:
            port = next(iter(server.sockets)).getsockname()[1]
            self.url = f"http://127.0.0.1:{port}"
            self.ready.set()
            await self.stop

    def start(self) -> Server:
        self.thread.start()
        self.ready.wait(10)
        return self

    def shutdown(self) -> None:
        if self.stop is not None:
            self.loop.call_soon_threadsafe(self.stop.set_result, None)
        self.thread.join(5)


def start_server(port: int = 0, mode: str = "ok") -> tuple[Server, str]:
    server = Server(port, mode).start()
    return server, server.url


if __name__ == "__main__":
    from transport_main import serve_main  # the script's folder is on sys.path

    serve_main(__doc__.splitlines()[0], start_server, MODES)
