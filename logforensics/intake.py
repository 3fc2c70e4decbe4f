"""Find the log files under PATH and read them as numbered lines.

PATH is a folder (searched recursively), one file, or `-` for standard input. Archives
(`.tar`, `.tar.gz`/`.tgz`, `.tar.zst`/`.tzst`, `.zip`) and compressed files (`.gz`, `.zst`),
also inside folders and inside other archives, are read in memory: never extracted, nothing
under PATH is ever written. An archive member is named `archive.tar.gz!/node1/rank3.log`.
Archives and compressed files are told by their bytes (magic numbers), not by their names.

torchrun's `error.json` files are read as records (`Inventory.error_files`), not as lines.
Skipped, with the reason the report lists: files that are not logs (scripts, documents,
binaries), links and devices (on disk and inside archives), archive members whose path leaves
the archive (absolute or `..`; refused), encrypted zip members, corrupt archives, and the
files of torchrun `--log-dir` restarts other than the one analysed (the latest `attempt_<n>`
unless `attempt` chooses one). The total of decompressed bytes is capped (`max_bytes`).
"""

from __future__ import annotations

import io
import json
import os
import posixpath
import re
import sys
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

import polars as pl
import zstandard

from logforensics import paste_spacing, streams
from logforensics.dumps import (
    debug_server,
    faulthandler,
    flight_recorder,
    gdb_pybt,
    pyspy,
    unstamped,
)
from logforensics.errors import InputError
from logforensics.paste_spacing import LineMap

SNIFF_BYTES = 8192
GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
ZIP_MAGIC = b"PK\x03\x04"
ZIP_EMPTY_MAGIC = b"PK\x05\x06"
TAR_MAGIC_OFFSET = 257  # "ustar" in a POSIX/GNU tar header
DEFAULT_MAX_BYTES = 4 * 2**30
MAX_NESTING = 4  # archives inside archives, this deep
READ_CHUNK = 2**20
STDIN_NAME = "<stdin>"
MAX_ERROR_FILE = 16 * 2**20  # torchrun's error.json holds one traceback: kilobytes
SMALL_MEMBER = 64 * 1024  # members this small are read in one go
# plain files this small are read whole by the read that sniffs them (one read, not two, for
# each of thousands of small per-rank files), up to READ_AHEAD_BYTES of them in all
READ_AHEAD_FILE = 64 * 1024
READ_AHEAD_BYTES = 256 * 2**20
MEMBER_SEPARATOR = "!/"

# Files that travel with logs but are not logs: reading them would count their lines as
# unrecognised, and a README that quotes log lines would even be parsed as evidence.
NOT_LOG_SUFFIXES = frozenset(
    ".py .pyc .ipynb .sh .md .rst .html .htm .css .js .json .yaml .yml .toml .cfg .ini "
    ".parquet .arrow .png .jpg .jpeg .gif .svg .pdf .pt .pth .ckpt .safetensors .bin .npy .npz "
    ".pkl .pickle .whl .so".split()
)
# torchrun's per-rank error file (torch/distributed/elastic/multiprocessing/errors/
# error_handler.py): {"message": {"message": "<ExcType>: <msg>", "extraInfo": {"py_callstack":
# "<traceback>", "timestamp": "<unix secs>"}}}; newer files may hold `message` as a string.
# Read as a record (ErrorFile), not as log lines: its one JSON line is no log line.
ERROR_FILE_NAME = "error.json"
SKIPPED_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", ".ipynb_checkpoints"})
# torchrun --log-dir: <dir>/<run_id>_<rand>/attempt_<n>/<local_rank>/<file>
TORCHRUN_ATTEMPT = re.compile(r"(?:^|/)attempt_(\d+)/\d+/[^/]+$")
SIZE = re.compile(r"^(\d+)\s*([kmgt]?)(?:i?b)?$", re.IGNORECASE)
# What damaged archives and compressed streams raise (gzip's BadGzipFile is an OSError).
DAMAGED_DATA = (
    tarfile.TarError,
    zipfile.BadZipFile,
    zlib.error,
    zstandard.ZstdError,
    EOFError,
    OSError,
)


@dataclass(frozen=True, slots=True)
class LogFile:
    """A file that will be read: where it is, the name the report shows, its size as read.

    Archive members, decompressed files and standard input are held in `data` (their bytes,
    decompressed); a plain file on disk is read from `path` when the lines are read.
    """

    path: Path  # the file on disk, or the archive holding it (`-` for standard input)
    name: str
    size: int
    data: bytes | None = field(default=None, repr=False, compare=False)
    # decompressed or normalised bytes too large to hold, in a temporary file of ours
    spilled: Path | None = field(default=None, repr=False, compare=False)
    # `data` is a small plain file's bytes, read whole while listing it (its first read): they
    # may be let go once parsed, the file is still on disk
    read_ahead: bool = field(default=False, repr=False, compare=False)
    # a spaced paste read without its added blank lines: each line's own number in the file
    line_map: LineMap | None = field(default=None, repr=False, compare=False)

    @property
    def location(self) -> Path:
        """Where its bytes are on disk when not held in `data`."""
        return self.spilled if self.spilled is not None else self.path


