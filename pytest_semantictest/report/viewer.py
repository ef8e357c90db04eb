"""The results viewer: one self-contained HTML file built from results records (``docs/reports.md``).

``semantictest report RESULTS... -o report.html`` and ``--semantictest-report=report.html`` write it.
The page carries its own script and styles (``viewer.js``, ``viewer.css`` beside this module) and
the data: a short summary row per test, parsed when the page opens (the list is drawn from it), and
every test's full record, one JSON line each, gzip-compressed and base64-encoded (the browser's own
``DecompressionStream`` unpacks it after the list is drawn; a record is parsed only when its test is
opened), so a page of 10,000 tests opens quickly and stays small. No network at view time; it works
from ``file://``.

Every string was redacted by the run that wrote the results; the page is redacted once more with
the environment's secrets (a results file from elsewhere may be shown where other secrets are set).
Data is embedded as JSON inside ``<script type="application/json">`` with ``<`` escaped, and the
script puts values on the page as text only, so nothing in a record is ever read as markup.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..json_types import JSONObject, JSONValue
from ..shown import shorten

if TYPE_CHECKING:
    from ..llm.usage import Price
    from ..redact import Redactor
    from .results import ResultsWriter

RED = ("failed", "error", "xpassed")
ORDER = {"error": 0, "failed": 1, "xpassed": 2, "skipped": 3, "xfailed": 4, "passed": 5}
"""Failures first (and within an outcome, regressions against a baseline first): the order the list
starts in."""


def _row(record: Mapping[str, JSONValue]) -> JSONObject:
    """What the list shows of a test (the rest is read when the test is opened)."""
    message = record.get("message")
    row: JSONObject = {
        "id": record.get("id"),
        "name": record.get("name"),
        "file": record.get("file"),
        "format": record.get("format") or "python",
        "outcome": record.get("outcome"),
        "s": record.get("duration_s"),
        "why": shorten(message.strip().splitlines()[0], 300)
        if isinstance(message, str) and message.strip()
        else "",
    }
    for key in ("pass_rate", "baseline", "score"):
        if record.get(key) is not None:
            row[key] = record[key]
    mutation = record.get("mutation")
    if isinstance(mutation, Mapping):
        survived = mutation.get("survived")
        row["mutation"] = {
            "killed": mutation.get("killed"),
            "total": mutation.get("total"),
            "survived": len(survived) if isinstance(survived, list) else 0,
        }
    return row


def _summary(records: Sequence[Mapping[str, JSONValue]], prices: Mapping[str, Price]) -> JSONObject:
    from ..llm.usage import by_model, records_usage

    by_format: dict[str, Counter[str]] = {}
    for r in records:
        by_format.setdefault(str(r.get("format") or "python"), Counter())[str(r.get("outcome"))] += 1
    usage = records_usage(records)
    models: list[JSONValue] = []
    for model, (prompt, completion) in sorted(by_model(usage).items()):
        price = prices.get(model)
        cost = round(price.cost(prompt, completion), 6) if price is not None else None
        models.append({"model": model, "in": prompt, "out": completion, "cost": cost})
    return {
        "tests": len(records),
        "outcomes": dict(Counter(str(r.get("outcome")) for r in records)),
        "formats": {fmt: dict(counts) for fmt, counts in sorted(by_format.items())},
        "llm": {
            "calls": usage.get("calls", 0),
            "cache_hits": usage.get("cache_hits", 0),
            "tokens": usage.get("tokens", 0),
            "models": models,
        },
    }


def _regressed(record: Mapping[str, JSONValue]) -> bool:
    baseline = record.get("baseline")
    return isinstance(baseline, Mapping) and baseline.get("change") == "regressed"


def _embedded(value: JSONValue) -> str:
    """JSON that cannot end its ``<script>`` element early, nor open a comment in it."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


def build(
    records: Sequence[Mapping[str, JSONValue]],
    redactor: Redactor,
    prices: Mapping[str, Price] | None = None,
    title: str = "semantictest results",
) -> str:
    """The viewer page for ``records`` (results records, any order)."""
    shown = [redactor.data(dict(r)) for r in records]
    ordered = sorted(
        (r for r in shown if isinstance(r, dict)),
        key=lambda r: (ORDER.get(str(r.get("outcome")), 6), not _regressed(r), str(r.get("id"))),
    )
    data = {
        "title": title,
        "summary": _summary(ordered, prices or {}),
        "rows": [_row(r) for r in ordered],
    }
    details = "\n".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in ordered)
    packed = base64.b64encode(gzip.compress(details.encode("utf-8"), compresslevel=6)).decode("ascii")
    folder = resources.files(__package__ or "pytest_semantictest.report")
    script = folder.joinpath("viewer.js").read_text(encoding="utf-8")
    styles = folder.joinpath("viewer.css").read_text(encoding="utf-8")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_text(title)}</title><style>{styles}</style></head>\n<body>\n"
        '<div id="app">Loading...</div>\n'
        f'<script type="application/json" id="st-data">{_embedded(data)}</script>\n'
        f'<script type="text/plain" id="st-details">{packed}</script>\n'
        f"<script>{script}</script>\n</body></html>\n"
    )


def _text(value: str) -> str:
    from html import escape

    return escape(value, quote=True)


def write(
    path: Path,
    records: Sequence[Mapping[str, JSONValue]],
    redactor: Redactor,
    prices: Mapping[str, Price] | None = None,
    inputs: Sequence[Path] = (),
) -> None:
    """Write the viewer to ``path`` (its folder made if missing), atomically and never over one of
    ``inputs`` (the results files it was built from)."""
    from ..files import write_atomic

    write_atomic(path, build(records, redactor, prices), inputs=inputs)


def red(records: Sequence[Mapping[str, JSONValue]]) -> bool:
    """Whether a test failed, errored or passed unexpectedly (what makes pytest's exit status 1)."""
    return any(r.get("outcome") in RED for r in records)


class ViewerPlugin:
    """``--semantictest-report=PATH``: the viewer of this run, written by the controller (or the only
    process) once every test's record is in, from the same records as ``--semantictest-results``."""

    def __init__(
        self,
        config: pytest.Config,
        path: str,
        writer: ResultsWriter,
        redactor: Callable[[], Redactor],
        prices: Mapping[str, Price],
    ) -> None:
        self.config = config
        self.path = Path(str(config.invocation_params.dir)) / path  # (checked at start: start_checks.py)
        self.writer = writer
        self.redactor = redactor
        self.prices = prices

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if hasattr(session.config, "workerinput"):
            return
        write(self.path, list(self.writer.records.values()), self.redactor(), self.prices)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not hasattr(self.config, "workerinput"):
            terminalreporter.write_line(f"semantictest: results viewer in {self.path}")
