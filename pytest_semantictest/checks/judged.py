"""Natural-language assertions judged by the LLM judge (compliance's ``**Assertions:**`` bullets,
compiled by ``formats/compliance/compile.py``): one call per case, a verdict and a reason per bullet,
structured output validated with pydantic, answers kept in the replay cache.

Without a configured judge the bullets are not evaluated (the case is skipped unless a strict
check failed; an error under ``--semantictest-require-judge``). A judge that cannot answer
(unreachable, refusal, unusable output, replay miss) makes the case an ERROR, never a verdict.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from pydantic import BaseModel, ConfigDict

from ..errors import clip
from ..evidence import JudgedItem, JudgedItems
from ..json_types import JSONObject, JSONValue
from ..llm.consistency import Sampled, sample
from ..llm.structured import model_schema, parse_answer
from ..model import CheckResult, Failure
from ..shown import shorten
from .run import CheckRun, llm_client

if TYPE_CHECKING:
    from ..databus import DataBus
    from ..llm.client import Completion, LLMClient
    from ..run_context import LLMUnavailable


class Bullet(Protocol):
    """One natural-language assertion as written (compliance: ``formats.compliance.models.Bullet``)."""

    @property
    def text(self) -> str: ...

    @property
    def line(self) -> int: ...


TEMPLATE = "compliance-judge-1"
SCHEMA_NAME = "compliance_assertions"
BODY_LIMIT = 6000

SYSTEM = """You check an AI agent server's HTTP response against assertions written in plain language.
Judge every numbered assertion only by the test case, the request and the response shown to you.
An assertion holds when the response shows it holds; when the response gives no evidence either
way (for example about the server's internals), it does not hold: say that it cannot be verified.
Assertions that allow alternatives ("may", "either ... or") hold when any alternative is shown.
Answer with a JSON object matching the response schema: for each assertion number, "passed"
(true or false) and "reason" (one sentence citing what in the response decides it)."""


class BulletVerdict(BaseModel):
    model_config = ConfigDict(extra="forbid")

    passed: bool
    reason: str


class Verdicts(BaseModel):
    model_config = ConfigDict(extra="forbid")

    assertions: dict[str, BulletVerdict]


def majority(answers: Sequence[Verdicts], replayed: int) -> tuple[Verdicts, Sampled | None]:
    """One answer from several samples: each assertion holds when most samples say so (a tie does
    not), with the reason of a sample that agrees; and what the samples said (None for one)."""
    if len(answers) == 1:
        return answers[0], None
    first = answers[0]
    combined = {key: _most_said(answers, key) for key in first.assertions}
    whole = sum(1 for a in answers if all(v.passed for v in a.assertions.values()))
    split = any(len({a.assertions[key].passed for a in answers}) > 1 for key in first.assertions)
    return first.model_copy(update={"assertions": combined}), Sampled(
        whole, len(answers), replayed=replayed, split=split
    )


def _most_said(answers: Sequence[Verdicts], key: str) -> BulletVerdict:
    """The verdict most samples give assertion ``key`` (a tie: not held), as a sample that says it."""
    said = [a.assertions[key] for a in answers]
    held = sum(1 for v in said if v.passed) * 2 > len(said)
    return next(v for v in said if v.passed == held)


def verdict_schema(count: int) -> JSONObject:
    return model_schema(Verdicts, SCHEMA_NAME, keys={"assertions": [str(n) for n in range(1, count + 1)]})


def parse_verdicts(text: str, count: int) -> Verdicts:
    """The model's answer, validated; ValueError (the client asks once more) when unusable."""
    verdicts = parse_answer(Verdicts, text, "answer")
    wanted = {str(n) for n in range(1, count + 1)}
    if set(verdicts.assertions) != wanted:
        raise ValueError(
            f"assertions must answer exactly {sorted(wanted, key=int)}, got {sorted(verdicts.assertions)}"
        )
    return verdicts


@dataclass
class JudgedAssertions:
    """The case's natural-language assertions as one check."""

    bullets: Sequence[Bullet]
    case: Mapping[str, object] = field(default_factory=dict)
    """What the judge is told about the case: label, description, setup, flow, behaviour."""
    line: int | None = None
    strict: int = 0
    """How many deterministic checks the case has (named in the skip reason when they passed)."""

    @property
    def reads(self) -> frozenset[str]:
        return frozenset({"observed", "response"})

    def describe(self) -> str:
        return f"{len(self.bullets)} natural-language assertion(s)"

    async def evaluate(self, bus: DataBus, ctx: CheckRun) -> CheckResult:
        from ..llm.errors import LLMError

        missing = ctx.llm_unavailable("judge")
        if missing is not None:
            return self._not_judged(missing)
        llm = llm_client(ctx)
        observed = bus.get("observed")
        if not isinstance(observed, dict) or not observed.get("ok"):
            return CheckResult(skipped="natural-language assertions not evaluated: no response")
        messages = self.messages(bus.get("response.request"), observed)
        try:
            completions = await self._ask(llm, messages, ctx.settings.judge_samples)
        except LLMError as exc:
            return CheckResult(error=f"LLM judge error (assertions, line {self.line}): {exc}")
        verdicts, said = majority([c.parsed for c in completions], sum(1 for c in completions if c.cached))
        model = completions[0].model
        failures = self._with_instability(self.failures(verdicts, model), said, ctx.settings.fail_unstable)
        judged = self.judged(verdicts, model, said.as_dict() if said is not None else None)
        return CheckResult(failures, evidence=[judged])

    def _not_judged(self, missing: LLMUnavailable) -> CheckResult:
        """No judge: an error when one is required, else the assertions are not evaluated."""
        if missing.error:
            return CheckResult(error=str(missing))
        passed = f"{self.strict} strict check(s) passed; " if self.strict else ""
        return CheckResult(
            skipped=f"{passed}{len(self.bullets)} natural-language assertion(s) not evaluated: {missing}"
        )

    async def _ask(
        self, llm: LLMClient, messages: list[dict[str, str]], samples: int
    ) -> list[Completion[Verdicts]]:
        """The judge's answers, ``samples`` of them (each its own cache entry)."""
        count = len(self.bullets)

        async def ask(index: int) -> Completion[Verdicts]:
            return await llm.complete(
                "judge",
                messages,
                schema=verdict_schema(count),
                parse=lambda text: parse_verdicts(text, count),
                template=TEMPLATE,
                sample=index,
                samples=samples,
            )

        return await sample(ask, samples)

    def _with_instability(
        self, failures: list[Failure], said: Sampled | None, fail_unstable: bool
    ) -> list[Failure]:
        """``failures``; with ``--semantictest-fail-unstable``, an unstable judgement that passed fails."""
        if said is None or not said.unstable or not fail_unstable or failures:
            return failures
        return [
            Failure(
                "natural-language assertions",
                f"unstable judgement: {said.describe()} (--semantictest-fail-unstable)",
                line=self.line,
            )
        ]

    def judged(self, verdicts: Verdicts, model: str, samples: JSONObject | None) -> JudgedItems:
        """Every bullet's verdict and reason, for the reports."""
        items = [
            JudgedItem(b.text, verdicts.assertions[str(n)].passed, verdicts.assertions[str(n)].reason)
            for n, b in enumerate(self.bullets, 1)
        ]
        return JudgedItems(f"natural-language assertions (line {self.line})", items, model or None, samples)

    def failures(self, verdicts: Verdicts, model: str) -> list[Failure]:
        results = [(n, bullet, verdicts.assertions[str(n)]) for n, bullet in enumerate(self.bullets, 1)]
        held = [f"{n}. {clip(b.text, 60)}" for n, b, v in results if v.passed]
        out: list[Failure] = []
        for n, bullet, verdict in results:
            if verdict.passed:
                continue
            details: dict[str, JSONValue] = {"judge": f"not met ({model}): {verdict.reason}"}
            if not out and held:
                details["held"] = "; ".join(held)
            out.append(Failure(f"assertion {n}", bullet.text, line=bullet.line, details=details))
        return out

    def messages(self, request: JSONValue, observed: dict[str, JSONValue]) -> list[dict[str, str]]:
        if isinstance(observed.get("reply"), dict):  # a2a, realtime: what the transport step sent
            request = observed.get("request")
        parts = ["## Test case\n" + "\n".join(f"{k}: {v}" for k, v in self.case.items() if v)]
        if isinstance(request, dict):
            parts.append("## Request\n" + "\n".join(_request_lines(request)))
        parts.append("## Response\n" + _response(observed))
        if isinstance(observed.get("follow_up"), dict):
            parts.append("## After the disconnect\n" + _follow_up(observed["follow_up"]))
        listed = "\n".join(f"{n}. {b.text}" for n, b in enumerate(self.bullets, 1))
        parts.append("## Assertions\n" + listed)
        return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n\n".join(parts)}]


def _request_lines(request: dict[str, JSONValue]) -> list[str]:
    """The request as the judge is told it: method and path (or transport), messages, headers (masked), body."""
    from ..redact import mask_headers

    lines = [f"{request.get('method', '')} {_path(request.get('url', ''))}".strip()]
    if request.get("transport"):  # a2a, realtime: the transport, and the messages of a shorthand
        lines = [
            f"transport {request['transport']}"
            + (f" ({request['dialect']})" if request.get("dialect") else "")
            + (f": {lines[0]}" if request.get("url") else "")
        ]
        lines += [f"{m.get('role')}: {m.get('content')}" for m in request.get("messages") or []]
    lines += [f"{k}: {v}" for k, v in (mask_headers(request.get("headers")) or {}).items()]
    if request.get("body") is not None:
        lines.append("\n" + _text(request.get("body")))
    return lines


def _path(url: object) -> str:
    """The request's path and query: the server's host and port (often a free port picked per run)
    say nothing about the response, and would make every run's cache key new."""
    from urllib.parse import urlsplit

    parts = urlsplit(str(url or ""))
    return (
        (parts.path or "/") + (f"?{parts.query}" if parts.query else "") if parts.netloc else str(url or "")
    )


def _text(value: object) -> str:
    text = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False, default=str)
    return shorten(text, BODY_LIMIT, tell=True)


