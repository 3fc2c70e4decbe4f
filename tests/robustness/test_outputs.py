"""Outputs are checked before any input is read and written whole or not at all. What a user
sees: the exit code, one line on stderr naming the path, and the files left on disk."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from logforensics import api, cli, schema
from logforensics.errors import InputError
from logforensics.outputs import write_atomically
from tests.test_cli import SKIP_SAMPLE, forensics


def invoke(*args: str, never_read: pytest.MonkeyPatch | None = None) -> tuple[int, str]:
    """The command run in this process: its exit code and stderr. With `never_read`, reading
    the input fails the test (exit 3), so an exit 2 shows the refusal came first."""
    if never_read is not None:

        def read(*_args: object, **_kwargs: object) -> None:
            raise AssertionError("the input was read")

        never_read.setattr(api, "analyze_upload", read)
    result = CliRunner().invoke(cli.app, ["analyze", *args])
    return result.exit_code, result.stderr


def copied_logs(folder: Path) -> Path:
    """A copy of the sample logs, files that a hard link may share."""
    for source in SKIP_SAMPLE.rglob("*"):
        if source.is_file():
            copy = folder / source.relative_to(SKIP_SAMPLE)
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_bytes(source.read_bytes())
    return folder


def one_line(stderr: str) -> str:
    assert stderr.endswith("\n") and stderr.count("\n") == 1, stderr
    assert "Traceback" not in stderr
    return stderr.rstrip("\n")


# --- refused before anything is read ----------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "path"), [("--out", "nope/r.html"), ("--events", "nope/events.parquet")]
)
def test_an_output_in_a_missing_folder_is_refused_before_reading(
    tmp_path, monkeypatch, option, path
):
    monkeypatch.chdir(tmp_path)
    code, stderr = invoke(str(SKIP_SAMPLE), option, path, never_read=monkeypatch)
    assert code == 2
    message = one_line(stderr)
    assert message.startswith(f"forensics: error: cannot write {path}: the folder ")
    assert message.endswith("nope does not exist")
    assert sorted(tmp_path.iterdir()) == []


def test_an_output_in_a_read_only_folder_is_refused_before_reading(tmp_path, monkeypatch):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    if os.geteuid() == 0:  # root writes anywhere: answer as the kernel would answer a user
        real_access = os.access
        monkeypatch.setattr(
            os, "access", lambda path, *how: Path(path) != locked and real_access(path, *how)
        )
    monkeypatch.chdir(tmp_path)
    code, stderr = invoke(str(SKIP_SAMPLE), "-o", "locked/r.html", never_read=monkeypatch)
    assert code == 2
    assert one_line(stderr) == (
        f"forensics: error: cannot write locked/r.html: the folder {locked} is not writable"
    )
    assert list(locked.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("-o", "r.html", "--events", "r.html"), "r.html: --out and --events are the same file"),
        (
            ("-o", "r.css", "--html-assets", "external"),
            "r.css: --out and the stylesheet of --html-assets external are the same file",
        ),
        (
            ("-o", "r.html", "--events", "sub/../r.html"),
            "sub/../r.html: --out and --events are the same file",
        ),
    ],
)
def test_two_outputs_on_one_file_are_refused_before_reading(tmp_path, monkeypatch, args, said):
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path)
    code, stderr = invoke(str(SKIP_SAMPLE), *args, never_read=monkeypatch)
    assert code == 2
    assert one_line(stderr) == f"forensics: error: cannot write {said}"
    assert [path.name for path in tmp_path.iterdir()] == ["sub"]


def test_a_hard_link_of_an_input_file_is_refused_not_overwritten(tmp_path):
    logs = copied_logs(tmp_path / "logs")
    launcher = logs / "launcher.log"
    before = launcher.read_bytes()
    os.link(launcher, tmp_path / "report.html")
    result = forensics("analyze", "logs", "-o", "report.html", cwd=tmp_path)
    assert result.returncode == 2
    assert one_line(result.stderr) == (
        f"forensics: error: cannot write report.html: it is the input file {launcher.resolve()}"
    )
    assert launcher.read_bytes() == before
    assert launcher.stat().st_nlink == 2


@pytest.mark.parametrize("link", [False, True])
def test_the_input_file_itself_is_refused(tmp_path, link):
    log = tmp_path / "rank0.log"
    log.write_bytes((SKIP_SAMPLE / "launcher.log").read_bytes())
    out = "rank0.log"
    if link:
        (tmp_path / "out.html").symlink_to(log)
        out = "out.html"
    result = forensics("analyze", "rank0.log", "-o", out, "--events", "e.parquet", cwd=tmp_path)
    assert result.returncode == 2
    assert one_line(result.stderr) == (
        f"forensics: error: cannot write {out}: it is the input file {log.resolve()}"
    )
    assert log.read_bytes() == (SKIP_SAMPLE / "launcher.log").read_bytes()
    assert not (tmp_path / "e.parquet").exists()


def test_events_inside_the_input_are_refused(tmp_path):
    logs = copied_logs(tmp_path / "logs")
    result = forensics("analyze", "logs", "--events", "logs/e.parquet", cwd=tmp_path)
    assert result.returncode == 2
    assert one_line(result.stderr) == (
        "forensics: error: cannot write logs/e.parquet: it is inside the input logs "
        "(write it outside the logs)"
    )
    assert not (logs / "e.parquet").exists() and not (tmp_path / "forensics-report.html").exists()


def test_events_to_standard_output_is_refused(tmp_path):
    result = forensics("analyze", str(SKIP_SAMPLE), "--events", "-", cwd=tmp_path)
    assert result.returncode == 2
    assert "--events -" in one_line(result.stderr)
    assert list(tmp_path.iterdir()) == []


# --- written whole or not at all --------------------------------------------------------------


def test_a_new_report_replaces_the_old_one_without_truncating_it(tmp_path):
    """Another name of the old report (a hard link, an open reader) keeps the old bytes: the
    new report is a new file renamed over the old name."""
    (tmp_path / "forensics-report.html").write_text("old report")
    os.link(tmp_path / "forensics-report.html", tmp_path / "kept.html")
    result = forensics("analyze", str(SKIP_SAMPLE), "--events", "e.parquet", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "kept.html").read_text() == "old report"
    assert "verdict" in (tmp_path / "forensics-report.html").read_text()
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "e.parquet",
        "forensics-report.html",
        "kept.html",
    ]


def test_new_outputs_get_the_usual_permissions(tmp_path):
    result = forensics("analyze", str(SKIP_SAMPLE), "--events", "e.parquet", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    umask = os.umask(0)
    os.umask(umask)
    for name in ("forensics-report.html", "e.parquet"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o666 & ~umask


def test_a_report_through_a_link_updates_the_file_the_link_names(tmp_path):
    (tmp_path / "reports").mkdir()
    (tmp_path / "latest.html").symlink_to("reports/today.html")
    result = forensics("analyze", str(SKIP_SAMPLE), "-o", "latest.html", "-q", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "latest.html").is_symlink()
    assert "verdict" in (tmp_path / "reports" / "today.html").read_text()


def test_a_disk_full_while_writing_events_leaves_the_old_file_and_no_temporary(
    tmp_path, monkeypatch
):
    (tmp_path / "e.parquet").write_bytes(b"old events")

    def disk_full(events: pl.DataFrame, path: str) -> None:
        Path(path).write_bytes(b"PAR1 half")
        raise pl.exceptions.ComputeError(
            "parquet: File out of specification: underlying IO error: "
            "No space left on device (os error 28)"
        )

    monkeypatch.setattr(schema, "write_parquet", disk_full)
    monkeypatch.chdir(tmp_path)
    code, stderr = invoke(str(SKIP_SAMPLE), "--events", "e.parquet", "-q")
    assert code == 2
    assert one_line(stderr) == ("forensics: error: cannot write e.parquet: No space left on device")
    assert (tmp_path / "e.parquet").read_bytes() == b"old events"
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "e.parquet",
        "forensics-report.html",
    ]


def full_device(tmp_path: Path) -> Path:
    """A device every write to fails with ENOSPC: /dev/full, or for root (who may write in
    /dev) a twin of it in tmp_path, so that a bug replacing it cannot break the machine's."""
    if os.geteuid() != 0:
        return Path("/dev/full")
    twin = tmp_path / "full"
    try:
        os.mknod(twin, stat.S_IFCHR | 0o666, os.makedev(1, 7))
        with twin.open("wb") as probe:
            probe.write(b"x")
    except OSError as error:
        if error.errno != errno.ENOSPC:
            pytest.skip(f"no full device: {error}")
    return twin


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
def test_events_on_a_full_device_is_one_line_naming_the_events_file(tmp_path):
    full = full_device(tmp_path)
    result = forensics("analyze", str(SKIP_SAMPLE), "--events", str(full), cwd=tmp_path)
    assert result.returncode == 2
    assert one_line(result.stderr) == (
        f"forensics: error: cannot write {full}: No space left on device"
    )
    assert stat.S_ISCHR(full.stat().st_mode)


def test_events_into_a_missing_folder_names_the_events_file(tmp_path):
    result = forensics("analyze", str(SKIP_SAMPLE), "--events", "gone/e.parquet", cwd=tmp_path)
    assert result.returncode == 2
    message = one_line(result.stderr)
    assert "cannot write gone/e.parquet: the folder" in message and "report" not in message


@pytest.mark.parametrize(
    "failure", [OSError(errno.ENOSPC, "No space left on device"), KeyboardInterrupt()]
)
def test_an_interrupted_write_leaves_the_previous_file_and_no_temporary(tmp_path, failure):
    report = tmp_path / "report.html"
    report.write_text("previous report")

    def write_half(temporary: Path) -> None:
        temporary.write_text("half a rep")
        raise failure

    with pytest.raises(InputError if isinstance(failure, OSError) else KeyboardInterrupt) as got:
        write_atomically(report, write_half)
    if isinstance(failure, OSError):
        assert str(got.value) == f"cannot write {report}: No space left on device"
    assert report.read_text() == "previous report"
    assert list(tmp_path.iterdir()) == [report]
