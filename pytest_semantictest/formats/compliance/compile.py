"""A parsed compliance document compiled to the internal model (nothing here runs anything).

Every case becomes: a ``MockData`` step showing the chosen variables (when it has any), a
``ChatRequest`` step (output ``response``) and a ``ChatResponse`` step (output ``observed``) (an
``a2a`` or ``realtime`` case: one ``TransportRequest`` step, :mod:`.transport`), then checks: the
response arrived and ``**Expected:**`` holds, the strict checks, the flow's handoff steps, and the
natural-language assertions (one judge call).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ...checks.judged import JudgedAssertions
from ...errors import Problem, SemanticTestWarning
from ...json_types import JSONObject
from ...model import AgentRequirement, Case, Check, Step, Suite
from .agent_urls import on_agent_path
from .data import ComplianceCase, ComplianceFile
from .mcp import McpReplyCheck, mcp_step, server_of
from .models import DEFAULT_BASE_URL, Document, Setup, TestCase
from .prose import condition_skip, flow_check
from .request import Built, build_request
from .strict import ResponseCheck
from .strict_spans import spans_step
from .strict_yaml import compile_strict
from .transport import ReplyCheck, request_step, transport_config, transport_url

FORMAT = "compliance"
REPORT_S = 5.0
"""The engine's bound on a case is its ``timeout`` plus this: the case's exchange owns the ``timeout``
(it ends there and reports the state it reached and the last events), and reporting that may take a
while on a loaded machine. The engine's own timeout is only what is left when a step overran its
deadline."""


@dataclass
class Settings:
    """Where requests go and what fills placeholders (options, ini keys, environment)."""

    base_url: str | None = None
    """Given explicitly (option, ini key, ``COMPLIANCE_BASE_URL``/``BASE_URL``); else the setup's
    ``### Environment`` default, else http://localhost:8765."""
    api_key: str | None = None
    a2a_version: tuple[str, str] | None = None
    """The A2A version for files that name none, and where it was given (option or environment)."""
    agent_url: str | None = None
    """A URL with ``{agent}``: each case goes to its agent's own URL (``agent_urls.py``)."""
    values: dict[str, str] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    strict_only: bool = False
    server: str | None = None
    """A command that starts the server (the agent lifecycle starts it once, stops it at the end)."""
    cwd: Path = field(default_factory=Path.cwd)
    log_dir: Path = Path(".semantictest/logs")


class ComplianceWarning(SemanticTestWarning):
    """Something a compliance file does that runs, but not quite as written (pytest's warnings summary)."""


def base_url(
    setup: Setup, settings: Settings, transport: str = "completions", dialect: str | None = None
) -> str:
    declared = setup.environment.get("BASE_URL")
    return (
        transport_url(transport, dialect, settings.env)
        or settings.base_url
        or (declared.default if declared and declared.default else None)
        or DEFAULT_BASE_URL
    )


def compile_document(doc: Document, settings: Settings) -> Suite:
    """The Suite for ``doc``. Problems of the file were raised by the parser; a problem confined to one
    case (its text, its strict block, its request, a ``{placeholder}`` with no value) is that case's
    ``error``: it ERRORs before anything is sent, the other cases run."""
    url = base_url(doc.setup, settings, doc.front.transport, doc.front.dialect)
    target = server_of(doc.front.server, settings.env) if doc.front.transport == "mcp" else None
    if isinstance(target, str) and target.startswith(("http://", "https://")):
        url = target  # an MCP server over HTTP: what --semantictest-compliance-server waits for
    setup = doc.setup.model_copy(update={"base_url": url})
    front = doc.front
    file_skip = f"skip_reason: {front.skip_reason}" if front.skip_reason else None
    cases = [
        _with_spans(_case(tc, node, doc, setup, settings, file_skip), tc)
        for tc, node in zip(doc.cases, _node_names(doc))
    ]
    agents = [_server(setup.base_url, settings)] if settings.server else []
    data = ComplianceFile(front.name, tuple(front.depends_on), float(front.timeout or 0), setup)
    return Suite(front.name, Path(doc.path), FORMAT, cases, agents=agents, format_data=data)


def _with_spans(case: Case, tc: TestCase) -> Case:
    """``case``, reading the agent's spans after its request when its strict block checks ``spans:``."""
    if case.steps and (step := spans_step(tc.strict, tc.line, case.place)) is not None:
        case.steps.append(step)
    return case


