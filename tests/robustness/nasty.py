"""Nasty inputs, written on demand (no blobs are committed): bombs, cut archives, one huge line,
holes, other encodings, thousands of members. The tests use small sizes; `bench/robustness.py`
writes the full-size ones (an 8 GiB bomb, a 300 MB line) and measures what they cost.

    python -m tests.robustness.nasty OUT_FOLDER   # writes the full-size set into OUT_FOLDER
"""

from __future__ import annotations

import codecs
import gzip
import io
import sys
import tarfile
import zipfile
import zlib
from pathlib import Path

import zstandard

BLOCK = 2**20
STAGES = ("before_forward", "before_backward", "after_backward", "after_step")


def rank_log(rank: int, steps: int = 6) -> str:
    """A rank's stage marks, as the samples' training loops print them."""
    return "".join(
        f"2026-11-30 15:04:{step:02d},{rank:03d} INFO rank={rank} step={step} stage={stage}\n"
        for step in range(steps)
        for stage in STAGES
    )


def gzip_bomb(path: Path, size: int) -> Path:
    """`size` zero bytes, gzip-compressed a block at a time (never held whole)."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, 31)
    with path.open("wb") as out:
        zeros = bytes(BLOCK)
        for _ in range(size // BLOCK):
            out.write(deflate.compress(zeros))
        out.write(deflate.flush())
    return path


def zstd_bomb(path: Path, size: int) -> Path:
    with path.open("wb") as out, zstandard.ZstdCompressor(level=19).stream_writer(out) as writer:
        zeros = bytes(BLOCK)
        for _ in range(size // BLOCK):
            writer.write(zeros)
    return path


def zip_bomb(path: Path, size: int, beside: dict[str, str] | None = None) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open("zeros.log", "w", force_zip64=True) as member:
            zeros = bytes(BLOCK)
            for _ in range(size // BLOCK):
                member.write(zeros)
        for name, text in (beside or {}).items():
            archive.writestr(name, text)
    return path


def tar_of(path: Path, members: dict[str, bytes | Path], compression: str = "") -> Path:
    """A tar holding `members` (bytes, or a file to add as it is)."""
    with tarfile.open(path, f"w:{compression}" if compression else "w") as archive:
        for name, content in members.items():
            if isinstance(content, Path):
                archive.add(content, arcname=name)
            else:
                info = tarfile.TarInfo(name)
                info.size = len(content)
                archive.addfile(info, io.BytesIO(content))
    return path


def many_members(path: Path, count: int) -> Path:
    """A tar.gz of `count` tiny logs (one mark each)."""
    with tarfile.open(path, "w:gz") as archive:
        for index in range(count):
            data = f"rank={index % 4} step={index} stage=before_forward\n".encode()
            info = tarfile.TarInfo(f"logs/part{index:06d}.log")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def long_line(path: Path, size: int, before: str = "", after: str = "") -> Path:
    """A log whose one line (a runaway print) is `size` bytes, written a block at a time."""
    with path.open("wb") as out:
        out.write(before.encode())
        block = b"x" * BLOCK
        for _ in range(size // BLOCK):
            out.write(block)
        out.write(b"\n" + after.encode())
    return path


def cut(data: bytes, keep: float = 0.6) -> bytes:
    """`data` cut short, as a killed writer or a failed upload leaves it."""
    return data[: int(len(data) * keep)]


def truncated_gzip(path: Path, text: str) -> Path:
    path.write_bytes(cut(gzip.compress(text.encode())))
    return path


def truncated_zstd(path: Path, text: str) -> Path:
    path.write_bytes(cut(zstandard.ZstdCompressor().compress(text.encode())))
    return path


def zip_with_a_corrupt_first_member(path: Path, members: dict[str, str]) -> Path:
    """A zip whose first member's compressed bytes are damaged; the others are intact."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in members.items():
            archive.writestr(name, text)
    data = bytearray(buffer.getvalue())
    header = 30 + len(next(iter(members)))  # local header and the first member's name
    for at in range(header + 2, header + 40):
        data[at] ^= 0xFF
    path.write_bytes(bytes(data))
    return path


def utf16(path: Path, text: str) -> Path:
    path.write_bytes(codecs.BOM_UTF16_LE + text.encode("utf-16-le"))
    return path


def with_hole(path: Path, text: str, hole: int) -> Path:
    """What copytruncate leaves: the writer went on at its old offset, a run of NUL before."""
    path.write_bytes(bytes(hole) + text.encode())
    return path


def cr_only(path: Path, text: str) -> Path:
    path.write_bytes(text.replace("\n", "\r").encode())
    return path


def deep_error_json(path: Path, depth: int = 200_000) -> Path:
    path.write_text("[" * depth + "]" * depth)
    return path


def far_future_error_json(path: Path) -> Path:
    path.write_text(
        '{"message": {"message": "RuntimeError: boom", "extraInfo": {"py_callstack": "x", '
        '"timestamp": "100000000000000000000"}}}'
    )
    return path


def full_size(out: Path) -> dict[str, Path]:
    """The issue's full-size inputs, each in a folder of its own beside nothing or good logs."""
    out.mkdir(parents=True, exist_ok=True)
    made: dict[str, Path] = {}

    def folder(name: str) -> Path:
        path = out / name
        path.mkdir(exist_ok=True)
        made[name] = path
        return path

    gib8 = 8 * 2**30
    gzip_bomb(folder("gzip bomb, 8 GiB") / "zeros.log.gz", gib8)
    zstd_bomb(folder("zstd bomb, 8 GiB") / "zeros.log.zst", gib8)
    zip_bomb(folder("zip bomb, 8 GiB") / "zeros.zip", gib8)
    beside = folder("gzip bomb beside good logs")
    for rank in range(4):
        (beside / f"rank{rank}.log").write_text(rank_log(rank))
    (beside / "zeros.log.gz").write_bytes((made["gzip bomb, 8 GiB"] / "zeros.log.gz").read_bytes())
    tar_of(
        folder("gzip bomb in a tar") / "upload.tar",
        {"inner/zeros.log.gz": made["gzip bomb, 8 GiB"] / "zeros.log.gz"},
    )
    long_line(folder("one 300 MB line") / "rank0.log", 300 * 2**20, before=rank_log(0))
    many_members(folder("300,000 members") / "parts.tar.gz", 300_000)
    return made


if __name__ == "__main__":
    for name, path in full_size(Path(sys.argv[1])).items():
        print(f"{name}: {path}")
