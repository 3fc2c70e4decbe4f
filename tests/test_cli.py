"""The command as a user runs it: exit codes, outputs, and what it refuses to do."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest

from tests.builders import marks, write_logs
from tests.conftest import SAMPLE_LOGS

SKIP_SAMPLE = SAMPLE_LOGS / "skip_backward_hang" / "logs"
HEALTHY_SAMPLE = SAMPLE_LOGS / "skip_flag_fixed" / "logs"


def forensics(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "logforensics", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_default_writes_html_report_in_current_folder(tmp_path):
    result = forensics("analyze", str(SKIP_SAMPLE), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "forensics-report.html").is_file()
    assert "verdict: Rank 2 skipped part of step 5 after a NaN loss;" in result.stderr
    assert "  error  stage_divergence  " in result.stderr
    assert f"report: {tmp_path.resolve() / 'forensics-report.html'}" in result.stderr


def test_json_report_has_the_documented_shape(tmp_path):
    result = forensics(
        "analyze", str(SKIP_SAMPLE), "--format", "json", "--out", "r.json", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["schema"] == "logforensics/report@2"
    assert {"world_size", "verdict", "findings", "ranks", "inputs"} <= set(report)
    assert set(report["verdict"]) >= {"kind", "rule", "ranks", "step", "stage", "summary"}
    for finding in report["findings"]:
        assert set(finding) >= {
            "kind",
            "rule",
            "severity",
            "role",
            "ranks",
            "step",
            "stage",
            "op",
            "seq",
            "summary",
            "fix",
            "evidence",
        }
        for evidence in finding["evidence"]:
            assert set(evidence) >= {"file", "line", "text"}
    for rank in report["ranks"]:
        assert set(rank) >= {"rank", "host", "files", "last_step", "last_stage"}
    assert set(report["inputs"]) >= {"files", "lines", "unrecognised_lines", "bytes"}
    unrecognised = report["inputs"]["unrecognised_lines"]
    assert isinstance(unrecognised, int) and report["inputs"]["lines"] >= unrecognised >= 0


def test_json_to_stdout(tmp_path):
    result = forensics("analyze", str(SKIP_SAMPLE), "-f", "json", "-o", "-", cwd=tmp_path)
    assert json.loads(result.stdout)["verdict"]["kind"] == "stage_divergence"
    assert list(tmp_path.iterdir()) == []


def test_json_kind_is_the_diagnosis_and_rule_the_finer_fact(tmp_path):
    # sample_logs/flight_recorder_mismatch: the Flight Recorder dumps show rank 3 skipping
    # collective #19; a reader and CI key on the diagnosis, the rule says how it was found
    logs = SAMPLE_LOGS / "flight_recorder_mismatch" / "logs"
    result = forensics("analyze", str(logs), "-f", "json", "-o", "-", cwd=tmp_path)
    verdict = json.loads(result.stdout)["verdict"]
    assert (verdict["kind"], verdict["rule"], verdict["ranks"]) == (
        "stage_divergence",
        "fr_mismatch",
        [3],
    )


def test_same_input_same_json(tmp_path):
    first = forensics("analyze", str(SKIP_SAMPLE), "-f", "json", "-o", "-", cwd=tmp_path).stdout
    second = forensics("analyze", str(SKIP_SAMPLE), "-f", "json", "-o", "-", cwd=tmp_path).stdout
    assert first == second


@pytest.mark.parametrize(
    ("sample", "fail_on", "code"),
    [
        (SKIP_SAMPLE, "never", 0),
        (SKIP_SAMPLE, "error", 1),
        (SKIP_SAMPLE, "warning", 1),
        (HEALTHY_SAMPLE, "error", 0),
    ],
)
def test_fail_on_sets_the_exit_code(tmp_path, sample, fail_on, code):
    result = forensics("analyze", str(sample), "--fail-on", fail_on, "-q", cwd=tmp_path)
    assert result.returncode == code, result.stderr


def test_missing_path_is_one_line_and_exit_2(tmp_path):
    result = forensics("analyze", str(tmp_path / "nope"), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert "Traceback" not in result.stderr and "no such file or folder" in result.stderr


def test_nothing_readable_is_exit_2(tmp_path):
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "notes.md").write_text("nothing\n")
    result = forensics("analyze", "logs", cwd=tmp_path)
    assert result.returncode == 2
    assert "no readable log file" in result.stderr and "Traceback" not in result.stderr


def test_refuses_to_write_into_the_input(tmp_path):
    write_logs(tmp_path / "logs", {"rank0.log": marks(0, range(2))})
    result = forensics("analyze", "logs", "--out", "logs/report.html", cwd=tmp_path)
    assert result.returncode == 2
    assert not (tmp_path / "logs" / "report.html").exists()


def test_bad_option_is_a_usage_error(tmp_path):
    assert forensics("analyze", str(SKIP_SAMPLE), "--format", "pdf", cwd=tmp_path).returncode == 2


def test_events_round_trip_through_parquet(tmp_path):
    result = forensics(
        "analyze", str(SKIP_SAMPLE), "--events", "events.parquet", "-q", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    from logforensics.api import analyze
    from logforensics.schema import EVENT_SCHEMA

    events = pl.read_parquet(tmp_path / "events.parquet")
    assert events.schema == pl.Schema(EVENT_SCHEMA)
    job = analyze(SKIP_SAMPLE).job
    others = events.filter(pl.col("family") != "stage_marks")
    assert others.equals(job.events.sort("file", "line"))
    metadata = pq.read_metadata(tmp_path / "events.parquet").metadata
    assert metadata[b"logforensics.schema_version"] == b"2"


def test_the_exported_events_hold_every_stage_mark(tmp_path):
    """The README's query (`select rank, max(step) ... group by rank`) needs the marks, which
    the analysis keeps apart from the events and without their text."""
    result = forensics(
        "analyze", str(SKIP_SAMPLE), "--events", "events.parquet", "-q", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    marks = pl.read_parquet(tmp_path / "events.parquet").filter(pl.col("family") == "stage_marks")
    written = sum(path.read_text().count(" stage=") for path in SKIP_SAMPLE.rglob("*.log"))
    assert marks.height == written
    assert marks.get_column("rank").null_count() == 0
    assert marks.get_column("rank_from").null_count() == 0
    said = [
        (int(rank), int(step))
        for path in SKIP_SAMPLE.rglob("*.log")
        for rank, step in re.findall(r"rank=(\d+) step=(\d+) stage=", path.read_text())
    ]
    last_said = {rank: max(s for r, s in said if r == rank) for rank, _ in said}
    assert dict(marks.group_by("rank").agg(pl.col("step").max()).iter_rows()) == last_said


def test_unwritable_output_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "forensics-report.html").mkdir()
    result = forensics("analyze", str(SKIP_SAMPLE), cwd=tmp_path)
    assert result.returncode == 2
    assert (
        result.stderr.startswith("forensics: error: cannot write")
        and "Traceback" not in result.stderr
    )


BUG_ADVICE = "(a bug in logforensics; run again with --debug for the traceback)"


def test_a_bug_in_a_rule_is_exit_3_in_one_line(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from logforensics import api, cli
    from logforensics.registry import Rule

    def broken(job):
        raise ZeroDivisionError("rule bug")

    monkeypatch.setattr(api, "rules", lambda: (Rule(kind="broken", check=broken),))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli.app, ["analyze", str(SKIP_SAMPLE), "-q"])
    assert result.exit_code == 3
    assert result.stderr == (
        "forensics: internal error: rule broken failed: ZeroDivisionError: rule bug (a bug in "
        "logforensics; the report holds the other rules' findings; run again with --debug for "
        "the traceback)\n"
    )
    # the report is still written, with what the other rules found
    assert (tmp_path / "forensics-report.html").is_file()
    result = CliRunner().invoke(cli.app, ["analyze", str(SKIP_SAMPLE), "-q", "--debug"])
    assert result.exit_code == 3
    assert result.stderr.startswith("rule broken failed:\nTraceback (most recent call last):")
    assert 'raise ZeroDivisionError("rule bug")' in result.stderr
    assert result.stderr.splitlines()[-1] == (
        "forensics: internal error: rule broken failed: ZeroDivisionError: rule bug (a bug in "
        "logforensics; the report holds the other rules' findings; the traceback is above)"
    )


@pytest.mark.parametrize(
    ("raised", "said"),
    [
        (ValueError("  bad frame\nsecond line  "), "ValueError: bad frame"),
        (KeyError("file"), "KeyError: 'file'"),
        (RuntimeError(), "RuntimeError"),
        # a Rust panic in polars is a BaseException, not an Exception
        (
            pl.exceptions.PanicException("index out of bounds: len 3"),
            "PanicException: index out of bounds: len 3",
        ),
    ],
)
def test_an_exception_escaping_the_analysis_is_exit_3_in_one_line(
    tmp_path, monkeypatch, raised, said
):
    from typer.testing import CliRunner

    from logforensics import api, cli

    def analyze_upload(*args, **kwargs):
        raise raised

    monkeypatch.setattr(api, "analyze_upload", analyze_upload)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli.app, ["analyze", str(SKIP_SAMPLE)])
    assert result.exit_code == 3
    assert result.stderr == f"forensics: internal error: {said} {BUG_ADVICE}\n"
    assert list(tmp_path.iterdir()) == []
    result = CliRunner().invoke(cli.app, ["analyze", str(SKIP_SAMPLE), "--debug"])
    assert result.exit_code == 3
    assert result.stderr.startswith("Traceback (most recent call last):")
    assert "in analyze_upload" in result.stderr
    assert result.stderr.endswith(
        f"forensics: internal error: {said} (a bug in logforensics; the traceback is above)\n"
    )


def test_an_interrupt_is_not_reported_as_a_bug(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from logforensics import api, cli

    def analyze_upload(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(api, "analyze_upload", analyze_upload)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli.app, ["analyze", str(SKIP_SAMPLE)])
    assert result.exit_code == 130  # the shell's code for Ctrl-C
    assert "internal error" not in result.stderr


def test_a_symlink_loop_as_path_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "loop").symlink_to("loop")
    result = forensics("analyze", "loop", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == "forensics: error: loop: a symbolic link loop\n"


def test_rules_and_parsers_are_listed_with_their_docs(tmp_path):
    from logforensics.registry import parsers, rules

    listed = forensics("rules", cwd=tmp_path)
    assert listed.returncode == 0
    for rule in rules():
        assert f"{rule.kind}\n    " in listed.stdout
    assert "Collective timeouts: which ranks timed out" in listed.stdout
    listed = forensics("parsers", cwd=tmp_path)
    for parser in parsers():
        assert f"{parser.name}\n    " in listed.stdout


def test_external_css_for_viewers_that_block_inline_styles(tmp_path):
    result = forensics(
        "analyze", str(SKIP_SAMPLE), "--html-assets", "external", "-o", "r.html", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    page = (tmp_path / "r.html").read_text()
    assert '<link rel="stylesheet" href="r.css">' in page
    assert "<style>" not in page and "style=" not in page
    assert ".verdict" in (tmp_path / "r.css").read_text()


def test_default_page_has_no_inline_style_attributes(tmp_path):
    forensics("analyze", str(SKIP_SAMPLE), "-q", cwd=tmp_path)
    assert "style=" not in (tmp_path / "forensics-report.html").read_text()


# --- honest outcomes ------------------------------------------------------------------------


def test_a_folder_of_non_logs_is_an_input_error_not_a_healthy_job(tmp_path):
    upload = tmp_path / "upload"
    upload.mkdir()
    (upload / "README").write_text("How to run the training job\n\nSee train.py for details.\n")
    (upload / "notes.txt").write_text("lr sweep: 1e-3 was best\n")
    (upload / "config.toml").write_text("[train]\nlr = 0.001\n")
    (upload / "loss.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    result = forensics("analyze", str(upload), cwd=tmp_path)
    assert result.returncode == 2
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1 and "Traceback" not in message
    assert "nothing here looks like a training job's log" in message
    assert "README" in message and "notes.txt" in message and "2 files skipped" in message
    assert not (tmp_path / "forensics-report.html").exists()


def test_several_jobs_are_each_given_their_own_verdict(tmp_path):
    result = forensics("analyze", str(SAMPLE_LOGS), "-f", "json", "-o", "r.json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["several_jobs"] is True and report["verdict"] is None
    scenarios = {path.parent.name for path in SAMPLE_LOGS.glob("*/expected.json")}
    two_jobs = 2 if "two_jobs_one_folder" in scenarios else 1
    assert len(report["jobs"]) == len(scenarios) - 1 + two_jobs
    said = {job["job"]["label"].split("/")[0]: job["verdict"] for job in report["jobs"]}
    assert said["skip_backward_hang"]["kind"] == "stage_divergence"
    assert said["uneven_loader_hang"]["kind"] == "loader_size_mismatch"
    assert said["skip_flag_fixed"] is None
    lines = result.stderr.splitlines()
    assert f"{len(report['jobs'])} jobs" in lines[0]
    assert sum(line.startswith("job ") for line in lines) == len(report["jobs"])


def test_one_job_of_several_can_be_picked(tmp_path):
    result = forensics(
        "analyze", str(SAMPLE_LOGS), "--job", "1", "-f", "json", "-o", "-", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert "several_jobs" not in report and report["verdict"] is not None


def test_warnings_and_other_causes_reach_the_terminal(tmp_path):
    files = {
        f"rank{r}.log": [f"{{'rank': {r}, 'local_rank': {r}, 'device': {r}, 'world_size': 4}}"]
        + marks(r, range(8))
        for r in (0, 1)
    }
    files["rank2.log"] = ["{'rank': 2, 'local_rank': 2, 'device': 2, 'world_size': 4}"] + marks(
        2, range(8), skip={4: ("after_backward", "after_step")}
    )
    result = forensics("analyze", str(write_logs(tmp_path / "logs", files)), cwd=tmp_path)
    assert "verdict: Rank 2 skipped part of step 4" in result.stderr
    warning = [line for line in result.stderr.splitlines() if line.startswith("  warning ")]
    assert warning and "missing_rank" in warning[0] and "rank 3" in warning[0]


# --- formats, languages, the words of the command ------------------------------------------


def test_markdown_for_a_ticket(tmp_path):
    result = forensics("analyze", str(SKIP_SAMPLE), "--format", "md", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    text = (tmp_path / "forensics-report.md").read_text()
    assert text.startswith("### Rank 2 skipped part of step 5 after a NaN loss;")
    result = forensics("analyze", str(SKIP_SAMPLE), "-f", "md", "-o", "-", "-q", cwd=tmp_path)
    assert result.stdout == text and result.stderr == ""


def test_chinese_report_and_summary(tmp_path):
    result = forensics("analyze", str(SKIP_SAMPLE), "--lang", "zh", "-f", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "结论：rank 2 在出现 NaN 损失后跳过了第 5 步的一部分" in result.stderr
    assert "  错误  stage_divergence  " in result.stderr
    report = json.loads((tmp_path / "forensics-report.json").read_text())
    assert report["verdict"]["kind"] == "stage_divergence"
    assert report["verdict"]["summary"].startswith(
        "rank 2 跳过了第 5 步的 `after_backward, after_step`"
    )


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        (
            "--format",
            "pdf",
            "forensics: error: --format 'pdf' is not known: choose html, json or md",
        ),
        ("--lang", "fr", "forensics: error: --lang 'fr' is not known: choose en or zh"),
        (
            "--fail-on",
            "sometimes",
            "forensics: error: --fail-on 'sometimes' is not known: choose never, error or warning",
        ),
    ],
)
def test_a_bad_choice_is_one_clear_line(tmp_path, option, value, said):
    result = forensics("analyze", str(SKIP_SAMPLE), option, value, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == said + "\n"
    assert list(tmp_path.iterdir()) == []


def test_help_shows_no_types_on_flags_and_path_as_path(tmp_path):
    said = forensics("analyze", "--help", cwd=tmp_path).stdout
    assert "analyze [OPTIONS] PATH" in said
    assert "<bool>" not in said and "{PATH}" not in said and "{path}" not in said
    assert "html|json|md" in said and "en|zh" in said
    assert "<bool>" not in forensics("--help", cwd=tmp_path).stdout


def test_listed_parsers_end_their_sentence(tmp_path):
    from logforensics.cli import first_paragraph

    listed = forensics("parsers", cwd=tmp_path).stdout
    described = [line.strip() for line in listed.splitlines() if line.startswith("    ")]
    assert described and not [line for line in described if line.endswith(":")]
    assert "Verbatim" not in listed
    assert first_paragraph("Lines like these:\n\n    a = 1") == "Lines like these."
    assert first_paragraph("Reads X. Verbatim:\n\n    a") == "Reads X."
