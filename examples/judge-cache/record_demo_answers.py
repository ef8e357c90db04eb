"""Record the examples' judge answers offline, against the local fake OpenAI server of the tests
(``tests/llm/fake_openai.py``), with the answers written below: recorded answers for the demo, not
a model's. Run from the repository root: ``python examples/judge-cache/record_demo_answers.py``.

With an API key, record real answers instead (see README.md in this folder):
``OPENAI_API_KEY=sk-... python -m pytest examples --semantictest-llm-cache=write``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from tests.llm.fake_openai import FakeOpenAI  # noqa: E402

COMPLIANCE = {
    # (a phrase of the response) -> one verdict a numbered assertion, as the compliance judge answers
    '"content": "Echo: Good morning"': {
        "1": {
            "passed": True,
            "reason": "The reply's content is \"Echo: Good morning\", which contains the user's "
            'message "Good morning" unchanged.',
        },
        "2": {"passed": True, "reason": 'The content begins with "Echo:", followed by the user\'s message.'},
    },
}


class DemoJudge(FakeOpenAI):
    """The fake server, answering the compliance judge's schema from :data:`COMPLIANCE` too."""

    def answer(self, body: dict[str, Any]) -> str:
        schema = (body.get("response_format") or {}).get("json_schema") or {}
        if schema.get("name") != "compliance_assertions":
            return super().answer(body)
        prompt = body["messages"][-1]["content"]
        found = next((v for k, v in COMPLIANCE.items() if k in prompt), None)
        if found is None:
            raise SystemExit(f"record_demo_answers: no demo answer for this compliance prompt:\n{prompt}")
        return json.dumps({"assertions": found})


def main() -> int:
    for role in HERE.iterdir():
        if role.is_dir():
            shutil.rmtree(role)
    with DemoJudge() as fake:
        fake.rule(
            "I've set your meeting for 14:00.",
            details={"accuracy": 0.95, "completeness": 0.85, "relevance": 1.0},
            reasoning="14:00 is 2 PM in 24-hour notation, so the reply confirms the meeting at the expected "
            "time. It does not repeat the day, which the expected behaviour does not ask for.",
        )
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "examples",
                "-q",
                "-p",
                "no:cacheprovider",
                f"--semantictest-llm-base-url={fake.url}",
                "--semantictest-llm-cache=write",
            ],
            cwd=ROOT,
            env={k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")},
            check=False,
        )
        print(f"record_demo_answers: {fake.count} judge calls answered, entries in {HERE}")
    return run.returncode


if __name__ == "__main__":
    raise SystemExit(main())