@dataclass(frozen=True, slots=True)
class ErrorFile:
    """A torchrun `error.json`: the exception a rank died of and when (the launcher names the
    earliest as the root cause)."""

    name: str
    size: int
    exc_type: str | None  # "RuntimeError", "torch.OutOfMemoryError"
    exc_message: str | None
    timestamp: datetime | None  # UTC, zone dropped like every other stamp
    traceback: str | None


@dataclass(frozen=True, slots=True)
class SkippedFile:
    name: str
    reason: str


@dataclass(frozen=True, slots=True)
class DumpFile:
    """A hang dump beside the logs, read as a record, not as lines: a Flight Recorder trace
    (`fr_json`, `fr_pickle`), a `py-spy dump` (`pyspy_text`, `pyspy_json`), faulthandler
    stacks (`faulthandler`), gdb's `py-bt` (`gdb_pybt`) or a file of PyTorch's debug server
    (`debug_server`)."""

    path: Path
    name: str
    size: int
    kind: str
    data: bytes | None = field(default=None, repr=False, compare=False)

    def read(self) -> bytes:
        return self.data if self.data is not None else self.path.read_bytes()


Entry = LogFile | SkippedFile | DumpFile
MAX_DUMP_BYTES = 64 * 2**20  # a dump larger than this is no dump of one rank


# What every text dump holds in its first bytes, stamped or not: a frame's `)`, a thread
# name's `"`, py-spy's `Process ` header, the debug server's `=== Rank` section. Looked for
# before the head is unstamped, which costs several times these scans on every file listed.
TEXT_DUMP_MARKS = (b")", b'"', b"Process ", b"=== Rank")
# ... in its first lines: looked for there only (a log's head is read whole on thousands of files)
TEXT_DUMP_MARK_BYTES = 2048


def dump_kind(head: bytes) -> str | None:
    """Which hang dump a file is, from its first bytes; None for anything else."""
    form = flight_recorder.looks_like_dump(head)
    if form is not None:
        return f"fr_{form}"
    first_lines = head[:TEXT_DUMP_MARK_BYTES]
    if not any(mark in first_lines for mark in TEXT_DUMP_MARKS):
        return None
    head = unstamped(head)
    if pyspy.looks_like_text_dump(head):
        return "pyspy_text"
    if pyspy.looks_like_json_dump(head):
        return "pyspy_json"
    if faulthandler.looks_like_faulthandler(head):
        return "faulthandler"
    if gdb_pybt.looks_like_gdb_pybt(head):
        return "gdb_pybt"
    if debug_server.looks_like_debug_server(head):
        return "debug_server"
    return None


@dataclass(frozen=True, slots=True)
class Inventory:
    """What PATH holds: the files to read and the files passed over."""

    root: Path
    files: tuple[LogFile, ...]
    skipped: tuple[SkippedFile, ...]
    attempt: int | None = None  # the torchrun --log-dir restart analysed, if the tree has any
    attempts: tuple[int, ...] = ()  # every restart found
    error_files: tuple[ErrorFile, ...] = ()  # torchrun error.json files read (chosen attempt)
    # files read with a remark: truncated, decoded from UTF-16, holes left out, lines cut
    notes: tuple[SkippedFile, ...] = ()
    dumps: tuple[DumpFile, ...] = ()  # hang dumps beside the logs (py-spy, Flight Recorder)

    def without_read_ahead(self) -> Inventory:
        """The same inventory, letting go of the bytes of plain files read while listing them
        (archive members and standard input keep theirs: they are nowhere else)."""
        files = tuple(
            LogFile(log_file.path, log_file.name, log_file.size, spilled=log_file.spilled)
            if log_file.read_ahead
            else log_file
            for log_file in self.files
        )
        return replace(self, files=files)

    def of_files(self, names: set[str], dumps: tuple[DumpFile, ...] | None = None) -> Inventory:
        """The inventory of one job: its files, the error files beside them and its hang
        dumps (`dumps`, see `dumps_of_jobs`; files skipped and restarts stay listed: they
        concern the whole upload)."""
        if names >= {log_file.name for log_file in self.files}:
            return self
        folders = {_folder(name) for name in names}
        return replace(
            self,
            files=tuple(f for f in self.files if f.name in names),
            error_files=tuple(e for e in self.error_files if _folder(e.name) in folders),
            dumps=self.dumps if dumps is None else dumps,
        )

    def dumps_of_jobs(self, jobs: list[set[str]]) -> list[tuple[DumpFile, ...]]:
        """The hang dumps of each job of an upload of several. Dumps sit in folders of their
        own (`fr/rank_0`, `pyspy/rank3.txt`) beside or below a job's logs: a dump goes to the
        job whose logs' common folder shares the most of its path (to every job tied for it:
        the ranks a dump names decide which one uses it)."""
        roots = [_parts(posixpath.commonpath([_folder(name) for name in names])) for names in jobs]
        given: list[list[DumpFile]] = [[] for _ in jobs]
        for dump in self.dumps:
            where = _parts(_folder(dump.name))
            shared = [_shared_length(root, where) for root in roots]
            best = max(shared, default=0)
            for number, length in enumerate(shared):
                if length == best:
                    given[number].append(dump)
        return [tuple(dumps) for dumps in given]


