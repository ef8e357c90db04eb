"""The pipeline trace as a failure shows it without ``-vv``: the steps that matter, briefly.

Each step's line, then its input and output one field a line, each value on one line and cut short;
a request as its request line (``POST http://host/path``). Left out: response headers, the block's
own bookkeeping (``Block.bookkeeping``), internal fields (``_``-prefixed) and empty values. ``-vv``
shows the whole trace (:func:`.failure.render_trace`), the HTML report every request and response.
"""

from __future__ import annotations

import json

from ..blocks.registry import get_block
from ..json_types import JSONValue
from ..model import StepTrace
from ..redact import Redactor
from .failure import sized

VALUE_CHARS = 200
"""A value longer than this (as one line of JSON) is cut; ``-vv`` shows it whole."""
LEFT_OUT = frozenset({"headers"})
MORE = "(headers, internal fields and whole values: -vv, or the HTML report)"


def render_brief_trace(trace: list[StepTrace], redactor: Redactor, limit: int = 2000) -> str:
    out: list[str] = []
    hidden = False
    chars = min(limit, VALUE_CHARS)
    for n, t in enumerate(trace):
        again = f" (loop iteration {t.iteration + 1})" if t.iteration else ""
        line = f" line {t.step.line}" if t.step.line else ""
        out.append(f"[{n}] {t.step.id} ({t.step.block}){line}{again} {t.duration_ms:.1f} ms")
        lines, cut = _field_lines(t, redactor, chars)
        out += lines
        hidden = hidden or cut
        if t.error:
            out.append(f"  error: {redactor.text(t.error)}")
    if hidden:
        out.append(MORE)
    return "\n".join(out)


def _field_lines(t: StepTrace, redactor: Redactor, chars: int) -> tuple[list[str], bool]:
    """A step's input and output fields, a line each (values cut to ``chars``), and whether anything
    was left out or cut."""
    cls = get_block(t.step.block)
    skip = LEFT_OUT | (cls.bookkeeping if cls is not None else frozenset())
    out: list[str] = []
    hidden = False
    for label, value in (("input", t.input), ("output", t.output)):
        fields, dropped = _fields(redactor.data(value), skip)
        hidden = hidden or dropped
        for key, field in fields:
            text = _one_line(field)
            hidden = hidden or len(text) > chars
            out.append(f"  {label}{key}: {sized(text, chars)}")
    return out, hidden


def _fields(value: JSONValue, skip: frozenset[str]) -> tuple[list[tuple[str, JSONValue]], bool]:
    """An object's fields worth a line (``.key``, value) and whether any was left out; another value
    is one field (``""``)."""
    if not isinstance(value, dict):
        return ([] if value in (None, "") else [("", value)]), False
    kept = [
        (f".{k}", v) for k, v in value.items() if k not in skip and not k.startswith("_") and not _empty(v)
    ]
    return kept, len(kept) < len(value) and any(k in skip or k.startswith("_") for k in value)


def _empty(value: JSONValue) -> bool:
    return value is None or (isinstance(value, (str, list, dict)) and not value)


def _one_line(value: JSONValue) -> str:
    if isinstance(value, dict) and isinstance(value.get("method"), str) and isinstance(value.get("url"), str):
        return f"{value['method']} {value['url']}"  # a request: its request line
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, ensure_ascii=False, default=repr)
