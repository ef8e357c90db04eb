"""The starter specs ``semantictest init`` writes: one format each, passing against what the probed
agent answered, with a note on each check saying how to make it stricter.

Every check here holds for any answer of the kind the agent gave (a reply with some text, a task
that completed), never for the words it happened to say: an agent on a real model answers
differently each run. The notes say how to pin what it must say or do.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .agents.probe import HELLO, Probe
from .formats.registry import FORMATS as REGISTRY

FORMATS = {
    "chat": tuple(f.name for f in REGISTRY),  # every format (registry order: SemanticTest first)
    "a2a": ("compliance",),
    "realtime": ("compliance",),
}
"""The formats a starter spec can be written in, by what the agent speaks (the first is the default)."""


@dataclass(frozen=True)
class Agent:
    """The agent as the user named it: what answered, and how to start it (None: it runs already)."""

    probe: Probe
    start: str | None = None
    health: str | None = None


def file_names(fmt: str, name: str) -> list[str]:
    """The files a format's starter spec is (the first is the spec pytest runs)."""
    return {
        "semantictest": [f"{name}.json"],
        "highbar": [f"{name}.highbar.yaml"],
        "yao": [f"{name}_test.jsonl", f"{name}_test.agent.yaml"],
        "compliance": [f"{name}.md"],
    }[fmt]


def write(fmt: str, name: str, agent: Agent) -> dict[str, str]:
    """File name -> text of the starter spec of format ``fmt``."""
    texts = {"semantictest": _semantictest, "highbar": _highbar, "yao": _yao, "compliance": _compliance}[fmt](
        name, agent
    )
    return dict(zip(file_names(fmt, name), texts))


def run_line(fmt: str, name: str, agent: Agent) -> str:
    """How to run the spec just written."""
    spec = file_names(fmt, name)[0]
    if fmt != "compliance" or not agent.start:
        return f"python -m pytest {spec}"
    return f"python -m pytest {spec} --semantictest-compliance-server={json.dumps(agent.start)}"


def _request(probe: Probe) -> dict[str, object]:
    return {"model": probe.model, "messages": [{"role": "user", "content": HELLO}]}


def _semantictest(name: str, agent: Agent) -> list[str]:
    probe = agent.probe
    section: dict[str, object] = {"endpoint": probe.url}
    section.update({k: v for k, v in (("start", agent.start), ("health", agent.health)) if v})
    checks: dict[str, object] = {"response.status": 200}
    notes = {
        "response.status": "any 200 answer passes; the checks below say what it must contain",
    }
    if probe.text:
        checks["completion.choices[0].message.content"] = {"matches": "\\S"}
        notes["completion.choices[0].message.content"] = (
            'any text passes: require words ({"contains": "..."}), the exact reply '
            f"({json.dumps(probe.text[:60])} is what it said to {HELLO!r}), or an LLMJudge step with "
            "the behaviour you expect"
        )
    else:
        checks["completion.choices[0].message.role"] = "assistant"
        notes["completion.choices[0].message.role"] = "any assistant message passes: check its content"
    notes["tool calls"] = (
        "add a ValidateTools step (input choices[0].message.tool_calls, config expected: [tool names], "
        "validateArgs) for a prompt that must call a tool"
    )
    test = {
        "id": "replies-to-hello",
        "x-how-to-make-it-stricter": notes,
        "pipeline": [
            {
                "block": "HttpRequest",
                "input": {"url": "${agent.endpoint}", "method": "POST", "body": _request(probe)},
                "output": "response",
            },
            {"block": "JsonParser", "input": "${response.body}", "output": {"parsed": "completion"}},
        ],
        "assertions": checks,
    }
    suite = {
        "name": name,
        "description": f"Written by semantictest init for {probe.url}; the agent's start runs in this file's folder.",
        "agent": section,
        "tests": [test],
    }
    return [json.dumps(suite, indent=2) + "\n"]


def _yaml(value: object) -> str:
    return json.dumps(value)  # a JSON scalar or flow collection is YAML too


