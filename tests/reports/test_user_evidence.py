"""A block a user writes (only the block, in their conftest) shows its evidence in every report:
HTML extras, the console's failure sections, JUnit properties, the results file; secrets masked."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from tests.reports.dom import blob, extra_of, table_rows
from tests.reports.scenario import run, write_suite

SECRET = "wx-7c1e9d04b2aa"
"""In ``WEATHER_API_KEY`` (a secret by its name): the block sends it and writes it into a note."""

BLOCK = """
import os

from pytest_semantictest import Block, register_block
from pytest_semantictest.evidence import HttpExchange, Judgement, Note


@register_block
class Forecast(Block):
    name = "Forecast"
    config_keys = None

    async def process(self, inputs, ctx):
        key = os.environ["WEATHER_API_KEY"]
        ctx.evidence(HttpExchange(
            {"method": "POST", "url": "http://weather.invalid/v1/forecast", "headers": {"x-api-key": key},
             "body": {"city": "Paris"}},
            {"status": 200, "headers": {"content-type": "application/json"}, "body": '{"temp": 21.5}'}))
        ctx.evidence(Judgement(score=0.4, threshold=0.8, passed=False, reasoning="Too vague about rain.",
                               model="local-judge"))
        ctx.evidence(Note("weather station", {"station": "PAR-1", "key": key, "readings": 3},
                          text=f"raw reading 21.5C (signed {key})"))
        return {"ok": False}
"""


def _suite() -> dict[str, object]:
    return {
        "name": "user",
        "tests": [
            {
                "id": "forecast",
                "pipeline": [{"id": "fc", "block": "Forecast", "output": "w"}],
                "assertions": {"w.ok": True},
            }
        ],
    }


def test_a_user_block_s_evidence_is_in_every_report(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WEATHER_API_KEY", SECRET)
    pytester.makeconftest(BLOCK)
    write_suite(pytester, _suite(), "user")
    result = run(
        pytester,
        "--html=report.html",
        "--self-contained-html",
        "--junitxml=junit.xml",
        "--semantictest-results=results.jsonl",
    )
    result.assert_outcomes(failed=1)
    out = result.stdout.str()

    # console: the failure's sections, by kind of evidence
    assert (
        "Captured llm judge call" in out
        and "judge score: 0.4 < threshold 0.8 (not passed; model local-judge)" in out
    )
    assert "reasoning: Too vague about rain." in out
    assert "Captured evidence call" in out and "fc (Forecast): weather station" in out
    assert "  station: PAR-1" in out and "  readings: 3" in out and "raw reading 21.5C" in out

    # HTML: the exchange, the judge's verdict and the note in the test's extra
    extra = extra_of(blob(pytester.path / "report.html"), "user.json::forecast")
    exchange = extra.find(cls="st-exchange")
    assert (
        "fc (Forecast): POST http://weather.invalid/v1/forecast" in exchange.text()
        and "200" in exchange.text()
    )
    assert json.loads(exchange.find(cls="st-request").find(cls="st-body").find("pre").text()) == {
        "city": "Paris"
    }
    head = extra.find(cls="st-judge").find("h4").text()
    assert "score 0.4" in head and "threshold 0.8" in head and "failed" in head
    assert "judge score 0.4 vs threshold 0.8" in extra.find(cls="st-overview").text()
    note = extra.find(cls="st-note")
    assert "weather station" in note.find("h4").text()
    assert table_rows(note.find("table", cls="st-facts"))[0] == ["station", "PAR-1"]
    assert "raw reading 21.5C" in note.find("pre").text()

    # JUnit: the deciding judge's score and the note's facts as properties
    case = next(ET.parse(str(pytester.path / "junit.xml")).getroot().iter("testcase"))
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert (props["score"], props["threshold"]) == ("0.4", "0.8")
    assert (props["weather station: station"], props["weather station: readings"]) == ("PAR-1", "3")

    # results file: the note
    (record,) = [json.loads(line) for line in (pytester.path / "results.jsonl").read_text().splitlines()]
    (shown,) = record["notes"]
    assert (shown["step"], shown["title"], shown["fields"]["station"]) == ("fc", "weather station", "PAR-1")

    # the secret the block sent and noted is masked everywhere
    for text in (
        out,
        (pytester.path / "report.html").read_text(),
        (pytester.path / "junit.xml").read_text(),
        (pytester.path / "results.jsonl").read_text(),
    ):
        assert SECRET not in text
    assert props["weather station: key"] != SECRET and "***" in (props["weather station: key"] or "")


def test_evidence_of_an_unknown_kind_is_the_block_s_error(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
from pytest_semantictest import Block, register_block

@register_block
class Odd(Block):
    name = "Odd"
    async def process(self, inputs, ctx):
        ctx.evidence({"title": "a dict"})
        return {"ok": True}
""")
    write_suite(
        pytester,
        {
            "name": "odd",
            "tests": [
                {"id": "odd", "pipeline": [{"block": "Odd", "output": "o"}], "assertions": {"o.ok": True}}
            ],
        },
        "odd",
    )
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*TypeError: evidence must be one of HttpExchange, *; got dict*"])


def test_the_report_layer_names_no_block() -> None:
    """Reports render evidence by kind: no module of ``report/`` names a built-in block or reads a
    step's block name to decide what to show."""
    from pathlib import Path

    import pytest_semantictest.report as report
    from pytest_semantictest.blocks.registry import _BUILTIN

    for path in Path(report.__file__).parent.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        named = [name for name in _BUILTIN if f'"{name}"' in text]
        assert not named, f"{path.name} names blocks {named}"
        assert (
            "step.block ==" not in text and "step.block in" not in text and "step.block not in" not in text
        ), path.name


def test_steps_running_at_once_keep_their_own_evidence() -> None:
    """Concurrent steps (``concurrent = True``) emit into their own step's trace, and what a block
    emits comes before what its ``evidence_of`` reads from the finished step."""
    import asyncio

    from pytest_semantictest import Block, register_block
    from pytest_semantictest.api import run_suite
    from pytest_semantictest.evidence import Evidence, Note
    from pytest_semantictest.json_types import JSONObject, JSONValue
    from pytest_semantictest.model import StepTrace
    from pytest_semantictest.step import StepContext

    @register_block
    class EvidenceProbe(Block):
        name = "EvidenceProbe"
        config_keys = None
        concurrent = True

        async def process(self, inputs: JSONObject, ctx: StepContext) -> JSONValue:
            me = str(self.config["me"])
            ctx.evidence(Note("before", {"me": me}))
            await asyncio.sleep(0.05 if me == "a" else 0.01)  # b finishes first, while a still runs
            ctx.evidence(Note("after", {"me": me}))
            return {"me": me}

        @classmethod
        def evidence_of(cls, trace: StepTrace) -> list[Evidence]:
            return [Note("read", {"me": trace.output["me"]})]

    steps = [{"id": me, "block": "EvidenceProbe", "config": {"me": me}, "output": me} for me in ("a", "b")]
    verdict = run_suite(
        {"name": "probe", "tests": [{"id": "t", "pipeline": steps, "assertions": {}}]}
    ).verdict
    assert verdict.passed
    for trace in verdict.trace:
        notes = [n for n in trace.evidence if isinstance(n, Note)]
        assert notes == trace.evidence  # the probe's records only
        assert [(n.title, n.fields["me"]) for n in notes] == [
            ("before", trace.step.id),
            ("after", trace.step.id),
            ("read", trace.step.id),
        ]
