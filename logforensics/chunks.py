"""Read one large file a block of lines at a time, so memory stays bounded by the block.

Each block answers for its own lines but is parsed with `OVERLAP_LINES` lines of context on
both sides: a message spanning a block boundary (a traceback, a summary block) is then seen
whole by the block holding its first line, and not again by the next one.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import polars as pl

from logforensics import streams
from logforensics.intake import LogFile

# Files larger than this are read in blocks of about this size.
CHUNK_BYTES = 64 * 2**20
# More than any parser's `context_after`: how far a multi-line message may reach.
OVERLAP_LINES = 256


@dataclass(frozen=True, slots=True)
class Chunk:
    lines: pl.DataFrame  # file, line, text: the block with its context lines around it
    first_line: int  # the first and last line the block answers for
    last_line: int
    lossy: bool  # invalid UTF-8 bytes were replaced
    cut_lines: int = 0  # lines too long, cut so far in the file (streams.MAX_LINE)


def is_large(log_file: LogFile) -> bool:
    return log_file.size > 2 * CHUNK_BYTES


def file_chunks(log_file: LogFile) -> Iterator[Chunk]:
    """The file's lines, block by block (see the module doc)."""
    notes = streams.TextNotes()
    with _open(log_file, notes) as stream:
        behind: list[bytes] = []
        upcoming: list[bytes] = []  # blocks read ahead to gather the next context lines
        first = 1
        block = _read_block(stream)
        while block:
            ahead: list[bytes] = []
            index = 0
            while len(ahead) < OVERLAP_LINES:
                if index == len(upcoming):
                    following = _read_block(stream)
                    if not following:
                        break
                    upcoming.append(following)
                ahead.extend(_first_lines(upcoming[index], OVERLAP_LINES - len(ahead)))
                index += 1
            ahead = ahead[:OVERLAP_LINES]
            own_lines = block.count(b"\n") + (0 if block.endswith(b"\n") else 1)
            frame, lossy = _decode(b"".join(behind) + block + b"".join(ahead))
            start = first - len(behind)
            yield Chunk(
                lines=frame.select(
                    pl.lit(log_file.name).alias("file"),
                    pl.int_range(start, start + pl.len(), dtype=pl.UInt32).alias("line"),
                    pl.col("line").alias("text"),
                ),
                first_line=first,
                last_line=first + own_lines - 1,
                lossy=lossy,
                cut_lines=notes.cut_lines,
            )
            behind = (behind + _last_lines(block, OVERLAP_LINES))[-OVERLAP_LINES:]
            first += own_lines
            block = upcoming.pop(0) if upcoming else _read_block(stream)


def _first_lines(block: bytes, count: int) -> list[bytes]:
    """Up to `count` lines from the start, with their `\n`, split only where polars splits
    (a lone `\r`, as tqdm writes it, stays inside its line)."""
    parts = block.split(b"\n", count)
    lines = [part + b"\n" for part in parts[:count]]
    if len(parts) <= count and parts[-1]:
        lines[-1] = parts[-1]  # the file's last line, without a line end
    elif len(parts) <= count:
        lines.pop()
    return lines


def _last_lines(block: bytes, count: int) -> list[bytes]:
    """The last `count` complete lines of a block that ends with `\n`."""
    parts = block[:-1].rsplit(b"\n", count)[-count:]
    return [part + b"\n" for part in parts]


@contextmanager
def _open(log_file: LogFile, notes: streams.TextNotes) -> Iterator[streams.PieceReader]:
    """The file's bytes with overlong lines cut, so that no block holds a line of gigabytes."""
    with (
        io.BytesIO(log_file.data)
        if log_file.data is not None
        else log_file.location.open("rb") as handle
    ):
        yield streams.PieceReader(streams.capped(streams.stream_pieces(handle), notes))


def _read_block(stream: streams.PieceReader) -> bytes:
    """About CHUNK_BYTES, ending at a line end (or the end of the file)."""
    block = stream.read(CHUNK_BYTES)
    if block and not block.endswith(b"\n"):
        block += stream.readline()
    return block


def _decode(data: bytes) -> tuple[pl.DataFrame, bool]:
    try:
        return pl.scan_lines(data).collect(), False
    except pl.exceptions.ComputeError:
        return pl.scan_lines(data.decode("utf-8", "replace").encode()).collect(), True
