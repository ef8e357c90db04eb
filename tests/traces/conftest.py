"""The pytest runs that several tests of this folder share (``shared_runs.py``): one each per session."""

from __future__ import annotations

import pytest

from tests.traces import shared_runs
from tests.traces.shared_runs import SharedRun


@pytest.fixture(scope="session")
def otel_run(request: pytest.FixtureRequest) -> SharedRun:
    return shared_runs.otel_run(request)


@pytest.fixture(scope="session")
def otel_lyon_run(request: pytest.FixtureRequest) -> SharedRun:
    return shared_runs.otel_lyon_run(request)


@pytest.fixture(scope="session")
def no_receiver_run(request: pytest.FixtureRequest) -> SharedRun:
    return shared_runs.no_receiver_run(request)
