"""The compliance format's pytest glue (``formats/pytest_glue.py``): the setup hook, ``depends_on``,
masked option values, reported variables. It reads the compliance data the compiler put on the
model (:mod:`.data`: ``Suite.format_data``, ``Case.format_data``).

- Before a file's first case runs (per process) its ``Setup`` is offered to the
  ``pytest_semantictest_compliance_setup`` hook, after the managed server (if any) is started.
- Files run after the files they depend on (when those are collected too); a case whose file
  depends on a file that failed is skipped naming it (and so are that file's dependants).
- Under pytest-xdist the workers share what happened: the controller creates a folder
  (``pytest_configure_node``, like the agents folder) and every worker writes one record per
  compliance case it finished (named by a hash of its node id: the file's front matter name and
  "failed" / "was skipped (...)" / null); the controller writes "failed (its worker crashed)" for
  a case whose worker crashed. Before a dependant case runs, its worker waits until
  every case of its dependencies that comes before it in the collection has a record, then decides.
  Waiting only for earlier cases cannot deadlock: each worker runs its cases in collection order
  (``--dist load``, ``loadfile``, ``loadscope``), so whatever a case waits for is running or queued
  before anything that waits for it. The wait ends anyway when no awaited case finished for the
  dependency's case timeout plus 30 s (``-x`` stopping a worker, ``--dist worksteal``): the case
  then decides with the records there are, with a warning, and its file's later cases do not wait
  for that dependency again.
- The variables a case chose are added to its ``user_properties`` (JUnit XML shows them).
"""

from __future__ import annotations

import json
import time
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import pytest

from ...errors import SemanticTestWarning
from ...files import read_json
from ...spec_nodes import is_spec_item

if TYPE_CHECKING:
    from ...model import Case, Suite
    from ..pytest_glue import GlueRuntime, XdistNode
    from .data import ComplianceCase, ComplianceFile

_SHARED = "semantictest_compliance_dir"
"""The ``workerinput`` key naming the folder xdist workers share case records through."""
_CONTROLLER_DIR = pytest.StashKey[str]()
_CLEANUP = pytest.StashKey[int]()
STALL_SLACK_S = 30.0
"""How long past a dependency's case timeout a dependant waits for a case that does not finish."""
POLL_S = 0.05


def plugins(config: pytest.Config, runtime: GlueRuntime) -> list[tuple[str, object]]:
    """The format's pytest glue (``formats/pytest_glue.py``): one plugin, in every session."""
    return [("semantictest-compliance", ComplianceSession(config, runtime))]


class DependencyWaitWarning(SemanticTestWarning):
    """Under xdist, a ``depends_on`` case was decided before every case it depends on had finished."""


class ComplianceParts(NamedTuple):
    """A compliance test item's suite and case with the compliance data of each."""

    suite: Suite
    case: Case
    file: ComplianceFile
    data: ComplianceCase


def compliance_parts(item: pytest.Item) -> ComplianceParts | None:
    """Its parts when ``item`` is a compliance test case, else None."""
    if not is_spec_item(item):
        return None
    suite = item.spec_file.suite
    if suite.format != "compliance":
        return None
    from .data import ComplianceCase, ComplianceFile

    case = item.case
    if not isinstance(suite.format_data, ComplianceFile) or not isinstance(case.format_data, ComplianceCase):
        return None
    return ComplianceParts(suite, case, suite.format_data, case.format_data)