def _node_names(doc: Document) -> list[str]:
    """Each case's test name: its title, numbered (with a warning) where an earlier case has it."""
    names: list[str] = []
    used: dict[str, int] = {}
    first_line: dict[str, int | None] = {}
    for tc in doc.cases:
        node = tc.label.replace("::", ":").strip()
        used[node] = used.get(node, 0) + 1
        first_line.setdefault(node, tc.line)
        if used[node] > 1:
            renamed = f"{node} [{used[node]}]"
            earlier = f"line {first_line[node]}" if first_line[node] else "an earlier case"
            warnings.warn_explicit(
                f"case '{node}' has the title of the case at {earlier}: it runs as '{renamed}' (each test needs "
                "a name of its own); give each case a title of its own",
                ComplianceWarning,
                doc.path,
                tc.line or 1,
            )
            node = renamed
        names.append(node)
    return names


def _case(
    tc: TestCase, node: str, doc: Document, setup: Setup, settings: Settings, file_skip: str | None
) -> Case:
    where = f"case {tc.number}" if tc.number is not None else f"case '{tc.title}'"
    case = Case(
        id=node,
        name=node,
        steps=[],
        checks=[],
        line=tc.line,
        markers=[_marker(tag) for tag in doc.front.tags],
        timeout_s=doc.front.timeout + REPORT_S,
        place=where,
        format_data=ComplianceCase(tc),
    )
    case.barrier = _barrier(doc, tc)
    skip = file_skip or (condition_skip(tc.condition, setup) if tc.condition else None)
    # a skipped case needs no token to run, only to be well written
    built, found = _request(tc, node, doc, setup, settings, where, need_values=skip is None)
    problems = [*tc.problems, *found]
    mcp_call, found, missing = _mcp_call(tc, doc, built.config, settings, where)
    problems.extend(found)
    built.missing.extend(missing if skip is None else [])
    checks, found = _deterministic_checks(tc, doc.front.transport, setup, where)
    problems.extend(found)
    deterministic = len(checks) - 1 + (tc.expected is not None)
    if tc.assertions and not settings.strict_only:
        checks.append(
            JudgedAssertions(tc.assertions, _judge_context(tc, setup), tc.assertions[0].line, deterministic)
        )
    case.checks = checks
    case.format_data = ComplianceCase(tc, built.variables)
    case.skip, case.error = _skip_or_error(
        skip or built.skip, problems, built.missing, settings.strict_only and not deterministic, doc.path
    )
    case.steps = _steps(tc, doc.front.transport, built, mcp_call, where)
    return case


def _skip_or_error(
    skip: str | None, problems: list[Problem], missing: list[Problem], nothing_strict: bool, path: str
) -> tuple[str | None, str | None]:
    """The case's skip reason and ERROR, both decided before anything is sent (``nothing_strict``: a
    strict-only run, and the case has no strict checks)."""
    if skip is None and nothing_strict:
        skip = "strict-only: the case has no strict checks (only natural-language assertions)"
    if problems:  # a mistake in the case's text: its ERROR, even where it would be skipped
        return None, _one_line(path, problems)
    if missing and skip is None:  # configuration missing for this case only
        return skip, _one_line(path, missing)
    return skip, None


def _request(
    tc: TestCase,
    node: str,
    doc: Document,
    setup: Setup,
    settings: Settings,
    where: str,
    need_values: bool,
) -> tuple[Built, list[Problem]]:
    """The case's request (its step config, chosen variables, what it misses) and its problems."""
    completions = doc.front.transport == "completions"
    built, found = build_request(
        tc,
        setup,
        base_url=setup.base_url,
        api_key=settings.api_key,
        timeout_ms=int(doc.front.timeout * 1000),
        values=settings.values,
        env=settings.env,
        where=where,
        seed=f"{doc.front.name}::{node}",
        need_values=need_values,
        transport=None
        if completions
        else transport_config(
            doc.front, setup.base_url, settings.a2a_version, tc.strict.data if tc.strict else None
        ),
    )
    if built.config is not None and settings.agent_url:  # a server that serves each agent at its own path
        built.config = on_agent_path(built.config, setup.base_url, settings.agent_url, tc, setup)
    return built, found


