"""Per-case ``before``/``after`` hooks of a Yao test case, run as Python.

Yao runs ``"before": "env_test.Before"`` as the function ``Before`` of the agent's
``src/env_test.ts``; pytest-semantictest has no TypeScript runtime, so a hook is a Python callable:

- ``"module:function"`` or ``{"python": "module:function"}`` (highbar's spelling; a ``scripts:``
  prefix is dropped), imported normally, else from ``<module>.py`` next to the ``.jsonl``;
- Yao's own spelling ``"env_test.Before"`` (``src/`` dropped, ``_test`` added as Yao does) is the
  function ``Before`` of ``env_test.py`` next to the ``.jsonl`` (or an importable ``env_test``).

As in Yao: ``before(ctx, case)`` runs before the first turn and what it returns is passed to
``after(ctx, case, result, data)``, which runs after the conversation, passed or failed, unless the
before hook failed. A before hook that fails (or raises) makes the test an ERROR; an after hook that
fails is a warning naming the case's line (Yao prints a warning too). Hooks may be async and take
fewer arguments. A hook that cannot be found is that case's error, found when the file is collected.
"""

from __future__ import annotations

import asyncio
import importlib.util
import inspect
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...blocks.base import Block, BlockError
from ...blocks.registry import register_block
from ...errors import clip
from ...model import CheckResult, Step
from ...threads import unblocked
from .models import CaseSpec, HookSpec, PythonHook

HOOK_TIMEOUT_S = 120.0
BEFORE_SLOT = "_before"


class YaoHookWarning(UserWarning):
    """An after hook failed (the test's outcome stands, as in Yao)."""


def hook_ref(spec: HookSpec) -> tuple[str, str]:
    """``(module:function, as written)``; raises ValueError for a spelling that names nothing."""
    written = spec.python if isinstance(spec, PythonHook) else spec
    ref = written.strip().removeprefix("scripts:")
    wrong = f"'{clip(written)}' is not 'module:function' (a Python callable) nor Yao's 'env_test.Before'"
    if ":" in ref:
        module, _, function = ref.partition(":")
    else:  # Yao: "env_test.Before" -> src/env_test.ts, function Before
        module, dot, function = ref.rpartition(".")
        if not dot and function.isidentifier():
            raise ValueError(f"'{clip(written)}' names no module: write 'module:function' (a Python callable) "
                             f"or Yao's 'env_test.{function}'")
        module = module.removeprefix("src/").replace("/", ".")
        if module and all(p.isidentifier() for p in module.split(".")) and not module.endswith("_test"):
            module += "_test"
    if not module or not all(p.isidentifier() for p in module.split(".")) or not function.isidentifier():
        raise ValueError(wrong)
    return f"{module}:{function}", written


def hook_problem(spec: HookSpec, base: Path) -> str | None:
    """Why the hook cannot run (its module is nowhere), else None. Nothing is imported."""
    try:
        ref, written = hook_ref(spec)
    except ValueError as exc:
        return str(exc)
    module = ref.partition(":")[0]
    local = (base / Path(*module.split("."))).with_suffix(".py")
    if local.is_file() or _importable(module):
        return None
    yao = ":" not in written.removeprefix("scripts:") and not isinstance(spec, PythonHook)
    if yao:
        return (f"'{clip(written)}' is a Yao script hook (src/{module}.ts in the agent), which pytest-semantictest "
                f"cannot run: write {ref.partition(':')[2]}(ctx, case) in Python in {_beside(local, base)}, "
                "or name a Python callable 'module:function'")
    return f"cannot find module '{module}' for hook '{clip(written)}' (nor {local})"


def _beside(local: Path, base: Path) -> str:
    """Where a hook's Python module is looked for, said from the ``.jsonl``'s folder."""
    relative = local.relative_to(base)
    return f"{relative} next to this file" if relative.parent == Path() else f"{relative.as_posix()} under this file's folder"


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def case_view(spec: CaseSpec) -> dict[str, Any]:
    """The case as Yao passes it to hooks: ``id``, ``input``, ``metadata``, ``assert``, ``simulator``."""
    view: dict[str, Any] = {"id": spec.id, "name": spec.name or spec.id,
                            "input": _plain(spec.input), "metadata": dict(spec.metadata)}
    if spec.user:
        view["user"] = spec.user
    if spec.team:
        view["team"] = spec.team
    if spec.assertions:
        view["assert"] = [a.model_dump(exclude_defaults=True) for a in spec.assertions]
    if spec.turns:
        view["turns"] = [_plain(t.input) for t in spec.turns]
    if spec.simulator is not None:
        view["simulator"] = spec.simulator.model_dump(exclude_none=True)
    return view


def _plain(value: Any) -> Any:
    if isinstance(value, list):
        return [_plain(v) for v in value]
    dump = getattr(value, "model_dump", None)
    return dump(exclude_none=True) if dump else value


def hook_context(spec: CaseSpec) -> dict[str, Any]:
    """Yao's hook ``ctx``: locale and, when the case sets them, the user and team (also as ``authorized``)."""
    ctx: dict[str, Any] = {"locale": "en"}
    authorized = {k: v for k, v in (("user_id", spec.user), ("team_id", spec.team)) if v}
    if authorized:
        ctx.update(authorized)
        ctx["authorized"] = authorized
    return ctx