class ComplianceSession:
    def __init__(self, config: pytest.Config, runtime: GlueRuntime) -> None:
        self.config = config
        self.runtime = runtime
        self.offered: dict[str, BaseException | None] = {}
        self.masked = False
        self.failed: dict[str, str] = {}
        """Front matter name -> why its dependants skip ("failed", "was skipped: ...")."""
        shared = getattr(config, "workerinput", {}).get(_SHARED)
        self.shared: Path | None = Path(shared) if shared else None
        """xdist worker: the folder of case records (None when not under xdist)."""
        self.status: dict[str, str | None] = {}
        """nodeid -> what this process saw of a compliance case ("failed", "was skipped (...)", None)."""
        self.index: dict[str, int] | None = None
        self.members: dict[str, list[int]] = {}
        """Front matter name -> the collection indexes of its cases."""
        self.names: dict[int, str] = {}
        """Collection index of a compliance case -> its file's front matter name."""
        self.nodeids: list[str] = []
        self.timeouts: dict[str, float] = {}
        self.settled: set[str] = set()
        """Dependencies whose every case has a record (nothing more to wait for)."""
        self.session: pytest.Session | None = None
        runtime.add_lookahead_gate(self.not_offered)

    # -- xdist: a folder the workers share ----------------------------------------------------------

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: XdistNode) -> None:
        """xdist controller: every worker gets the same folder for case records."""
        shared = self.config.stash.get(_CONTROLLER_DIR, None)
        if shared is None:
            import shutil
            import tempfile
            from functools import partial

            from ...agents import cleanup

            shared = tempfile.mkdtemp(prefix="semantictest-compliance-")
            self.config.stash[_CONTROLLER_DIR] = shared
            # (removed at unconfigure; a SIGTERM that ends this process before that removes it too)
            self.config.stash[_CLEANUP] = cleanup.register(partial(shutil.rmtree, shared, ignore_errors=True))
        node.workerinput[_SHARED] = shared

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport, sched: object) -> None:
        """xdist controller: a case whose worker crashed never gets a record from it: write one."""
        shared = self.config.stash.get(_CONTROLLER_DIR, None)
        if shared is not None:
            _write_record(
                _record_path(Path(shared), crashitem),
                {"nodeid": crashitem, "status": "failed (its worker crashed)"},
            )

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.session = session

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        shared = config.stash.get(_CONTROLLER_DIR, None)
        if shared is not None:
            import shutil

            from ...agents import cleanup

            shutil.rmtree(shared, ignore_errors=True)
            cleanup.unregister(config.stash.get(_CLEANUP, None))

    def _collection(self, session: pytest.Session) -> dict[str, int]:
        if self.index is None:
            self.index = {}
            for n, item in enumerate(session.items):
                self.index[item.nodeid] = n
                self.nodeids.append(item.nodeid)
                parts = compliance_parts(item)
                if parts is not None:
                    front = parts.file
                    self.members.setdefault(front.name, []).append(n)
                    self.names[n] = front.name
                    self.timeouts[front.name] = max(self.timeouts.get(front.name, 0.0), front.timeout)
        return self.index

    def _record(self, index: int) -> Path:
        assert self.shared is not None and self.index is not None
        return _record_path(self.shared, self.nodeids[index])

    def _wait_for(self, item: pytest.Item, dependency: str) -> None:
        """xdist: wait until the cases of ``dependency`` before ``item`` finished (bounded), then take
        the first failure or dependency skip among them into ``self.failed``."""
        if self.shared is None or dependency in self.failed or dependency in self.settled:
            return
        own = self._collection(item.session).get(item.nodeid)
        members = self.members.get(dependency, [])
        awaited = [n for n in members if own is None or n < own]
        missing = self._await_records(item, dependency, awaited)
        status = self._first_status(awaited)
        if status:
            self.failed.setdefault(dependency, status)
        # decided for good (having given up once, never wait again)
        if missing or len(awaited) == len(members):
            self.settled.add(dependency)

    def _await_records(self, item: pytest.Item, dependency: str, awaited: list[int]) -> list[int]:
        """Wait until each case of ``awaited`` left its record, the deadline moving on whenever one does;
        the cases still missing when it passes (with a warning)."""
        stall = self.timeouts.get(dependency, 0.0) + STALL_SLACK_S
        missing = [n for n in awaited if not self._record(n).exists()]
        deadline = time.monotonic() + stall
        while missing:
            time.sleep(POLL_S)
            still = [n for n in missing if not self._record(n).exists()]
            if len(still) < len(missing):
                deadline = time.monotonic() + stall
            missing = still
            if missing and time.monotonic() > deadline:
                item.warn(
                    DependencyWaitWarning(
                        f"semantictest: {len(missing)} case(s) of '{dependency}' did not finish within {stall:g} s; "
                        "deciding depends_on with the cases that did"
                    )
                )
                break
        return missing

    def _first_status(self, awaited: list[int]) -> str | None:
        """The first failure or dependency skip recorded among ``awaited`` (unreadable records ignored)."""
        for n in awaited:
            try:
                record = read_json(self._record(n))
            except (OSError, ValueError):
                continue
            status = record.get("status") if isinstance(record, dict) else None
            if status:
                return str(status)
        return None

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        parts = compliance_parts(item)
        if parts is None:
            return
        suite, case, front, data = parts
        if self.shared is not None:
            self._collection(item.session)
        for dependency in front.depends_on:
            self._wait_for(item, dependency)
            if dependency in self.failed:
                reason = f"depends on '{dependency}', which {self.failed[dependency]}"
                self.failed.setdefault(front.name, f"was skipped ({reason})")
                self.status.setdefault(item.nodeid, f"was skipped ({reason})")
                raise pytest.skip.Exception(reason, _use_item_location=True)
        self._register_secrets(item.session)
        if data.variables:  # a variable may hold a secret ("From setup": the environment)
            variables = self.runtime.redactor.data(data.variables)
            item.user_properties.append(("variables", json.dumps(variables, ensure_ascii=False)))
        from ...nodes import dry_run

        if not case.skip and not dry_run(self.config):  # --setup-only/--setup-plan: no server is contacted
            self._offer(suite, front)

    def _register_secrets(self, session: pytest.Session) -> None:
        """The API key and secret-looking placeholder values given as options are masked in reports, and
        every value a case sends in a secret-looking header (``Authorization: Bearer {session_value}``)."""
        if self.masked:
            return
        self.masked = True
        self.runtime.redactor.add(v for v in self._secret_options() if v)
        cases = [parts.case for parts in map(compliance_parts, session.items) if parts is not None]
        self.runtime.redactor.learn([step.config for case in cases for step in case.steps])

    def _secret_options(self) -> list[str]:
        """The API key option and each ``--semantictest-compliance-value`` whose name looks secret."""
        from ... import options
        from ...redact import secret_name

        values = [str(options.value(self.config, "compliance-api-key") or "")]
        for raw in options.value(self.config, "compliance-value") or []:
            name, _, value = str(raw).partition("=")
            if secret_name(name.strip(), options.value(self.config, "secret-env")):
                values.append(value.strip())
        return values

    def not_offered(self, item: pytest.Item) -> str | None:
        """The look-ahead's gate: a compliance case runs ahead only once its file's setup hook was offered
        (when its first case ran) and did not fail."""
        parts = compliance_parts(item)
        if parts is None:
            return None
        key = str(parts.suite.path)
        if key not in self.offered or self.offered[key] is not None:
            return "its file's setup hook has not run (or failed)"
        return None

    def _offer(self, suite: Suite, front: ComplianceFile) -> None:
        key = str(suite.path)
        if key not in self.offered:
            try:
                self.runtime.acquire_agents(suite.agents, for_file=key)
            except Exception:  # reported by the file's own setup, which acquires them again  # noqa: BLE001
                return
            try:
                self.config.hook.pytest_semantictest_compliance_setup(config=self.config, setup=front.setup)
                self.offered[key] = None
            except Exception as exc:  # a conftest's hook failed: every case of the file errors  # noqa: BLE001
                self.offered[key] = exc
        error = self.offered[key]
        if error is not None:
            raise pytest.fail.Exception(
                f"{suite.path.name}: pytest_semantictest_compliance_setup failed: {type(error).__name__}: {error}",
                pytrace=False,
            )

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if report.failed:
            parts = compliance_parts(item)
            if parts is not None:
                self.failed.setdefault(parts.file.name, "failed")
                if self.status.get(item.nodeid) is None:
                    self.status[item.nodeid] = "failed"
        return report

    def pytest_runtest_logfinish(self, nodeid: str, location: tuple[str, int | None, str]) -> None:
        """xdist worker: record that a compliance case finished, and how (after its teardown)."""
        if self.shared is None or self.session is None:
            return
        index = self._collection(self.session).get(nodeid)
        name = self.names.get(index) if index is not None else None
        if index is None or name is None:
            return
        _write_record(
            self._record(index), {"name": name, "nodeid": nodeid, "status": self.status.get(nodeid)}
        )

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        """Run files after the files they depend on (only when some collected file depends on another)."""
        from .ordering import dependency_order

        files = [
            (item, (p.file.name, p.file.depends_on) if (p := compliance_parts(item)) else None)
            for item in items
        ]
        ordered = dependency_order(files)
        if ordered is not None:
            items[:] = ordered


def _record_path(shared: Path, nodeid: str) -> Path:
    import hashlib

    return shared / (hashlib.sha1(nodeid.encode()).hexdigest()[:24] + ".json")


def _write_record(path: Path, record: dict[str, str | None]) -> None:
    from ...files import write_atomic

    try:  # noqa: SIM105
        write_atomic(path, json.dumps(record))  # readers never see half a record
    except OSError:  # the controller removed the folder (the run is ending)
        pass
