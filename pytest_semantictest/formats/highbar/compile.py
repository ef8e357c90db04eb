"""Compile a validated highbar spec to the internal model (nothing here runs anything)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from ...agents.config import AgentConfig
from ...agents.keys import requirement as agent_requirement
from ...blocks.variations import PHRASING_KEY, Variations
from ...checks.expectations import TurnExpectation
from ...model import Case, Check, Repetition, Step, Suite
from ..detect import CollectContext
from .spans_ext import spans_steps
from .spec import HighbarSpec, TestSpec, TurnSpec
from .validate import load_highbar

FORMAT = "highbar"


def agent_config(spec: HighbarSpec, environ: Mapping[str, str], cwd: Path, log_dir: Path) -> AgentConfig:
    return AgentConfig.from_highbar(
        spec.agent_mapping, cwd=cwd, environ=environ, log_dir=log_dir, name=spec.path.name.split(".")[0]
    )


def compile_spec(
    spec: HighbarSpec, environ: Mapping[str, str], cwd: Path, log_dir: Path, default_runs: int | None = None
) -> Suite:
    config = agent_config(spec, environ, cwd, log_dir)
    requirement = agent_requirement(config, observe=spec.observes_calls, calls_from=spec.agent.calls_from)
    key = requirement.key
    runs = default_runs if default_runs is not None else spec.defaults_runs
    cases: list[Case] = []
    for suite in spec.suites:
        used: dict[str, int] = {}
        for test in suite.tests:
            name = test.display_name.replace("\n", " ")
            used[name] = used.get(name, 0) + 1
            node = name if used[name] == 1 else f"{name} [{used[name]}]"
            cases.append(_case(test, node, suite.name, key, spec.path, runs, cwd))
    return Suite(spec.path.name, spec.path, FORMAT, cases, agents=[requirement])


def _case(test: TestSpec, node: str, group: str, key: str, path: Path, default_runs: int, cwd: Path) -> Case:
    turns = test.steps
    steps = [step for i in range(len(turns)) for step in _turn_steps(test, turns, i, key, path)]
    cleanup = [
        Step(
            "AgentSessionEnd",
            "session-end",
            None,
            {"agent": key, "first_turn": "turn1", "test_name": test.display_name, "spec": str(path)},
            "_session_end",
        )
    ]
    runs, min_pass = test.repetition(default_runs)
    return Case(
        id=node,
        name=test.display_name,
        steps=steps,
        checks=[],
        line=test.line,
        markers=list(test.markers),
        repetition=Repetition(runs, min_pass)
        if test.pass_rate is None
        else Repetition(test.pass_rate.max_runs, decision=test.pass_rate),
        place=test.place,
        cleanup=cleanup,
        group=group,
        variants=Variations(test.trigger or "", test.variations, cwd) if test.variations else None,
    )


def _turn_steps(test: TestSpec, turns: list[TurnSpec], i: int, key: str, path: Path) -> list[Step]:
    """The step that sends turn ``i`` of ``test`` and checks its ``expect``, then the steps of its
    ``expect.spans`` (the spans extension), if any."""
    turn = turns[i]
    slot = f"turn{i + 1}"
    config = {
        "agent": key,
        "message": turn.trigger,
        "previous": [f"turn{j + 1}" for j in range(i)],
        "observe": turn.expect is not None and turn.expect.observes_calls,
        "first": i == 0,
        "test_name": test.display_name,
        "spec": str(path),
        "place": turn.place,
    }
    if i == 0 and test.variations:
        config["phrasing"] = PHRASING_KEY
    label = f"turn {i + 1}" + (f" ({turn.name})" if turn.name else "") if len(turns) > 1 else "expect"
    line = turn.expect.line if turn.expect is not None else turn.line
    late = i == len(turns) - 1 and turn.expect is not None and turn.expect.observes_calls
    checks: list[Check] = [
        TurnExpectation(slot, turn.expect, line, label, key, late)
    ]  # also turns agent errors into ERRORs
    return [
        Step("AgentTurn", slot, None, config, slot, turn.line, turn.place, checks),
        *spans_steps(turn.expect, slot, i + 1, line, turn.place),
    ]


def load_file(
    path: Path, environ: Mapping[str, str], cwd: Path, log_dir: Path, default_runs: int | None
) -> Suite:
    """Read, validate and compile one ``*.highbar.yaml``; raises SpecError."""
    spec = load_highbar(path, environ, default_runs)  # highbar's check_runs: --runs in place of defaults.runs
    return compile_spec(spec, environ, cwd, log_dir, default_runs)


def make_loader(ctx: CollectContext) -> Callable[[Path], Suite]:
    """The collection entry point (see formats/detect.py): options and environment bound."""
    logs = ctx.rootdir / (ctx.text("agent-logs") or ".semantictest/logs")
    runs = ctx.number("highbar-runs")
    return lambda path: load_file(path, ctx.env, ctx.invocation_dir, logs, runs)
