"""The block that runs one per-case ``before``/``after`` hook of a Yao test case (a Python callable).

The Yao format (:mod:`pytest_semantictest.formats.yao.hooks`) reads the hooks and puts this block
first (before) and last (after, as a cleanup step) in the case's pipeline.
"""

from __future__ import annotations

import asyncio
import inspect
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from ..databus import DataBus
    from ..step import StepContext

from ..errors import SemanticTestWarning
from ..json_types import JSONObject, JSONValue
from ..threads import unblocked
from .base import Block, BlockError

HOOK_TIMEOUT_S = 120.0
BEFORE_SLOT = "_before"
"""Where the before hook's record is written (the after hook and the case's gate read it)."""


class YaoHookWarning(SemanticTestWarning):
    """An after hook failed (the test's outcome stands, as in Yao)."""


async def call_hook(function: Callable[..., object], args: list[JSONValue]) -> object:
    """Call with as many positional arguments as it takes; sync hooks run in a thread; bounded."""
    from ..checks.conversation import positional_count

    count = positional_count(function, len(args))
    if inspect.iscoroutinefunction(function):
        return await asyncio.wait_for(function(*args[:count]), HOOK_TIMEOUT_S)
    value = await asyncio.wait_for(asyncio.to_thread(unblocked(function), *args[:count]), HOOK_TIMEOUT_S)
    if inspect.isawaitable(value):
        value = await asyncio.wait_for(value, HOOK_TIMEOUT_S)
    return value


def hook_result(bus: DataBus, case_id: str, slots: list[str]) -> JSONObject:
    """What an after hook gets as ``result``: ``id``, ``status``, ``output``, ``error``, ``turns``.

    ``status`` is what the conversation did: static, ``completed`` (every planned turn answered),
    ``stopped`` (a turn's assertions failed, so later turns did not run) or ``error`` (a turn failed),
    the final assertions being checked after the hook; dynamic, ``passed`` or ``failed`` (its
    checkpoints reached or not)."""
    from ..databus import MISSING

    records = [bus.get(s) for s in slots]
    done = [r for r in records if r is not MISSING and isinstance(r, Mapping)]
    turns = [t for r in done for t in _turns(r)]
    error = next((str(r["error"]) for r in done if r.get("error")), None)
    result = {
        "id": case_id,
        "status": _status(done, len(slots), error),
        "output": _last_output(turns),
        "turns": turns,
    }
    if error:
        result["error"] = error
    return result


def _status(done: list[Mapping[str, JSONValue]], planned: int, error: str | None) -> str:
    """What the conversation did (see :func:`hook_result`), from the records of its finished steps."""
    verdict = next((r["passed"] for r in done if isinstance(r.get("passed"), bool)), None)
    if verdict is not None:  # a dynamic conversation has decided: its checkpoints were reached or not
        return "passed" if verdict else "failed"
    return "error" if error else "completed" if len(done) == planned else "stopped"


def _last_output(turns: list[JSONValue]) -> JSONValue:
    """The reply of the last turn that ran (None when none did)."""
    last = turns[-1] if turns else {}
    return last.get("output") if isinstance(last, Mapping) else None


def _turns(record: Mapping[str, JSONValue]) -> list[JSONValue]:
    """A conversation record's turns (a single-turn record is its own turn)."""
    turns = record.get("turns")
    return turns if isinstance(turns, list) else [record]


class YaoHookConfig(BaseModel):
    """A YaoHook's config, written by the Yao compiler and taken as written."""

    model_config = ConfigDict(extra="allow", frozen=True)

    case: JSONValue = None
    ctx: JSONValue = None
    base_dir: JSONValue = None
    spec: JSONValue = None
    line: JSONValue = None
    hook: JSONValue = None
    ref: JSONValue = None
    written: JSONValue = None
    turns: JSONValue = None
    has_before: JSONValue = None


class YaoHook(Block):
    """Runs one per-case hook (``before`` or ``after``) of a Yao test case."""

    name = "YaoHook"
    resolve_config = False
    config_model = YaoHookConfig
    config_keys = frozenset(YaoHookConfig.model_fields)

    async def process(self, inputs: JSONObject, ctx: StepContext) -> JSONObject:
        from ..checks.conversation import load_callable

        cfg = self.config
        hook, written = cfg["hook"], cfg["written"]
        args: list[JSONValue] = [dict(cfg["ctx"]), dict(cfg["case"])]
        if hook == "after":
            before = ctx.bus.get(BEFORE_SLOT) if cfg.get("has_before") else None
            if isinstance(before, Mapping) and before.get("error"):
                return {"ran": False, "reason": "the before hook failed"}  # Yao: no after when before failed
            data = before.get("data") if isinstance(before, Mapping) else None
            args += [hook_result(ctx.bus, str(cfg["case"]["id"]), list(cfg["turns"])), data]
        try:
            function = load_callable(cfg["ref"], Path(cfg["base_dir"]))
            value = await call_hook(function, args)
        except TimeoutError:
            return self._failed(f"{hook} hook '{written}' did not return within {HOOK_TIMEOUT_S:g}s")
        except Exception as exc:  # noqa: BLE001  the user's hook: its failure is reported, never a crash
            return self._failed(f"{hook} hook '{written}' failed: {type(exc).__name__}: {exc}")
        return {"ran": True, "data": value}

    def _failed(self, message: str) -> JSONObject:
        if self.config["hook"] == "before":
            raise BlockError(message)
        warnings.warn_explicit(
            YaoHookWarning(message), YaoHookWarning, self.config["spec"], int(self.config["line"])
        )
        return {"ran": True, "error": message}
