"""Options people can find: ``--help`` by topic, the common ones first; renamed options keep their old
spelling one release with a warning; LLM roles as ``ROLE=VALUE`` lines; agent logs rotate."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from pytest_semantictest import options
from pytest_semantictest.agents.logs import prune
from pytest_semantictest.option_groups import ALIASES, GROUPS
from tests.helpers import run_pytest

ROOT = Path(__file__).resolve().parents[1]


def help_text(pytester: pytest.Pytester) -> str:
    return run_pytest(pytester, "--help", "-p", "no:cacheprovider").stdout.str()


def test_help_groups_by_topic_common_first_and_hides_old_names(pytester: pytest.Pytester) -> None:
    text = help_text(pytester)
    titles = [title + ":" for _, title, _ in GROUPS]
    at = [text.index(title) for title in titles]
    assert at == sorted(at), "the groups are shown in their order"
    common = text[at[0] : at[1]]
    current = {name for name, *_ in options.OPTIONS}
    first = [f"--semantictest-{n}" for n in GROUPS[0][2] if n in current]
    assert re.findall(r"^  (--semantictest-[a-z0-9-]+)", common, re.M) == first
    assert len(GROUPS[0][2]) <= 8
    for alias in ALIASES:
        assert f"--semantictest-{alias.old}=" not in text and f"--semantictest-{alias.old} " not in text
    shown = set(re.findall(r"--semantictest-([a-z0-9-]+)", text))
    assert shown >= {name for name, *_ in options.OPTIONS}


def test_every_option_is_placed_in_a_group_and_documented() -> None:
    placed = [name for _, _, names in GROUPS for name in names]
    assert len(placed) == len(set(placed))
    current = [name for name, *_ in options.OPTIONS]
    assert set(current) <= set(placed), "place each option in a group of option_groups.GROUPS"
    doc = (ROOT / "docs" / "options.md").read_text(encoding="utf-8")
    for name in current:
        assert f"`--semantictest-{name}`" in doc, name
    for alias in ALIASES:
        assert f"`--semantictest-{alias.old}`" in doc, alias.old


def option_tables() -> str:
    """docs/options.md's tables, one a group of ``--help``, from the options' own help texts."""
    by_name = {row[0]: row for row in options.OPTIONS}
    out = []
    for _, title, names in GROUPS:
        heading = title.split(": ", 1)[1].split(" (")[0]
        out += [f"## {heading[0].upper()}{heading[1:]}", "", "| option | default | what |", "|---|---|---|"]
        for name in [n for n in names if n in by_name]:
            _, kind, default, text = by_name[name]
            flag = " (flag)" if kind is bool else " (repeatable)" if kind is list else ""
            shown = "" if default in (None, []) else "off" if default is False else str(default)
            out.append(f"| `--semantictest-{name}`{flag} | {shown} | {text.replace('|', '/')} |")
        out.append("")
    return "\n".join(out)


def _doc_tables(doc: str) -> str:
    return doc[doc.index("## The common options") : doc.index("## Renamed options")].rstrip() + "\n"


def test_the_options_page_shows_each_groups_options_as_help_does() -> None:
    doc = (ROOT / "docs" / "options.md").read_text(encoding="utf-8")
    assert _doc_tables(doc) == option_tables().rstrip() + "\n", "run: python tests/test_options.py"


def test_help_and_ini_keys_mirror_each_other(pytester: pytest.Pytester) -> None:
    text = help_text(pytester)
    ini = set(re.findall(r"^  (semantictest_[a-z0-9_]+) ", text, re.M))
    current = {"semantictest_" + name.replace("-", "_") for name, *_ in options.OPTIONS}
    assert current <= ini
    for extra in ini - current:
        entry = text[text.index(f"  {extra} ") :].split("\n  semantictest_")[0]
        assert "deprecated: use" in " ".join(entry.split()), extra


SUITE = """{"tests": [{"id": "t", "runs": 3, "minPass": 3,
  "pipeline": [{"block": "MockData", "config": {"data": {"ok": true}}, "output": "m"}],
  "assertions": {"m.ok": true}}]}"""


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("--semantictest-concurrency=1", "--semantictest-runs-at-once"),
        ("--semantictest-all-runs", "--semantictest-no-early-stop"),
        ("--semantictest-item-concurrency=2", "--semantictest-items-at-once"),
    ],
)
def test_an_old_option_still_works_and_warns_naming_the_new(
    pytester: pytest.Pytester, old: str, new: str
) -> None:
    pytester.makefile(".json", suite=SUITE)
    result = run_pytest(pytester, "-p", "no:cacheprovider", old)
    result.assert_outcomes(passed=1, warnings=1)
    assert f"{old.split('=')[0]} is deprecated and goes in the next release: use {new}" in result.stdout.str()


def test_an_old_ini_key_is_read_as_its_new_name_and_warns(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nsemantictest_item_concurrency = 0\n")
    pytester.makefile(".json", suite=SUITE)
    result = run_pytest(pytester, "-p", "no:cacheprovider")
    assert "--semantictest-items-at-once must be at least 1" in result.stderr.str()  # the old key is read


def test_new_name_wins_over_old_and_value_reads_old_names(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
from pytest_semantictest import options
def pytest_configure(config):
    print("AT-ONCE", options.value(config, "runs-at-once"), options.value(config, "concurrency"))
"""
    )
    result = run_pytest(
        pytester,
        "-p",
        "no:cacheprovider",
        "-s",
        "--semantictest-concurrency=3",
        "--semantictest-runs-at-once=7",
    )
    assert "AT-ONCE 7 7" in result.stdout.str()


