"""The example suites the reference runner ships (blade47/semantic-test ``test-examples/``), read from
a checkout of it (``SEMANTICTEST_REFERENCE_CHECKOUT``; skipped without one) with only
``https://jsonplaceholder.typicode.com`` -> ``${env.BASE_URL}``: they use a suite-level ``input``
(``${input.userId}``) and repeat keys inside ``assertions`` objects, and run as published. (Both
features are also covered by our own suites in ``test_tolerant_and_strict.py``.)"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "examples" / "agents"))
sys.path.insert(0, str(HERE.parents[1] / "tests" / "docs_examples"))

import docs_server  # noqa: E402

from tests.shared import reference_checkout  # noqa: E402

FILES = ["conditions-example.json", "mock-ai-validation.json", "simple-api-test.json", "validation-test.json"]


def test_the_reference_runners_examples_run_as_published(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    examples = reference_checkout() / "test-examples"
    assert sorted(p.name for p in examples.glob("*.json")) == FILES
    for name in FILES:
        text = (examples / name).read_text(encoding="utf-8")
        (pytester.path / name).write_text(
            text.replace("https://jsonplaceholder.typicode.com", "${env.BASE_URL}"), encoding="utf-8"
        )
    server, base = docs_server.start()
    for name, value in docs_server.environment(base).items():
        monkeypatch.setenv(name, value)
    try:
        done = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-rA")
    finally:
        server.shutdown()
    out = done.stdout.str()
    assert done.ret == 0, out[-4000:]
    assert "10 passed" in out.splitlines()[-1], out[-2000:]
    for test in (
        "conditions-example.json::test-all-assertion-operators",
        "simple-api-test.json::simple-api-test",
    ):
        assert f"PASSED {test}" in out
    # the repeated assertion keys of conditions-example.json: one warning each, naming both lines
    assert (
        "conditions-example.json:32: SuiteWarning: tests[0].assertions.testData.status: key 'testData.status' "
        "is on line 31 and again on line 32; the value on line 32 is used"
    ) in out, out[-4000:]
    assert out.count("SuiteWarning: ") == 10
