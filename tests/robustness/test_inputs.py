"""Broken and hostile input: each file's failure is that file's, memory never follows a number
or a size the input claims, and nothing read is ever changed.

The inputs are written by `tests/robustness/nasty.py` at sizes a test can afford (a bomb of
256 MiB is enough to trip the bomb check, which looks at the first 64 MiB);
`bench/robustness.py` runs the full-size ones (8 GiB, 300 MB) and measures their memory.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from logforensics import streams
from logforensics.api import analyze
from logforensics.intake import discover
from tests.robustness import nasty

ROOT = Path(__file__).resolve().parents[2]
SKIP_SAMPLE = ROOT / "sample_logs" / "skip_backward_hang" / "logs"
BOMB = 256 * 2**20


def forensics(*args: str, cwd: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "logforensics", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        timeout=300,
    )


def snapshot(folder: Path) -> dict[str, tuple[str, int, int]]:
    """Every file under `folder`: its bytes' hash, inode and modification time."""
    found = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            stat = path.stat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            found[str(path.relative_to(folder))] = (digest, stat.st_ino, stat.st_mtime_ns)
    return found


def good_logs(folder: Path) -> Path:
    """A real run's logs (rank 2 skips a step, the job hangs): what a bomb sits beside."""
    shutil.copytree(SKIP_SAMPLE, folder)
    return folder


def verdict_of(folder: Path) -> tuple[str, list[int], int | None]:
    finding = analyze(folder).verdict.finding
    return finding.kind, finding.ranks, finding.step


def skipped_reasons(folder: Path) -> dict[str, str]:
    return {skip.name: skip.reason for skip in discover(folder).skipped}


# --- bombs ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "write"),
    [
        ("zeros.log.gz", nasty.gzip_bomb),
        ("zeros.log.zst", nasty.zstd_bomb),
    ],
)
def test_a_bomb_beside_good_logs_is_skipped_and_the_verdict_stands(tmp_path, name, write):
    logs = good_logs(tmp_path / "logs")
    expected = verdict_of(logs)
    write(logs / name, BOMB)
    before = snapshot(logs)
    assert verdict_of(logs) == expected
    assert "decompression bomb" in skipped_reasons(logs)[name]
    assert snapshot(logs) == before


def test_a_zip_bomb_is_refused_from_its_declared_sizes_and_its_siblings_read(tmp_path):
    nasty.zip_bomb(tmp_path / "logs.zip", BOMB, beside={"rank0.log": nasty.rank_log(0)})
    inventory = discover(tmp_path)
    assert [f.name for f in inventory.files] == ["logs.zip!/rank0.log"]
    assert (
        "decompression bomb" in {s.name: s.reason for s in inventory.skipped}["logs.zip!/zeros.log"]
    )


def test_a_bomb_nested_in_a_tar_is_skipped(tmp_path):
    bomb = nasty.gzip_bomb(tmp_path / "zeros.log.gz", BOMB)
    upload = tmp_path / "upload"
    upload.mkdir()
    nasty.tar_of(
        upload / "upload.tar",
        {"inner/zeros.log.gz": bomb, "inner/rank0.log": nasty.rank_log(0).encode()},
    )
    inventory = discover(upload)
    assert [f.name for f in inventory.files] == ["upload.tar!/inner/rank0.log"]
    assert (
        "decompression bomb"
        in {s.name: s.reason for s in inventory.skipped}["upload.tar!/inner/zeros.log.gz"]
    )


def test_a_bomb_on_standard_input_is_one_line_and_exit_2(tmp_path):
    bomb = nasty.gzip_bomb(tmp_path / "zeros.gz", BOMB).read_bytes()
    result = forensics("analyze", "-", "-f", "json", "-o", "-", cwd=tmp_path, stdin=bomb)
    stderr = result.stderr.decode()
    assert result.returncode == 2, stderr
    assert "decompression bomb" in stderr and stderr.strip().count("\n") == 0


