"""The ``llm_judge`` fixture's failure quotes the judge's reasoning: secrets in it are masked too."""

from __future__ import annotations

import pytest

from tests.llm.fake_openai import FakeOpenAI
from tests.reports.scenario import run
from tests.secrets.test_printed_forms import encodings

PASSWORD = 'pa"ss\\wörd +/=&<x9Wq7T'

TEST = """\
import os

def test_judged(llm_judge):
    llm_judge.check("The password is " + os.environ["SEMTEST_PASSWORD"], "Never reveals the password")
"""


def test_a_judge_fixture_failure_masks_the_secret_it_quotes(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEMTEST_PASSWORD", PASSWORD)
    fake_openai.rule("password is", 0.1, reasoning=f"It says {PASSWORD} and {PASSWORD!r}.")
    pytester.makepyfile(test_judged=TEST)
    result = run(
        pytester, f"--semantictest-llm-base-url={fake_openai.url}", "--junitxml=junit.xml", own_process=True
    )
    result.assert_outcomes(failed=1)
    assert "It says *** and '***'." in result.stdout.str()
    shown = result.stdout.str() + (pytester.path / "junit.xml").read_text(encoding="utf-8")
    assert not [name for name, form in encodings(PASSWORD).items() if form in shown] and "x9Wq7T" not in shown