@dataclass(frozen=True, slots=True)
class Lines:
    """Every line of every file read: columns `file`, `line` (1-based) and `text`."""

    frame: pl.DataFrame
    lossy_files: tuple[str, ...]  # files whose invalid UTF-8 bytes were replaced


def parse_size(text: str) -> int:
    """`4294967296`, `4G`, `512MiB`, `100k` as bytes."""
    found = SIZE.match(text.strip())
    if not found:
        raise InputError(f"--max-bytes {text!r}: not a size", hint="e.g. 8G, 512M or 1000000")
    exponent = " kmgt".index(found[2].lower() or " ")
    return int(found[1]) * 1024**exponent


class _Budget:
    """The bytes still allowed to be read (decompressed); the file or member that would go
    past the cap is skipped with the reason, and so is every one after it."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.used = 0
        self.read_ahead = 0

    def holds(self, size: int) -> bool:
        """Whether a small file's bytes read while listing may be kept (READ_AHEAD_BYTES)."""
        if self.read_ahead + size > READ_AHEAD_BYTES:
            return False
        self.read_ahead += size
        return True

    def fits(self, size: int) -> bool:
        return self.used + size <= self.max_bytes

    def refusal(self) -> str:
        return (
            f"not read: the input holds more than the --max-bytes cap of {self.max_bytes:,} "
            f"bytes once decompressed (raise it, e.g. --max-bytes {_next_size(self.max_bytes)})"
        )

    def take(self, size: int) -> None:
        if not self.fits(size):
            raise streams.OverrunError(self.refusal())
        self.used += size

    def give_back(self, size: int) -> None:
        """What a member that was not kept had taken: the others may still be read."""
        self.used -= size


def _next_size(size: int) -> str:
    return f"{max(1, 2 * size // 2**30)}G"


def discover(
    path: Path,
    *,
    attempt: int | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    stdin: BinaryIO | None = None,
) -> Inventory:
    """List the log files under `path`: a folder (searched recursively), one file, or `-`
    (standard input, or `stdin` when given)."""
    budget = _Budget(max_bytes)
    found: list[Entry] = []
    notes: list[SkippedFile] = []
    if str(path) == "-":
        stream = stdin if stdin is not None else sys.stdin.buffer
        head = _read_up_to(stream, SNIFF_BYTES)
        pieces = streams.stream_pieces(stream, head)
        found.extend(_member_entries(pieces, STDIN_NAME, Path("-"), budget, 0, notes))
    elif not path.exists() and not path.is_symlink():
        raise InputError(f"{path}: no such file or folder")
    elif path.is_dir():
        for entry, name in _walk(path, found):
            found.extend(_disk_entries(Path(entry.path), name, budget, notes, entry))
    elif path.is_file():  # named by the user: followed even when it is a link
        found.extend(_disk_entries(path.resolve(), path.name, budget, notes))
    else:
        raise InputError(f"{path}: not a regular file or folder")
    # by name, so that a folder and the same folder packed as an archive list alike
    found.sort(key=lambda entry: entry.name)
    files = [entry for entry in found if isinstance(entry, LogFile)]
    skipped = [entry for entry in found if isinstance(entry, SkippedFile)]
    dumps = tuple(entry for entry in found if isinstance(entry, DumpFile))
    files, older, chosen, attempts = _choose_attempt(files, attempt, path)
    error_files, not_json = _read_error_files(files)
    return Inventory(
        path,
        tuple(f for f in files if not _is_error_file(f.name)),
        tuple(skipped + not_json + older),
        chosen,
        attempts,
        tuple(error_files),
        tuple(sorted(notes, key=lambda note: note.name)),
        dumps,
    )


def _walk(root: Path, skipped: list[Entry]) -> list[tuple[os.DirEntry[str], str]]:
    """Every entry under `root` but folders, with its path relative to `root`; a folder that
    cannot be listed goes to `skipped`. Linked folders are not entered; the directory entries
    carry their type, so listing costs no extra system call per file."""
    found: list[tuple[os.DirEntry[str], str]] = []
    folders = [(str(root), "")]
    while folders:
        folder, prefix = folders.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError as error:
            where = prefix.rstrip("/") or str(root)
            skipped.append(SkippedFile(f"{where}/", f"folder not readable ({_describe(error)})"))
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in SKIPPED_DIRS:
                    folders.append((entry.path, f"{prefix}{entry.name}/"))
            elif not (entry.is_symlink() and entry.is_dir()):
                found.append((entry, prefix + entry.name))
    return found


