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

This module reads and checks a case's hooks and puts them in its pipeline; the block that runs
one is :mod:`pytest_semantictest.blocks.yao_hook`.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from pathlib import Path

from ...blocks.yao_hook import BEFORE_SLOT
from ...databus import DataBus
from ...errors import clip
from ...json_types import JSONObject, JSONValue
from ...model import CheckResult, Step
from .models import CaseSpec, HookSpec, PythonHook


def hook_ref(spec: HookSpec) -> tuple[str, str]:
    """``(module:function, as written)``; raises ValueError for a spelling that names nothing."""
    written = spec.python if isinstance(spec, PythonHook) else spec
    ref = written.strip().removeprefix("scripts:")
    wrong = f"'{clip(written)}' is not 'module:function' (a Python callable) nor Yao's 'env_test.Before'"
    if ":" in ref:
        module, _, function = ref.partition(":")
    else:
        module, function = _yao_ref(ref, written)
    if not _is_module_name(module) or not function.isidentifier():
        raise ValueError(wrong)
    return f"{module}:{function}", written


def _yao_ref(ref: str, written: str) -> tuple[str, str]:
    """Yao's spelling, ``env_test.Before`` (src/env_test.ts, function Before), as a module and a
    function (the module's ``_test`` suffix may be left out)."""
    module, dot, function = ref.rpartition(".")
    if not dot and function.isidentifier():
        raise ValueError(
            f"'{clip(written)}' names no module: write 'module:function' (a Python callable) "
            f"or Yao's 'env_test.{function}'"
        )
    module = module.removeprefix("src/").replace("/", ".")
    if _is_module_name(module) and not module.endswith("_test"):
        module += "_test"
    return module, function


def _is_module_name(module: str) -> bool:
    """A dotted Python module name (``pkg.mod``)."""
    return bool(module) and all(p.isidentifier() for p in module.split("."))


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
        return (
            f"'{clip(written)}' is a Yao script hook (src/{module}.ts in the agent), which pytest-semantictest "
            f"cannot run: write {ref.partition(':')[2]}(ctx, case) in Python in {_beside(local, base)}, "
            "or name a Python callable 'module:function'"
        )
    return f"cannot find module '{module}' for hook '{clip(written)}' (nor {local})"


def script_problem(ref: str, base: Path) -> str | None:
    """Why a ``script`` assertion's ``module:function`` cannot be found (its module is nowhere: not
    importable, no ``<module>.py`` under ``base``), else None. Nothing is imported; a missing function
    is found when the module is loaded, at run time."""
    module = ref.partition(":")[0]
    local = (base / Path(*module.split("."))).with_suffix(".py")
    if not module or local.is_file() or _importable(module):
        return None
    return f"cannot find module '{clip(module)}' for script '{clip(ref)}' (nor {_beside(local, base)})"


def _beside(local: Path, base: Path) -> str:
    """Where a hook's Python module is looked for, said from the ``.jsonl``'s folder."""
    relative = local.relative_to(base)
    return (
        f"{relative} next to this file"
        if relative.parent == Path()
        else f"{relative.as_posix()} under this file's folder"
    )


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def case_view(spec: CaseSpec) -> JSONObject:
    """The case as Yao passes it to hooks: ``id``, ``input``, ``metadata``, ``assert``, ``simulator``."""
    view: JSONObject = {
        "id": spec.id,
        "name": spec.name or spec.id,
        "input": _plain(spec.input),
        "metadata": dict(spec.metadata),
    }
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


def _plain(value: object) -> JSONValue:
    if isinstance(value, list):
        return [_plain(v) for v in value]
    dump = getattr(value, "model_dump", None)
    return dump(exclude_none=True) if dump else value


def hook_context(spec: CaseSpec) -> JSONObject:
    """Yao's hook ``ctx``: locale and, when the case sets them, the user and team (also as ``authorized``)."""
    ctx: JSONObject = {"locale": "en"}
    authorized = {k: v for k, v in (("user_id", spec.user), ("team_id", spec.team)) if v}
    if authorized:
        ctx.update(authorized)
        ctx["authorized"] = authorized
    return ctx


def hook_steps(
    spec: CaseSpec, line: int, place: str, path: Path, slots: list[str]
) -> tuple[list[Step], list[Step]]:
    """The before step (first in the pipeline, gated) and the after step (a cleanup step)."""
    common = {
        "case": case_view(spec),
        "ctx": hook_context(spec),
        "base_dir": path.parent,
        "spec": str(path),
        "line": line,
    }
    before: list[Step] = []
    after: list[Step] = []
    if spec.before is not None:
        ref, written = hook_ref(spec.before)
        before.append(
            Step(
                "YaoHook",
                "before",
                None,
                {**common, "hook": "before", "ref": ref, "written": written},
                BEFORE_SLOT,
                line,
                f"{place} before",
                [HookCompleted(BEFORE_SLOT, line)],
            )
        )
    if spec.after is not None:
        ref, written = hook_ref(spec.after)
        after.append(
            Step(
                "YaoHook",
                "after",
                None,
                {
                    **common,
                    "hook": "after",
                    "ref": ref,
                    "written": written,
                    "turns": list(slots),
                    "has_before": spec.before is not None,
                },
                "_after",
                line,
                f"{place} after",
            )
        )
    return before, after


class HookCompleted:
    """The before hook ran: its failure is the test's ERROR (Yao: "before script failed")."""

    def __init__(self, slot: str, line: int | None) -> None:
        self.slot, self.line = slot, line

    @property
    def reads(self) -> frozenset[str]:
        return frozenset([self.slot])

    def describe(self) -> str:
        return "before hook"

    async def evaluate(self, bus: DataBus, ctx: object) -> CheckResult:
        return self.evaluate_sync(bus)

    def evaluate_sync(self, bus: DataBus) -> CheckResult:
        out = bus.get(self.slot)
        if isinstance(out, Mapping) and out.get("error"):
            return CheckResult(error=str(out["error"]))
        return CheckResult()
