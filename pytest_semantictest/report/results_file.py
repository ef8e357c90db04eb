"""Reading a results file (``--semantictest-results``) back: the baseline and ``semantictest merge``.

The one rule for files we read (``files.py``): a regular file of bounded size (a FIFO, a device, a
folder or a link to one is refused before a byte is read), each line a JSON object of bounded depth
that :class:`ResultRecord` validates: an outcome this version writes, figures that are finite numbers
(a string is no list of runs, ``NaN`` no duration), LLM usage as counts. Anything else is one line
naming the file, the line, the field and what to do (:class:`ResultsFileError`), never a traceback.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from ..files import UnreadableFile, json_value, read_regular
from ..json_types import JSONValue
from ..shown import shorten

KNOWN_VERSIONS = (1,)
OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")
MAX_BYTES = 512 * 2**20
"""A results file larger than this is refused (10,000 tests with long conversations are ~100 MB)."""
MAX_DEPTH = 32

Outcome = Literal["passed", "failed", "error", "skipped", "xfailed", "xpassed"]
Figure = Annotated[float, Field(strict=True, allow_inf_nan=False)]
"""A finite number (an integer too); never a string or ``NaN``."""


class _Figures(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


class ResultRecord(_Figures):
    """One test's record, as far as a reader of the file relies on it (other keys are kept as written)."""

    id: StrictStr
    results_version: StrictInt
    outcome: Outcome
    file: StrictStr | None = None
    format: StrictStr | None = None
    duration_s: Figure | None = None
    runs: list[Outcome] | None = None
    run_durations_ms: list[Figure] | None = None
    run_scores: list[Figure] | None = None
    score: Figure | None = None
    latency_ms: Figure | None = None
    llm_usage: dict[str, StrictInt] | None = None


class ResultsFileError(Exception):
    """A results file that cannot be used; the message names the file, the line and what to do."""


def load(
    path: Path,
    label: str = "results",
    combine: Callable[[dict[str, JSONValue], dict[str, JSONValue]], dict[str, JSONValue]] | None = None,
) -> tuple[dict[str, dict[str, JSONValue]], list[str]]:
    """The records of a results file, or of every ``*.jsonl`` in a folder (per-job or per-worker
    files, or several runs), by node id; and notes about what was left out. ``label`` names the file
    in messages (``baseline``); ``combine`` makes one record of a test found twice (else the later
    one is used, and a note says so). Raises :class:`ResultsFileError`."""
    if not path.exists():
        raise ResultsFileError(f"{label} {path} does not exist")
    files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    if not files:
        raise ResultsFileError(f"{label} folder {path} holds no *.jsonl results file")
    records: dict[str, dict[str, JSONValue]] = {}
    notes: list[str] = []
    for file in files:
        for number, record in read_records(file, label):
            nodeid = str(record["id"])
            if nodeid in records and combine is not None:
                records[nodeid] = combine(records[nodeid], record)
                continue
            if nodeid in records:
                notes.append(
                    f"{nodeid} is in the {label} twice: the later record ({file.name}:{number}) is used"
                )
            records[nodeid] = record
    return records, notes


def files_of(path: Path) -> list[Path]:
    """The files :func:`load` reads for ``path`` (outputs of the same run must not replace them)."""
    if path.is_dir():
        return sorted(path.glob("*.jsonl"))
    return [path]


def read_records(file: Path, label: str = "results") -> list[tuple[int, dict[str, JSONValue]]]:
    """``(line number, record)`` of each non-blank line of one results file; raises ResultsFileError."""
    try:
        text = read_regular(file, MAX_BYTES).decode("utf-8")
    except UnreadableFile as exc:
        raise ResultsFileError(f"{label} {file} cannot be read: {exc.detail}") from None
    except (FileNotFoundError, NotADirectoryError):
        raise ResultsFileError(f"{label} {file} does not exist") from None
    except UnicodeDecodeError as exc:
        raise ResultsFileError(
            f"{label} {file} is not UTF-8 text (byte {exc.start}): is it a results file?"
        ) from None
    found: list[tuple[int, dict[str, JSONValue]]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            found.append((number, record(line, f"{label} {file}:{number}")))
    return found


def record(line: str, where: str) -> dict[str, JSONValue]:
    """One line of a results file as a validated record; ``where`` starts the error message."""
    try:
        value = json_value(line, MAX_DEPTH)
    except ValueError as exc:
        raise ResultsFileError(
            f"{where} is not a test's record ({exc}): is it a results file (--semantictest-results)?"
        ) from None
    if not isinstance(value, dict) or not isinstance(value.get("id"), str):
        raise ResultsFileError(f"{where} is not a test's record (no 'id'): is it a results file?")
    version = value.get("results_version")
    if version not in KNOWN_VERSIONS or isinstance(version, bool):
        raise ResultsFileError(
            f"{where} is results format {_shown(version)}; this version reads "
            f"{', '.join(map(str, KNOWN_VERSIONS))}: record it again with this version"
        )
    try:
        ResultRecord.model_validate(value)
    except ValidationError as exc:
        error = exc.errors()[0]
        place = ".".join(str(p) for p in error["loc"])
        raise ResultsFileError(
            f"{where}: '{place}' {error['msg'][0].lower()}{error['msg'][1:]} (got {_shown(error.get('input'))}): "
            "was it edited? Write it again with --semantictest-results"
        ) from None
    return value


def _shown(value: object) -> str:
    return shorten(ascii(value), 40)
