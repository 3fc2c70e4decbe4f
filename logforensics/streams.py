"""Bytes as they are read from compressed files, archive members and standard input.

Everything here works a piece at a time, so memory stays bounded whatever the input:
- decompression yields pieces of at most `PIECE` bytes, says when a stream was cut short
  (`TruncatedError`), and stops a stream that inflates like a bomb (`OverrunError`);
- text is normalised on the way (`normalised`): UTF-16 decoded, NUL runs (the holes a
  copytruncate leaves) dropped, CR-only line ends split, overlong lines cut to their ends;
- what is kept goes to a `Spool`: memory up to `HOLD_BYTES`, then a temporary file (removed
  when the process ends), so a member of gigabytes never sits in memory.
"""

from __future__ import annotations

import atexit
import codecs
import shutil
import tempfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import zstandard

PIECE = 2**20
HOLD_BYTES = 8 * 2**20  # a member larger than this once decompressed is spilled to disk
MAX_LINE = 2**20  # a line longer than this keeps its first and last KEEP bytes
KEEP = 4096
# A stream that has inflated past BOMB_AFTER bytes at more than BOMB_RATIO times its
# compressed size is stopped: logs compress 5-30 times, a bomb a thousand.
BOMB_RATIO = 100
BOMB_AFTER = 64 * 2**20
# Compressed bytes fed to a decompressor at a time: its output for them stays bounded (a zstd
# block of zeros is 4 bytes for 128 KiB).
FEED = 1024


class OverrunError(Exception):
    """A stream stopped on purpose; the reason is for the report's skipped list."""


class TruncatedError(Exception):
    """The compressed data ends before its end marker: what came before it was read."""


def cut_line_marker(cut: int) -> bytes:
    return f" [... {cut:,} bytes of this line cut ...] ".encode()


@dataclass(slots=True)
class Inflation:
    """The compressed bytes one decompressor has consumed so far."""

    compressed: int = 0


class MemberInflation:
    """One member's bytes against the compressed bytes consumed while it was read: a member
    that has inflated past BOMB_AFTER at more than BOMB_RATIO times is stopped. (Measured per
    member, not per stream: a tar of thousands of small logs is mostly zero padding and
    compresses far better than any of its members.)"""

    def __init__(self, inflation: Inflation | None) -> None:
        self._inflation = inflation
        self._start = inflation.compressed if inflation is not None else 0
        self.read = 0

    def add(self, size: int) -> None:
        self.read += size
        if self._inflation is None or self.read <= BOMB_AFTER:
            return
        compressed = max(1, self._inflation.compressed - self._start)
        if self.read > BOMB_RATIO * compressed:
            raise OverrunError(
                f"inflates more than {BOMB_RATIO}:1 ({compressed:,} compressed bytes gave "
                f"{self.read:,} and more): a decompression bomb, not read"
            )


def declared_bomb(compressed: int, size: int) -> str | None:
    """Why a member whose sizes are declared (zip) is a bomb, or None."""
    if size > BOMB_AFTER and size > BOMB_RATIO * max(1, compressed):
        return (
            f"declares {size:,} bytes from {compressed:,} compressed (more than {BOMB_RATIO}:1):"
            " a decompression bomb, not read"
        )
    return None


def gzip_pieces(raw: BinaryIO, inflation: Inflation) -> Iterator[bytes]:
    """The decompressed bytes of a gzip stream (several members may follow each other)."""
    inflater = zlib.decompressobj(wbits=31)
    pending = b""
    in_member = False  # bytes of a member fed, its end not reached yet
    while True:
        if not pending:
            pending = raw.read(FEED * 64)
            inflation.compressed += len(pending)
            if not pending:
                break
        piece = inflater.decompress(pending, PIECE)
        in_member = True
        pending = inflater.unconsumed_tail
        if inflater.eof:
            in_member = False
            pending = inflater.unused_data
            inflater = zlib.decompressobj(wbits=31)
            if not pending.startswith(b"\x1f\x8b"):
                pending = b""  # anything after the last member is ignored, as gzip does
        if piece:
            yield piece
    if in_member:
        raise TruncatedError


