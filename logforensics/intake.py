"""Find the log files under PATH and read them as numbered lines.

Nothing under PATH is ever written. Files that are not logs (binaries, scripts, documents,
archives this version does not open) are skipped with a reason the report lists.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from logforensics.errors import InputError

SNIFF_BYTES = 8192
GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
ZIP_MAGIC = b"PK\x03\x04"

# Files that travel with logs but are not logs: reading them would count their lines as
# unrecognised, and a README that quotes log lines would even be parsed as evidence.
NOT_LOG_SUFFIXES = frozenset(
    ".py .pyc .ipynb .sh .md .rst .html .htm .css .js .json .yaml .yml .toml .cfg .ini "
    ".parquet .arrow .png .jpg .jpeg .gif .svg .pdf .pt .pth .ckpt .safetensors .bin .npy .npz "
    ".pkl .pickle .whl .so".split()
)
SKIPPED_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", ".ipynb_checkpoints"})


@dataclass(frozen=True, slots=True)
class LogFile:
    """A file that will be read: where it is and the name the report shows for it."""

    path: Path
    name: str
    size: int


@dataclass(frozen=True, slots=True)
class SkippedFile:
    name: str
    reason: str


@dataclass(frozen=True, slots=True)
class Inventory:
    """What PATH holds: the files to read and the files passed over."""

    root: Path
    files: tuple[LogFile, ...]
    skipped: tuple[SkippedFile, ...]


@dataclass(frozen=True, slots=True)
class Lines:
    """Every line of every file read: columns `file`, `line` (1-based) and `text`."""

    frame: pl.DataFrame
    lossy_files: tuple[str, ...]  # files whose invalid UTF-8 bytes were replaced


def discover(path: Path) -> Inventory:
    """List the log files under `path` (a folder, searched recursively, or one file)."""
    if not path.exists():
        raise InputError(f"{path}: no such file or folder")
    if path.is_file():
        candidates = [(path, path.name)]
    elif path.is_dir():
        candidates = [(file, file.relative_to(path).as_posix()) for file in _walk(path)]
    else:
        raise InputError(f"{path}: not a regular file or folder")

    files: list[LogFile] = []
    skipped: list[SkippedFile] = []
    for file, name in candidates:
        reason = _reason_to_skip(file)
        if reason:
            skipped.append(SkippedFile(name, reason))
        else:
            files.append(LogFile(file, name, file.stat().st_size))
    return Inventory(path, tuple(files), tuple(skipped))


def _walk(root: Path) -> list[Path]:
    found: list[Path] = []
    for folder, dirs, names in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        found.extend(Path(folder) / name for name in sorted(names))
    return found


def _reason_to_skip(file: Path) -> str | None:
    if file.is_symlink():
        return "symbolic link (not followed)"
    if not file.is_file():
        return "not a regular file"
    suffix = file.suffix.lower()
    if suffix in NOT_LOG_SUFFIXES:
        return f"not a log ({suffix} file)"
    try:
        with file.open("rb") as handle:
            head = handle.read(SNIFF_BYTES)
    except OSError as error:
        return f"unreadable ({error.strerror or error})"
    if not head:
        return "empty"
    if head.startswith((GZIP_MAGIC, ZSTD_MAGIC)):
        return None if not _is_tar_name(file.name) else "tar archive (not opened by this version)"
    if head.startswith(ZIP_MAGIC):
        return "zip archive (not opened by this version)"
    if len(head) > 262 and head[257:262] == b"ustar":
        return "tar archive (not opened by this version)"
    if b"\x00" in head:
        return "binary (NUL bytes)"
    return None


def _is_tar_name(name: str) -> bool:
    lowered = name.lower()
    return lowered.endswith((".tar.gz", ".tgz", ".tar.zst", ".tzst"))


def read_lines(files: tuple[LogFile, ...]) -> Lines:
    """Read every file into one frame of numbered lines, replacing invalid UTF-8 bytes."""
    if not files:
        return Lines(_numbered(pl.DataFrame({"file": [], "text": []})), ())
    try:
        frame = _read_batch(files)
        return Lines(frame, ())
    except pl.exceptions.ComputeError:
        pass  # some file is not valid UTF-8: read one by one to find it
    parts: list[pl.DataFrame] = []
    lossy: list[str] = []
    for log_file in files:
        try:
            text = pl.scan_lines(log_file.path, glob=False).collect()
        except pl.exceptions.ComputeError:
            lossy.append(log_file.name)
            decoded = log_file.path.read_bytes()
            text = pl.scan_lines(_decompress_if_needed(decoded).decode("utf-8", "replace").encode())
            text = text.collect()
        parts.append(text.select(pl.lit(log_file.name).alias("file"), pl.col("line").alias("text")))
    return Lines(_numbered(pl.concat(parts)), tuple(lossy))


def _read_batch(files: tuple[LogFile, ...]) -> pl.DataFrame:
    names = {str(log_file.path): log_file.name for log_file in files}
    frame = pl.scan_lines(
        [log_file.path for log_file in files], glob=False, include_file_paths="source"
    ).collect()
    frame = frame.select(
        pl.col("source").replace_strict(names, return_dtype=pl.String).alias("file"),
        pl.col("line").alias("text"),
    )
    return _numbered(frame)


def _numbered(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns(
        pl.int_range(1, pl.len() + 1, dtype=pl.UInt32).over("file").alias("line")
    ).select("file", "line", pl.col("text").cast(pl.String))


def _decompress_if_needed(data: bytes) -> bytes:
    if data.startswith(GZIP_MAGIC):
        import gzip

        return gzip.decompress(data)
    if data.startswith(ZSTD_MAGIC):
        return _zstd_decompress(data)
    return data


def _zstd_decompress(data: bytes) -> bytes:
    import io

    import zstandard

    with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data)) as reader:
        return reader.read()
