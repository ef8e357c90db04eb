"""What a test is told when its trace records cannot be found or told apart: highbar 0.1.0rc3's messages,
in the words of the spec's ``agent.correlate`` (its keys named; the ``X-Highbar-Test`` header only for
the default correlation, whose ``test`` key comes from it)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from ..json_types import JSONValue
from .correlate import describe

_THREAD = "a thread the agent starts itself needs contextvars.copy_context() to keep the tag"
NO_CONTEXT_WARNING = (
    "some tool calls carry {untagged}, so each counts for the test whose window it falls in, and a call that "
    "ends after the response can land in the next test; {hint}; " + _THREAD
)
"""A window with no tagged record: its untagged calls are all there is, and count."""
UNATTRIBUTED_WARNING = (
    "some tool calls carry {untagged}, so they count for no test, and a test whose result they would change "
    "is an error; {hint}; " + _THREAD
)
"""Next to tagged records, an untagged call counts for no test."""


def is_default(correlate: Mapping[str, JSONValue]) -> bool:
    return [str(key) for key in correlate] == ["test"]


def untagged(correlate: Mapping[str, JSONValue]) -> str:
    """What untagged records lack."""
    if is_default(correlate):
        return "no test context"
    return f"none of agent.correlate's keys ({', '.join(str(key) for key in correlate)})"


def tag_hint(correlate: Mapping[str, JSONValue]) -> str:
    """How records get the context that ``agent.correlate`` matches on."""
    if is_default(correlate):
        return (
            "tag them with the test id: highbar.asgi.Middleware, or hb.turn(test=<the X-Highbar-Test header>)"
        )
    keys = [str(key) for key in correlate]
    fields = ", ".join(f"{key}=..." for key in keys)
    return (
        f"give their context {', '.join(keys)} (agent.correlate): hb.turn({fields}) around the handling of "
        "each message, or a `context` field from another writer"
    )


def warning(template: str, correlate: Mapping[str, JSONValue]) -> str:
    return template.format(untagged=untagged(correlate), hint=tag_hint(correlate))


def _keys(contexts: Iterable[Mapping[str, JSONValue]]) -> list[str]:
    return sorted({str(key) for context in contexts for key in context})


def not_observed(
    path: Path, resolved: Mapping[str, JSONValue], others: Sequence[Mapping[str, JSONValue]]
) -> str:
    """Records were tagged, none with this execution's values (``others``: their contexts)."""
    return (
        f"not observed: no trace record in {path} matches this test ({describe(resolved)}); the {len(others)} "
        f"read while it ran belong to other executions (context keys: {', '.join(_keys(others))}). The context "
        "the agent writes must carry the keys of agent.correlate; the default, 'test', comes from the "
        "X-Highbar-Test header, which highbar.asgi.Middleware and hb.turn(test=<that header>) write"
    )


def not_observed_attached(
    path: Path, resolved: Mapping[str, JSONValue], records: Sequence[Mapping[str, JSONValue]]
) -> str:
    """An attached agent's window holds no record carrying the correlation (``records``: the contexts of
    every tool and turn record read while the test ran)."""
    keys = _keys(records)
    if keys:
        return (
            f"not observed: no trace record in {path} carries the keys of agent.correlate "
            f"({describe(resolved)}); the ones read while this test ran have context keys: {', '.join(keys)}"
        )
    if records:
        return (
            f"not observed: the {len(records)} trace records read while this test ran carry no context, so "
            f"they cannot be told from other traffic on this agent; {tag_hint(resolved)}"
        )
    return (
        f"not observed: nothing was written to {path} while this test ran; the agent must write a turn per "
        "message it handles"
    )
