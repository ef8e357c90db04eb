"""Make the screenshots of the HTML report in docs/reports.md (headless Chromium):
``python -m tests.reports.screenshots docs/img``.

Two small reports of the report tests' scenario, made with ``--html``: a streamed chat request
whose check fails (the request as JSON, the SSE stream as frames, why it failed), and an LLM judge's
low verdict from the fake OpenAI server (score, threshold, reasoning, criteria)."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.llm.fake_openai import FakeOpenAI
from tests.reports.dom import screenshot
from tests.reports.scenario import PYTEST_ARGS, Backend, report_suite


def _report(folder: Path, backend: Backend, fake: FakeOpenAI, keep: str) -> Path:
    """A report of the one test ``keep`` of the report scenario (``streamed`` made to fail)."""
    suite = report_suite(backend.url, judge=True)
    suite["tests"] = [t for t in suite["tests"] if t["id"] == keep]
    for t in suite["tests"]:
        if t["id"] == "streamed":
            t["assertions"]["parsed.text"] = {"contains": "London"}
    here = folder / keep
    here.mkdir()
    (here / "chat.json").write_text(json.dumps(suite, indent=2), encoding="utf-8")
    (here / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            *PYTEST_ARGS,
            f"--semantictest-llm-base-url={fake.url}",
            "--html=report.html",
            "--self-contained-html",
            "chat.json",
        ],
        cwd=here,
        check=False,
        capture_output=True,
    )
    return here / "report.html"


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    backend = Backend()
    with FakeOpenAI() as fake, tempfile.TemporaryDirectory(prefix="st-shots-") as tmp:
        fake.rule(
            "I cannot help", 0.15, reasoning="Declines instead of confirming the meeting; no time is given."
        )
        folder = Path(tmp)
        screenshot(_report(folder, backend, fake, "streamed"), out / "report-stream.png", folder, 1100, 2600)
        screenshot(_report(folder, backend, fake, "judged-low"), out / "report-judge.png", folder, 1100, 1250)
    backend.close()
    print(f"screenshots in {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/img"))
