"""Finding and reading logs the way they arrive: folders, archives, compressed files, stdin,
torchrun restarts; what is skipped and why; nothing is written."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
import zstandard

from logforensics.api import analyze, analyze_upload
from logforensics.errors import InputError
from logforensics.intake import discover, parse_size, read_lines
from tests.builders import marks, write_logs
from tests.conftest import SAMPLE_LOGS

LAUNCHER_DATA = Path(__file__).parent / "data" / "launchers"
TWO_NODE_SAMPLE = SAMPLE_LOGS / "two_node_slurm" / "logs"
MEMBER_PREFIX = re.compile(r"^[^!]*!/")


def tree_digest(root: Path) -> dict[str, tuple[str, float]]:
    return {
        str(path): (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime)
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def tar_bytes(files: dict[str, bytes], compression: str = "") -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=f"w:{compression}" if compression else "w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def zip_bytes(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def packed(root: Path, kind: str) -> bytes:
    """`root`'s files packed as `kind`, with member paths relative to `root`."""
    files = {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }
    if kind == "zip":
        return zip_bytes(files)
    if kind == "tar.zst":
        return zstandard.ZstdCompressor().compress(tar_bytes(files))
    return tar_bytes(files, {"tar": "", "tar.gz": "gz", "tgz": "gz"}[kind])


RANK_FILES = {
    "node0/rank0.log": b"rank=0 step=0 stage=a\nrank=0 step=1 stage=a\n",
    "node1/rank1.log": b"rank=1 step=0 stage=a\r\nlast line without newline",
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
    assert reasons["core.bin.dump"] == "binary (not text)"
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


def test_small_files_read_while_listed_are_held_within_a_bound(tmp_path, monkeypatch):
    # thousands of small per-rank files are each read once, by the read that sniffs them; the
    # bytes held that way stop at a bound, and the files past it are read from disk later
    monkeypatch.setattr("logforensics.intake.READ_AHEAD_BYTES", 3_000)
    write_logs(tmp_path, {f"rank{rank}.log": marks(rank, steps=range(8)) for rank in range(8)})
    inventory = discover(tmp_path)
    held = [f for f in inventory.files if f.data is not None]
    assert 0 < sum(f.size for f in held) <= 3_000
    assert len(held) < len(inventory.files)
    assert all(f.data == f.path.read_bytes() for f in held)
    upload = analyze_upload(tmp_path)
    assert upload.jobs[0].job.ranks_seen == tuple(range(8)) and upload.jobs[0].verdict is None
    assert all(f.data is None for f in upload.inventory.files)  # let go once parsed


def test_invalid_utf8_is_replaced_and_counted(tmp_path):
    (tmp_path / "good.log").write_text("ok\n")
    (tmp_path / "bad.log").write_bytes(b"caf\xe9 rank=1 step=2 stage=x\n")
    lines = read_lines(discover(tmp_path).files)
    assert lines.lossy_files == ("bad.log",)
    assert (
        lines.frame.filter(lines.frame["file"] == "bad.log").item(0, "text")
        == "caf\ufffd rank=1 step=2 stage=x"
    )


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("rank1.log.gz", gzip.compress(b"rank=1 step=0 stage=a\n")),
        ("rank1.log.zst", zstandard.ZstdCompressor().compress(b"rank=1 step=0 stage=a\n")),
        ("rank1.log", gzip.compress(b"rank=1 step=0 stage=a\n")),  # sniffed, not named
    ],
)
def test_compressed_file_is_read(tmp_path, name, data):
    (tmp_path / name).write_bytes(data)
    lines = read_lines(discover(tmp_path).files).frame
    assert lines.rows() == [(name, 1, "rank=1 step=0 stage=a")]


def test_glob_characters_in_names_are_literal(tmp_path):
    (tmp_path / "rank[0].log").write_text("a\n")
    (tmp_path / "rank0.log").write_text("b\nc\n")
    lines = read_lines(discover(tmp_path).files).frame
    assert sorted(lines.get_column("file").to_list()) == ["rank0.log", "rank0.log", "rank[0].log"]


@pytest.mark.parametrize("kind", ["tar", "tar.gz", "tgz", "tar.zst", "zip"])
def test_archive_members_read_like_the_folder(tmp_path, kind):
    folder = write_logs(tmp_path / "logs", {})
    for name, data in RANK_FILES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    (tmp_path / "up").mkdir()
    archive = tmp_path / "up" / f"logs.{kind}"
    archive.write_bytes(packed(folder, kind))
    from_folder = read_lines(discover(folder).files).frame
    inventory = discover(archive)
    assert [f.name for f in inventory.files] == [f"logs.{kind}!/{name}" for name in RANK_FILES]
    from_archive = read_lines(inventory.files).frame
    assert from_archive.get_column("text").to_list() == from_folder.get_column("text").to_list()
    assert from_archive.get_column("line").to_list() == from_folder.get_column("line").to_list()
    assert [f.size for f in inventory.files] == [len(data) for data in RANK_FILES.values()]


