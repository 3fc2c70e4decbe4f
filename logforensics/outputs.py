"""The files the CLI writes: every output path checked before any input is read, and every
file written whole or not at all."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from logforensics.errors import InputError
from logforensics.intake import SKIPPED_DIRS

STDOUT = "-"

# How polars reports a failed write: a ComputeError quoting Rust's io::Error, e.g.
# "underlying IO error: No space left on device (os error 28)".
RUST_OS_ERROR = re.compile(r"\(os error (\d+)\)")

FileId = tuple[int, int]  # (device, inode): the same file under any name, hard links too


def check_outputs(outputs: Mapping[str, Path | None], input_path: Path) -> None:
    """Refuse, before anything is read, an output that cannot be written or would overwrite the
    input: its folder is missing or read-only, a folder is in the way, two outputs are one file,
    or it lies inside the input folder or is an input file (a hard link of one too).

    `outputs` maps the option that names each output (`--out`) to its path; a missing output
    (None) and standard output (`-`) are passed over. Raises InputError naming the path.
    """
    named = {option: path for option, path in outputs.items() if path and str(path) != STDOUT}
    real = {option: _resolved(path, f"cannot write {path}") for option, path in named.items()}
    real_input = None if str(input_path) == STDOUT else _resolved(input_path, str(input_path))
    for option, path in named.items():
        _check_writable(path, real[option])
        if real_input is not None and real_input.is_dir() and real_input in real[option].parents:
            raise InputError(
                f"cannot write {path}: it is inside the input {input_path}",
                hint="write it outside the logs",
            )
    file_ids = {option: _file_id(real[option]) for option in named}  # None: not there yet
    _check_distinct(named, {option: file_ids[option] or real[option] for option in named})
    if real_input is not None:
        _check_not_an_input(named, file_ids, real_input)


def write_atomically(path: Path, write: Callable[[Path], None]) -> None:
    """Write `path` whole or not at all: `write(temporary)` fills a new file in the same folder,
    which then replaces `path`. A failed or interrupted write leaves the previous file as it
    was and no temporary file. A device or a pipe (`/dev/null`) is written in place.

    Raises InputError naming `path` when the system refuses the write (disk full, no permission).
    """
    target = path.resolve()  # through a link: the file it names is replaced, the link stays
    try:
        if target.exists() and not target.is_file():
            _write_through_a_file(write, target)
            return
        mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else 0o666 & ~_umask()
        handle, temporary = tempfile.mkstemp(
            prefix=f".{target.name}.", suffix=".tmp", dir=target.parent
        )
        os.close(handle)
        try:
            _write_reporting_os_errors(write, Path(temporary))
            _flush_to_disk(temporary)
            os.chmod(temporary, mode)
            os.replace(temporary, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
    except OSError as error:
        raise InputError(f"cannot write {path}: {error.strerror or error}") from None


def _resolved(path: Path, context: str) -> Path:
    try:
        return path.resolve()
    except RuntimeError:  # Python 3.11 raises it on a symbolic link loop
        raise InputError(f"{context}: a symbolic link loop") from None
    except OSError as error:
        raise InputError(f"{context}: {error.strerror or error}") from None


def _check_writable(path: Path, real: Path) -> None:
    if real.is_dir():
        raise InputError(f"cannot write {path}: it is a folder")
    if real.exists() and not real.is_file():  # a device or a pipe, written in place
        if not os.access(real, os.W_OK):
            raise InputError(f"cannot write {path}: permission denied")
        return
    folder = real.parent
    if not folder.is_dir():
        missing = "does not exist" if not folder.exists() else "is not a folder"
        raise InputError(f"cannot write {path}: the folder {folder} {missing}")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(f"cannot write {path}: the folder {folder} is not writable")
    if real.exists() and not os.access(real, os.W_OK):
        raise InputError(f"cannot write {path}: the file is read-only")


def _check_distinct(named: Mapping[str, Path], ids: Mapping[str, FileId | Path]) -> None:
    first_named: dict[FileId | Path, str] = {}
    for option, path in named.items():
        if ids[option] in first_named:
            raise InputError(
                f"cannot write {path}: {first_named[ids[option]]} and {option} are the same file"
            )
        first_named[ids[option]] = option


def _check_not_an_input(
    named: Mapping[str, Path], file_ids: Mapping[str, FileId | None], real_input: Path
) -> None:
    existing = {file_id: option for option, file_id in file_ids.items() if file_id}
    if not existing:  # no output exists yet, so none can be an input file
        return
    if real_input.is_file():
        input_id = _file_id(real_input)
        if input_id in existing:
            path = named[existing[input_id]]
            raise InputError(f"cannot write {path}: it is the input file {real_input}")
        return
    # an output outside the input folder (one inside is refused before) is one of its files
    # only as another name of it: a hard link, so a file with one link needs no walk
    existing = {
        file_id: option for file_id, option in existing.items() if _links(named[option]) > 1
    }
    if not existing:
        return
    for file_id, input_file in _input_files(real_input):
        if file_id in existing:
            path = named[existing[file_id]]
            raise InputError(f"cannot write {path}: it is the input file {input_file}")


def _links(path: Path) -> int:
    try:
        return path.stat().st_nlink
    except OSError:
        return 1


def _input_files(real_input: Path) -> Iterator[tuple[FileId, Path]]:
    """Every regular file under the input folder with its identity, one stat each. Like
    `intake.discover`, links met in a folder and version-control folders are passed over."""
    for folder, subfolders, names in os.walk(real_input):
        subfolders[:] = [name for name in subfolders if name not in SKIPPED_DIRS]
        for name in names:
            try:
                status = os.lstat(os.path.join(folder, name))
            except OSError:
                continue
            if stat.S_ISREG(status.st_mode):
                yield (status.st_dev, status.st_ino), Path(folder, name)


def _file_id(path: Path) -> FileId | None:
    try:
        status = path.stat()
    except OSError:
        return None
    return status.st_dev, status.st_ino


def _write_through_a_file(write: Callable[[Path], None], device: Path) -> None:
    """A device or a pipe gets the bytes `write` put in a temporary file, copied in plain
    writes: a writer that fails on a device (polars reports a full one as a broken Parquet
    footer) cannot then hide the system's own error."""
    with tempfile.TemporaryDirectory(prefix="forensics-") as scratch:
        staged = Path(scratch) / device.name
        _write_reporting_os_errors(write, staged)
        with staged.open("rb") as source, device.open("wb") as sink:
            shutil.copyfileobj(source, sink)


def _write_reporting_os_errors(write: Callable[[Path], None], where: Path) -> None:
    """`write(where)`, a failure of the system raised as the OSError it is even when the
    writer (polars) wraps it in an error of its own."""
    try:
        write(where)
    except OSError:
        raise
    except Exception as error:
        found = RUST_OS_ERROR.search(str(error))
        if found is None:
            raise
        number = int(found[1])
        raise OSError(number, os.strerror(number), str(where)) from error


def _flush_to_disk(path: str) -> None:
    """The bytes on disk before the rename: after a crash the old file or the new, never an
    empty one."""
    handle = os.open(path, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
