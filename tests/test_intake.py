from __future__ import annotations

import gzip
import hashlib
import os
from pathlib import Path

import pytest

from logforensics.errors import InputError
from logforensics.intake import discover, read_lines


def tree_digest(root: Path) -> dict[str, tuple[str, float]]:
    return {
        str(path): (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime)
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def test_skips_what_is_not_a_log_and_says_why(tmp_path):
    (tmp_path / "rank0.log").write_text("rank=0 step=0 stage=a\n")
    (tmp_path / "README.md").write_text("rank=0 step=0 stage=a\n")
    (tmp_path / "train.py").write_text("print('x')\n")
    (tmp_path / "core.bin.dump").write_bytes(b"\x00\x01\x02rank=0")
    (tmp_path / "empty.log").write_text("")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: x\n")
    os.symlink(tmp_path / "rank0.log", tmp_path / "latest.log")
    inventory = discover(tmp_path)
    assert [f.name for f in inventory.files] == ["rank0.log"]
    reasons = {skip.name: skip.reason for skip in inventory.skipped}
    assert reasons["README.md"].startswith("not a log")
    assert reasons["core.bin.dump"] == "binary (NUL bytes)"
    assert reasons["empty.log"] == "empty"
    assert reasons["latest.log"].startswith("symbolic link")
    assert ".git/HEAD" not in reasons


def test_missing_path_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="no such file or folder"):
        discover(tmp_path / "nope")


def test_lines_are_numbered_per_file_from_one(tmp_path):
    (tmp_path / "a.log").write_text("x\n\ny\n")
    (tmp_path / "b.log").write_text("z\r\nlast line without newline")
    lines = read_lines(discover(tmp_path).files).frame
    assert lines.rows() == [
        ("a.log", 1, "x"),
        ("a.log", 2, ""),
        ("a.log", 3, "y"),
        ("b.log", 1, "z"),
        ("b.log", 2, "last line without newline"),
    ]


def test_invalid_utf8_is_replaced_and_counted(tmp_path):
    (tmp_path / "good.log").write_text("ok\n")
    (tmp_path / "bad.log").write_bytes(b"caf\xe9 rank=1 step=2 stage=x\n")
    lines = read_lines(discover(tmp_path).files)
    assert lines.lossy_files == ("bad.log",)
    assert (
        lines.frame.filter(lines.frame["file"] == "bad.log").item(0, "text")
        == "caf\ufffd rank=1 step=2 stage=x"
    )


def test_gzip_file_is_read(tmp_path):
    (tmp_path / "rank1.log.gz").write_bytes(gzip.compress(b"rank=1 step=0 stage=a\n"))
    lines = read_lines(discover(tmp_path).files).frame
    assert lines.rows() == [("rank1.log.gz", 1, "rank=1 step=0 stage=a")]


def test_glob_characters_in_names_are_literal(tmp_path):
    (tmp_path / "rank[0].log").write_text("a\n")
    (tmp_path / "rank0.log").write_text("b\nc\n")
    lines = read_lines(discover(tmp_path).files).frame
    assert sorted(lines.get_column("file").to_list()) == ["rank0.log", "rank0.log", "rank[0].log"]


def test_reading_changes_nothing(tmp_path, sample_logs):
    (tmp_path / "bad.log").write_bytes(b"\xff\xfe rank=1\r\n")
    before = tree_digest(tmp_path)
    read_lines(discover(tmp_path).files)
    assert tree_digest(tmp_path) == before
