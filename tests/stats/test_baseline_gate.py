"""``--semantictest-baseline`` end to end: the SemanticTest examples against the example agent, its
results saved; then the agent made worse in one way (a changed tool argument, a slower reply, a
lower judge score recorded in the cache) through a proxy: exactly the affected test is listed as
regressed and the gate exits 1; with the agent unchanged it exits 0. Plus bad baselines."""

from __future__ import annotations

import json
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.helpers import run_pytest
from tests.llm.fake_openai import FakeOpenAI

pytest_plugins = ["pytester"]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES / "agents"))


class Proxy:
    """Forwards to the example agent; ``mode`` makes it worse in one way."""

    def fresh(self) -> None:
        """A new example agent behind the proxy (its job and retry counters start again, as in a new run)."""
        from chat_agent import start_server

        agent, self.target = start_server(0)
        self.agents.append(agent)

    def __init__(self, target: str) -> None:
        self.target, self.mode = target, "same"
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def _forward(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                request = urllib.request.Request(  # noqa: S310
                    proxy.target + self.path,
                    data=body or None,
                    method=self.command,
                    headers={
                        k: v
                        for k, v in self.headers.items()
                        if k.lower() in ("content-type", "authorization")
                    },
                )
                try:
                    with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310 (loopback)
                        status, headers, data = answer.status, dict(answer.headers), answer.read()
                except urllib.error.HTTPError as err:
                    status, headers, data = err.code, dict(err.headers), err.read()
                if proxy.mode == "tool-arg":
                    data = data.replace(b'\\"city\\": \\"Paris\\"', b'\\"city\\": \\"Lyon\\"')
                if proxy.mode == "slow" and b'"Hello!"' in body:
                    time.sleep(0.8)
                self.send_response(status)
                for key in ("Content-Type", "Cache-Control"):
                    if key in headers:
                        self.send_header(key, headers[key])
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = _forward  # noqa: N815

            def log_message(self, *args: object) -> None:
                pass

        self.agents: list[object] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[Proxy]:
    front = Proxy("")
    monkeypatch.setenv("EXAMPLE_AGENT_URL", front.url)
    try:
        yield front
    finally:
        front.server.shutdown()
        front.server.server_close()
        for agent in front.agents:
            agent.shutdown()


def _run(pytester: pytest.Pytester, proxy: Proxy, judge: FakeOpenAI, *args: str) -> pytest.RunResult:
    """The example SemanticTest files (read from examples/ into this test's folder), against the proxy
    in front of a fresh example agent."""
    proxy.fresh()
    folder = pytester.path / "semantictest"
    if not folder.is_dir():
        folder.mkdir()
        for spec in (EXAMPLES / "semantictest").glob("*.json"):
            (folder / spec.name).write_bytes(spec.read_bytes())
    return run_pytest(
        pytester,
        "semantictest",
        "-p",
        "no:cacheprovider",
        f"--semantictest-llm-base-url={judge.url}",
        "--semantictest-llm-cache=off",
        *args,
    )


def _regressed(output: str) -> list[str]:
    return [line.split()[1] for line in output.splitlines() if line.startswith("regressed: ")]


@pytest.mark.parametrize(
    ("mode", "affected"),
    [
        ("same", None),
        ("tool-arg", "semantictest/chat_agent.json::weather-tool-call"),
        ("slow", "semantictest/chat_agent.json::greeting"),
        ("judge", "semantictest/mock_and_judge.json::judge-meaning"),
    ],
)
def test_exactly_the_affected_test_regresses_and_the_gate_exits_1(
    pytester: pytest.Pytester, proxy: Proxy, mode: str, affected: str | None
) -> None:
    base = pytester.path / "base.jsonl"
    with FakeOpenAI(default_score=0.95) as judge:
        first = _run(pytester, proxy, judge, f"--semantictest-results={base}")
        assert first.ret == 0, first.stdout.str()[-3000:]
        proxy.mode = mode
        extra: tuple[str, ...] = ()
        if mode == "judge":  # the lower score, recorded in a cache of its own and replayed from it
            cache = pytester.path / "lower-judge"
            with FakeOpenAI(default_score=0.72) as lower:
                recorded = _run(
                    pytester,
                    proxy,
                    lower,
                    "--semantictest-llm-cache=write",
                    f"--semantictest-llm-cache-dir={cache}",
                )
                assert recorded.ret == 0 and any(cache.rglob("*.json")), recorded.stdout.str()[-2000:]
                extra = ("--semantictest-llm-cache=replay", f"--semantictest-llm-cache-dir={cache}")
        second = _run(
            pytester,
            proxy,
            judge,
            f"--semantictest-baseline={base}",
            "--semantictest-fail-on-regression",
            *extra,
        )
    out = second.stdout.str()
    assert _regressed(out) == ([affected] if affected else []), out[-4000:]
    assert second.ret == (1 if affected else 0), out[-4000:]
    assert "semantictest baseline" in out and f"compared with {base}" in out
    why = {"tool-arg": "outcome passed -> failed", "slow": "latency", "judge": "score 0.95 -> 0.72"}
    if affected:
        assert why[mode] in next(line for line in out.splitlines() if line.startswith("regressed: ")), out[
            -3000:
        ]


def test_a_baseline_that_cannot_be_used_is_said_and_fails_the_gate(pytester: pytest.Pytester) -> None:
    pytester.makefile(
        ".json",
        s=json.dumps(
            {
                "name": "s",
                "tests": [
                    {
                        "id": "t",
                        "pipeline": [{"block": "MockData", "config": {"data": 1}, "output": "d"}],
                        "assertions": {"d": 1},
                    }
                ],
            }
        ),
    )
    missing = run_pytest(
        pytester,
        "-p",
        "no:cacheprovider",
        "--semantictest-baseline=none.jsonl",
        "--semantictest-fail-on-regression",
    )
    assert missing.ret == 1  # the gate could not check: never a silent "no regressions"
    missing.stdout.fnmatch_lines(
        [
            "*not compared: baseline */none.jsonl does not exist: write one with "
            "--semantictest-results=* (--semantictest-fail-on-regression: exit 1)"
        ]
    )
    (pytester.path / "old.jsonl").write_text(json.dumps({"id": "s.json::t", "outcome": "passed"}) + "\n")
    old = run_pytest(pytester, "-p", "no:cacheprovider", "--semantictest-baseline=old.jsonl")
    assert old.ret == pytest.ExitCode.USAGE_ERROR  # a file given that cannot be used: before any test runs
    old.stderr.fnmatch_lines(["*baseline */old.jsonl:1 is results format None; this version reads 1:*"])
    (pytester.path / "edited.jsonl").write_text(
        json.dumps(
            {
                "id": "s.json::t",
                "outcome": "passed",
                "results_version": 1,
                "runs": ["passed"],
                "run_durations_ms": ["fast"],
            }
        )
        + "\n"
    )
    edited = run_pytest(pytester, "-p", "no:cacheprovider", "--semantictest-baseline=edited.jsonl")
    assert edited.ret == pytest.ExitCode.USAGE_ERROR and "Traceback" not in edited.stdout.str()
    edited.stderr.fnmatch_lines(["*baseline */edited.jsonl:1: 'run_durations_ms.0' *(got 'fast')*"])
    (pytester.path / "other.jsonl").write_text(
        json.dumps({"id": "other.json::x", "file": "other.json", "outcome": "passed", "results_version": 1})
        + "\n"
    )
    other = run_pytest(
        pytester,
        "-p",
        "no:cacheprovider",
        "--semantictest-baseline=other.jsonl",
        "--semantictest-fail-on-regression",
    )
    assert other.ret == 0
    other.stdout.fnmatch_lines(
        [
            "*compared with */other.jsonl: 1 new",
            "new: s.json::t not in the baseline",
            "note: 1 baseline test(s) of files this run did not select were not compared",
        ]
    )


def test_under_xdist_each_test_is_compared_once(pytester: pytest.Pytester) -> None:
    def suite(value: int) -> None:
        pytester.makefile(
            ".json",
            s=json.dumps(
                {
                    "name": "s",
                    "tests": [
                        {
                            "id": f"t{i}",
                            "pipeline": [
                                {
                                    "block": "MockData",
                                    "config": {"data": value if i == 0 else 1},
                                    "output": "d",
                                }
                            ],
                            "assertions": {"d": 1},
                        }
                        for i in range(4)
                    ],
                }
            ),
        )

    suite(1)
    assert run_pytest(pytester, "-p", "no:cacheprovider", "--semantictest-results=base.jsonl").ret == 0
    suite(2)
    result = run_pytest(
        pytester,
        "-p",
        "no:cacheprovider",
        "-n",
        "2",
        "--semantictest-baseline=base.jsonl",
        "--semantictest-fail-on-regression",
        "--junitxml=junit.xml",
    )
    assert result.ret == 1
    assert _regressed(result.stdout.str()) == ["s.json::t0"]
    import xml.etree.ElementTree as ET

    changes = {
        c.get("name"): [p.get("value") for p in c.iter("property") if p.get("name") == "baseline_change"]
        for c in ET.parse(pytester.path / "junit.xml").getroot().iter("testcase")
    }
    assert changes == {
        "t0": ["regressed"],
        "t1": ["unchanged"],
        "t2": ["unchanged"],
        "t3": ["unchanged"],
        "t0 (regression)": [],  # the gate's verdict, failed (no test of its own to compare)
    }


def test_a_regression_of_a_passing_test_is_red_in_junit_html_and_the_results_file(
    pytester: pytest.Pytester,
) -> None:
    """The gate's verdict comes after every test was reported (a test that still passes, now much
    slower): each regression is an entry of its own, failed, wherever the run is recorded; and a
    baseline the gate could not compare, too."""
    from xml.etree import ElementTree

    from tests.reports.dom import blob

    slow = [
        {"id": "a", "block": "MockData", "config": {"data": 1}, "output": "d"},
        {"block": "Loop", "config": {"target": "a", "maxIterations": 2, "delayMs": 300}},
    ]
    pytester.makefile(
        ".json",
        s=json.dumps({"name": "s", "tests": [{"id": "t", "pipeline": slow, "assertions": {"d": 1}}]}),
    )
    old = {"id": "s.json::t", "file": "s.json", "outcome": "passed", "results_version": 1, "latency_ms": 1}
    (pytester.path / "base.jsonl").write_text(json.dumps(old) + "\n")
    gate = ("--semantictest-fail-on-regression", "--junitxml=junit.xml", "--semantictest-results=now.jsonl")
    result = run_pytest(
        pytester,
        "-p",
        "no:cacheprovider",
        "--semantictest-baseline=base.jsonl",
        *gate,
        "--html=report.html",
        "--self-contained-html",
    )
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        ["regressed: s.json::t*latency*", "*1 passed*1 failed by the baseline gate in*"]
    )
    cases = {c.get("name"): c for c in ElementTree.parse(pytester.path / "junit.xml").iter("testcase")}
    assert cases["t"].find("failure") is None  # the test as it was reported
    failure = cases["t (regression)"].find("failure")
    assert failure is not None and "regressed against the baseline" in str(failure.get("message"))
    records = {
        r["id"]: r
        for r in map(json.loads, (pytester.path / "now.jsonl").read_text(encoding="utf-8").splitlines())
    }
    assert records["s.json::t (regression)"]["outcome"] == "failed"
    rows = blob(pytester.path / "report.html")["tests"]
    assert [row["result"] for row in rows["s.json::t (regression)"]] == ["Failed"]
    again = run_pytest(pytester, "-p", "no:cacheprovider", "--semantictest-baseline=now.jsonl")
    again.stdout.fnmatch_lines(["compared with */now.jsonl: 1 unchanged"])  # the entry is no test

    missing = run_pytest(pytester, "-p", "no:cacheprovider", "--semantictest-baseline=none.jsonl", *gate)
    assert missing.ret == 1
    cases = {c.get("name"): c for c in ElementTree.parse(pytester.path / "junit.xml").iter("testcase")}
    failure = cases["none.jsonl (baseline)"].find("failure")
    assert failure is not None and "does not exist" in str(failure.get("message"))
