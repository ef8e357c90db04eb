"""``semantictest init`` writes a spec that passes against each example agent, in every format the agent
can be tested in, for an agent it starts and for one that runs already."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_semantictest.scaffold import main as init
from tests.ports import free_port

REPO = Path(__file__).resolve().parents[1]
AGENTS = REPO / "examples" / "agents"


def pytest_run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPLIANCE_") and k != "BASE_URL"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


def run_init(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = init(list(argv), out=out)
    return code, out.getvalue()


@pytest.fixture
def example_agent(request: pytest.FixtureRequest) -> Iterator[str]:
    """An example agent started in this process (``start_server``): its URL."""
    sys.path.insert(0, str(AGENTS))
    try:
        module = __import__(request.param)
        server, url = module.start_server(0)
    finally:
        sys.path.remove(str(AGENTS))
    try:
        yield url
    finally:
        server.shutdown()


def _passes(folder: Path, count: int, *args: str) -> None:
    done = pytest_run(folder, *args)
    last = done.stdout.strip().splitlines()[-1]
    assert done.returncode == 0 and f"{count} passed" in last, done.stdout + done.stderr


def test_init_starts_the_agent_and_writes_a_passing_spec_in_each_format(tmp_path: Path) -> None:
    shutil.copy(REPO / "examples" / "your-agent" / "agent.py", tmp_path)
    port = free_port()
    start = f"{sys.executable} agent.py --port {port}"
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    for fmt in ("semantictest", "highbar", "yao", "compliance"):
        code, out = run_init(
            "--start", start, "--url", url, "--format", fmt, "--name", f"mine_{fmt}", "--dir", str(tmp_path)
        )
        assert code == 0, out
        assert 'speaks OpenAI chat completions (model default); it answered "You said: Hello"' in out
    assert "x-how-to-make-it-stricter" in (tmp_path / "mine_semantictest.json").read_text()
    assert "# stricter:" in (tmp_path / "mine_highbar.highbar.yaml").read_text()
    assert "// Stricter:" in (tmp_path / "mine_yao_test.jsonl").read_text()
    assert "# stricter:" in (tmp_path / "mine_compliance.md").read_text()
    _passes(tmp_path, 4, f"--semantictest-compliance-server={start}")
    assert len(list((tmp_path / ".semantictest" / "logs").iterdir())) >= 1


@pytest.mark.parametrize(
    ("example_agent", "formats", "extra"),
    [
        ("chat_agent", ("semantictest", "highbar", "yao", "compliance"), ()),
        ("compliance_server", ("semantictest", "compliance"), ("--model", "echo-agent")),
        ("a2a_sdk_agent", ("compliance",), ()),
        ("a2a_webagents_agent", ("compliance",), ()),
        ("realtime_agent", ("compliance",), ()),
    ],
    indirect=["example_agent"],
)
def test_init_writes_a_passing_spec_for_each_example_agent(
    tmp_path: Path, example_agent: str, formats: tuple[str, ...], extra: tuple[str, ...]
) -> None:
    for fmt in formats:
        code, out = run_init(
            "--url", example_agent, "--format", fmt, "--name", f"x_{fmt}", "--dir", str(tmp_path), *extra
        )
        assert code == 0, out
    _passes(tmp_path, len(formats))


def test_init_refuses_what_it_cannot_do_saying_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out = run_init()
    assert code == 2 and "give the agent's URL with --url" in out
    code, out = run_init("--url", f"http://127.0.0.1:{free_port()}")
    assert code == 2 and "no agent at http://127.0.0.1:" in out and "ConnectError" in out
    code, out = run_init("--url", "http://127.0.0.1:9", "--start", f"{sys.executable} missing.py")
    assert (
        code == 2
        and "agent exited with code 2 before it was ready" in out
        and f"in folder: {tmp_path}" in out
    )
    assert list(tmp_path.glob("my_agent*")) == []


@pytest.mark.parametrize("example_agent", ["realtime_agent"], indirect=True)
def test_init_says_which_formats_fit_the_agent_and_never_overwrites(
    tmp_path: Path, example_agent: str
) -> None:
    code, out = run_init("--url", example_agent, "--format", "highbar", "--dir", str(tmp_path))
    assert code == 2 and "can be tested in compliance here, not highbar" in out
    (tmp_path / "my_agent.md").write_text("mine")
    code, out = run_init("--url", example_agent, "--dir", str(tmp_path))
    assert code == 2 and "exists already" in out
    assert (tmp_path / "my_agent.md").read_text() == "mine"


def test_init_asks_at_a_terminal(tmp_path: Path) -> None:
    shutil.copy(REPO / "examples" / "your-agent" / "agent.py", tmp_path)
    port = free_port()
    answers = iter(
        [f"{sys.executable} agent.py --port {port}", f"http://127.0.0.1:{port}/v1/chat/completions", "yao"]
    )
    asked: list[str] = []

    def ask(question: str) -> Any:
        asked.append(question)
        return next(answers)

    out = io.StringIO()
    assert init(["--dir", str(tmp_path)], out=out, ask=ask) == 0, out.getvalue()
    assert len(asked) == 3 and "Format" in asked[2]
    _passes(tmp_path, 1)


def test_init_says_a_url_that_is_not_one_is_not_one() -> None:
    for bad in ("localhost:8000", "http://[x", "ws://", "http://h:x"):
        code, out = run_init("--url", bad)
        assert code == 2 and f"{bad!r} is not a URL" in out
