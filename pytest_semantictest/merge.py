"""``semantictest merge``: the results files of a split run's jobs as one run.

Each CI job of a split suite (pytest-split, ``docs/ci.md``) writes its own ``--semantictest-results``
file; ``merge`` reads them (every record's ``results_version`` checked, as the baseline comparison
reads them: ``report/baseline.load``), refuses a test that two jobs ran (an overlapping split), and
writes one results file (records in node-id order, so the merge of the jobs and of a whole run are
the same file but for durations), prints one summary (outcomes, per format, each model's tokens and
cost with ``--price``) and writes one HTML report. The merged file is what
``--semantictest-baseline`` reads.
"""

from __future__ import annotations

import html
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from .files import same_file, write_atomic, write_problem
from .json_types import JSONObject, JSONValue
from .report.results_file import files_of
from .shown import printable

if TYPE_CHECKING:
    from .llm.usage import Price

OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")
"""Every outcome a record can have (``report/results_file.py`` refuses any other: nothing is counted as nothing)."""


class MergeError(Exception):
    """A results file that cannot be merged: the message names the file and what to do."""


def load_jobs(paths: Sequence[Path], history: bool = False) -> list[JSONObject]:
    """Every job's records, in node-id order; raises MergeError naming a file or a test run twice.
    With ``history`` the files are several runs of one suite: a test's records are pooled
    (``report.baseline.fold``), in the order the files are given."""
    from .report.baseline import fold
    from .report.results_file import ResultsFileError, load

    records: dict[str, JSONObject] = {}
    where: dict[str, Path] = {}
    for path in paths:
        if not path.exists():
            raise MergeError(
                f"{path} does not exist: give the results files the jobs wrote with "
                "--semantictest-results (or the folder they are in)"
            )
        try:
            found, _ = load(path, "results")
        except ResultsFileError as exc:
            raise MergeError(str(exc)) from None
        for nodeid, record in found.items():
            if nodeid in records and history:
                records[nodeid] = fold(records[nodeid], record)
                continue
            if nodeid in records:
                raise MergeError(
                    f"{nodeid} is in {where[nodeid]} and in {path}: two jobs ran it (do the jobs "
                    "use the same --splits and durations file?)"
                )
            records[nodeid], where[nodeid] = record, path
    return [records[k] for k in sorted(records)]


def summary_lines(records: Sequence[Mapping[str, JSONValue]], prices: Mapping[str, Price]) -> list[str]:
    """The merged run's summary: outcome counts, per format, LLM usage per model."""
    from .llm.usage import records_usage, usage_lines

    def counts(subset: Sequence[Mapping[str, JSONValue]]) -> str:
        tally = Counter(str(r.get("outcome")) for r in subset)
        return ", ".join(f"{tally[o]} {o}" for o in OUTCOMES if tally[o]) or "no tests"

    lines = [f"{len(records)} tests: {counts(records)}"]
    for fmt in sorted({str(r.get("format")) for r in records}):
        lines.append(f"{fmt}  {counts([r for r in records if str(r.get('format')) == fmt])}")
    usage = records_usage(records)
    if usage.get("calls") or usage.get("cache_hits"):
        lines.append(
            f"{usage.get('calls', 0)} LLM calls, {usage.get('cache_hits', 0)} cache hits, "
            f"{usage.get('tokens', 0)} tokens"
        )
    return lines + usage_lines(usage, prices)


def html_report(records: Sequence[Mapping[str, JSONValue]], summary: Sequence[str]) -> str:
    """One self-contained HTML page: the summary, then a row a test (outcome, file, message)."""
    rows = "\n".join(
        f'<tr class="{html.escape(str(r.get("outcome")))}"><td>{html.escape(str(r.get("outcome")))}</td>'
        f"<td>{html.escape(str(r['id']))}</td><td>{html.escape(str(r.get('format')))}</td>"
        f"<td><pre>{html.escape(str(r.get('message') or ''))}</pre></td></tr>"
        for r in records
    )
    items = "".join(f"<li>{html.escape(line)}</li>" for line in summary)
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>semantictest results</title><style>'
        "td{vertical-align:top;padding:2px 8px}.failed,.error{background:#fdd}.passed{background:#dfd}"
        "</style></head><body>\n<h1>semantictest results</h1>\n"
        f"<ul>{items}</ul>\n<table><tr><th>outcome</th><th>test</th><th>format</th><th>why</th></tr>\n"
        f"{rows}\n</table></body></html>\n"
    )


def _input_files(inputs: Sequence[Path]) -> list[Path]:
    """The results files the inputs name (a folder: its ``*.jsonl``), those that exist."""
    return [file for path in inputs if path.exists() for file in files_of(path)]


def _outputs(out: str | None, html_path: str | None) -> list[tuple[str, Path]]:
    """The files asked for, each with its option (``-o``, ``--html``)."""
    return [(option, Path(value)) for option, value in (("-o", out), ("--html", html_path)) if value]


def _check_outputs(inputs: Sequence[Path], outputs: Sequence[tuple[str, Path]]) -> None:
    """Every output can be written and replaces no input (raised as MergeError before anything is read)."""
    read = _input_files(inputs)
    for option, target in outputs:
        problem = write_problem(target)
        if problem is None and any(same_file(target, given) for given in read):
            problem = f"{target} is one of the results files merged: write the merge to another file"
        if problem is not None:
            raise MergeError(f"{option}: {problem}")
    if len(outputs) == 2 and same_file(outputs[0][1], outputs[1][1]):
        raise MergeError("-o and --html name the same file: give each its own")


def merge(
    paths: Sequence[str],
    out: str | None,
    html_path: str | None,
    prices: Sequence[str],
    stdout: TextIO,
    stderr: TextIO,
    history: bool = False,
) -> int:
    """The ``merge`` command: 0 when every test passed (or was skipped), 1 otherwise, 4 on bad input."""
    from .llm.limits import parse_prices

    try:
        inputs = [Path(p) for p in paths]
        outputs = _outputs(out, html_path)
        _check_outputs(inputs, outputs)
        records = load_jobs(inputs, history)
        table = parse_prices(list(prices))
    except (MergeError, ValueError) as exc:
        stderr.write(f"semantictest merge: {exc}\n")
        return 4
    summary = summary_lines(records, table)
    for line in summary:
        stdout.write(printable(line) + "\n")  # names read from files: escaped
    read = _input_files(inputs)
    try:
        for option, target in outputs:
            stdout.write(_write_output(option, target, records, summary, read))
    except OSError as exc:
        stderr.write(f"semantictest merge: {option} {target}: {exc.strerror or exc}\n")
        return 4
    from .report.viewer import red

    return 1 if red(records) else 0


def _write_output(
    option: str, target: Path, records: list[JSONObject], summary: list[str], read: list[Path]
) -> str:
    """Write the merged results (``-o``) or the HTML report (``--html``); the line that says where."""
    if option == "-o":
        write_atomic(target, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), inputs=read)
        return f"merged results of {len(records)} tests in {target}\n"
    write_atomic(target, html_report(records, summary), inputs=read)
    return f"HTML report in {target}\n"
