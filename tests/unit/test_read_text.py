"""files.read_text: the one bounded reader every spec format uses."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_semantictest.files import UnreadableFile, read_text


def test_a_bom_is_not_content(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_bytes(b"\xef\xbb\xbf{}\n")
    assert read_text(path, 100) == "{}\n"


def test_a_file_over_the_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_bytes(b" " * (3 * 2**20 + 1))
    with pytest.raises(UnreadableFile, match=r"^file is larger than 3 MB$"):
        read_text(path, 3 * 2**20)


def test_bytes_that_are_not_utf8_name_their_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "latin.md"
    path.write_bytes(b"one\ntwo caf\xe9\n")
    with pytest.raises(UnreadableFile) as caught:
        read_text(path, 100)
    assert str(caught.value).startswith("not UTF-8 text at line 2 column 8 (byte 11): ")
    assert caught.value.line == 2


def test_a_missing_file_says_what_the_os_said(tmp_path: Path) -> None:
    with pytest.raises(UnreadableFile) as caught:
        read_text(tmp_path / "nope.json", 100)
    assert str(caught.value) == "cannot read file: No such file or directory"
    assert caught.value.detail == "No such file or directory" and caught.value.line is None
