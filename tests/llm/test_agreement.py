"""``semantictest agreement``: the judge's agreement with labelled examples (Cohen's kappa with its
interval and the confusion counts), so a rubric can be trusted before it gates CI."""

from __future__ import annotations

import io
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_semantictest import cli
from tests.llm.fake_openai import FakeOpenAI

EXAMPLES = 60


def _labels(path: Path) -> Path:
    rows = [
        {
            "id": f"ex{i}",
            "text": f"{'Booked' if i % 2 else 'Cannot book'} the meeting #{i}.",
            "expected": "Confirms the meeting",
            "label": bool(i % 2),
        }
        for i in range(EXAMPLES)
    ]
    target = path / "meeting.labels.jsonl"
    target.write_text("// the meeting rubric's labels\n" + "\n".join(json.dumps(r) for r in rows) + "\n")
    return target


class Coin(FakeOpenAI):
    """A judge that answers at random, whatever the reply says: a coin seeded by the prompt, so each
    example gets the same toss whatever order the requests arrive in."""

    def verdict(self, schema: dict[str, Any], prompt: str) -> dict[str, Any]:
        out = super().verdict(schema, prompt)
        score = 0.92 if random.Random(prompt).random() < 0.5 else 0.1
        out["details"] = {name: score for name in out["details"]}
        return out


def test_a_judge_that_always_agrees_has_kappa_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAI() as judge:
        judge.rule("Cannot book", 0.1)
        monkeypatch.chdir(tmp_path)
        out = io.StringIO()
        code = cli.agreement(_labels(tmp_path).name, [f"--semantictest-llm-base-url={judge.url}"], 0.9, out)
        assert judge.count == EXAMPLES
    text = out.getvalue()
    assert code == 0, text
    assert f"judge agreement with {EXAMPLES} labelled examples in meeting.labels.jsonl:" in text
    assert "kappa 1.00 (95% CI 1.00 to 1.00); observed agreement 100%" in text
    assert (
        "labelled pass: judge passed 30, judge failed 0" in text
        and "labelled fail: judge passed 0, judge failed 30" in text
    )
    assert "disagrees" not in text


def test_a_judge_that_answers_at_random_has_kappa_about_0(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Coin() as judge:
        monkeypatch.chdir(tmp_path)
        out = io.StringIO()
        code = cli.agreement(_labels(tmp_path).name, [f"--semantictest-llm-base-url={judge.url}"], 0.5, out)
    text = out.getvalue()
    found = re.search(r"kappa (-?[\d.]+) \(95% CI (-?[\d.]+) to (-?[\d.]+)\)", text)
    agreement = re.search(r"observed agreement (\d+)%", text)
    assert found is not None and agreement is not None, text
    kappa, low, high = (float(x) for x in found.groups())
    assert abs(kappa) < 0.3 and low < 0 < high, text  # no better than chance, and the interval says so
    assert code == 1 and "is below --min-kappa 0.5" in text  # not fit to gate CI
    assert text.count("disagrees: ex") == round((1 - float(agreement.group(1)) / 100) * EXAMPLES)


def test_a_bad_labels_file_names_the_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.labels.jsonl").write_text(
        '{"text": "hi", "expected": "greets"}\n{"text": "x", "expected": {}, "label": true}\n'
    )
    out = io.StringIO()
    assert (
        cli.agreement("bad.labels.jsonl", ["--semantictest-llm-base-url=http://127.0.0.1:9/v1"], None, out)
        == 2
    )
    text = out.getvalue()
    assert "bad.labels.jsonl:1: 'label' is required" in text, text
    assert ":2: LLMJudge needs input 'expected.expectedBehavior'" in text, text


class Yes(FakeOpenAI):
    """A judge that passes everything."""

    def verdict(self, schema: dict[str, Any], prompt: str) -> dict[str, Any]:
        out = super().verdict(schema, prompt)
        out["details"] = {name: 0.95 for name in out["details"]}
        return out


def test_a_judge_that_passes_everything_has_no_kappa_and_the_gate_fails_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its kappa is undefined (0/0 beyond chance), not "0.00 (95% CI 0.00 to 0.00)"; --min-kappa 0
    cannot pass on it."""
    with Yes() as judge:
        monkeypatch.chdir(tmp_path)
        out = io.StringIO()
        code = cli.agreement(_labels(tmp_path).name, [f"--semantictest-llm-base-url={judge.url}"], 0.0, out)
    text = out.getvalue()
    assert "kappa undefined: the judge says pass for every example" in text, text
    assert "0.00 to 0.00" not in text
    assert code == 1 and "--min-kappa 0: the kappa is undefined" in text, text


def test_kappa_matches_the_textbook_and_is_undefined_for_one_class() -> None:
    from pytest_semantictest.stats import cohen_kappa

    # Cohen's example shape: 20 agree-pass, 15 agree-fail, 5 and 10 disagreements
    pairs = [(True, True)] * 20 + [(False, False)] * 15 + [(True, False)] * 5 + [(False, True)] * 10
    found = cohen_kappa(pairs)
    observed, expected = 35 / 50, (25 / 50) * (30 / 50) + (25 / 50) * (20 / 50)
    assert found.kappa == pytest.approx((observed - expected) / (1 - expected))
    for constant in ([(True, True)] * 6 + [(False, True)] * 6, [(True, True)] * 6 + [(True, False)] * 6):
        assert cohen_kappa(constant).kappa is None and cohen_kappa(constant).low is None