def zstd_pieces(raw: BinaryIO, inflation: Inflation) -> Iterator[bytes]:
    """The decompressed bytes of a zstd stream (frames follow each other)."""
    decompressor = zstandard.ZstdDecompressor()
    frame = decompressor.decompressobj()
    in_frame = False
    while chunk := raw.read(FEED):
        inflation.compressed += len(chunk)
        while chunk:
            piece = frame.decompress(chunk)
            in_frame = True
            chunk = b""
            if frame.eof:
                chunk = frame.unused_data
                frame = decompressor.decompressobj()
                in_frame = False
            if piece:
                yield piece
    if in_frame:
        raise TruncatedError


class PieceReader:
    """A read-only file over pieces of bytes (for `tarfile`, which wants `read(n)`)."""

    def __init__(self, pieces: Iterator[bytes]) -> None:
        self._pieces = pieces
        self._buffer = b""
        self._at = 0  # where the unread bytes of `_buffer` start
        self._done = False
        self._failure: Exception | None = None  # raised once what came before it is read

    def read(self, size: int = -1) -> bytes:
        self._fill(size)
        return self._take(size if size >= 0 else len(self._buffer) - self._at)

    def readline(self) -> bytes:
        """Up to and with the next `\n` (lines are capped upstream, so this is bounded)."""
        while self._buffer.find(b"\n", self._at) < 0 and not self._done:
            self._fill(len(self._buffer) - self._at + PIECE)
        end = self._buffer.find(b"\n", self._at)
        return self._take(end + 1 - self._at if end >= 0 else len(self._buffer) - self._at)

    def _fill(self, size: int) -> None:
        """Read pieces until `size` bytes are unread (all of them when `size` < 0)."""
        wanted: list[bytes] = []
        held = len(self._buffer) - self._at
        while not self._done and (size < 0 or held < size):
            try:
                piece = next(self._pieces, None)
            except (OverrunError, TruncatedError) as failure:
                self._failure, piece = failure, None
            if piece is None:
                self._done = True
            else:
                wanted.append(piece)
                held += len(piece)
        if wanted:
            self._buffer = b"".join([self._buffer[self._at :], *wanted])
            self._at = 0

    def _take(self, size: int) -> bytes:
        if self._at >= len(self._buffer) and self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure
        taken = self._buffer[self._at : self._at + size]
        self._at += len(taken)
        return taken


def stream_pieces(stream: BinaryIO, first: bytes = b"") -> Iterator[bytes]:
    """The bytes of a plain stream, `first` (already read) included."""
    if first:
        yield first
    while piece := stream.read(PIECE):
        yield piece


# --- text ---------------------------------------------------------------------------------


@dataclass(slots=True)
class TextNotes:
    """What normalising changed, for the report."""

    holes: int = 0  # NUL bytes dropped
    cut_lines: int = 0
    utf16: bool = False
    cr_only: bool = False
    paste_blanks: int = 0  # blank lines a spaced paste added (see `paste_spacing`)

    def words(self) -> list[str]:
        said = []
        if self.utf16:
            said.append("decoded from UTF-16")
        if self.cr_only:
            said.append("lines ended by CR alone, split there")
        if self.paste_blanks:
            said.append(
                f"a blank line after every line, as a paste spaces them: {self.paste_blanks:,} "
                "such blank lines left out (lines keep the file's numbering)"
            )
        if self.holes:
            said.append(f"{self.holes:,} NUL bytes (a hole, e.g. left by copytruncate) left out")
        if self.cut_lines:
            said.append(
                f"{self.cut_lines:,} line(s) longer than {MAX_LINE // 2**20} MiB cut to their "
                f"first and last {KEEP // 1024} KiB"
            )
        return said


def needs_normalising(head: bytes) -> bool:
    """Whether a text's first bytes show UTF-16, NUL holes or CR-only line ends."""
    return (
        head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
        or b"\x00" in head
        or (b"\r" in head and b"\n" not in head)
    )


def looks_like_text(head: bytes) -> bool:
    """Whether a stream is text, from its first bytes once NUL runs (holes) are dropped:
    mostly printable, or UTF-16 with its byte-order mark."""
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return True
    sample = head.replace(b"\x00", b"")
    if not sample:
        return True  # all hole so far: the rest decides (an empty text is skipped as such)
    controls = sum(1 for byte in sample if byte < 32 and byte not in (9, 10, 12, 13, 27))
    return controls * 20 <= len(sample)


def capped(pieces: Iterator[bytes], notes: TextNotes) -> Iterator[bytes]:
    """`pieces` with overlong lines cut (see `_capped_lines`)."""
    return _capped_lines(pieces, notes)


