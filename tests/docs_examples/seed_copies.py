"""The SemanticTest suites of the docs (the seed document), staged for a run at test time.

Every JSON code block of the seed whose top level has a ``tests`` array is one suite. :func:`stage`
writes it as ``NN-<page>.json``: the block's text, read from the documentation (``../shared``, see
``tests/shared.py``; the repository keeps no copy), with only its endpoints adapted to loopback:

- a public origin (``https://api.example.com``, ``https://jsonplaceholder.typicode.com``,
  ``https://api.openai.com``) becomes ``${env.BASE_URL}``;
- a ``${NAME}`` the suite uses for an endpoint (or its key) but never defines (``${SHOP_API}``,
  ``${AI_API_URL}``, ``${API_KEY}`` where there is no context) becomes ``${env.NAME}``, read from the
  environment the test sets;
- an ``HttpRequest`` the docs show without a ``url`` gets the url of its page's API (first key).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.docs_examples.docs_text import code_blocks  # noqa: E402
from tests.shared import SEMANTICTEST_DOCS as SEED  # noqa: E402

ORIGINS = ("https://api.example.com", "https://jsonplaceholder.typicode.com", "https://api.openai.com")
ENV_NAMES = (
    "BASE_URL",
    "API_URL",
    "AI_API",
    "AI_API_URL",
    "SHOP_API",
    "TUTOR_API",
    "OPENAI_URL",
    "YOUR_NEXTJS_API",
    "AI_AGENT_URL",
    "DB_AGENT_URL",
    "AGENT_URL",
    "API_KEY",
)
"""Endpoint names the docs' snippets use without defining them (when their suite has no such context key)."""
MISSING_URL = {
    "ai-testing/multi-turn-conversations": "${env.CHAT_API_URL}/chat",
    "concepts/data-flow": "${env.BASE_URL}/me",
}
"""The url a page's request without one is sent to: that page's chat API, or the data-flow page's API."""


def seed_blocks(text: str) -> list[tuple[str, int, str]]:
    """``(page, first line, text)`` of each code block that is a suite (a top-level ``tests`` array)."""
    found: list[tuple[str, int, str]] = []
    for page, _, line, body in code_blocks(text):
        try:
            data = json.loads(body)
        except ValueError:
            continue
        if isinstance(data, dict) and isinstance(data.get("tests"), list):
            found.append((page, line, body))
    return found


def copy_name(index: int, page: str) -> str:
    return f"{index + 1:02d}-{page.replace('/', '-')}.json"


def _names_to_env(context: dict[str, Any]) -> list[str]:
    return [name for name in ENV_NAMES if name not in context]


def _rewrite(text: str, names: list[str]) -> str:
    for origin in ORIGINS:
        text = text.replace(origin, "${env.BASE_URL}")
    for name in names:
        text = re.sub(r"\$\{" + name + r"\}", "${env." + name + "}", text)
    return text


def _requests_without_url(data: Any) -> list[tuple[str | int, ...]]:
    """JSON paths of the ``input`` objects of HttpRequest steps that have no url."""
    found: list[tuple[str | int, ...]] = []
    for key in ("setup", "tests", "teardown"):
        for i, item in enumerate(data.get(key) or []):
            steps = item.get("pipeline", []) if key == "tests" else [item]
            for j, step in enumerate(steps):
                if step.get("block") == "HttpRequest" and isinstance(step.get("input"), dict):  # noqa: SIM102
                    if "url" not in step["input"]:
                        found.append(
                            (key, i, "pipeline", j, "input") if key == "tests" else (key, i, "input")
                        )
    return found


def adapt(data: dict[str, Any], page: str) -> dict[str, Any]:
    """What a copy must parse to: the seed block's data with its endpoints adapted (see the module doc)."""
    names = _names_to_env(data.get("context") or {})
    out = json.loads(_rewrite(json.dumps(data), names))
    for loc in _requests_without_url(out):
        node: Any = out
        for part in loc:
            node = node[part]
        node["url"] = MISSING_URL[page]
    return out


def adapt_text(text: str, page: str) -> str:
    """The copy's text: the seed block's text, endpoints adapted in place, indentation kept."""
    from pytest_semantictest.formats.jsonsource import load_json

    data = json.loads(text)
    text = _rewrite(text, _names_to_env(data.get("context") or {}))
    lines = text.split("\n")
    source = load_json(text)
    for loc in sorted(_requests_without_url(data), key=lambda at: -(source.lines[at])):
        number = source.lines[loc] - 1
        opening = lines[number]
        if opening.rstrip().endswith("{"):
            following = lines[number + 1]
            indent = following[: len(following) - len(following.lstrip())]
            lines.insert(number + 1, f'{indent}"url": "{MISSING_URL[page]}",')
        else:  # "input": { "headers": ... } on one line
            lines[number] = opening.replace("{", '{"url": "' + MISSING_URL[page] + '", ', 1)
    return "\n".join(lines) + "\n"


NO_JUDGE_KEY = "DOCS_EXAMPLES_NO_JUDGE_KEY"


def stage(root: Path) -> list[Path]:
    """Write every docs suite into ``root`` (:func:`adapt_text` of its block) with the ini the runs use
    (:func:`write_ini`): the suites' paths, in the docs' order."""
    written = []
    for index, (page, _, text) in enumerate(seed_blocks(SEED.read_text(encoding="utf-8"))):
        written.append(root / copy_name(index, page))
        written[-1].write_text(adapt_text(text, page), encoding="utf-8")
    write_ini(root)
    return written


def write_ini(root: Path) -> None:
    """The ini the docs runs use: JUnit xunit1; the judge's key read from a variable no environment
    has, so judged tests skip."""
    (root / "pytest.ini").write_text(
        f"[pytest]\njunit_family = xunit1\nsemantictest_llm_api_key_env = judge={NO_JUDGE_KEY}\n"
    )