def test_llm_roles_as_role_lines_command_line_over_ini(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        "[pytest]\nsemantictest_llm_model =\n    everyone\n    simulator=sim-ini\n"
        "semantictest_llm_validator_model = val-old\n"
        "semantictest_llm_base_url = generator=http://127.0.0.1:9/v1\n"
    )
    pytester.makeconftest(
        """
from pytest_semantictest import runtime
def pytest_collection_finish(session):
    llm = runtime.runtime(session.config).context.llm.config
    for role in ("judge", "simulator", "validator", "generator", "paraphraser"):
        print("ROLE", role, llm.model_for(role), llm.endpoint(role).base_url, llm.role(role).api_key_env)
"""
    )
    result = run_pytest(
        pytester,
        "-p",
        "no:cacheprovider",
        "-s",
        "--semantictest-llm-model=judge=judge-cli",
        "--semantictest-llm-model=simulator=sim-cli",
        "--semantictest-llm-api-key-env=judge=JUDGE_KEY",
        "--semantictest-llm-base-url=http://127.0.0.1:8/v1",
    )
    out = result.stdout.str()
    assert "ROLE judge judge-cli http://127.0.0.1:8/v1 JUDGE_KEY" in out
    assert "ROLE simulator sim-cli http://127.0.0.1:8/v1 None" in out
    assert "ROLE validator val-old http://127.0.0.1:8/v1 None" in out  # the deprecated key still counts
    assert "ROLE generator everyone http://127.0.0.1:9/v1 None" in out
    assert "ini key semantictest_llm_validator_model is deprecated" in out


def test_llm_judge_model_alias_is_the_judge_role_line(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
from pytest_semantictest import runtime
def pytest_collection_finish(session):
    llm = runtime.runtime(session.config).context.llm.config
    print("MODELS", llm.model_for("judge"), llm.model_for("simulator"))
"""
    )
    result = run_pytest(
        pytester,
        "-p",
        "no:cacheprovider",
        "-s",
        "--semantictest-llm-judge-model=big",
        "--semantictest-llm-model=small",
    )
    assert "MODELS big small" in result.stdout.str()
    assert "use --semantictest-llm-model judge=VALUE" in result.stdout.str()


def _log(folder: Path, name: str, stamp: str) -> Path:
    path = folder / f"{name}-{stamp}.log"
    path.write_text("x")
    return path


def test_prune_keeps_each_agents_newest_logs_and_nothing_else(tmp_path: Path) -> None:
    older = [_log(tmp_path, "orders", f"20260101-0000{i:02d}") for i in range(5)]
    same_second = _log(tmp_path, "orders", "20260101-000004-2")
    other = _log(tmp_path, "chat-bot", "20250101-000000")
    mine = tmp_path / "notes.log"
    mine.write_text("mine")
    removed = prune(tmp_path, 2)
    assert sorted(removed) == sorted(older[:4])
    assert {p.name for p in tmp_path.iterdir()} == {older[4].name, same_second.name, other.name, "notes.log"}
    assert prune(tmp_path, 0) == [] and prune(tmp_path / "missing", 3) == []


def test_a_run_rotates_the_agent_logs(pytester: pytest.Pytester) -> None:
    logs = pytester.path / ".semantictest" / "logs"
    logs.mkdir(parents=True)
    for i in range(4):
        os.utime(_log(logs, "agent", f"20250101-00000{i}"), (time.time() - 100, time.time() - 100))
    pytester.makefile(".json", suite=SUITE)
    run_pytest(pytester, "-p", "no:cacheprovider", "--semantictest-agent-logs-keep=3").assert_outcomes(
        passed=1
    )
    assert sorted(p.name for p in logs.iterdir()) == [f"agent-20250101-00000{i}.log" for i in (1, 2, 3)]


def test_schema_without_a_name_lists_them_and_marker_names_work(capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_semantictest.cli import main

    assert main(["schema"]) == 0
    listed = capsys.readouterr().out
    for name in ("semantictest", "highbar", "yao-case", "yao-agent"):
        assert f"  {name} " in listed
    assert "(also: yao)" in listed
    assert main(["schema", "yao", "--path"]) == 0
    assert capsys.readouterr().out.strip().endswith("yao-case.schema.json")
    assert main(["schema", "compliance"]) == 2
    err = capsys.readouterr().err
    assert "no schema called 'compliance'" in err and "semantictest validate checks them" in err


if __name__ == "__main__":  # rewrite docs/options.md's tables from the options (after adding one)
    page = ROOT / "docs" / "options.md"
    text = page.read_text(encoding="utf-8")
    start, end = text.index("## The common options"), text.index("## Renamed options")
    page.write_text(text[:start] + option_tables().rstrip() + "\n\n" + text[end:], encoding="utf-8")
