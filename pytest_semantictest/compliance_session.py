"""pytest-layer glue for compliance files: the setup hook, ``depends_on``, reported variables.

- Before a file's first case runs (per process) its ``Setup`` is offered to the
  ``pytest_semantictest_compliance_setup`` hook, after the managed server (if any) is started.
- Files run after the files they depend on (when those are collected too); a case whose file
  depends on a file that failed here is skipped naming it (and so are that file's dependants).
  Under pytest-xdist only failures seen by the same worker count.
- The variables a case chose are added to its ``user_properties`` (JUnit XML shows them).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

_SECRET_NAME = re.compile(r"key|token|secret|password|auth|credential", re.IGNORECASE)


def compliance_parts(item: pytest.Item) -> tuple[Any, Any] | None:
    """(suite, case) when ``item`` is a compliance test case."""
    from .nodes import SpecItem

    if not isinstance(item, SpecItem):
        return None
    suite = getattr(item.spec_file, "suite", None)
    if suite is None or suite.format != "compliance":
        return None
    return suite, item.case


class ComplianceSession:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.offered: dict[str, BaseException | None] = {}
        self.masked = False
        self.failed: dict[str, str] = {}
        """Front matter name -> why its dependants skip ("failed", "was skipped: ...")."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        parts = compliance_parts(item)
        if parts is None:
            return
        suite, case = parts
        front = suite.meta["document"].front
        for dependency in front.depends_on:
            if dependency in self.failed:
                reason = f"depends on '{dependency}', which {self.failed[dependency]}"
                self.failed.setdefault(front.name, f"was skipped ({reason})")
                raise pytest.skip.Exception(reason, _use_item_location=True)
        self._mask()
        if case.meta.get("variables"):  # a variable may hold a secret ("From setup": the environment)
            from .plugin import runtime

            variables = runtime(self.config).redactor.data(case.meta["variables"])
            item.user_properties.append(("variables", json.dumps(variables, ensure_ascii=False)))
        if not case.skip:
            self._offer(suite)

    def _mask(self) -> None:
        """The API key and secret-looking placeholder values given as options are masked in reports."""
        if self.masked:
            return
        self.masked = True
        from . import options
        from .plugin import runtime

        values = [str(options.value(self.config, "compliance-api-key") or "")]
        for raw in options.value(self.config, "compliance-value") or []:
            name, _, value = str(raw).partition("=")
            if _SECRET_NAME.search(name):
                values.append(value.strip())
        runtime(self.config).redactor.add(v for v in values if v)

    def _offer(self, suite: Any) -> None:
        key = str(suite.path)
        if key not in self.offered:
            from .plugin import runtime

            try:
                runtime(self.config).acquire_agents(suite.agents)
            except Exception:  # reported by the file's own setup, which acquires them again
                return
            try:
                self.config.hook.pytest_semantictest_compliance_setup(config=self.config, setup=suite.meta["setup"])
                self.offered[key] = None
            except Exception as exc:  # a conftest's hook failed: every case of the file errors
                self.offered[key] = exc
        error = self.offered[key]
        if error is not None:
            raise pytest.fail.Exception(
                f"{suite.path.name}: pytest_semantictest_compliance_setup failed: {type(error).__name__}: {error}",
                pytrace=False,
            )

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        report = yield
        if report.failed:
            parts = compliance_parts(item)
            if parts is not None:
                self.failed.setdefault(parts[0].meta["document"].front.name, "failed")
        return report

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        """Run files after the files they depend on (only when some collected file depends on another)."""
        blocks: list[tuple[str | None, list[pytest.Item]]] = []
        depends: dict[str, list[str]] = {}
        for item in items:
            parts = compliance_parts(item)
            name = parts[0].meta["document"].front.name if parts else None
            if name is not None and blocks and blocks[-1][0] == name:
                blocks[-1][1].append(item)
                continue
            blocks.append((name, [item]))
            if parts is not None and name is not None:
                depends.setdefault(name, list(parts[0].meta["document"].front.depends_on))
        if not any(d in depends for deps in depends.values() for d in deps):
            return
        by_name: dict[str, list[pytest.Item]] = {}
        for name, group in blocks:
            if name is not None:
                by_name.setdefault(name, []).extend(group)
        ordered: list[pytest.Item] = []
        done: set[str] = set()

        def emit(name: str, visiting: set[str]) -> None:
            if name in done or name in visiting:
                return
            visiting.add(name)
            for dependency in depends.get(name, []):
                if dependency in by_name:
                    emit(dependency, visiting)
            done.add(name)
            ordered.extend(by_name[name])

        for name, group in blocks:
            if name is None:
                ordered.extend(group)
            else:
                emit(name, set())
        items[:] = ordered