def test_the_cap_skips_the_member_past_it_not_the_run(tmp_path):
    logs = good_logs(tmp_path / "logs")
    expected = verdict_of(logs)
    (logs / "big.log.gz").write_bytes(gzip.compress(b"noise line\n" * 400_000))  # 4.4 MB
    result = forensics(
        "analyze", str(logs), "-f", "json", "-o", "report.json", "--max-bytes", "1M", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert (report["verdict"]["kind"], report["verdict"]["ranks"]) == expected[:2]
    reasons = {skip["file"]: skip["reason"] for skip in report["inputs"]["skipped"]}
    assert "--max-bytes" in reasons["big.log.gz"]


# --- damage is the damaged file's -----------------------------------------------------------


@pytest.mark.parametrize("write", [nasty.truncated_gzip, nasty.truncated_zstd])
def test_a_truncated_compressed_log_keeps_what_came_before_the_cut(tmp_path, write):
    name = "rank0.log.gz" if write is nasty.truncated_gzip else "rank0.log.zst"
    text = nasty.rank_log(0, steps=3000)
    write(tmp_path / name, text)
    inventory = discover(tmp_path)
    [read] = inventory.files
    lines = (read.data or read.location.read_bytes()).decode().splitlines()
    assert 0 < len(lines) < text.count("\n")
    assert text.startswith("\n".join(lines[:-1]))  # every whole line read is the writer's
    assert "truncated" in {s.name: s.reason for s in inventory.skipped}[name]


def test_a_damaged_zip_member_does_not_lose_its_siblings(tmp_path):
    members = {f"rank{rank}.log": nasty.rank_log(rank) for rank in range(3)}
    nasty.zip_with_a_corrupt_first_member(tmp_path / "logs.zip", members)
    inventory = discover(tmp_path)
    assert [f.name for f in inventory.files] == ["logs.zip!/rank1.log", "logs.zip!/rank2.log"]
    assert "corrupt" in {s.name: s.reason for s in inventory.skipped}["logs.zip!/rank0.log"]


def test_an_unreadable_folder_is_listed_not_silently_lost(tmp_path, monkeypatch):
    # (run as root, a mode-000 folder is still readable: the refusal is simulated)
    logs = good_logs(tmp_path / "logs")
    locked = logs / "torchrun"
    real_scandir = os.scandir

    def refusing(folder):
        if Path(folder) == locked:
            raise PermissionError(13, "Permission denied", str(folder))
        return real_scandir(folder)

    monkeypatch.setattr(os, "scandir", refusing)
    assert skipped_reasons(logs)["torchrun/"] == "folder not readable (Permission denied)"


@pytest.mark.parametrize(
    ("write", "remark"),
    [
        (nasty.utf16, "UTF-16"),
        (lambda path, text: nasty.with_hole(path, text, 100_000), "NUL bytes"),
        (nasty.cr_only, "CR alone"),
    ],
    ids=["utf16", "copytruncate-hole", "cr-only"],
)
def test_text_in_another_shape_is_read_as_its_writer_meant(tmp_path, write, remark):
    for rank in range(4):
        (tmp_path / f"rank{rank}.log").write_text(nasty.rank_log(rank, steps=8))
    skipping = nasty.rank_log(2, steps=8).replace(
        "2026-11-30 15:04:05,002 INFO rank=2 step=5 stage=after_backward\n", ""
    )
    write(tmp_path / "rank2.log", skipping)
    analysis = analyze(tmp_path)
    assert (analysis.verdict.finding.kind, analysis.verdict.finding.ranks) == (
        "stage_divergence",
        [2],
    )
    assert analysis.verdict.finding.step == 5
    notes = {note.name: note.reason for note in analysis.job.inventory.notes}
    assert remark in notes["rank2.log"]


@pytest.mark.parametrize("write", [nasty.deep_error_json, nasty.far_future_error_json])
def test_a_broken_torchrun_error_file_is_that_files_problem(tmp_path, write):
    logs = good_logs(tmp_path / "logs")
    expected = verdict_of(logs)
    error_file = next(logs.rglob("error.json"))
    write(error_file)
    assert verdict_of(logs) == expected


# --- long lines ---------------------------------------------------------------------------


def test_an_overlong_line_is_cut_to_its_ends_and_the_marks_around_it_read(tmp_path):
    before, after = (
        nasty.rank_log(0, steps=2),
        nasty.rank_log(0, steps=4)[len(nasty.rank_log(0, 2)) :],
    )
    nasty.long_line(tmp_path / "rank0.log", 5 * 2**20, before=before, after=after)
    (tmp_path / "rank1.log").write_text(nasty.rank_log(1, steps=4))
    analysis = analyze(tmp_path)
    assert analysis.job.progress is not None
    steps = analysis.job.progress.marks.group_by("rank").agg(
        analysis.job.progress.marks["step"].max()
    )
    assert dict(steps.rows()) == {0: 3, 1: 3}
    assert analysis.lines == 2 * 16 + 1


def test_the_block_reader_cuts_an_overlong_line_without_holding_it(tmp_path, monkeypatch):
    from logforensics import chunks

    monkeypatch.setattr(chunks, "CHUNK_BYTES", 2**20)  # files over 2 MiB are read in blocks
    path = nasty.long_line(tmp_path / "rank0.log", 6 * 2**20, before="first\n", after="last\n")
    [log_file] = discover(tmp_path).files
    assert chunks.is_large(log_file)
    texts = [text for chunk in chunks.file_chunks(log_file) for text in chunk.lines["text"]]
    assert texts[0] == "first" and texts[-1] == "last"
    assert max(len(text) for text in texts) < streams.MAX_LINE + streams.KEEP + 100
    assert "bytes of this line cut" in texts[1]
    assert path.stat().st_size > 6 * 2**20


# --- many members -------------------------------------------------------------------------


def test_thousands_of_members_are_read_together(tmp_path):
    nasty.many_members(tmp_path / "parts.tar.gz", 3_000)
    analysis = analyze(tmp_path)
    assert len(analysis.job.inventory.files) == 3_000
    assert analysis.lines == 3_000 and analysis.recognised_lines == 3_000
