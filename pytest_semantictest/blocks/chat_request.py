"""ChatRequest: an HttpRequest sent exactly as configured (no ``${...}`` resolution in it).

Compliance files write requests literally: a ``${`` in a message is text, not a reference.
The output is HttpRequest's plus ``request`` (method, url, headers, body as sent), so the
trace and the LLM judge see what was asked.
"""

from __future__ import annotations

from typing import Any

from .http_request import HttpRequest


class ChatRequest(HttpRequest):
    name = "ChatRequest"
    resolve_config = False

    async def process(self, inputs: dict[str, Any], ctx: Any) -> dict[str, Any]:
        output = await super().process(inputs, ctx)
        output["request"] = self.sent()
        return output

    def error_output(self, inputs: dict[str, Any], message: str) -> dict[str, Any]:
        return {**super().error_output(inputs, message), "request": self.sent()}

    def sent(self) -> dict[str, Any]:
        return {key: self.config.get(key) for key in ("method", "url", "headers", "body") if key in self.config}