def _mcp_call(
    tc: TestCase, doc: Document, config: JSONObject | None, settings: Settings, where: str
) -> tuple[Step | None, list[Problem], list[Problem]]:
    """An ``mcp`` file's McpCall step with its problems and the configuration it misses; in any other
    file an MCP request line is the case's problem."""
    if doc.front.transport == "mcp":
        server = server_of(doc.front.server, settings.env)
        return mcp_step(tc, config, server, doc.front.protocol, settings.env, settings.cwd, where)
    if tc.request is not None and tc.request.method == "MCP":
        return None, [Problem(where, "an MCP request line is for transport: mcp files", tc.request.line)], []
    return None, [], []


def _reply_check(transport: str, tc: TestCase) -> Check:
    """The check that the reply arrived and ``**Expected:**`` holds, read as the transport replies."""
    if transport == "completions":
        return ResponseCheck(tc.expected, tc.line)
    if transport == "mcp":
        return McpReplyCheck(tc.expected, tc.line)
    return ReplyCheck(tc.expected, tc.line)


def _deterministic_checks(
    tc: TestCase, transport: str, setup: Setup, where: str
) -> tuple[list[Check], list[Problem]]:
    """The reply check, the strict checks and the flow's handoff check, with the strict block's problems."""
    checks = [_reply_check(transport, tc)]
    problems: list[Problem] = []
    if tc.strict is not None:
        strict, problems = compile_strict(tc.strict, where)
        checks.extend(strict)
    agents = (list(tc.setup.agents) if tc.setup else []) + list(setup.agents)  # the setup's spelling wins
    flow = flow_check(tc.flow, agents)
    if flow is not None:
        checks.append(flow)
    return checks, problems


def _steps(tc: TestCase, transport: str, built: Built, mcp_call: Step | None, where: str) -> list[Step]:
    """The case's steps: the chosen variables (when any), then the exchange in the transport's terms;
    none when its request could not be built."""
    if built.config is None:
        return []
    steps: list[Step] = []
    if built.variables:
        steps.append(
            Step("MockData", "variables", None, {"data": built.variables}, "variables", tc.line, where)
        )
    line = tc.request.line if tc.request else tc.input.line if tc.input else tc.line
    if transport == "mcp":
        return steps + ([mcp_call] if mcp_call is not None else [])
    if transport != "completions":  # a2a, realtime: one step reads the whole exchange into the reply
        return [*steps, request_step(built.config, line, where)]
    return [
        *steps,
        Step("ChatRequest", "request", None, built.config, "response", line, where),
        Step("ChatResponse", "observe", None, {"from": "response"}, "observed", line, where),
    ]


def _barrier(doc: Document, tc: TestCase) -> str | None:
    """Why the case never runs ahead (lookahead/rules.py), None when it may."""
    if doc.front.depends_on:
        return "a compliance file with depends_on runs when its dependencies are reported"
    if tc.setup is not None:
        return "a compliance case with its own Setup changes the server for itself"
    return None


def _one_line(path: str, problems: list[Problem]) -> str:
    return "; ".join(p.render(path) for p in sorted(problems, key=lambda p: p.line or 0))


def _marker(tag: str) -> str:
    """The pytest marker of a tag (validated to hold a letter or digit): other characters become ``_``,
    never leading (pytest refuses a marker name starting with ``_``)."""
    return tag if re.fullmatch(r"[A-Za-z][\w-]*", tag) else re.sub(r"[^\w-]", "_", tag).lstrip("_-") or "tag"


def _judge_context(tc: TestCase, setup: Setup) -> dict[str, str]:
    agents = "; ".join(
        f"{a.name}"
        + (f" (instructions: {a.instructions})" if a.instructions else "")
        + (f" tools {a.tools}" if a.tools else "")
        + (f" handoffs {a.handoffs}" if a.handoffs else "")
        for a in setup.agents
    )
    return {
        "case": tc.label,
        "description": tc.description,
        "agents": agents,
        "case setup": tc.setup.text if tc.setup else "",
        "flow": " / ".join(step.text for step in tc.flow),
        "behaviour": tc.behavior or "",
        "expected": tc.expected or "",
    }


def _server(url: str, settings: Settings) -> AgentRequirement:
    from ...agents.config import AgentConfig
    from ...agents.keys import requirement

    config = AgentConfig(
        endpoint=url,
        start=settings.server,
        settle_time_ms=0,
        cwd=settings.cwd,
        log_dir=settings.log_dir,
        name="compliance-server",
    )
    return requirement(config, observe=False, calls_from="reply")