def _disk_entries(
    file: Path,
    name: str,
    budget: _Budget,
    notes: list[SkippedFile],
    entry: os.DirEntry[str] | None = None,
) -> Iterator[Entry]:
    if entry.is_symlink() if entry is not None else file.is_symlink():
        yield SkippedFile(name, "symbolic link (not followed)")
        return
    if not (entry.is_file(follow_symlinks=False) if entry is not None else file.is_file()):
        yield SkippedFile(name, "not a regular file")
        return
    # the listing's own path string: a Path would build it again for every file
    location = entry.path if entry is not None else file
    try:
        start = _first_bytes(location, READ_AHEAD_FILE + 1)
        head = start[:SNIFF_BYTES]
        if (kind := dump_kind(head)) is not None:
            yield _dump_entry(file, name, kind, None, budget, entry)
            return
        reason = _reason_not_a_log(name)
        if reason:
            yield SkippedFile(name, reason)
            return
        if head and _is_container(head, name):
            with open(location, "rb") as handle:
                yield from _container_entries(handle, head, name, file, budget, 0, notes)
            return
        if head and _needs_reading_through(head):
            with open(location, "rb") as handle:
                size = handle.seek(0, os.SEEK_END)
                if not budget.fits(size):
                    yield SkippedFile(name, budget.refusal())
                    return
                handle.seek(0)
                pieces = streams.stream_pieces(handle)
                yield from _member_entries(pieces, name, file, budget, 0, notes)
            return
    except OSError as error:
        yield SkippedFile(name, f"unreadable ({_describe(error)})")
        return
    if not head:
        yield SkippedFile(name, "empty")
        return
    whole = len(start) <= READ_AHEAD_FILE  # the read reached the file's end
    if whole:
        size = len(start)
    else:
        size = (entry.stat(follow_symlinks=False) if entry is not None else file.stat()).st_size
    try:
        budget.take(size)
    except streams.OverrunError as overrun:
        yield SkippedFile(name, str(overrun))
        return
    if whole and budget.holds(size):
        yield LogFile(file, name, size, start, read_ahead=True)
    else:
        yield LogFile(file, name, size)


