"""What deterministic checks prose allows: handoff steps of a ``**Flow:**``, ``**Condition:**``.

A flow step like "Router hands off to weather-agent" (both names agents of the setup) expects a
``handoff`` event from router to weather-agent that did not fail, after the events the earlier
steps matched; "Router attempts handoff to weather-agent" accepts a failed one. Other steps
are left to the judge. A condition is evaluated against the setup ("Agent has tools
configured"); one that cannot be read skips the case with the condition as the reason. A
``**Behavior:**`` such as "Client disconnects after receiving 3 chunks" makes the request step
stop reading a stream after that many chunks (:func:`disconnect_after`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from ...databus import DataBus
from ...json_types import JSONObject
from ...model import CheckResult, Failure
from .models import Agent, Bullet, Setup
from .strict import SLOT

_HANDOFF = re.compile(
    r"^`?(?P<src>[\w.-]+)`?\s+(?P<verb>hands?\s+(?:off\s+|over\s+|it\s+)?to|(?P<attempt>attempts?)\s+(?:a\s+)?handoff\s+to"
    r"|delegates?\s+to|transfers?\s+to)\s+`?(?P<dst>[\w.-]+?)`?(?=[\s,.;:]|$)",
    re.I,
)
_HAS = re.compile(
    r"^(?:the\s+)?(?:`?(?P<who>[\w.-]+)`?)\s+(?:has|have)\s+(?P<no>no\s+)?(?P<what>tools|handoffs|skills)"
    r"(?:\s+configured|\s+defined)?\.?$",
    re.I,
)
_HAS_ONE = re.compile(
    r"^(?:the\s+)?(?:`?(?P<who>[\w.-]+)`?)\s+(?:has|have)\s+(?:the\s+)?`?(?P<name>[\w.-]+)`?\s+"
    r"(?P<what>tool|skill|handoff)(?:\s+configured)?\.?$",
    re.I,
)

_NUMBERS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "a": 1,
    "an": 1,
    "a single": 1,
    "single": 1,
}
_COUNT = r"(?P<{}>\d+|one|two|three|four|five|six|seven|eight|nine|ten|an?(?:\s+single)?|single)"
_STOP = (
    r"(?:disconnect(?:s|ed|ing)?|cancel(?:s|l?ed|l?ing)?|abort(?:s|ed|ing)?|hangs?\s+up|hung\s+up"
    r"|(?:closes?|closed|closing|drops?|dropped|terminates?|terminated|kills?|killed)\s+(?:the\s+|its\s+)?"
    r"(?:connection|stream|request|socket|response)"
    r"|stops?\s+(?:reading|consuming|listening)|stopped\s+(?:reading|consuming|listening))"
)
_DISCONNECT = re.compile(
    _STOP + r"(?:\s+(?:from\s+)?(?:the\s+|its\s+)?(?:stream|request|connection|server|response))?"
    r"\s+(?:right\s+|just\s+|immediately\s+)?after\s+(?:(?:receiving|reading|getting|consuming|seeing|the)\s+)*"
    r"(?:(?:the\s+)?first\s+(?:" + _COUNT.format("first") + r"\s+)?|" + _COUNT.format("n") + r"\s+)"
    r"(?:(?:sse|data|json|streamed|stream|streaming|response|content|delta|completion|message)\s+){0,2}chunks?\b",
    re.I,
)


def disconnect_after(behavior: str | None) -> int | None:
    """N when a ``**Behavior:**`` says the client goes away after N stream chunks: "Client disconnects
    after receiving 3 chunks", "cancel after the first 2 SSE chunks", "closes the connection after
    one chunk", "stops reading after the first chunk". None otherwise (or for 0 chunks)."""
    match = _DISCONNECT.search(" ".join((behavior or "").split()))
    if match is None:
        return None
    word = (match.group("n") or match.group("first") or "1").lower()
    count = int(word) if word.isdigit() else _NUMBERS.get(" ".join(word.split()), 0)
    return count or None


@dataclass
class HandoffStep:
    source: str
    target: str
    attempt: bool
    line: int
    text: str


@dataclass
class FlowCheck:
    """The flow's handoff steps, in order, against the ``handoff`` events seen."""

    steps: list[HandoffStep] = field(default_factory=list)
    line: int | None = None

    @property
    def reads(self) -> frozenset[str]:
        return frozenset({SLOT})

    def describe(self) -> str:
        return "flow: " + ", ".join(f"{s.source} -> {s.target}" for s in self.steps)

    async def evaluate(self, bus: DataBus, ctx: object) -> CheckResult:
        return self.evaluate_sync(bus)

    def evaluate_sync(self, bus: DataBus) -> CheckResult:
        observed = bus.get(SLOT)
        if not isinstance(observed, dict) or not observed.get("ok"):
            return CheckResult()
        handoffs = _handoff_events(observed)
        start = 0
        for step in self.steps:
            hit = next((i for i in range(start, len(handoffs)) if _matches(handoffs[i], step)), None)
            if hit is None:
                return CheckResult([_missing_step(step, handoffs, bool(start))])
            start = hit + 1
        return CheckResult()


