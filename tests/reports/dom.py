"""A small DOM for the HTML report tests: parse pytest-html's page, find its data and the extras,
and render it in headless Chromium."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Node:
    def __init__(self, tag: str, attrs: dict[str, str], parent: Node | None) -> None:
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[Node | str] = []

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def walk(self) -> Iterator[Node]:
        for child in self.children:
            if isinstance(child, Node):
                yield child
                yield from child.walk()

    def find_all(self, tag: str | None = None, cls: str | None = None, id: str | None = None) -> list[Node]:  # noqa: A002
        return [
            n
            for n in self.walk()
            if (tag is None or n.tag == tag)
            and (cls is None or cls in n.classes)
            and (id is None or n.attrs.get("id") == id)
        ]

    def enclosing(self) -> Node:
        """The element this one is in (the document's root is in none)."""
        assert self.parent is not None, f"<{self.tag}> is the root"
        return self.parent

    def find(self, tag: str | None = None, cls: str | None = None, id: str | None = None) -> Node:  # noqa: A002
        found = self.find_all(tag, cls, id)
        assert found, f"no <{tag or '*'} class={cls} id={id}> in <{self.tag}>"
        return found[0]


class Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = self.current = Node("#document", {}, None)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs}, self.current)
        self.current.children.append(node)
        if tag not in VOID:
            self.current = node

    def handle_endtag(self, tag: str) -> None:
        node: Node | None = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.current = node.parent

    def handle_data(self, data: str) -> None:
        self.current.children.append(data)


def parse(html: str) -> Node:
    builder = Builder()
    builder.feed(html)
    return builder.root


def table_rows(table: Node) -> list[list[str]]:
    body = table.find("tbody")
    return [[cell.text().strip() for cell in row.find_all("td")] for row in body.find_all("tr")]


def blob(report: Path) -> dict[str, Any]:
    """The test data pytest-html hands to its JavaScript."""
    container = parse(report.read_text(encoding="utf-8")).find("div", id="data-container")
    return json.loads(container.attrs["data-jsonblob"])


def extra_of(data: dict[str, Any], nodeid: str) -> Node:
    (row,) = data["tests"][nodeid]
    htmls = [e["content"] for e in row["extras"] if e["format_type"] == "html"]
    assert len(htmls) == 1, htmls
    return parse(htmls[0]).find("div", cls="st-extra")


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("Chromium is not installed: .ci/run installs Debian's chromium package, which needs root")
    return found


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    browser = chromium()
    profile = tmp_path / "chromium-profile"
    done = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HOME": str(tmp_path)},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def render_in_chromium(report: Path, tmp_path: Path) -> Node:
    """The page as headless Chromium leaves it after pytest-html's JavaScript ran (skips without Chromium)."""
    return parse(_chromium(tmp_path, "--dump-dom", report.as_uri()).stdout)


_COLORS = """<script>
window.addEventListener("load", () => setTimeout(() => {
  const out = [];
  for (const el of document.querySelectorAll(".st-extra, .st-extra *, .st-summary, .st-summary *")) {
    if (![...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) continue;
    let bg = null;
    for (let e = el; e && !bg; e = e.parentElement) {
      const c = getComputedStyle(e).backgroundColor;
      if (c && c !== "transparent" && !c.endsWith(", 0)")) bg = c;
    }
    out.push({tag: el.tagName, cls: el.className, color: getComputedStyle(el).color, background: bg || "rgb(255, 255, 255)"});
  }
  const pre = document.createElement("pre");
  pre.id = "st-colors";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
}, 0));
</script>"""


def render_with_colors(report: Path, tmp_path: Path) -> tuple[Node, list[dict[str, str]]]:
    """The rendered page (:func:`render_in_chromium`) and Chromium's computed text and background colour of
    every element of the extras and the summary table that holds text, from one launch: a script added to
    a copy of the report collects them into a ``pre#st-colors`` appended to the body."""
    page = tmp_path / "colors.html"
    page.write_text(
        report.read_text(encoding="utf-8").replace("</body>", _COLORS + "</body>"), encoding="utf-8"
    )
    dom = parse(_chromium(tmp_path, "--virtual-time-budget=5000", "--dump-dom", page.as_uri()).stdout)
    return dom, json.loads(dom.find("pre", id="st-colors").text())


def _luminance(css: str) -> float:
    r, g, b = (int(x) / 255 for x in css[css.index("(") + 1 : css.index(")")].split(",")[:3])
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(color: str, background: str) -> float:
    """WCAG contrast ratio of two ``rgb(...)`` colours (1 to 21)."""
    a, b = sorted((_luminance(color), _luminance(background)), reverse=True)
    return (a + 0.05) / (b + 0.05)


def screenshot(
    report: Path, png: Path, tmp_path: Path, width: int = 1280, height: int = 1600, query: str = ""
) -> Path:
    """A PNG of the rendered report (``query``: pytest-html's URL parameters, e.g. ``visible=failed``)."""
    uri = report.as_uri() + (f"?{query}" if query else "")
    _chromium(
        tmp_path, f"--window-size={width},{height}", "--virtual-time-budget=5000", f"--screenshot={png}", uri
    )
    return png


def result_rows(dom: Node) -> dict[str, Node]:
    """The rendered results table's rows by test id (they exist only once app.js built them)."""
    bodies = dom.find("table", id="results-table").find_all("tbody", cls="results-table-row")
    return {b.find("td", cls="col-testId").text(): b for b in bodies}
