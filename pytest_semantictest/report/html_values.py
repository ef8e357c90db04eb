"""Values as HTML for the report's extras: escaped, redacted and trimmed in one place; JSON
pretty-printed (also JSON held in a string, such as a response body), SSE streams as parsed frames.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from html import escape

from ..json_types import JSONValue
from ..redact import Redactor
from ..shown import shorten

STYLE = """<style>
.st-extra,.st-summary,.additional-summary h3{color:#1f2328;background:#fff}
.st-extra{font-family:sans-serif;font-size:13px;line-height:1.4;margin:4px 0 8px;padding:4px 8px}
.st-extra h4{margin:10px 0 4px;font-size:13px;color:#1f2328}
.st-extra table{border-collapse:collapse;margin:2px 0 6px}
.st-extra td,.st-extra th,.st-summary td,.st-summary th{border:1px solid #c8ccd1;padding:2px 6px;text-align:left;
vertical-align:top;color:#1f2328}
.st-extra th,.st-summary th{background:#eef1f4}
.st-extra pre{white-space:pre-wrap;background:#f6f8fa;color:#1f2328;padding:4px;margin:2px 0;max-height:24em;
overflow:auto}
.st-extra .st-label{font-weight:bold;margin-top:4px}
.st-overview{font-size:14px}
.st-why{margin:4px 0 0 0;padding-left:18px}
.st-passed{color:#116329}.st-failed,.st-error{color:#b3261e}.st-skipped{color:#5c4400}
.st-summary{border-collapse:collapse;margin:6px 0}
</style>"""
"""Every colour is set (text #1f2328 on white: 15.8:1), none is inherited from pytest-html's grey."""


def compact(value: object) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        return repr(value)


def _json_in(value: str) -> JSONValue:
    """The JSON value a string holds (an object or array), else the string itself."""
    stripped = value.strip()
    if stripped[:1] in ("{", "["):
        try:
            return json.loads(stripped)
        except ValueError:
            return value
    return value


def decode_nested(value: JSONValue, depth: int = 0) -> JSONValue:
    """``value`` with JSON held in strings decoded, at any depth (a body inside a response)."""
    if depth > 20:
        return value
    if isinstance(value, str):
        return _json_in(value)
    if isinstance(value, Mapping):
        return {k: decode_nested(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [decode_nested(v, depth + 1) for v in value]
    return value


def pretty(value: object) -> str:
    """JSON (also inside strings) indented; any other string as it is."""
    value = decode_nested(value)
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        return repr(value)


def trim(text: str, limit: int) -> str:
    return shorten(text, limit, tell=True)


def table(css: str, header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A table; cells are HTML already escaped by the caller."""
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{css}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def sse_frames(text: str, headers: JSONValue = None) -> tuple[list[dict[str, JSONValue]], bool] | None:
    """The frames of a Server-Sent Events body (and whether it ended with ``[DONE]``), or None when
    the body is not a stream (by its content type, or its first line being an SSE field)."""
    content_type = ""
    if isinstance(headers, Mapping):
        content_type = str(next((v for k, v in headers.items() if str(k).lower() == "content-type"), ""))
    first = text.lstrip("\ufeff \r\n").split("\n", 1)[0]
    if "event-stream" not in content_type and not first.startswith(("data:", "event:", "id:")):
        return None
    from ..blocks.stream.sse import parse_events

    events, done = parse_events(text)
    return [e.to_dict() for e in events], done


class Render:
    """Escaping, redaction and trimming in one place."""

    def __init__(self, redactor: Redactor, limit: int) -> None:
        self.redactor = redactor
        self.limit = limit

    def text(self, value: object) -> str:
        """Escaped, redacted text of a scalar."""
        return escape(self.redactor.text(value if isinstance(value, str) else compact(value)))

    def pre(self, value: object) -> str:
        """A ``<pre>`` block: JSON (also JSON inside strings) pretty-printed, then trimmed."""
        return f"<pre>{escape(trim(pretty(self.redactor.data(value)), self.limit))}</pre>"

    def cell(self, value: object) -> str:
        return escape(
            trim(self.redactor.text(value if isinstance(value, str) else compact(value)), self.limit)
        )

    def body(self, value: JSONValue, headers: JSONValue = None) -> str:
        """A request or response body: an SSE stream as a table of its frames, JSON pretty-printed."""
        if isinstance(value, str):
            frames = sse_frames(value, headers)
            if frames is not None:
                return self.frames(*frames)
        return self.pre(value)

    def frames(self, frames: list[dict[str, JSONValue]], done: bool) -> str:
        shown = frames[:200]
        rows = [
            [str(n), self.cell(f.get("event", "message")), self.pre(f.get("data", ""))]
            for n, f in enumerate(shown, 1)
        ]
        if done:
            rows.append([str(len(frames) + 1), "", "<code>[DONE]</code>"])
        more = f"<p>... {len(frames) - len(shown)} more frames</p>" if len(frames) > len(shown) else ""
        head = f'<div class="st-label">stream: {len(frames)} frame(s){", then [DONE]" if done else ""}</div>'
        return head + table("st-sse", ["#", "event", "data"], rows) + more