def test_archives_inside_folders_and_inside_archives(tmp_path):
    inner = tar_bytes({"rank2.log": b"rank=2 step=0 stage=a\n"}, "gz")
    (tmp_path / "bundle.zip").write_bytes(
        zip_bytes({"node1/logs.tar.gz": inner, "rank3.log.gz": gzip.compress(b"rank=3\n")})
    )
    (tmp_path / "rank0.log").write_text("rank=0 step=0 stage=a\n")
    names = [f.name for f in discover(tmp_path).files]
    assert names == [
        "bundle.zip!/node1/logs.tar.gz!/rank2.log",
        "bundle.zip!/rank3.log.gz",
        "rank0.log",
    ]


def test_links_devices_and_escaping_members_are_skipped_with_a_reason(tmp_path):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, kind in [
            ("good.log", tarfile.REGTYPE),
            ("latest.log", tarfile.SYMTYPE),
            ("hard.log", tarfile.LNKTYPE),
            ("pipe", tarfile.FIFOTYPE),
            ("tty", tarfile.CHRTYPE),
            ("/etc/evil.log", tarfile.REGTYPE),
            ("../outside.log", tarfile.REGTYPE),
            ("node/../../up.log", tarfile.REGTYPE),
        ]:
            info = tarfile.TarInfo(name)
            info.type = kind
            data = b"rank=0 step=0 stage=a\n" if kind == tarfile.REGTYPE else b""
            info.size = len(data)
            if kind in (tarfile.SYMTYPE, tarfile.LNKTYPE):
                info.linkname = "good.log"
            tar.addfile(info, io.BytesIO(data))
    (tmp_path / "logs.tgz").write_bytes(buffer.getvalue())
    inventory = discover(tmp_path / "logs.tgz")
    assert [f.name for f in inventory.files] == ["logs.tgz!/good.log"]
    reasons = {skip.name: skip.reason for skip in inventory.skipped}
    assert "link" in reasons["logs.tgz!/latest.log"]
    assert "link" in reasons["logs.tgz!/hard.log"]
    assert "device or fifo" in reasons["logs.tgz!/pipe"]
    assert "device or fifo" in reasons["logs.tgz!/tty"]
    assert "absolute path" in reasons["logs.tgz!//etc/evil.log"]
    assert "'..'" in reasons["logs.tgz!/../outside.log"]
    assert "refused" in reasons["logs.tgz!/node/../../up.log"]


