"""``depends_on``: the run order of collected items, a file after the files it depends on.

Plain data in, plain data out (no pytest here): the compliance glue (``pytest_glue.py``) gives the
collected items with each one's file (its front matter name and ``depends_on``, or None for an item
that is not a compliance case) and puts them in the order this returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def dependency_order(items: Sequence[tuple[T, tuple[str, tuple[str, ...]] | None]]) -> list[T] | None:
    """The items with each file's cases moved after the cases of the files it depends on (those that
    are collected), everything else in place; None when no collected file depends on another."""
    blocks, depends = _file_runs(items)
    if not any(d in depends for deps in depends.values() for d in deps):
        return None
    return _in_dependency_order(blocks, depends)


def _file_runs(
    items: Sequence[tuple[T, tuple[str, tuple[str, ...]] | None]],
) -> tuple[list[tuple[str | None, list[T]]], dict[str, list[str]]]:
    """The items as runs of consecutive cases of one file (``None``: an item of no compliance file), and
    each file's ``depends_on``."""
    blocks: list[tuple[str | None, list[T]]] = []
    depends: dict[str, list[str]] = {}
    for item, file in items:
        name = file[0] if file is not None else None
        if name is not None and blocks and blocks[-1][0] == name:
            blocks[-1][1].append(item)
            continue
        blocks.append((name, [item]))
        if file is not None and name is not None:
            depends.setdefault(name, list(file[1]))
    return blocks, depends


def _in_dependency_order(blocks: list[tuple[str | None, list[T]]], depends: dict[str, list[str]]) -> list[T]:
    """The runs' items, each file's cases after those of the collected files it depends on (a cycle is
    broken where it closes), items of no file in place."""
    by_name: dict[str, list[T]] = {}
    for name, group in blocks:
        if name is not None:
            by_name.setdefault(name, []).extend(group)
    ordered: list[T] = []
    done: set[str] = set()

    def emit(name: str, visiting: set[str]) -> None:
        if name in done or name in visiting:
            return
        visiting.add(name)
        for dependency in depends.get(name, []):
            if dependency in by_name:
                emit(dependency, visiting)
        done.add(name)
        ordered.extend(by_name[name])

    for name, group in blocks:
        if name is None:
            ordered.extend(group)
        else:
            emit(name, set())
    return ordered
