"""``spans:`` in a case's ``**Strict:**`` YAML: assertions on the spans the agent exported over OTLP for
the case (``docs/traces.md``, ``docs/compliance.md``), and the case's tool calls read from them.

```yaml
spans:
  wait_ms: 5000                # how long to wait for the case's spans (default 5000)
  count: {min: 3}              # every span of the case: a number, {min, max}, or an expression
  errors: 0                    # spans with an error status
  tool_calls:                  # the tool calls read from tool spans: JSONPath -> expression
    "[0].name": get_weather
    "[0].arguments.city": Paris
  match:                       # each entry: the spans it matches, and how many must (at least one)
    - name: execute_tool get_weather        # an expression: plain, /regex/, contains(...)
      attributes: {gen_ai.tool.name: get_weather}   # attribute names are taken whole, dots and all
      status: ok
      duration_ms: {max: 2000}
      count: 1
```

A case with ``spans:`` gets a ``Spans`` step after its request (it needs ``--semantictest-otel``);
the checks read that step's output. Unknown keys are problems with a did-you-mean at collection; an
attribute no span carries is named at run time with a did-you-mean from the spans' own attribute
names and the conventions' (:mod:`pytest_semantictest.spans.expect`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ...databus import DataBus
from ...errors import clip, did_you_mean
from ...json_types import JSONObject, JSONValue
from ...model import CheckResult, Failure, Step
from ...spans.expect import Bound, SpanEntry, ValueTest, bound_of, counted, entry_failure
from ...spans.model import Span, span_of
from .strict import mismatches

if TYPE_CHECKING:
    from ...model import Check
    from .expr import Expr
    from .models import Strict

SLOT = "_spans"
KEYS = ("wait_ms", "count", "errors", "tool_calls", "match")
ENTRY_KEYS = ("name", "kind", "service", "status", "attributes", "duration_ms", "count")
DEFAULT_WAIT_MS = 5000

Path = tuple[str | int, ...]


class _Compiler(Protocol):
    """What of the strict block's compiler (``strict_yaml``) the ``spans:`` key uses."""

    strict: Strict
    checks: list[Check]

    def problem(self, path: Path, message: str) -> None: ...

    def expr(self, path: Path, value: JSONValue) -> Expr | None: ...

    def entry(self, path: Path, mapping: JSONValue, prefix: str = "") -> list[tuple[str, Expr, int]]: ...


@dataclass
class SpanCheck:
    """One ``spans:`` assertion over the Spans step's output."""

    label: str
    judge: Callable[[list[Span], JSONObject], list[str]]
    line: int | None = None

    @property
    def reads(self) -> frozenset[str]:
        return frozenset({SLOT})

    def describe(self) -> str:
        return self.label

    async def evaluate(self, bus: DataBus, ctx: object) -> CheckResult:
        return self.evaluate_sync(bus)

    def evaluate_sync(self, bus: DataBus) -> CheckResult:
        output = bus.get(SLOT)
        if not isinstance(output, dict):
            return CheckResult()  # the Spans step failed: its error is the case's
        spans = [span_of(s) for s in output.get("spans") or [] if isinstance(s, dict)]
        return CheckResult([Failure(self.label, why, line=self.line) for why in self.judge(spans, output)])


def _value_test(expr: Expr) -> ValueTest:
    return lambda found, value: expr.test(found, [value] if found else [])


def _number(compiler: _Compiler, path: Path, value: JSONValue) -> Bound | Expr | None:
    if isinstance(value, (int, float, dict)) and not isinstance(value, bool):
        bound = bound_of(value)
        if isinstance(bound, str):
            compiler.problem(path, f"{_place(path)}: {bound}")
            return None
        return bound
    return compiler.expr(path, value)


def _count_judge(
    label: str, test: Bound | Expr, errors: bool
) -> Callable[[list[Span], JSONObject], list[str]]:
    def judge(spans: list[Span], output: JSONObject) -> list[str]:
        chosen = [s for s in spans if s.status == "error"] if errors else spans
        if isinstance(test, Bound):
            why = counted(chosen, label, test)
        else:
            found = test.test(True, [len(chosen)])
            why = f"{label}: {found}" if found is not None else None
        return [why] if why is not None else []

    return judge


