"""Compile one pipeline step of a SemanticTest suite: block, config, input keys, Loop target."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ...blocks.registry import get_block, known_blocks
from ...databus import split_path
from ...errors import clip, did_you_mean
from ...json_types import JSONValue
from ...model import Step
from ...problems import place
from ..jsonsource import JsonSource
from .models import StepSpec

if TYPE_CHECKING:
    from ...blocks.base import Block

Loc = tuple[str | int, ...]
Report = Callable[[Loc, str], None]
_STEP_KEYS = list(StepSpec.model_fields)


def compile_step(
    spec: StepSpec,
    loc: Loc,
    siblings: list[StepSpec],
    source: JsonSource,
    problem: Report,
    file_problem: Report,
    assumed: Report | None = None,
) -> Step:
    """The model Step for ``spec``; problems go to ``problem`` (an unknown block to ``file_problem``),
    what the block will assume for what the step leaves out to ``assumed`` (warnings)."""
    cls = get_block(spec.block)
    config = dict(spec.config)
    if cls is None:
        file_problem(loc + ("block",), unknown_block(spec.block) or "")
    else:
        _merge_step_keys(spec, cls.config_keys, config, loc, problem)
        _unknown_config_keys(spec, cls.config_keys, loc, problem)
        _block_checks(spec, cls, config, loc, problem, assumed)
    if spec.block == "Loop" and cls is not None:
        _loop_target(config.get("target"), loc, siblings, problem)
    _from_as(spec.input, loc, problem)
    step_id = spec.id or spec.block
    return Step(spec.block, step_id, spec.input, config, spec.output, source.line(loc), place(loc))


def _block_checks(
    spec: StepSpec,
    cls: type[Block],
    config: dict[str, JSONValue],
    loc: Loc,
    problem: Report,
    assumed: Report | None,
) -> None:
    """The block's own checks of its config and input, and what it will assume (warnings)."""
    for key, message in cls.validate_config(config):
        problem(loc + ("config", *split_path(key)), message)
    _input_keys(spec, cls.input_keys, cls.primary_input, loc, problem)
    for key, message in cls.validate_input(spec.input) if isinstance(spec.input, dict) else ():
        problem(loc + ("input", *split_path(key)), message)
    if assumed is not None:
        for key, message in cls.assumptions(config, spec.input):
            assumed(loc + (key,), message)


def _merge_step_keys(
    spec: StepSpec, allowed: frozenset[str] | None, config: dict[str, JSONValue], loc: Loc, problem: Report
) -> None:
    """Config keys written on the step itself go into ``config`` (the block takes them there); any
    other key of the step is unknown."""
    for key, value in (spec.model_extra or {}).items():
        if allowed is None or key in allowed:
            config.setdefault(key, value)
        else:
            hint = did_you_mean(key, _STEP_KEYS + sorted(allowed))
            problem(loc + (key,), f"unknown key '{clip(key)}' for block {spec.block}{hint}")


def _unknown_config_keys(spec: StepSpec, allowed: frozenset[str] | None, loc: Loc, problem: Report) -> None:
    """Each key of ``config`` is one the block takes (a block that takes any key: ``allowed`` None)."""
    if allowed is None:
        return
    for key in spec.config:
        if key not in allowed:
            hint = did_you_mean(key, sorted(allowed))
            known = ", ".join(sorted(allowed)) or "none"
            problem(
                loc + ("config", key),
                f"unknown config key '{clip(key)}'{hint} ({spec.block} takes: {known})",
            )


def unknown_block(name: str) -> str | None:
    """The problem of naming block ``name``, or None when a block has that name."""
    if not name.strip() or get_block(name) is not None:
        return None
    known = known_blocks()
    return f"unknown block '{clip(name)}'{did_you_mean(name, known)} (known blocks: {', '.join(known)})"


def _input_keys(
    spec: StepSpec, allowed: frozenset[str] | None, primary: str, loc: Loc, problem: Report
) -> None:
    """An object input's keys (or a from/as name) must be ones the block reads (``mehtod``, ``bdoy``)."""
    value = spec.input
    if allowed is None or not isinstance(value, dict):
        return
    names = sorted(allowed | {primary})
    takes = ", ".join(names) or "no input"
    if set(value) <= {"from", "as"} and "from" in value:
        name = value.get("as")
        if isinstance(name, str) and name not in names:
            _no_such_input(spec.block, name, names, loc, problem)
        return
    for key in value:
        if key not in names:
            problem(
                loc + ("input", key),
                f"unknown input key '{clip(key)}'{did_you_mean(key, names)} ({spec.block} takes: {takes})",
            )


def _no_such_input(block: str, name: str, names: list[str], loc: Loc, problem: Report) -> None:
    """The from/as form names an input ``name`` the block does not read (an empty one is ``_from_as``'s)."""
    if name:
        takes = ", ".join(names) or "no input"
        problem(
            loc + ("input", "as"),
            f"{block} has no input '{clip(name)}'{did_you_mean(name, names)} ({block} takes: {takes})",
        )


def _from_as(value: JSONValue, loc: Loc, problem: Report) -> None:
    if isinstance(value, dict) and set(value) <= {"from", "as"} and "from" in value:
        if "as" not in value:
            problem(loc + ("input",), "the from/as form needs both 'from' (a DataBus path) and 'as' (a name)")
        elif not isinstance(value["from"], str):
            problem(
                loc + ("input", "from"), f"must be a DataBus path string, got {clip(repr(value['from']))}"
            )
        elif not isinstance(value["as"], str) or not value["as"]:
            problem(loc + ("input", "as"), f"must be an input name (a string), got {clip(repr(value['as']))}")


def _loop_target(target: JSONValue, loc: Loc, siblings: list[StepSpec], problem: Report) -> None:
    index = loc[-1]
    assert isinstance(index, int)
    earlier = [s.id or s.block for s in siblings[:index]]
    if isinstance(target, int) and not isinstance(target, bool):
        if not 0 <= target < index:
            problem(
                loc + ("config", "target"), f"index {clip(target)} is not an earlier step (0..{index - 1})"
            )
    elif isinstance(target, str) and target not in earlier:
        problem(
            loc + ("config", "target"),
            f"'{clip(target)}' is not the id of an earlier step{did_you_mean(target, earlier)}",
        )
