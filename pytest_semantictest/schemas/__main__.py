"""``python -m pytest_semantictest.schemas [--check]``: regenerate (or check) the JSON Schemas."""

from __future__ import annotations

import sys

from . import SCHEMAS, path, stale, write_all


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args not in ([], ["--check"]):
        print("usage: python -m pytest_semantictest.schemas [--check]", file=sys.stderr)
        return 2
    if args == ["--check"]:
        out_of_date = stale()
        for target in out_of_date:
            print(f"out of date: {target} (run python -m pytest_semantictest.schemas)")
        return 1 if out_of_date else 0
    changed = write_all()
    for source in SCHEMAS:
        print(f"{'wrote' if path(source.name) in changed else 'unchanged'} {path(source.name)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
