"""What the tool-calling stream formats (``sse-openai``, ``sse-vercel``) collect while they read a
stream, and the ``{text, toolCalls, chunks, metadata}`` result they give."""

from __future__ import annotations

from ...json_types import JSONObject, JSONValue
from .sse import loads


class Accumulator:
    """Text pieces, chunks (text, tool-call, error, finish ...) and stream errors, in stream order."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.chunks: list[JSONObject] = []
        self.errors: list[str] = []

    def add_text(self, value: JSONValue) -> None:
        if isinstance(value, str) and value:
            self.text.append(value)
            self.chunks.append({"type": "text", "content": value})

    def error(self, message: str) -> None:
        """An error the stream itself reports."""
        self.errors.append(message)
        self.chunks.append({"type": "error", "error": message})

    def arguments(self, parts: list[str], name: str | None, call_id: str | None) -> JSONValue:
        """Streamed argument fragments joined and parsed once; unparseable -> {} and an error naming the call."""
        text = "".join(parts)
        try:
            return loads(text) if text.strip() else {}
        except ValueError as exc:
            label = f"'{name}'" + (f" ({call_id})" if call_id else "")
            self.errors.append(f"Tool call {label} has unparseable arguments: {exc}")
            return {}

    def output(
        self, fmt: str, tool_calls: list[JSONObject], skipped: int, unread: str | None, **counts: int
    ) -> JSONObject:
        """The parse result; ``unread`` says why nothing in the stream was this format (it comes first
        among the errors), ``counts`` are more metadata."""
        metadata: JSONObject = {
            "format": fmt,
            "totalChunks": len(self.chunks),
            "totalTools": len(tool_calls),
            **counts,
        }
        if skipped:
            metadata["skipped"] = skipped
        errors = [unread, *self.errors] if unread else self.errors
        if errors:
            metadata["error"] = "; ".join(errors)
        return {
            "text": "".join(self.text),
            "toolCalls": tool_calls,
            "chunks": self.chunks,
            "metadata": metadata,
        }