def normalised(pieces: Iterator[bytes], head: bytes, notes: TextNotes) -> Iterator[bytes]:
    """`pieces` as UTF-8 lines ending in `\\n` the line reader splits as the writer meant."""
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        notes.utf16 = True
        pieces = _from_utf16(pieces)
    pieces = _without_holes(pieces, notes)
    if b"\r" in head and b"\n" not in head:
        notes.cr_only = True
        pieces = (piece.replace(b"\r", b"\n") for piece in pieces)
    return _capped_lines(pieces, notes)


def _from_utf16(pieces: Iterator[bytes]) -> Iterator[bytes]:
    decoder = codecs.getincrementaldecoder("utf-16")("replace")
    for piece in pieces:
        if text := decoder.decode(piece):
            yield text.encode("utf-8")
    if text := decoder.decode(b"", final=True):
        yield text.encode("utf-8")


def _without_holes(pieces: Iterator[bytes], notes: TextNotes) -> Iterator[bytes]:
    for piece in pieces:
        if b"\x00" in piece:
            kept = piece.replace(b"\x00", b"")
            notes.holes += len(piece) - len(kept)
            piece = kept
        if piece:
            yield piece


def _capped_lines(pieces: Iterator[bytes], notes: TextNotes) -> Iterator[bytes]:
    """Lines longer than MAX_LINE keep their first MAX_LINE bytes and their last KEEP bytes,
    around a marker saying how much was cut. A piece is at most MAX_LINE bytes, so a line
    inside a piece is never too long: only the line running across pieces is watched."""
    line = _Line()
    for piece in pieces:
        while piece:
            first = piece.find(b"\n")
            if first < 0:  # the whole piece is inside the current line
                yield line.extend(piece)
                break
            if line.length + first <= MAX_LINE:  # it ends short: the piece passes as it is
                yield piece
                line.length = len(piece) - piece.rfind(b"\n") - 1
                break
            yield line.extend(piece[:first])
            yield line.end(notes) + b"\n"
            piece = piece[first + 1 :]
    if line.length > MAX_LINE:  # the last line, with no line end
        yield line.end(notes)


class _Line:
    """The line being read: its length so far and, once too long, its last bytes."""

    def __init__(self) -> None:
        self.length = 0
        self.tail = bytearray()

    def extend(self, part: bytes) -> bytes:
        """`part` of the line: what of it is written now (the rest is kept as the tail)."""
        room = max(0, MAX_LINE - self.length)
        self.length += len(part)
        if len(part) <= room:
            return part
        self.tail += part[room:]
        del self.tail[: max(0, len(self.tail) - KEEP)]
        return part[:room]

    def end(self, notes: TextNotes) -> bytes:
        """What is left to write of the line: its tail, after a marker when it was cut."""
        cut = self.length - MAX_LINE - len(self.tail)
        ending = (cut_line_marker(cut) if cut > 0 else b"") + bytes(self.tail)
        if cut > 0:
            notes.cut_lines += 1
        self.length = 0
        self.tail.clear()
        return ending


# --- where kept bytes go ------------------------------------------------------------------


class Spool:
    """Bytes kept in memory up to HOLD_BYTES, then in a temporary file."""

    def __init__(self) -> None:
        self._held: list[bytes] = []
        self._size = 0
        self._file: BinaryIO | None = None
        self.path: Path | None = None

    @property
    def size(self) -> int:
        return self._size

    def write(self, piece: bytes) -> None:
        self._size += len(piece)
        if self._file is not None:
            self._file.write(piece)
            return
        self._held.append(piece)
        if self._size > HOLD_BYTES:
            handle = tempfile.NamedTemporaryFile(dir=spill_folder(), delete=False)  # noqa: SIM115
            self.path = Path(handle.name)
            self._file = handle
            for held in self._held:
                handle.write(held)
            self._held = []

    def data(self) -> bytes | None:
        """The bytes when held in memory (None once spilled: read them from `path`)."""
        if self._file is not None:
            self._file.close()
            return None
        return b"".join(self._held)

    def discard(self) -> None:
        if self._file is not None:
            self._file.close()
        if self.path is not None:
            self.path.unlink(missing_ok=True)
        self._held = []


_SPILL: list[Path] = []


def spill_folder() -> Path:
    """One temporary folder for the process's spilled members, removed when it ends."""
    if not _SPILL:
        folder = Path(tempfile.mkdtemp(prefix="logforensics-"))
        _SPILL.append(folder)
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return _SPILL[0]
