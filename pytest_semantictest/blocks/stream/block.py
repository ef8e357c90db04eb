"""The ``StreamParser`` block: raw stream text in, ``{text, toolCalls, chunks, metadata}`` out."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, ClassVar

from pydantic import BaseModel, BeforeValidator, ConfigDict

from ...evidence import ParsedStream, ToolCalls, tool_call
from ...json_types import JSONObject, JSONValue
from ...model import StepTrace
from ..base import Block, BlockError
from .formats import get_format, known_formats, sniff_format, unknown_format_message

if TYPE_CHECKING:
    from ...evidence import Evidence
    from ...step import StepContext


def _is_template(value: JSONValue) -> bool:
    return isinstance(value, str) and "${" in value


def empty_result(fmt: str, error: str) -> JSONObject:
    """The documented output of a failed parse."""
    return {
        "text": "",
        "toolCalls": [],
        "chunks": [],
        "metadata": {"format": fmt, "totalChunks": 0, "totalTools": 0, "error": error},
    }


def _shape(fmt: str, result: JSONValue) -> JSONObject:
    """Fill in what a (custom) parser left out; reject what is not a result at all."""
    if not isinstance(result, Mapping):
        return empty_result(
            fmt,
            f"stream format {fmt!r} returned {type(result).__name__}, "
            "expected a dict with text, toolCalls, chunks, metadata",
        )
    text = result.get("text")
    tool_calls = result.get("toolCalls")
    chunks = result.get("chunks")
    tool_calls = list(tool_calls) if isinstance(tool_calls, (list, tuple)) else []
    chunks = list(chunks) if isinstance(chunks, (list, tuple)) else []
    metadata = result.get("metadata")
    metadata = dict(metadata) if isinstance(metadata, Mapping) else {}
    metadata.setdefault("format", fmt)
    metadata.setdefault("totalChunks", len(chunks))
    metadata.setdefault("totalTools", len(tool_calls))
    return {
        "text": text if isinstance(text, str) else ("" if text is None else str(text)),
        "toolCalls": tool_calls,
        "chunks": chunks,
        "metadata": metadata,
    }


def _known_format(fmt: JSONValue) -> JSONValue:
    """An unknown ``format`` is reported with a did-you-mean and the known formats (a ``${}``
    reference is checked when the step runs)."""
    if _is_template(fmt):
        return fmt
    if not isinstance(fmt, str):
        raise ValueError(f"format must be a string, got {type(fmt).__name__}")
    if fmt not in known_formats():
        raise ValueError(unknown_format_message(fmt))
    return fmt


class StreamParserConfig(BaseModel):
    """A StreamParser step's config; ``format`` left out is sniffed from the body (a written null is
    not a format)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    format: Annotated[JSONValue, BeforeValidator(_known_format)] = None


class StreamParser(Block):
    """Parse a streamed AI response (SSE) into text, tool calls, chunks and metadata.

    Config ``format``: ``sse-openai``, ``sse-vercel``, ``sse``, ``text`` or a registered custom
    format; without one, a body that is plainly an OpenAI or Vercel stream is read as one, any
    other body as ``text`` (the documented default). A malformed stream is not an error: the result carries
    ``metadata.error`` instead.
    """

    name: ClassVar[str] = "StreamParser"
    concurrency_safe = True
    primary_input: ClassVar[str] = "body"
    config_model = StreamParserConfig
    config_keys: ClassVar[frozenset[str] | None] = frozenset(StreamParserConfig.model_fields)
    inputs: ClassVar[tuple[str, ...]] = ("body", "format")
    input_keys: ClassVar[frozenset[str] | None] = frozenset(inputs)
    outputs: ClassVar[tuple[str, ...]] = ("text", "toolCalls", "chunks", "metadata")

    def _format(self, inputs: Mapping[str, JSONValue], body: str) -> str:
        fmt = self.config.get("format")
        if fmt is None:
            fmt = inputs.get("format")
        if fmt is None:  # none named: an OpenAI or Vercel stream is read as one, anything else as text
            return sniff_format(body)
        if not isinstance(fmt, str):
            raise BlockError(f"StreamParser format must be a string, got {type(fmt).__name__}")
        return fmt

    async def process(self, inputs: JSONObject, ctx: StepContext | None) -> JSONObject:
        """Parse ``inputs["body"]`` with the configured format."""
        body = inputs.get("body")
        if isinstance(body, (bytes, bytearray)):
            body = bytes(body).decode("utf-8", errors="replace")
        if not isinstance(body, str):
            got = "nothing" if body is None else f"{type(body).__name__} {body!r:.80}"
            raise BlockError(
                "StreamParser needs input 'body' (the raw stream text, e.g. "
                f'"${{response.body}}"); got {got}'
            )
        fmt = self._format(inputs, body)
        try:
            parser = get_format(fmt)
        except KeyError:
            raise BlockError(unknown_format_message(fmt)) from None
        try:
            result = parser(body)
        except Exception as exc:  # a parser bug or a custom parser failing: data, not a crash  # noqa: BLE001
            return empty_result(fmt, f"{type(exc).__name__}: {exc}")
        return _shape(fmt, result)

    @classmethod
    def evidence_of(cls, trace: StepTrace) -> list[Evidence]:
        """The parsed stream (text and metadata) and its tool calls."""
        out = trace.output
        if not isinstance(out, Mapping):
            return []
        found: list[Evidence] = [ParsedStream(str(out.get("text", "")), dict(out.get("metadata") or {}))]
        if isinstance(out.get("toolCalls"), list):
            found.append(ToolCalls([tool_call(c) for c in out["toolCalls"]]))
        return found