REPLY_FIELDS = ("dialect", "state", "final", "text", "data", "tool_calls", "error", "problem")


def _reply(reply: dict[str, JSONValue]) -> str:
    """An a2a or realtime reply as assembled, without the ids each run draws anew (the cache key)."""
    lines = [f"status: {reply.get('status')}"]
    lines += [
        f"{key}: {json.dumps(reply.get(key), ensure_ascii=False, default=str)}"
        for key in REPLY_FIELDS
        if reply.get(key) not in (None, [], "")
    ]
    artifacts = _artifacts(reply)
    if artifacts:
        lines.append("artifacts:\n" + _text(artifacts))
    if reply.get("responses"):
        lines.append(
            "responses:\n" + _text([{k: r.get(k) for k in ("text", "status")} for r in reply["responses"]])
        )
    lines.append("events, in order (deltas folded):\n" + "\n".join(reply.get("timeline") or ["(none)"]))
    return "\n".join(lines)


def _artifacts(reply: dict[str, JSONValue]) -> list[dict[str, JSONValue]]:
    """The reply's artifacts, each without its ids (they change every run)."""
    return [
        {k: v for k, v in a.items() if k in ("name", "parts", "type", "data", "mimeType")}
        for a in reply.get("artifacts") or []
        if isinstance(a, dict)
    ]