def test_zip_symlinks_and_escaping_members_are_skipped(tmp_path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("rank0.log", "rank=0 step=0 stage=a\n")
        link = zipfile.ZipInfo("latest.log")
        link.external_attr = 0o120777 << 16
        archive.writestr(link, "rank0.log")
        archive.writestr(zipfile.ZipInfo("../../etc/cron.d/x.log"), "boom\n")
    (tmp_path / "logs.zip").write_bytes(buffer.getvalue())
    inventory = discover(tmp_path / "logs.zip")
    assert [f.name for f in inventory.files] == ["logs.zip!/rank0.log"]
    reasons = {skip.name: skip.reason for skip in inventory.skipped}
    assert "link" in reasons["logs.zip!/latest.log"]
    assert "refused" in reasons["logs.zip!/../../etc/cron.d/x.log"]


def test_a_damaged_archive_keeps_what_was_read_before_the_damage(tmp_path):
    whole = tar_bytes(
        {f"rank{rank}.log": f"rank={rank} step=0 stage=a\n".encode() * 2000 for rank in range(4)},
        "gz",
    )
    (tmp_path / "cut.tar.gz").write_bytes(whole[: len(whole) * 2 // 3])
    (tmp_path / "garbage.zip").write_bytes(b"PK\x03\x04 not really a zip")
    inventory = discover(tmp_path)
    assert [f.name for f in inventory.files][:1] == ["cut.tar.gz!/rank0.log"]
    reasons = {skip.name: skip.reason for skip in inventory.skipped}
    assert reasons["cut.tar.gz"].startswith("truncated after")
    assert reasons["garbage.zip"].startswith("corrupt or truncated")


def test_invalid_utf8_inside_an_archive_is_replaced_and_counted(tmp_path):
    (tmp_path / "logs.zip").write_bytes(zip_bytes({"rank1.log": b"caf\xe9 rank=1\n"}))
    lines = read_lines(discover(tmp_path).files)
    assert lines.lossy_files == ("logs.zip!/rank1.log",)
    assert lines.frame.item(0, "text") == "caf\ufffd rank=1"


def test_the_member_that_goes_past_the_cap_is_skipped_not_the_run(tmp_path):
    big = gzip.compress(b"rank=0 step=0 stage=a\n" * 200_000)  # 4.4 MB from ~20 kB
    (tmp_path / "rank0.log.gz").write_bytes(big)
    (tmp_path / "rank1.log").write_text("rank=1 step=0 stage=a\n")
    assert len(big) < 100_000
    inventory = discover(tmp_path, max_bytes=1_000_000)
    assert [f.name for f in inventory.files] == ["rank1.log"]
    [skipped] = inventory.skipped
    assert skipped.name == "rank0.log.gz"
    assert "1,000,000 bytes" in skipped.reason and "--max-bytes" in skipped.reason
    assert len(discover(tmp_path, max_bytes=10_000_000).files) == 2


def test_zip_members_count_against_the_cap(tmp_path):
    members = {"big.log": b"x\n" * 1_500_000, "small.log": b"rank=0 step=0 stage=a\n"}
    (tmp_path / "logs.zip").write_bytes(zip_bytes(members))
    inventory = discover(tmp_path, max_bytes=2_000_000)
    assert [f.name for f in inventory.files] == ["logs.zip!/small.log"]
    assert "--max-bytes" in {s.name: s.reason for s in inventory.skipped}["logs.zip!/big.log"]


@pytest.mark.parametrize(
    ("text", "size"),
    [("4294967296", 2**32), ("4G", 4 * 2**30), ("512MiB", 512 * 2**20), ("100k", 102_400)],
)
def test_parse_size(text, size):
    assert parse_size(text) == size


def test_parse_size_refuses_nonsense():
    with pytest.raises(InputError, match="not a size"):
        parse_size("lots")


@pytest.mark.parametrize(
    ("data", "names"),
    [
        (b"rank=0 step=0 stage=a\n", ["<stdin>"]),
        (gzip.compress(b"rank=0 step=0 stage=a\n"), ["<stdin>"]),
        (
            tar_bytes({"node0/rank0.log": b"rank=0 step=0 stage=a\n"}, "gz"),
            ["<stdin>!/node0/rank0.log"],
        ),
        (zip_bytes({"rank0.log": b"rank=0 step=0 stage=a\n"}), ["<stdin>!/rank0.log"]),
    ],
)
def test_standard_input_plain_or_compressed(data, names):
    inventory = discover(Path("-"), stdin=io.BytesIO(data))
    assert [f.name for f in inventory.files] == names
    assert read_lines(inventory.files).frame.get_column("text").to_list() == [
        "rank=0 step=0 stage=a"
    ]


RESTART_TREE = LAUNCHER_DATA / "torchrun" / "restart" / "logs"


def test_latest_torchrun_attempt_is_analysed_and_the_others_listed():
    inventory = discover(RESTART_TREE)
    assert (inventory.attempt, inventory.attempts) == (1, (0, 1))
    assert {f.name.split("/")[1] for f in inventory.files} == {"attempt_1"}
    assert len(inventory.files) == 4
    older = [skip for skip in inventory.skipped if "/attempt_0/" in skip.name]
    assert len(older) == 4
    assert all("--attempt 0" in skip.reason for skip in older)


def test_attempt_can_be_chosen():
    inventory = discover(RESTART_TREE, attempt=0)
    lines = read_lines(inventory.files).frame
    assert "RuntimeError: rank 1 fails in attempt 0" in lines.get_column("text").to_list()
    with pytest.raises(InputError, match="no torchrun attempt_7") as raised:
        discover(RESTART_TREE, attempt=7)
    assert "attempts found: 0, 1" in raised.value.hint


def test_torchrun_error_files_are_read_as_records(tmp_path):
    error = {
        "message": {
            "message": "RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/"
            "unbound_buffer.cc:78] Timed out waiting 20000ms for recv operation to complete",
            "extraInfo": {
                "py_callstack": "Traceback (most recent call last):\n  ...\n",
                "timestamp": "1796051091",
            },
        }
    }
    write_logs(tmp_path, {"run_x/attempt_0/2/stdout.log": marks(2, [0])})
    (tmp_path / "run_x/attempt_0/2/error.json").write_text(json.dumps(error))
    inventory = discover(tmp_path)
    assert [f.name for f in inventory.files] == ["run_x/attempt_0/2/stdout.log"]
    assert inventory.skipped == ()
    (record,) = inventory.error_files
    assert (record.name, record.exc_type) == ("run_x/attempt_0/2/error.json", "RuntimeError")
    assert record.exc_message.endswith("Timed out waiting 20000ms for recv operation to complete")
    assert record.timestamp.isoformat() == "2026-11-30T15:04:51"
    assert record.traceback.startswith("Traceback")


def test_reading_changes_nothing(tmp_path):
    (tmp_path / "bad.log").write_bytes(b"\xff\xfe rank=1\r\n")
    (tmp_path / "logs.tar.gz").write_bytes(tar_bytes({"a/rank0.log": b"rank=0\n"}, "gz"))
    (tmp_path / "logs.zip").write_bytes(zip_bytes({"a/rank1.log": b"rank=1\n"}))
    before = tree_digest(tmp_path)
    read_lines(discover(tmp_path).files)
    assert tree_digest(tmp_path) == before
    assert sorted(path.name for path in tmp_path.rglob("*")) == [
        "bad.log",
        "logs.tar.gz",
        "logs.zip",
    ]


def findings_without_archive_names(path: Path) -> list[dict]:
    """The findings as a user reads them, member paths shown relative to the archive."""
    analysis = analyze(path)
    return [
        {
            "kind": found.kind,
            "ranks": found.ranks,
            "step": found.step,
            "summary": found.summary,
            "evidence": [
                (MEMBER_PREFIX.sub("", item.file), item.line, item.text, item.rank)
                for item in found.evidence
            ],
        }
        for found in analysis.findings
    ]


@pytest.mark.parametrize("kind", ["tar.gz", "zip"])
def test_two_node_slurm_sample_gives_the_same_findings_packed(tmp_path, kind):
    unpacked = findings_without_archive_names(TWO_NODE_SAMPLE)
    archive = tmp_path / f"logs.{kind}"
    archive.write_bytes(packed(TWO_NODE_SAMPLE, kind))
    assert findings_without_archive_names(archive) == unpacked
    assert unpacked[0]["kind"] == "stage_divergence" and unpacked[0]["ranks"] == [3]


def forensics(*args: str, cwd: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "logforensics", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        timeout=120,
    )


def test_cli_reads_an_archive_from_standard_input(tmp_path):
    data = packed(TWO_NODE_SAMPLE, "tar.gz")
    result = forensics("analyze", "-", "-f", "json", "-o", "-", cwd=tmp_path, stdin=data)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["verdict"]["kind"] == "stage_divergence" and report["verdict"]["ranks"] == [3]
    listed = [entry["file"] for entry in report["inputs"]["file_list"]]
    assert "<stdin>!/slurm-4242.out" in listed and len(listed) == 9
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--max-bytes", "1"], "--max-bytes"),
        (["--attempt", "3"], "no torchrun attempt_3"),
        (["--rank-from-path", "gpu(\\d+)"], "no named group 'rank'"),
        (["--max-bytes", "many"], "not a size"),
    ],
)
def test_cli_input_problems_are_one_line_and_exit_2(tmp_path, args, says):
    result = forensics("analyze", str(TWO_NODE_SAMPLE), *args, cwd=tmp_path)
    stderr = result.stderr.decode()
    assert result.returncode == 2, stderr
    assert says in stderr and stderr.strip().count("\n") == 0 and "Traceback" not in stderr


def test_zip_of_kubectl_logs_per_kubeflow_pod(tmp_path):
    # `kubectl logs <pod> --timestamps` per PyTorchJob pod, 2 processes per pod (torchrun --tee)
    def pod_log(node: int) -> bytes:
        lines = []
        for local in (0, 1):
            rank = 2 * node + local
            stamp = f"2026-11-30T15:24:0{local}.123456789Z"
            if local == 0:
                lines.append(
                    f"{stamp} [default0]:{{'rank': {rank}, 'local_rank': 0, 'device': 0, "
                    "'world_size': 4}"
                )
            lines.append(f"{stamp} [default{local}]:loader sizes: [3, 3, 3, 3]")
        return ("\n".join(lines) + "\n").encode()

    (tmp_path / "pods.zip").write_bytes(
        zip_bytes({"mnist-master-0.log": pod_log(0), "mnist-worker-0.log": pod_log(1)})
    )
    events = analyze(tmp_path / "pods.zip").job.events
    sizes = events.filter(events["values"].is_not_null()).sort("file", "line")
    assert sizes.get_column("rank").to_list() == [0, 1, 2, 3]
    assert sizes.get_column("rank_from").to_list()[1::2] == ["node_offset", "node_offset"]
    assert sizes.get_column("timestamp").null_count() == 0
