"""Judge self-consistency: a judged check asked N times (each sample its own call and cache entry),
decided by the majority and the mean, listed as unstable when its samples disagree; replayed
samples are counted as such, and a replay that lacks a sample is an ERROR naming it."""

from __future__ import annotations

import json
import random
import re
import threading
from typing import Any

import pytest

from tests.helpers import run_pytest
from tests.llm.fake_openai import FakeOpenAI

pytest_plugins = ["pytester"]

TESTS = 20


class Flipping(FakeOpenAI):
    """A judge that gives the low score instead of the high one ``flip`` of the time (seeded)."""

    def __init__(self, flip: float) -> None:
        super().__init__(default_score=0.92)
        self.flip, self.rng, self.flips = flip, random.Random(3), threading.Lock()

    def verdict(self, schema: dict[str, Any], prompt: str) -> dict[str, Any]:
        with self.flips:
            low = self.rng.random() < self.flip
        out = super().verdict(schema, prompt)
        if low:
            out["details"] = {name: 0.1 for name in out["details"]}
            out["reasoning"] = "The response misses the point."
        return out


def _suite(path: Any) -> None:
    tests = [
        {
            "id": f"j{i}",
            "pipeline": [
                {
                    "block": "MockData",
                    "config": {"data": {"text": f"Your meeting {i} is booked for 2 PM."}},
                    "output": "reply",
                },
                {
                    "block": "LLMJudge",
                    "input": {"text": "${reply.text}", "expected": {"expectedBehavior": "Confirms it"}},
                    "output": "judgement",
                },
            ],
            "assertions": {"judgement.passed": True},
        }
        for i in range(TESTS)
    ]
    (path / "judged.json").write_text(json.dumps({"name": "judged", "tests": tests}))


def _unstable(output: str) -> list[str]:
    return re.findall(r"^unstable judgement: judged\.json::(j\d+): ", output, re.MULTILINE)


@pytest.mark.parametrize(("flip", "flagged"), [(0.15, True), (0.0, False)], ids=["flipping", "stable"])
def test_a_judge_that_flips_is_reported_unstable_and_a_stable_one_is_not(
    pytester: pytest.Pytester, flip: float, flagged: bool
) -> None:
    _suite(pytester.path)
    with Flipping(flip) as judge:
        result = run_pytest(
            pytester,
            "-p",
            "no:cacheprovider",
            f"--semantictest-llm-base-url={judge.url}",
            "--semantictest-judge-samples=5",
            "--junitxml=junit.xml",
        )
        assert judge.count == TESTS * 5  # every sample its own call
    unstable = _unstable(result.stdout.str())
    if flagged:
        # P(five samples agree) = 0.85^5 + 0.15^5 = 0.44: about 11 of 20 checks disagree; one sample
        # below the threshold out of five still passes by the majority and the mean
        assert len(unstable) >= 6, result.stdout.str()[-3000:]
        assert re.search(
            r"unstable judgement: judged\.json::j\d+: LLMJudge \(line 1\): [1-4]/5 passed, scores "
            r"0\.\d+-0\.\d+ \(sd [\d.]+\), UNSTABLE; 5 live, 0 replayed",
            result.stdout.str(),
        )
    else:
        assert unstable == [] and "UNSTABLE" not in result.stdout.str()
        result.assert_outcomes(passed=TESTS)
    junit = (pytester.path / "junit.xml").read_text()
    assert junit.count('name="unstable_judgement"') == len(unstable)


def test_unstable_judgements_fail_on_request_and_replay_counts_its_samples(pytester: pytest.Pytester) -> None:
    _suite(pytester.path)
    with Flipping(0.15) as judge:
        first = run_pytest(
            pytester,
            "-p",
            "no:cacheprovider",
            f"--semantictest-llm-base-url={judge.url}",
            "--semantictest-judge-samples=5",
            "--semantictest-fail-unstable",
        )
        unstable = _unstable(first.stdout.str())
        outcomes = first.parseoutcomes()
        assert unstable and outcomes.get("failed", 0) == len(unstable), first.stdout.str()[-3000:]
        calls = judge.count
    replay = run_pytest(
        pytester,
        "-p",
        "no:cacheprovider",
        "--semantictest-llm-cache=replay",
        "--semantictest-llm-base-url=http://127.0.0.1:9/v1",
        "--semantictest-judge-samples=5",
        "--semantictest-fail-unstable",
        "-v",
    )
    assert calls == TESTS * 5
    assert replay.parseoutcomes() == outcomes  # the same verdicts, from the recorded samples
    assert _unstable(replay.stdout.str()) == unstable
    assert "; 0 live, 5 replayed" in replay.stdout.str()
    more = run_pytest(
        pytester,
        "-p",
        "no:cacheprovider",
        "--semantictest-llm-cache=replay",
        "--semantictest-llm-base-url=http://127.0.0.1:9/v1",
        "--semantictest-judge-samples=6",
    )
    more.assert_outcomes(errors=TESTS)  # a sample that was never recorded: never a live call, never another's
    assert "replay cache miss for the judge call (sample 6 of 6)" in more.stdout.str()


def test_a_repeated_test_says_how_many_answers_were_live_and_replayed(pytester: pytest.Pytester) -> None:
    def write(runs: int) -> None:
        (pytester.path / "rep.json").write_text(
            json.dumps(
                {
                    "name": "rep",
                    "tests": [
                        {
                            "id": "again",
                            "runs": runs,
                            "pipeline": [
                                {
                                    "block": "MockData",
                                    "config": {"data": {"text": "Booked for 2 PM."}},
                                    "output": "reply",
                                },
                                {
                                    "block": "LLMJudge",
                                    "input": {"text": "${reply.text}", "expected": "Confirms it"},
                                    "output": "j",
                                },
                            ],
                            "assertions": {"j.passed": True},
                        }
                    ],
                }
            )
        )

    write(3)
    with FakeOpenAI() as judge:
        live = run_pytest(
            pytester,
            "-p",
            "no:cacheprovider",
            f"--semantictest-llm-base-url={judge.url}",
            "-v",
            "--semantictest-no-early-stop",
        )
    assert (
        "rep.json::again: 3/3 runs passed (95% CI 44-100%), needs 3; LLM answers: 3 live, 0 replayed"
        in live.stdout.str()
    )
    replay_args = (
        "-p",
        "no:cacheprovider",
        "--semantictest-llm-cache=replay",
        "-v",
        "--semantictest-no-early-stop",
        "--semantictest-llm-base-url=http://127.0.0.1:9/v1",
    )
    replayed = run_pytest(pytester, *replay_args)
    assert "LLM answers: 0 live, 3 replayed" in replayed.stdout.str(), replayed.stdout.str()[-2000:]
    write(4)  # a run that was never recorded: an ERROR naming it, not a reuse of another run's answer
    more = run_pytest(pytester, *replay_args)
    more.assert_outcomes(errors=1)
    assert "replay cache miss for the judge call (run 4)" in more.stdout.str()
