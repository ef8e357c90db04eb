"""Files with agents of their own run at the same time (docs/concurrency.md): the next files' agents start
while the tests before them run, each agent's tests keep their order, and an agent whose records are not
known to be tagged still gets one test at a time, whatever the other agents do."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.concurrency.conftest import outcomes, write
from tests.concurrency.test_never_run_ahead import ONE_BY_ONE, _highbar, _most_at_once
from tests.helpers import run_pytest
from tests.ports import free_port


def _spans(path: Path) -> list[tuple[float, float]]:
    return [(float(a), float(b)) for a, b in (line.split() for line in path.read_text().splitlines())]


def _overlap(one: list[tuple[float, float]], other: list[tuple[float, float]]) -> bool:
    return any(a < d and c < b for a, b in one for c, d in other)


def test_files_with_their_own_agents_run_at_the_same_time(pytester: pytest.Pytester) -> None:
    """Three files, three agents (one whose records are untagged): answers of different agents overlap,
    the untagged agent still answers one test at a time, and the verdicts are those of one by one."""
    spans = {name: pytester.path / f"{name}.spans" for name in ("a", "b", "c")}
    pytester.makefile(
        ".highbar.yaml",
        a=_highbar(free_port(), "own", 3, spans["a"]),
        b=_highbar(free_port(), "none", 3, spans["b"]),
        c=_highbar(free_port(), "own", 3, spans["c"]),
    )
    fast = run_pytest(pytester, "-v", "-p", "no:cacheprovider")
    seen = {name: _spans(path) for name, path in spans.items()}
    assert all(len(found) == 3 for found in seen.values()), seen
    assert _overlap(seen["a"], seen["b"]) and _overlap(seen["b"], seen["c"]), seen
    assert _most_at_once(spans["b"]) == 1  # untagged: one by one on its agent
    for path in spans.values():
        path.unlink()
    slow = run_pytest(pytester, "-v", "-p", "no:cacheprovider", ONE_BY_ONE)
    # (one by one: the figures above mean something)
    assert not _overlap(_spans(spans["a"]), _spans(spans["b"]))
    assert outcomes(fast) == outcomes(slow) and len(outcomes(fast)) == 9, fast.stdout.str()[-3000:]


def test_an_agent_started_ahead_is_stopped_when_the_session_stops_early(pytester: pytest.Pytester) -> None:
    """``-x`` ends the session at the first file's failure while the next file's agent was started ahead
    (its log shows it ran): that agent is stopped too, its port free when pytest returns."""
    first, second = free_port(), free_port()
    failing = """
      - name: fails slowly
        trigger: "hello, slowly"
        expect:
          function_calls:
            - name: get_order
"""
    pytester.makefile(
        ".highbar.yaml",
        a_first=_highbar(first, "own", 0, pytester.path / "a.spans", tests=failing),
        b_second=_highbar(second, "own", 2),
    )
    result = run_pytest(pytester, "-v", "-p", "no:cacheprovider", "-x")
    assert [word for _, word in outcomes(result)] == ["FAILED"], result.stdout.str()[-3000:]
    logs = sorted(p.name for p in (pytester.path / ".semantictest" / "logs").iterdir())
    assert any(name.startswith("b_second") for name in logs), logs  # started ahead, while the first test ran
    for port in (first, second):
        with socket.socket() as s:
            assert s.connect_ex(("127.0.0.1", port)) != 0, f"an agent still listens on {port}"


def test_a_file_naming_no_agent_never_runs_alongside_a_test_that_needs_its_agent_alone(
    pytester: pytest.Pytester,
) -> None:
    """A SemanticTest file names no agent, so its requests may reach any (here: the untagged agent of the
    file before it). It waits while that agent's tests run one by one: no answer overlaps another."""
    port = free_port()
    spans = pytester.path / "a.spans"
    pytester.makefile(".highbar.yaml", a_untagged=_highbar(port, "none", 3, spans))
    write(
        pytester,
        "b_http",
        [
            {
                "id": "poke",
                "pipeline": [
                    {
                        "block": "HttpRequest",
                        "output": "r",
                        "input": {
                            "url": f"http://127.0.0.1:{port}/chat",
                            "method": "POST",
                            "body": {"message": "hello, slowly"},
                        },
                    }
                ],
                "assertions": {"r.status": 200},
            }
        ],
    )
    result = run_pytest(pytester, "-v", "-p", "no:cacheprovider")
    assert [word for _, word in outcomes(result)] == ["PASSED"] * 4, result.stdout.str()[-3000:]
    assert len(_spans(spans)) == 4 and _most_at_once(spans) == 1, _spans(spans)


def test_an_agent_that_cannot_start_ahead_is_its_files_error(pytester: pytest.Pytester) -> None:
    """The second file's agent exits at once while it is started ahead: that file's tests are ERRORs
    naming the cause when they are reached, the first file's pass."""
    broken = _highbar(free_port(), "own", 2).replace('start: "', 'start: "false && ', 1)
    pytester.makefile(
        ".highbar.yaml", a_fine=_highbar(free_port(), "own", 2, pytester.path / "a.spans"), b_broken=broken
    )
    result = run_pytest(pytester, "-v", "-p", "no:cacheprovider")
    assert [word for _, word in outcomes(result)] == ["PASSED", "PASSED", "ERROR", "ERROR"], (
        result.stdout.str()[-3000:]
    )
    assert "b_broken.highbar.yaml: the agent could not be used" in result.stdout.str()
    assert "Traceback" not in result.stdout.str()
