"""Large files are read in blocks; the lines a user's report counts must not change."""

from __future__ import annotations

import polars as pl
import pytest

from logforensics import chunks
from logforensics.intake import discover, read_lines


@pytest.mark.parametrize(
    "content",
    [
        b"".join(b"line %d\n" % i for i in range(500)),
        b"".join(b"line %d\r\n" % i for i in range(500)) + b"no final newline",
        b"".join(b"%d/500 [00:01<00:00, 1.0it/s]\r%d\n" % (i, i) for i in range(300)),
        b"\n\n" + b"".join(b"caf\xe9 %d\n" % i for i in range(300)),
    ],
    ids=["plain", "crlf-no-final-newline", "tqdm-carriage-returns", "invalid-utf8"],
)
def test_blocks_cover_every_line_once_with_the_same_text(tmp_path, monkeypatch, content):
    (tmp_path / "big.log").write_bytes(content)
    log_file = discover(tmp_path).files[0]
    whole = read_lines((log_file,)).frame
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 256)
    monkeypatch.setattr(chunks, "OVERLAP_LINES", 7)
    blocks = list(chunks.file_chunks(log_file))
    assert len(blocks) > 3
    own = pl.concat(
        block.lines.filter(pl.col("line").is_between(block.first_line, block.last_line))
        for block in blocks
    )
    assert own.equals(whole)
    # context lines around each block are real lines of the file, numbered as in the file
    for block in blocks:
        assert block.lines.join(whole, on=["file", "line", "text"]).height == block.lines.height
    assert any(block.lossy for block in blocks) == (b"\xe9" in content)