def compile_spans(compiler: _Compiler, path: Path, value: JSONValue) -> None:
    """The checks ``spans:`` asks for, into ``compiler`` (problems named with their YAML line)."""
    if not isinstance(value, dict):
        compiler.problem(path, f"spans must be a mapping with any of {', '.join(KEYS)}")
        return
    line = compiler.strict.line_of
    for key, inner in value.items():
        where = path + (key,)
        if key not in KEYS:
            compiler.problem(
                where,
                f"unknown key 'spans.{clip(key)}'{did_you_mean(key, KEYS)} (spans keys: {', '.join(KEYS)})",
            )
        elif key == "wait_ms":
            if not isinstance(inner, int) or isinstance(inner, bool) or not 0 <= inner <= 600_000:
                compiler.problem(where, "spans.wait_ms must be milliseconds, 0 to 600000")
        elif key in ("count", "errors"):
            test = _number(compiler, where, inner)
            if test is not None:
                label = "spans.count" if key == "count" else "spans.errors (spans with an error status)"
                compiler.checks.append(
                    SpanCheck(label, _count_judge(label, test, key == "errors"), line(where))
                )
        elif key == "tool_calls":
            entry = compiler.entry(where, inner)
            if entry:
                compiler.checks.append(SpanCheck("spans.tool_calls", _tool_calls_judge(entry), line(where)))
        elif not isinstance(inner, list) or not inner:
            compiler.problem(
                where, "spans.match must be a list of span entries (- name: ..., attributes: ...)"
            )
        else:
            for n, item in enumerate(inner):
                found = _entry(compiler, where + (n,), item)
                if found is not None:
                    compiler.checks.append(
                        SpanCheck(f"spans.match[{n}]", _entry_judge(found), line(where + (n,)))
                    )


def _tool_calls_judge(entry: list[tuple[str, Expr, int]]) -> Callable[[list[Span], JSONObject], list[str]]:
    def judge(spans: list[Span], output: JSONObject) -> list[str]:
        calls = output.get("toolCalls") or []
        return [
            f"{p}: {why} (tool calls from spans: {clip(calls, 200)})"
            for p, why, _ in mismatches(calls, entry)
        ]

    return judge


def _entry_judge(entry: SpanEntry) -> Callable[[list[Span], JSONObject], list[str]]:
    def judge(spans: list[Span], output: JSONObject) -> list[str]:
        why = entry_failure(entry, spans)
        return [why] if why is not None else []

    return judge


def _entry(compiler: _Compiler, path: Path, item: JSONValue) -> SpanEntry | None:
    if not isinstance(item, dict) or not item:
        compiler.problem(path, f"{_place(path)} must be a mapping with any of {', '.join(ENTRY_KEYS)}")
        return None
    entry = SpanEntry(clip(_flow(item), 120))
    ok = True
    for key, inner in item.items():
        where = path + (key,)
        if key not in ENTRY_KEYS:
            compiler.problem(
                where,
                f"unknown span key '{clip(key)}'{did_you_mean(key, ENTRY_KEYS)} (span keys: {', '.join(ENTRY_KEYS)})",
            )
            ok = False
        elif key == "attributes":
            if not isinstance(inner, dict) or not inner:
                compiler.problem(where, f"{_place(where)} must map attribute names to expected values")
                ok = False
                continue
            for name, expected in inner.items():
                expr = compiler.expr(where + (name,), expected)
                ok = ok and expr is not None
                if expr is not None:
                    entry.attributes[str(name)] = _value_test(expr)
        elif key in ("duration_ms", "count"):
            bound = bound_of(inner)
            if isinstance(bound, str):
                compiler.problem(where, f"{_place(where)}: {bound}")
                ok = False
            elif key == "count":
                entry.count = bound
            else:
                entry.duration_ms = bound
        else:
            expr = compiler.expr(where, inner)
            ok = ok and expr is not None
            if expr is not None:
                setattr(entry, key, _value_test(expr))
    entry.line = compiler.strict.line_of(path)
    return entry if ok else None


def _flow(item: JSONObject) -> str:
    """An entry as one line of YAML flow style, to name it in a failure."""
    import json

    return "{" + ", ".join(f"{k}: {json.dumps(v, default=str)}" for k, v in item.items()) + "}"


def _place(path: Path) -> str:
    return ".".join(str(p) if not isinstance(p, int) else f"[{p}]" for p in path).replace(".[", "[")


def spans_step(strict: Strict | None, line: int | None, where: str) -> Step | None:
    """The ``Spans`` step a case with ``spans:`` runs after its request, else None."""
    if strict is None or not isinstance(strict.data.get("spans"), dict):
        return None
    wait = strict.data["spans"].get("wait_ms", DEFAULT_WAIT_MS)
    wait = wait if isinstance(wait, int) and not isinstance(wait, bool) else DEFAULT_WAIT_MS
    return Step("Spans", "spans", None, {"waitMs": wait}, SLOT, line, where)