def _response(observed: dict[str, JSONValue]) -> str:
    if isinstance(observed.get("reply"), dict):
        return _reply(observed["reply"])
    lines = [f"status: {observed.get('status')}", f"content-type: {observed.get('content_type') or '(none)'}"]
    headers = {
        k: v
        for k, v in (observed.get("headers") or {}).items()
        if k.startswith(("www-", "x-")) or k == "location"
    }
    lines += [f"{k}: {v}" for k, v in headers.items()]
    lines += _disconnect_lines(observed.get("client_disconnect"))
    lines += _body_lines(observed)
    return "\n".join(lines)


def _disconnect_lines(disconnect: JSONValue) -> list[str]:
    """What the judge is told of a client that was to disconnect mid-stream."""
    lines: list[str] = []
    if isinstance(disconnect, dict) and disconnect.get("disconnected"):
        lines.append(
            f"The client disconnected on purpose after receiving {disconnect.get('chunks_read')} chunk(s), as "
            "the case's behaviour says: what follows is only what was read before it closed the connection "
            "(no [DONE] marker or finish_reason is expected in it)."
        )
    elif isinstance(disconnect, dict):
        lines.append(
            f"The client was to disconnect after {disconnect.get('after_chunks')} chunk(s), but the response "
            f"ended first ({disconnect.get('chunks_read')} chunk(s) read), so it read the whole response."
        )
    return lines


def _body_lines(observed: dict[str, JSONValue]) -> list[str]:
    """The response body: a stream's chunks and content, JSON, or text; and its events."""
    lines: list[str] = []
    if observed.get("stream"):
        lines.append(
            f"a Server-Sent Events stream of {len(observed.get('chunks') or [])} JSON chunk(s); "
            f"final event: {observed.get('final_event')!r}"
        )
        lines.append("concatenated content: " + json.dumps(observed.get("content"), ensure_ascii=False))
        if observed.get("tool_calls"):
            lines.append("tool calls: " + _text(observed["tool_calls"]))
        lines.append("chunks:\n" + _text(observed.get("chunks")))
    elif observed.get("is_json"):
        lines.append("body:\n" + _text(observed.get("json")))
    else:
        lines.append("body (not JSON): " + _text(observed.get("text", "")))
    if observed.get("events") and not observed.get("is_json"):
        lines.append("events:\n" + _text(observed["events"]))
    return lines


def _follow_up(follow_up: dict[str, JSONValue]) -> str:
    """What the follow-up request (sent after the client disconnected) got."""
    from ..redact import mask_headers

    sent = follow_up.get("request")
    request: dict[str, JSONValue] = sent if isinstance(sent, dict) else {}
    body = request.get("body")
    stream = body.get("stream") if isinstance(body, dict) else None
    what = "the same request without streaming" if stream is False else "the same request again"
    lines = [
        f"Then, to see whether the server still serves requests, the client sent {what} to the same server: "
        f"{request.get('method', '')} {_path(request.get('url', ''))}".rstrip()
    ]
    lines += [f"{k}: {v}" for k, v in (mask_headers(request.get("headers")) or {}).items()]
    if follow_up.get("error"):
        lines.append(f"it got no response: {follow_up['error']}")
        return "\n".join(lines)
    lines.append(f"status: {follow_up.get('status')}")
    lines.append(f"content-type: {follow_up.get('content_type') or '(none)'}")
    if "content" in follow_up:
        lines.append("message content: " + json.dumps(follow_up["content"], ensure_ascii=False))
    else:
        lines.append("body: " + str(follow_up.get("body", "")))
    return "\n".join(lines)