def _handoff_events(observed: JSONObject) -> list[JSONObject]:
    """The ``handoff`` events of the exchange, in the order they arrived."""
    return [e for e in observed.get("events") or [] if isinstance(e, dict) and e.get("type") == "handoff"]


def _missing_step(step: HandoffStep, handoffs: list[JSONObject], after_others: bool) -> Failure:
    """The failure of a flow step no handoff event matched (after those of the steps before it)."""
    kind = "handoff event (any status)" if step.attempt else "successful handoff event"
    seen = [{k: e.get(k) for k in ("from", "to", "status") if k in e} for e in handoffs]
    return Failure(
        f"flow step '{step.text}'",
        f"no {kind} from '{step.source}' to '{step.target}'"
        + (" after the handoffs of the steps above" if after_others else ""),
        line=step.line,
        details={"handoff events seen": json.dumps(seen) if seen else "none"},
    )


def _matches(event: JSONObject, step: HandoffStep) -> bool:
    def same(value: object, name: str) -> bool:
        return isinstance(value, str) and value.lower() == name.lower()

    target = event.get("to", event.get("target"))
    source = event.get("from", event.get("source"))
    if not same(target, step.target) or (source is not None and not same(source, step.source)):
        return False
    return step.attempt or str(event.get("status", "")).lower() not in ("failed", "error")


def flow_check(flow: list[Bullet], agents: list[Agent]) -> FlowCheck | None:
    """The handoff steps a flow describes between agents of the setup (None when it has none)."""
    names = {a.name.lower(): a.name for a in agents} | {a.id.lower(): a.name for a in agents}
    steps = []
    for bullet in flow:
        match = _HANDOFF.match(bullet.text.strip())
        if match is None:
            continue
        source, target = names.get(match.group("src").lower()), names.get(match.group("dst").lower())
        if source and target:
            steps.append(
                HandoffStep(source, target, bool(match.group("attempt")), bullet.line, bullet.text.strip())
            )
    return FlowCheck(steps, steps[0].line) if steps else None


def condition_skip(condition: Bullet, setup: Setup) -> str | None:
    """None when the condition holds; else the reason to skip the case."""
    text = condition.text.strip()
    holds, why = _evaluate(text, setup)
    if holds is None:
        return f"condition not evaluated: {text} (line {condition.line})"
    return None if holds else f"condition not met: {text} ({why})"


def _evaluate(text: str, setup: Setup) -> tuple[bool | None, str]:
    """Whether a condition holds and what decided it; None when it is not one we can evaluate."""
    match = _HAS.match(text)
    if match:
        return _has_any(match, setup)
    match = _HAS_ONE.match(text)
    if match:
        return _has_named(match, setup)
    return None, ""


def _has_any(match: re.Match[str], setup: Setup) -> tuple[bool | None, str]:
    """The condition "Agent has (no) tools/handoffs/skills configured": whether an agent meant has any."""
    agents = _subjects(match.group("who"), setup)
    if agents is None:
        return None, ""
    what = match.group("what").lower()
    having = [a.name for a in agents if getattr(a, what) or (what == "tools" and setup.tool_definitions)]
    holds = bool(having) != bool(match.group("no"))
    listed = ", ".join(having) if having else "none"
    return holds, f"agents of the setup with {what}: {listed}"


def _has_named(match: re.Match[str], setup: Setup) -> tuple[bool | None, str]:
    """The condition "Agent has the X tool" (or skill, handoff): an agent meant lists it (a tool: or the
    setup's tool definitions do)."""
    agents = _subjects(match.group("who"), setup)
    if agents is None:
        return None, ""
    what, name = match.group("what").lower() + "s", match.group("name")
    holds = any(name in getattr(a, what) for a in agents) or (what == "tools" and name in setup.tool_names())
    return holds, f"no agent of the setup lists {name} under {what}"


def _subjects(who: str, setup: Setup) -> list[Agent] | None:
    """The agents a condition is about: "Agent" (any agent of the setup) or a named one."""
    if who.lower() in ("agent", "agents", "an agent", "the agent"):
        return list(setup.agents)
    agent = setup.agent(who)
    return [agent] if agent is not None else None
