"""ChatRequest: an HttpRequest sent exactly as configured (no ``${...}`` resolution in it).

Compliance files write requests literally: a ``${`` in a message is text, not a reference.
The output is HttpRequest's plus ``request`` (method, url, headers, body as sent), so the
trace and the LLM judge see what was asked.

Config ``disconnect_after: N`` (a case whose behaviour says "Client disconnects after receiving
N chunks"): an SSE response is read only until N chunks (JSON data payloads other than typed
events, as ChatResponse counts them) have arrived, then the connection is closed; ``body`` is the
text up to the end of the N-th chunk's event. The output adds ``client_disconnect``
(``after_chunks``, ``chunks_read``, ``disconnected``: False when the stream ended first or the
response is not a stream). After a disconnect the ``follow_up`` request (config, the same request
without streaming) is sent once to the same server and its outcome is the output's ``follow_up``:
``request``, ``status``, ``content_type``, ``content`` (the answer's message content) or ``body``
(text, clipped), ``error`` (no response), ``duration``: evidence that the server still serves
requests after a client went away.
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING

from ..agents.exchange import send_within
from ..json_types import JSONObject, JSONValue
from ..shown import shorten
from .base import BlockError
from .http_request import HttpRequest, HttpRequestConfig, request_errors

if TYPE_CHECKING:
    import httpx

    from ..step import StepContext

FOLLOW_UP_TEXT_LIMIT = 500
_EVENT_END = re.compile(r"(?:\r\n|\n|\r(?!\n))(?:\r\n|\n|\r(?!\n))")
"""A blank line: the end of an SSE event (a CR at the end of what arrived so far counts as a line end)."""


class ChatRequestConfig(HttpRequestConfig):
    """A ChatRequest step's config (written by the compliance compiler): HttpRequest's and the
    disconnect case's."""

    disconnect_after: JSONValue = None
    follow_up: JSONValue = None


class ChatRequest(HttpRequest):
    name = "ChatRequest"
    resolve_config = False
    config_model = ChatRequestConfig
    config_keys = frozenset(ChatRequestConfig.model_fields)

    async def process(self, inputs: JSONObject, ctx: StepContext) -> JSONObject:
        count = self.config.get("disconnect_after")
        if isinstance(count, int) and not isinstance(count, bool) and count > 0:
            output = await self.disconnecting(count, ctx)
        else:
            output = await super().process(inputs, ctx)
        output["request"] = self.sent()
        return output

    def error_output(self, inputs: JSONObject, message: str) -> JSONObject:
        return {**super().error_output(inputs, message), "request": self.sent()}

    def sent(self) -> JSONObject:
        return {
            key: self.config.get(key) for key in ("method", "url", "headers", "body") if key in self.config
        }

    async def disconnecting(self, count: int, ctx: StepContext) -> JSONObject:
        """Send the request, read at most ``count`` stream chunks, close the connection, follow up."""
        params = {"method": "POST", **{k: v for k, v in self.config.items() if k in HttpRequest.config_keys}}
        request, deadline = self.build(params, ctx)
        start = time.perf_counter()
        with request_errors(params["url"], deadline):  # not read to the end: httpx closes the connection
            response, (text, read, cut) = await send_within(
                deadline,
                ctx.http,
                request,
                lambda r: _read_chunks(r, count),
                follow_redirects=True,
                phase=f"reading the stream (waiting for chunk {count})",
            )
        duration = round((time.perf_counter() - start) * 1000, 1)  # the follow-up has its own
        output: JSONObject = {
            "status": response.status_code,
            "client_disconnect": {"after_chunks": count, "chunks_read": read, "disconnected": cut},
        }
        follow_up = self.config.get("follow_up")
        if cut and isinstance(follow_up, dict):  # before the body: a long body is clipped in the trace
            output["follow_up"] = await _follow_up(follow_up, ctx)
        output.update(
            headers={k.lower(): v for k, v in response.headers.items()},
            body=text,
            duration=duration,
            url=str(response.request.url),
        )
        return output


async def _read_chunks(response: httpx.Response, count: int) -> tuple[str, int, bool]:
    """(text read, chunks in it, whether the client stopped early); a response that is not an SSE
    stream is read whole."""
    from .chat_response import count_chunks

    media = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media not in ("text/event-stream", ""):
        await response.aread()
        return response.text, 0, False
    # no content type: SSE when it starts like SSE (ChatResponse)
    stream: bool | None = True if media else None
    text, position, read = "", 0, 0
    async for piece in response.aiter_text():
        text += piece
        if stream is None:
            stream = _sniffed(text)
        if not stream:
            continue
        for end in _EVENT_END.finditer(text, position):
            read += count_chunks(text[position : end.end()])
            position = end.end()
            if read >= count:
                return text[:position], read, True
    return text, count_chunks(text) if stream else 0, False


def _sniffed(text: str) -> bool | None:
    """Whether a body without a content type is an SSE stream, by how it starts (ChatResponse's rule);
    None while what arrived so far cannot tell."""
    start = text.lstrip()
    if start.startswith(("data:", "event:")):
        return True
    if start and not ("data:".startswith(start) or "event:".startswith(start)):
        return False
    return None


async def _follow_up(config: JSONObject, ctx: StepContext) -> JSONObject:
    """The follow-up request's outcome, short enough for the trace and the judge."""
    from .chat_response import read_response

    sent = {key: config.get(key) for key in ("method", "url", "headers", "body") if key in config}
    block = HttpRequest({key: value for key, value in config.items() if key in HttpRequest.config_keys})
    try:
        response = await block.process({}, ctx)
    except BlockError as exc:
        return {"request": sent, "status": 0, "error": str(exc)}
    observed = read_response(response)
    out: JSONObject = {
        "request": sent,
        "status": observed["status"],
        "content_type": observed["content_type"],
    }
    if isinstance(observed.get("content"), str):
        out["content"] = _clip(observed["content"])
    else:
        out["body"] = _clip(str(response.get("body") or ""))
    out["duration"] = response.get("duration")
    return out


def _clip(text: str) -> str:
    return shorten(text, FOLLOW_UP_TEXT_LIMIT, tell=True)
