"""A split run's jobs (pytest-split's ``--splits N --group K``) keep each file's tests together.

pytest-split chooses tests one by one, so a cut may fall inside a file: both jobs then start that
file's agent and run its setup. Registered only when pytest-split is loaded, this wrapper around the
selection moves every file whole to the job that holds the file's first test. Every job (and every
xdist worker of a job) computes pytest-split's groups from the same collection and durations, so the
jobs still split the suite exactly, file by file. The tests moved into this job, which pytest-split
reported deselected, leave the terminal's deselected list; those moved out are reported deselected.
"""

from __future__ import annotations

from collections.abc import Generator

import pytest


class SplitByFile:
    """The wrapper; see the module docstring."""

    @pytest.hookimpl(wrapper=True)
    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> Generator[None, None, None]:
        if not getattr(config.option, "splits", None):
            return (yield)
        every = list(items)
        result = yield
        chosen = {id(item) for item in items}
        first = _first_chosen(every, chosen)
        kept = [item for item in every if first[str(item.path)]]
        moved_out = [item for item in items if not first[str(item.path)]]
        moved_in = {id(item) for item in kept if id(item) not in chosen}
        items[:] = kept
        _report_moves(config, moved_in, moved_out)
        return result


def _first_chosen(every: list[pytest.Item], chosen: set[int]) -> dict[str, bool]:
    """Per file, whether pytest-split chose its first test for this job (``chosen``: the ids of the
    tests it chose): a file goes where its first test went."""
    first: dict[str, bool] = {}
    for item in every:
        first.setdefault(str(item.path), id(item) in chosen)
    return first


def _report_moves(config: pytest.Config, moved_in: set[int], moved_out: list[pytest.Item]) -> None:
    """Tests moved into this job leave the terminal's deselected list; those moved out are deselected."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    deselected = getattr(reporter, "stats", {}).get("deselected")
    if moved_in and isinstance(deselected, list):  # the header's count: they run here after all
        deselected[:] = [item for item in deselected if id(item) not in moved_in]
    if moved_out:
        config.hook.pytest_deselected(items=moved_out)