def _highbar(name: str, agent: Agent) -> list[str]:
    probe = agent.probe
    lines = [
        f"# Written by semantictest init for {probe.url}.",
        "agent:",
    ]
    if agent.start:
        lines.append(f"  start: {_yaml(agent.start)}  # runs where pytest is invoked (highbar's rule)")
    lines.append(f"  endpoint: {_yaml(probe.url)}")
    if agent.health:
        lines.append(f"  health: {_yaml(agent.health)}")
    body = {"model": probe.model, "messages": [{"role": "user", "content": "{{message}}"}]}
    lines += [
        "  request:",
        f"    body: {_yaml(body)}",
        "  response: choices.0.message.content",
        "  calls_from: reply  # tool calls read from the reply's tool_calls (no tracing SDK)",
        "suites:",
        f"  - name: {_yaml(name)}",
        "    tests:",
        "      - name: replies to hello",
        f"        trigger: {_yaml(HELLO)}",
        "        expect:",
    ]
    if probe.text:
        lines.append(
            "          # stricter: {contains: ...}, {equals: ...} or {icontains: ...} with what it must say"
        )
        lines.append("          response: {matches: '\\S'}")
    if probe.tool_calls:
        calls = [{"name": n} for n in probe.tool_calls]
        lines.append("          # stricter: the arguments each call must have (params: {city: Paris})")
        lines.append(f"          function_calls: {_yaml(calls)}")
    else:
        lines.append(
            "          # stricter: for a prompt that must use a tool, function_calls: [{name: ..., params: {...}}];"
        )
        lines.append("          # function_calls: [] asserts no tool at all")
        if not probe.text:
            lines.append("          function_calls: []")
    return ["\n".join(lines) + "\n"]


def _yao(name: str, agent: Agent) -> list[str]:
    probe = agent.probe
    assertions: list[dict[str, object]] = []
    if probe.text:
        assertions.append({"type": "regex", "pattern": "\\S"})
    for tool in probe.tool_calls:
        assertions.append({"type": "tool_called", "name": tool})
    if not assertions:
        assertions.append({"type": "not_contains", "value": "Traceback"})
    case = {"id": "replies-to-hello", "input": HELLO, "assertions": assertions}
    cases = "\n".join(
        [
            f"// Written by semantictest init for {probe.url} (the agent: {name}_test.agent.yaml).",
            '// Stricter: {"type": "contains", "value": ...} or "expected": the exact reply; '
            '{"type": "tool_called", "name": {"name": ..., "arguments": {...}}} for a tool it must call;',
            '// "turns": [...] for a conversation; {"type": "agent", "value": "criteria"} judged by an LLM (docs/conversations.md).',
            json.dumps(case),
        ]
    )
    sidecar = [f"# The agent {name}_test.jsonl talks to; start runs in this file's folder."]
    if agent.start:
        sidecar.append(f"start: {_yaml(agent.start)}")
    sidecar.append(f"endpoint: {_yaml(probe.url)}")
    if agent.health:
        sidecar.append(f"health: {_yaml(agent.health)}")
    sidecar.append(f"model: {_yaml(probe.model)}")
    return [cases + "\n", "\n".join(sidecar) + "\n"]


def _compliance(name: str, agent: Agent) -> list[str]:
    probe = agent.probe
    transport = {"chat": "completions", "a2a": "a2a", "realtime": "realtime"}[probe.kind]
    base = probe.url.removesuffix("/chat/completions") if probe.kind == "chat" else probe.url
    front = ["---", f"name: {name}", "version: 1.0", f"transport: {transport}"]
    if probe.dialect:
        front.append(f"dialect: {probe.dialect}")
    front += ["timeout: 30", "---", "", f"# {name}", ""]
    front.append(f"Written by `semantictest init` for {probe.url}.")
    if agent.start:
        front.append(f"Start the agent with `--semantictest-compliance-server={json.dumps(agent.start)}`.")
    agent_name = probe.name or probe.model or "agent"
    front += ["", "## Setup", "", f"- Name: `{agent_name}`", "", "### Environment", ""]
    front.append(f"- `BASE_URL`: the agent's server (default: {base})")
    front += ["", "## Test Cases", "", "### 1. Replies to hello", ""]
    if probe.kind == "chat":
        body = json.dumps(_request(probe))
        front += ["**Request:**", "POST `/chat/completions`", "```json", body, "```", ""]
        strict = [
            "status: 200  # stricter: also headers (content-type: application/json)",
            "body:",
            "  choices[0].message.role: assistant",
        ]
        if probe.text:
            strict.append(
                f"  choices[0].message.content: '/\\S/'  # stricter: the exact reply ({json.dumps(probe.text[:60])}), or contains(\"...\")"
            )
    else:
        front += [f'**Input:** User sends "{HELLO}" to `{agent_name}`', ""]
        strict = ["reply:", "  state: completed  # any completed answer passes"]
        if probe.kind == "realtime":
            strict[0:0] = []
            strict.append("  text: '/\\S/'  # stricter: the exact text, or contains(\"...\")")
            strict += ["events:", "  - kind: response.done"]
        else:
            strict.append("  text: '/\\S/'  # stricter: the exact text, or contains(\"...\")")
    front += ["**Strict:**", "```yaml", *strict, "```", ""]
    front += [
        "<!-- Stricter: **Assertions:** bullets in plain words, judged by an LLM when one is configured;",
        "     more cases for errors (**Expected:** failure) and tools (docs/compliance.md). -->",
    ]
    return ["\n".join(front) + "\n"]


def out_paths(folder: Path, fmt: str, name: str) -> list[Path]:
    return [folder / n for n in file_names(fmt, name)]