def hook_steps(spec: CaseSpec, line: int, place: str, path: Path, slots: list[str]) -> tuple[list[Step], list[Step]]:
    """The before step (first in the pipeline, gated) and the after step (a cleanup step)."""
    common = {"case": case_view(spec), "ctx": hook_context(spec), "base_dir": path.parent, "spec": str(path),
              "line": line}
    before: list[Step] = []
    after: list[Step] = []
    if spec.before is not None:
        ref, written = hook_ref(spec.before)
        before.append(Step("YaoHook", "before", None, {**common, "hook": "before", "ref": ref, "written": written},
                           BEFORE_SLOT, line, f"{place} before", [HookCompleted(BEFORE_SLOT, line)]))
    if spec.after is not None:
        ref, written = hook_ref(spec.after)
        after.append(Step("YaoHook", "after", None, {**common, "hook": "after", "ref": ref, "written": written,
                                                      "turns": list(slots), "has_before": spec.before is not None},
                          "_after", line, f"{place} after"))
    return before, after


async def call_hook(function: Any, args: list[Any]) -> Any:
    """Call with as many positional arguments as it takes; sync hooks run in a thread; bounded."""
    from ...checks.conversation import positional_count

    count = positional_count(function, len(args))
    if inspect.iscoroutinefunction(function):
        return await asyncio.wait_for(function(*args[:count]), HOOK_TIMEOUT_S)
    value = await asyncio.wait_for(asyncio.to_thread(unblocked(function), *args[:count]), HOOK_TIMEOUT_S)
    if inspect.isawaitable(value):
        value = await asyncio.wait_for(value, HOOK_TIMEOUT_S)
    return value


def hook_result(bus: Any, case_id: str, slots: list[str]) -> dict[str, Any]:
    """What an after hook gets as ``result``: ``id``, ``status``, ``output``, ``error``, ``turns``.

    ``status`` is what the conversation did: static, ``completed`` (every planned turn answered),
    ``stopped`` (a turn's assertions failed, so later turns did not run) or ``error`` (a turn failed),
    the final assertions being checked after the hook; dynamic, ``passed`` or ``failed`` (its
    checkpoints reached or not)."""
    from ...databus import MISSING

    records = [bus.get(s) for s in slots]
    done = [r for r in records if r is not MISSING and isinstance(r, Mapping)]
    turns = [t for r in done for t in _turns(r)]
    error = next((str(r["error"]) for r in done if r.get("error")), None)
    status = "error" if error else "completed" if len(done) == len(slots) else "stopped"
    verdict = next((r["passed"] for r in done if isinstance(r.get("passed"), bool)), None)
    if verdict is not None:  # a dynamic conversation has decided: its checkpoints were reached or not
        status = "passed" if verdict else "failed"
    last = turns[-1] if turns else {}
    result = {"id": case_id, "status": status, "output": last.get("output") if isinstance(last, Mapping) else None,
              "turns": turns}
    if error:
        result["error"] = error
    return result


def _turns(record: Mapping[str, Any]) -> list[Any]:
    """A conversation record's turns (a single-turn record is its own turn)."""
    turns = record.get("turns")
    return turns if isinstance(turns, list) else [record]


class YaoHook(Block):
    """Runs one per-case hook (``before`` or ``after``) of a Yao test case."""

    name = "YaoHook"
    resolve_config = False
    config_keys = frozenset({"case", "ctx", "base_dir", "spec", "line", "hook", "ref", "written", "turns",
                             "has_before"})

    async def process(self, inputs: dict[str, Any], ctx: Any) -> dict[str, Any]:
        from ...checks.conversation import load_callable
        from ...databus import MISSING

        cfg = self.config
        hook, written = cfg["hook"], cfg["written"]
        args: list[Any] = [dict(cfg["ctx"]), dict(cfg["case"])]
        if hook == "after":
            before = ctx.bus.get(BEFORE_SLOT) if cfg.get("has_before") else None
            if isinstance(before, Mapping) and before.get("error"):
                return {"ran": False, "reason": "the before hook failed"}  # Yao: no after when before failed
            data = before.get("data") if isinstance(before, Mapping) and before is not MISSING else None
            args += [hook_result(ctx.bus, str(cfg["case"]["id"]), list(cfg["turns"])), data]
        try:
            function = load_callable(cfg["ref"], Path(cfg["base_dir"]))
            value = await call_hook(function, args)
        except TimeoutError:
            return self._failed(f"{hook} hook '{written}' did not return within {HOOK_TIMEOUT_S:g}s")
        except Exception as exc:  # noqa: BLE001  the user's hook: its failure is reported, never a crash
            return self._failed(f"{hook} hook '{written}' failed: {type(exc).__name__}: {exc}")
        return {"ran": True, "data": value}

    def _failed(self, message: str) -> dict[str, Any]:
        if self.config["hook"] == "before":
            raise BlockError(message)
        warnings.warn_explicit(YaoHookWarning(message), YaoHookWarning, self.config["spec"], int(self.config["line"]))
        return {"ran": True, "error": message}


register_block(YaoHook)


class HookCompleted:
    """The before hook ran: its failure is the test's ERROR (Yao: "before script failed")."""

    def __init__(self, slot: str, line: int | None) -> None:
        self.slot, self.line = slot, line

    @property
    def reads(self) -> frozenset[str]:
        return frozenset([self.slot])

    def describe(self) -> str:
        return "before hook"

    async def evaluate(self, bus: Any, ctx: Any) -> CheckResult:
        return self.evaluate_sync(bus)

    def evaluate_sync(self, bus: Any) -> CheckResult:
        out = bus.get(self.slot)
        if isinstance(out, Mapping) and out.get("error"):
            return CheckResult(error=str(out["error"]))
        return CheckResult()