def _first_bytes(location: str | Path, size: int) -> bytes:
    """Up to `size` bytes from a file's start, read through a bare descriptor: on thousands of
    small files this takes a third of the time a buffered file object takes."""
    handle = os.open(location, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        parts = [os.read(handle, size)]
        got = len(parts[0])
        while got < size and parts[-1]:  # a short read before the end (pipes, some mounts)
            parts.append(os.read(handle, size - got))
            got += len(parts[-1])
    finally:
        os.close(handle)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _dump_entry(
    path: Path,
    name: str,
    kind: str,
    data: bytes | None,
    budget: _Budget,
    entry: os.DirEntry[str] | None = None,
) -> DumpFile | SkippedFile:
    if data is not None:
        size = len(data)
    else:
        size = (entry.stat(follow_symlinks=False) if entry is not None else path.stat()).st_size
    if size > MAX_DUMP_BYTES:
        return SkippedFile(
            name, f"a hang dump larger than {MAX_DUMP_BYTES // 2**20} MiB (not read)"
        )
    try:
        budget.take(size)
    except streams.OverrunError as overrun:
        return SkippedFile(name, str(overrun))
    return DumpFile(path, name, size, kind, data)


def _reason_not_a_log(name: str) -> str | None:
    base = _base_name(name)
    if base.lower() == ERROR_FILE_NAME:
        return None
    suffix = os.path.splitext(base)[1].lower()
    if suffix in NOT_LOG_SUFFIXES:
        return f"not a log ({suffix} file)"
    return None


def _parts(folder: str) -> list[str]:
    return [part for part in folder.split("/") if part]


def _shared_length(root: list[str], folder: list[str]) -> int:
    """How many leading folders `folder` shares with `root`; one more than all of them when
    `folder` lies inside `root` (a dump below a job's logs beats one beside them)."""
    shared = 0
    for mine, theirs in zip(root, folder, strict=False):
        if mine != theirs:
            return shared
        shared += 1
    return shared + 1 if shared == len(root) else shared


def _folder(name: str) -> str:
    return name.replace(MEMBER_SEPARATOR, "/").rsplit("/", 1)[0] if "/" in name else ""


def _base_name(name: str) -> str:
    return name.rsplit(MEMBER_SEPARATOR, 1)[-1].rstrip("/").rsplit("/", 1)[-1]


def _is_error_file(name: str) -> bool:
    return _base_name(name).lower() == ERROR_FILE_NAME


def _is_tar(head: bytes) -> bool:
    return len(head) > TAR_MAGIC_OFFSET + 5 and head[TAR_MAGIC_OFFSET : TAR_MAGIC_OFFSET + 5] == (
        b"ustar"
    )


def _is_container(head: bytes, name: str) -> bool:
    """Compressed or an archive: its entries come from `_container_entries`."""
    return head.startswith((GZIP_MAGIC, ZSTD_MAGIC, ZIP_MAGIC, ZIP_EMPTY_MAGIC)) or (
        _is_tar(head) or name.lower().endswith(".tar")
    )


def _container_entries(
    stream: BinaryIO,
    head: bytes,
    name: str,
    path: Path,
    budget: _Budget,
    depth: int,
    notes: list[SkippedFile],
) -> Iterator[Entry]:
    """The logs inside a compressed file or an archive, read from `stream` (at its start) a
    piece at a time. A damaged member costs that member; a container cut short keeps what
    came before the cut."""
    if depth > MAX_NESTING:
        yield SkippedFile(name, f"archive nested deeper than {MAX_NESTING} levels (not opened)")
        return
    entries: list[Entry] = []
    try:
        if head.startswith((ZIP_MAGIC, ZIP_EMPTY_MAGIC)):
            _zip_entries(stream, name, path, budget, depth, entries, notes)
        elif head.startswith((GZIP_MAGIC, ZSTD_MAGIC)):
            _compressed_entries(stream, head, name, path, budget, depth, entries, notes)
        else:
            _tar_entries(stream, name, path, budget, depth, entries, notes)
    except streams.OverrunError as overrun:
        entries.append(SkippedFile(name, str(overrun)))
    except (streams.TruncatedError, *DAMAGED_DATA) as error:
        # what was read before the damage stays: a truncated upload still has its first files
        read = f" after {len(entries)} members" if entries else ""
        cut = isinstance(error, streams.TruncatedError) or str(error) == "unexpected end of data"
        entries.append(
            SkippedFile(name, f"truncated{read}: the rest of it is lost")
            if cut
            else SkippedFile(name, f"corrupt or truncated{read} ({_describe(error)})")
        )
    yield from sorted(entries, key=lambda entry: entry.name)


def _describe(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error) or type(error).__name__


def _decompressed(stream: BinaryIO, head: bytes) -> tuple[Iterator[bytes], streams.Inflation]:
    inflation = streams.Inflation()
    if head.startswith(GZIP_MAGIC):
        return streams.gzip_pieces(stream, inflation), inflation
    return streams.zstd_pieces(stream, inflation), inflation


def _read_up_to(stream: BinaryIO, size: int) -> bytes:
    """`size` bytes, fewer only at the end (a stream may return short reads)."""
    chunks: list[bytes] = []
    wanted = size
    while wanted > 0 and (chunk := stream.read(wanted)):
        chunks.append(chunk)
        wanted -= len(chunk)
    return b"".join(chunks)


def _compressed_entries(
    stream: BinaryIO,
    head: bytes,
    name: str,
    path: Path,
    budget: _Budget,
    depth: int,
    members: list[Entry],
    notes: list[SkippedFile],
) -> None:
    """A `.gz` / `.zst` file: a compressed tar, or one compressed log."""
    decompressed, inflation = _decompressed(stream, head)
    plain = streams.PieceReader(decompressed)
    inner_head = plain.read(SNIFF_BYTES)
    rest = streams.stream_pieces(plain, inner_head)
    if _is_tar(inner_head) or (_is_tar_name(name) and not _is_container(inner_head, "")):
        reader = streams.PieceReader(rest)
        _tar_entries(reader, name, path, budget, depth, members, notes, inflation)
        return
    members.extend(_member_entries(rest, name, path, budget, depth + 1, notes, inflation))


def _tar_entries(
    stream: BinaryIO,
    name: str,
    path: Path,
    budget: _Budget,
    depth: int,
    members: list[Entry],
    notes: list[SkippedFile],
    inflation: streams.Inflation | None = None,
) -> None:
    # "r|" reads the tar as a stream: one pass, members in order, nothing seeks or is extracted.
    with tarfile.open(fileobj=stream, mode="r|") as archive:
        for member in archive:
            member_name = f"{name}{MEMBER_SEPARATOR}{_clean_member_path(member.name)}"
            if member.isdir():
                continue
            refusal = _member_refusal(member.name)
            if refusal:  # named as the archive holds it: that is what is wrong with it
                members.append(SkippedFile(f"{name}{MEMBER_SEPARATOR}{member.name}", refusal))
            elif member.issym() or member.islnk():
                members.append(SkippedFile(member_name, "link inside the archive (not followed)"))
            elif member.isdev():
                members.append(SkippedFile(member_name, "device or fifo inside the archive"))
            elif not member.isfile():
                members.append(SkippedFile(member_name, "not a regular file"))
            elif (reason := _reason_not_a_log(member_name)) is not None:
                members.append(SkippedFile(member_name, reason))
            else:
                extracted = archive.extractfile(member)
                if extracted is not None and member.size <= SMALL_MEMBER:
                    small = _small_member(extracted.read(), member_name, path, budget)
                    if small is not None:
                        members.append(small)
                        continue
                    extracted = archive.extractfile(member)
                pieces = streams.stream_pieces(extracted) if extracted is not None else iter(())
                members.extend(
                    _member_entries(pieces, member_name, path, budget, depth + 1, notes, inflation)
                )
            archive.members.clear()  # a streamed tar need not remember its members


def _zip_entries(
    stream: BinaryIO,
    name: str,
    path: Path,
    budget: _Budget,
    depth: int,
    members: list[Entry],
    notes: list[SkippedFile],
) -> None:
    with zipfile.ZipFile(stream) as archive:
        for info in archive.infolist():
            member_name = f"{name}{MEMBER_SEPARATOR}{_clean_member_path(info.filename)}"
            if info.is_dir():
                continue
            file_type = (info.external_attr >> 16) & 0o170000
            refusal = _member_refusal(info.filename)
            if refusal:
                members.append(SkippedFile(f"{name}{MEMBER_SEPARATOR}{info.filename}", refusal))
            elif file_type == 0o120000:
                members.append(SkippedFile(member_name, "link inside the archive (not followed)"))
            elif file_type not in (0, 0o100000):
                members.append(SkippedFile(member_name, "device or fifo inside the archive"))
            elif info.flag_bits & 0x1:
                members.append(SkippedFile(member_name, "encrypted (not read)"))
            elif (reason := _reason_not_a_log(member_name)) is not None:
                members.append(SkippedFile(member_name, reason))
            else:
                members.extend(_zip_member(archive, info, member_name, path, budget, depth, notes))


def _zip_member(
    archive: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    name: str,
    path: Path,
    budget: _Budget,
    depth: int,
    notes: list[SkippedFile],
) -> Iterator[Entry]:
    """One member; its damage is its own (the others are still read)."""
    # zipfile stops at the declared size: the declared sizes are the ratio
    bomb = streams.declared_bomb(info.compress_size, info.file_size)
    if bomb is not None:
        yield SkippedFile(name, bomb)
        return
    try:
        with archive.open(info) as member:
            pieces = streams.stream_pieces(member)
            read = list(_member_entries(pieces, name, path, budget, depth + 1, notes))
    except streams.OverrunError as overrun:
        yield SkippedFile(name, str(overrun))
        return
    except DAMAGED_DATA as error:
        yield SkippedFile(name, f"corrupt ({_describe(error)})")
        return
    yield from read


def _member_entries(
    pieces: Iterator[bytes],
    name: str,
    path: Path,
    budget: _Budget,
    depth: int,
    notes: list[SkippedFile],
    inflation: streams.Inflation | None = None,
) -> Iterator[Entry]:
    """A member read a piece at a time (an archive member, a decompressed file, stdin, a
    text that needs normalising): a nested container is opened, binary data is skipped
    unread, text is normalised into a spool. Its bytes count against the cap and, when it
    comes out of a decompressor (`inflation`), against the bomb ratio: a member past either
    is skipped and gives its bytes back; one cut short keeps what came before the cut."""
    counted = streams.MemberInflation(inflation)
    reader = streams.PieceReader(_counted(pieces, budget, counted))
    spool = streams.Spool()
    said = streams.TextNotes()
    truncated = False
    try:
        head = reader.read(SNIFF_BYTES)
        if not head:
            yield SkippedFile(name, "empty")
            return
        rest = streams.stream_pieces(reader, head)
        if (kind := dump_kind(head)) is not None:
            for piece in rest:
                if spool.size + len(piece) > MAX_DUMP_BYTES:
                    raise streams.OverrunError(
                        f"a hang dump larger than {MAX_DUMP_BYTES // 2**20} MiB (not read)"
                    )
                spool.write(piece)
            data = spool.data() or spool.path.read_bytes()
            spool.discard()
            yield DumpFile(path, name, len(data), kind, data)
            return
        if _is_container(head, name):
            for piece in rest:
                spool.write(piece)
            data = spool.data()
            with io.BytesIO(data) if data is not None else spool.path.open("rb") as nested:
                yield from _container_entries(nested, head, name, path, budget, depth, notes)
            spool.discard()  # the archive's own bytes: its members have spools of their own
            return
        if not streams.looks_like_text(head):
            yield SkippedFile(name, "binary (not text)")
            return
        for piece in streams.normalised(rest, head, said):
            spool.write(piece)
    except streams.OverrunError as overrun:
        budget.give_back(counted.read)
        spool.discard()
        yield SkippedFile(name, str(overrun))
        return
    except streams.TruncatedError:
        truncated = True
    if truncated:  # what came before the cut is read; the rest is listed as not read
        yield SkippedFile(name, f"truncated after {counted.read:,} bytes: the rest is lost")
    data, line_map = spool.data(), None
    if data is not None and paste_spacing.spaced(data[:SNIFF_BYTES]):
        data, line_map = paste_spacing.unspaced(data)
        said.paste_blanks = line_map.added_blanks
    if remarks := said.words():
        notes.append(SkippedFile(name, "; ".join(remarks)))
    if spool.size == 0:
        spool.discard()
        yield SkippedFile(name, "empty" + (" (only NUL bytes)" if said.holes else ""))
        return
    yield LogFile(path, name, spool.size, data, spool.path, line_map=line_map)


def _needs_reading_through(head: bytes) -> bool:
    """Whether a text must be read a piece at a time before its lines are (see `streams`), or
    whole to undo a paste's spacing (see `paste_spacing`)."""
    return streams.needs_normalising(head) or paste_spacing.spaced(head)


def _small_member(data: bytes, name: str, path: Path, budget: _Budget) -> Entry | None:
    """A small member that is plain text, read in one go (archives of thousands of tiny logs
    are common); None when it needs the careful reading (a container, binary, normalising)."""
    head = data[:SNIFF_BYTES]
    if not head or _is_container(head, name) or _needs_reading_through(head):
        return None
    if (kind := dump_kind(head)) is not None:
        return _dump_entry(path, name, kind, data, budget)
    if not streams.looks_like_text(head):
        return SkippedFile(name, "binary (not text)")
    try:
        budget.take(len(data))
    except streams.OverrunError as overrun:
        return SkippedFile(name, str(overrun))
    return LogFile(path, name, len(data), data)


def _counted(
    pieces: Iterator[bytes], budget: _Budget, member: streams.MemberInflation
) -> Iterator[bytes]:
    for piece in pieces:
        budget.take(len(piece))
        member.add(len(piece))
        yield piece


def _clean_member_path(member: str) -> str:
    parts = [part for part in member.replace("\\", "/").split("/") if part not in ("", ".")]
    return "/".join(parts)


def _member_refusal(member: str) -> str | None:
    normal = member.replace("\\", "/")
    if normal.startswith("/") or (normal[1:2] == ":" and normal[:1].isalpha()):
        return "absolute path inside the archive (refused)"
    if ".." in normal.split("/"):
        return "path leaves the archive with '..' (refused)"
    return None


def _is_tar_name(name: str) -> bool:
    lowered = name.lower()
    return lowered.endswith((".tar.gz", ".tgz", ".tar.zst", ".tzst", ".tar"))


def _choose_attempt(
    files: list[LogFile], wanted: int | None, root: Path
) -> tuple[list[LogFile], list[SkippedFile], int | None, tuple[int, ...]]:
    """Keep one torchrun --log-dir restart: `wanted`, else the latest; list the others."""
    attempt_of = {
        log_file.name: int(found[1])
        for log_file in files
        if (found := TORCHRUN_ATTEMPT.search(log_file.name.replace(MEMBER_SEPARATOR, "/")))
    }
    attempts = tuple(sorted(set(attempt_of.values())))
    if wanted is not None and wanted not in attempts:
        raise InputError(
            f"{root}: no torchrun attempt_{wanted} folder",
            hint=(
                f"attempts found: {', '.join(map(str, attempts))}"
                if attempts
                else "no attempt_<n> folders were found: drop --attempt"
            ),
        )
    if not attempts:
        return files, [], None, ()
    chosen = wanted if wanted is not None else attempts[-1]
    kept = [f for f in files if attempt_of.get(f.name, chosen) == chosen]
    older = [
        SkippedFile(
            f.name,
            f"torchrun attempt_{attempt_of[f.name]} (analysing attempt_{chosen}; "
            f"--attempt {attempt_of[f.name]} analyses this one)",
        )
        for f in files
        if attempt_of.get(f.name, chosen) != chosen
    ]
    return kept, older, chosen, attempts


def _read_error_files(files: list[LogFile]) -> tuple[list[ErrorFile], list[SkippedFile]]:
    read: list[ErrorFile] = []
    not_json: list[SkippedFile] = []
    for log_file in files:
        if not _is_error_file(log_file.name):
            continue
        if log_file.size > MAX_ERROR_FILE:
            not_json.append(
                SkippedFile(log_file.name, "torchrun error file too large to be one (not read)")
            )
            continue
        data = log_file.data if log_file.data is not None else log_file.location.read_bytes()
        try:
            record = json.loads(data.decode("utf-8", "replace"))
        except (json.JSONDecodeError, RecursionError):  # nested past the parser's depth
            not_json.append(SkippedFile(log_file.name, "torchrun error file that is not JSON"))
            continue
        read.append(_error_file(log_file, record))
    return read, not_json


def _error_file(log_file: LogFile, record: object) -> ErrorFile:
    message = record.get("message") if isinstance(record, dict) else None
    extra = message.get("extraInfo", {}) if isinstance(message, dict) else {}
    text = message.get("message") if isinstance(message, dict) else message
    text = text if isinstance(text, str) else None
    exc_type, _, exc_message = (text or "").partition(": ")
    stamp = extra.get("timestamp") if isinstance(extra, dict) else None
    callstack = extra.get("py_callstack") if isinstance(extra, dict) else None
    return ErrorFile(
        name=log_file.name,
        size=log_file.size,
        exc_type=exc_type if exc_message and " " not in exc_type else None,
        exc_message=(exc_message if exc_message and " " not in exc_type else text),
        timestamp=_unix_time(stamp),
        traceback=callstack if isinstance(callstack, str) else None,
    )


def _unix_time(value: object) -> datetime | None:
    try:
        seconds = int(str(value))
        return datetime.fromtimestamp(seconds, tz=UTC).replace(tzinfo=None)
    except (ValueError, OverflowError, OSError):  # not a number, or no date (1e20 s)
        return None


TAIL_BLOCK = 8192


def read_lines(files: tuple[LogFile, ...]) -> Lines:
    """Read every file into one frame of numbered lines, replacing invalid UTF-8 bytes."""
    on_disk = tuple(log_file for log_file in files if log_file.data is None)
    parts: list[pl.DataFrame] = []
    lossy: list[str] = []
    if on_disk:
        try:
            parts.append(_read_batch(on_disk))
        except pl.exceptions.ComputeError:  # some file is not valid UTF-8: find it
            for log_file in on_disk:
                parts.append(_read_one(log_file, log_file.location.read_bytes(), lossy))
    for log_file in files:
        if log_file.data is not None:
            parts.append(_read_one(log_file, log_file.data, lossy))
    if not parts:
        return Lines(_numbered(pl.DataFrame({"file": [], "text": []})), ())
    return Lines(_numbered(pl.concat(parts)), tuple(lossy))


def read_lines_at(inventory: Inventory, wanted: pl.DataFrame) -> pl.DataFrame:
    """The text of the lines `wanted` (`file, line`), read again from their files: a finding
    quotes a few lines whose text was not kept (stage marks). Columns `file, line, text`."""
    by_name = {log_file.name: log_file for log_file in inventory.files}
    parts = [pl.DataFrame(schema={"file": pl.String, "line": pl.UInt32, "text": pl.String})]
    for (name,), rows in wanted.unique().group_by("file"):
        log_file = by_name.get(str(name))
        if log_file is None:
            continue
        numbers = rows.get_column("line").cast(pl.UInt32)
        source = log_file.data if log_file.data is not None else log_file.location
        try:
            lines = (
                _numbered_lines(source).filter(pl.col("line").is_in(numbers.implode())).collect()
            )
        except pl.exceptions.ComputeError:  # not valid UTF-8: as read_lines read it
            raw = source if isinstance(source, bytes) else Path(source).read_bytes()
            decoded = raw.decode("utf-8", "replace").encode()
            lines = (
                _numbered_lines(decoded).filter(pl.col("line").is_in(numbers.implode())).collect()
            )
        parts.append(
            lines.with_columns(pl.lit(str(name)).alias("file")).select("file", "line", "text")
        )
    return pl.concat(parts)


def head_bytes(log_file: LogFile, size: int) -> bytes:
    """The first `size` bytes of a file (of its held bytes, when it has them); none when it
    cannot be read."""
    if log_file.data is not None:
        return log_file.data[:size]
    try:
        return _first_bytes(log_file.location, size)
    except OSError:
        return b""


def tail_lines(
    log_file: LogFile, total: int, numbers: list[int], data: bytes | memoryview | None = None
) -> dict[int, str]:
    """The lines `numbers` of a file of `total` lines, read from its end (from `data`, its
    bytes, when given): a few kilobytes for lines near the end, more only as far as needed.
    Split as `scan_lines` splits (on `\n`, one `\r` before it dropped), invalid UTF-8
    replaced."""
    if not numbers:
        return {}
    wanted_back = total - min(numbers) + 1  # lines to have, counted from the end
    source = data if data is not None else log_file.data
    block = TAIL_BLOCK
    while True:
        raw, whole = _tail_bytes(log_file.location, source, block)
        parts = raw.split(b"\n")
        if parts and parts[-1] == b"":
            parts.pop()
        if not whole:
            parts = parts[1:]  # cut in the middle of a line
        if len(parts) >= wanted_back or whole:
            break
        block *= 4
    first = total - len(parts) + 1
    found = {}
    for number in numbers:
        if number >= first:
            line = parts[number - first]
            line = line[:-1] if line.endswith(b"\r") else line
            found[number] = line.decode("utf-8", "replace")
    return found


def _tail_bytes(path: Path, data: bytes | memoryview | None, size: int) -> tuple[bytes, bool]:
    """The last `size` bytes and whether they are the whole file."""
    if data is not None:
        return bytes(data[-size:]), size >= len(data)
    with path.open("rb") as handle:
        end = handle.seek(0, os.SEEK_END)
        handle.seek(max(0, end - size))
        return handle.read(size), size >= end


def _numbered_lines(source: bytes | Path) -> pl.LazyFrame:
    return pl.scan_lines(source, name="text").with_row_index("line", offset=1)


def _read_one(log_file: LogFile, data: bytes, lossy: list[str]) -> pl.DataFrame:
    try:
        text = pl.scan_lines(data).collect()
    except pl.exceptions.ComputeError:
        lossy.append(log_file.name)
        text = pl.scan_lines(data.decode("utf-8", "replace").encode()).collect()
    return text.select(pl.lit(log_file.name).alias("file"), pl.col("line").alias("text"))


def _read_batch(files: tuple[LogFile, ...]) -> pl.DataFrame:
    names = {str(log_file.location): log_file.name for log_file in files}
    frame = pl.scan_lines(
        [log_file.location for log_file in files], glob=False, include_file_paths="source"
    ).collect()
    return frame.select(
        pl.col("source").replace_strict(names, return_dtype=pl.String).alias("file"),
        pl.col("line").alias("text"),
    )


def _numbered(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns(
        pl.int_range(1, pl.len() + 1, dtype=pl.UInt32).over("file").alias("line")
    ).select("file", "line", pl.col("text").cast(pl.String))
