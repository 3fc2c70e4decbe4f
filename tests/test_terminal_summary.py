"""What the terminal shows after a run: the verdict in one line of plain words, every error
and warning finding in one line, where the report went; colour and wrapping on a terminal,
plain text in a pipe; progress on a terminal only."""

from __future__ import annotations

import io
import re
import time
from pathlib import Path

import pytest
from rich.console import Console

from logforensics import cli
from logforensics.api import analyze_upload
from logforensics.findings import Evidence, Finding
from logforensics.headline import headline, verdict_headline, with_headlines
from logforensics.reasoner import Verdict
from logforensics.report.model import build_upload_report
from tests.builders import marks, write_logs
from tests.conftest import SAMPLE_LOGS

SKIP_SAMPLE = SAMPLE_LOGS / "skip_backward_hang" / "logs"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def summary_of(path: Path, lang: str = "en", target: Path | None = None) -> list:
    upload = analyze_upload(path)
    report = with_headlines(build_upload_report(upload, str(path)), upload.jobs)
    return cli.summary_lines(report, upload, lang, target)


# --- the headline --------------------------------------------------------------------------


def found(kind: str, part: str = "departure", **fields: object) -> Finding:
    """A finding as a rule would return it (only what the headline reads)."""
    fields.setdefault("severity", "error")
    fields.setdefault("summary", "")
    fields.setdefault("fix", "")
    return Finding(kind=kind, part=part, **fields)  # type: ignore[arg-type]


def timeout(ranks: list[int], seconds: int = 600, op: str | None = None) -> Finding:
    return found(
        "collective_timeout",
        "consequence",
        ranks=ranks,
        op=op,
        details={"timeout_ms": seconds * 1000},
    )


NAN_LINE = Evidence("rank2.log", 24, "WARNING rank=2 step=5 non-finite loss=nan -> skip", 2)
SKIPPED = found(
    "stage_divergence",
    ranks=[2],
    step=5,
    evidence=[NAN_LINE],
    details={"departure": "skipped", "other_ranks": [0, 1, 3]},
)

HEADLINES = [
    (
        Verdict(found("worker_restart", blames_nobody=True, details={"unexplained": True}), ""),
        "The workers failed and the launcher restarted them; the logs do not hold what the "
        "failed attempt died of",
    ),
    (
        Verdict(SKIPPED, "", (SKIPPED, timeout([0, 1, 2, 3], 20))),
        "Rank 2 skipped part of step 5 after a NaN loss; ranks 0, 1 and 3 waited for it until "
        "the timeout (20 s)",
    ),
    (
        Verdict(SKIPPED, ""),
        "Rank 2 skipped part of step 5 after a NaN loss; ranks 0, 1 and 3 waited for it",
    ),
    (
        Verdict(
            stopped := found(
                "stage_divergence", ranks=[3], step=8, details={"departure": "stopped"}
            ),
            "",
            (stopped, found("peer_lost", "consequence", ranks=[1, 2])),
        ),
        "Rank 3 went quiet before step 8; ranks 1 and 2 then lost their connection to it",
    ),
    (
        Verdict(
            found(
                "stage_divergence",
                ranks=[3, 7],
                seq=80078,
                blames_nobody=True,
                details={"departure": "other_collective"},
            ),
            "",
        ),
        "Ranks 3 and 7 were in different collectives at sequence number 80078",
    ),
    (
        Verdict(
            found(
                "stage_divergence",
                ranks=[0],
                step=6,
                blames_nobody=True,
                details={"departure": "stopped", "other_ranks": [1]},
            ),
            "",
        ),
        "Rank 0 stopped at step 6 while rank 1 went on",
    ),
    (
        Verdict(found("stage_divergence", ranks=[1], details={"departure": "repeated"}), ""),
        "Rank 1 repeated a step the others ran once",
    ),
    (
        Verdict(found("missing_rank", ranks=[3], step=8), ""),
        "The log of rank 3 ends without an error before step 8",
    ),
    (
        Verdict(found("missing_rank", ranks=[5], details={"nccl_world_size": 8}), ""),
        "Rank 5 never finished setting up NCCL",
    ),
    (
        Verdict(found("collective_mismatch", ranks=[0, 1, 2, 3], culprit_ranks=[1]), ""),
        "Rank 1 called another collective than the others",
    ),
    (
        Verdict(found("collective_mismatch", ranks=[10, 11]), ""),
        "Ranks 10 and 11 called different collectives at the same point",
    ),
    (
        Verdict(found("collective_mismatch", "consequence", ranks=[2]), ""),
        "gloo aborted rank 2: the ranks were in different collectives",
    ),
    (
        Verdict(
            uneven := found(
                "loader_size_mismatch", "explanation", ranks=[2], details={"more_batches": True}
            ),
            "",
            (uneven, timeout([0, 1], 20)),
        ),
        "Rank 2 had an extra batch (uneven DataLoaders); ranks 0 and 1 waited for it until the "
        "timeout (20 s)",
    ),
    (
        Verdict(
            found(
                "loader_size_mismatch",
                "explanation",
                ranks=[3],
                step=11,
                details={"more_batches": False},
            ),
            "",
        ),
        "Rank 3 ran out of batches at step 11 before the others (uneven DataLoaders)",
    ),
    (
        Verdict(found("loader_size_mismatch", "explanation"), ""),
        "The processes' DataLoaders have different lengths",
    ),
    (
        Verdict(
            found(
                "duplicate_device",
                "explanation",
                ranks=[146, 149],
                evidence=[
                    Evidence("n.log", 3, "init.cc:497 NCCL WARN Duplicate GPU detected : rank 149")
                ],
                details={"source": "nccl"},
            ),
            "",
        ),
        "Ranks 146 and 149 share one GPU; NCCL refused to start",
    ),
    (
        Verdict(found("duplicate_device", "explanation", ranks=[0, 3]), ""),
        "Ranks 0 and 3 share one GPU",
    ),
    (
        Verdict(
            found("duplicate_device", "explanation", ranks=[1, 2], details={"source": "layout"}),
            "",
        ),
        "Ranks 1 and 2 report the same local rank, most likely sharing one GPU",
    ),
    (
        Verdict(
            memory := found("oom", "explanation", ranks=[2]),
            "",
            (memory, timeout([5], 600, "ALLREDUCE")),
        ),
        "Rank 2 ran out of GPU memory; rank 5 waited for it in ALLREDUCE until the timeout "
        "(10 min)",
    ),
    (
        Verdict(
            found(
                "oom",
                "explanation",
                ranks=[4],
                step=7,
                details={"in_nccl": True, "swallowed": True, "skipped": True},
            ),
            "",
        ),
        "Rank 4 ran out of GPU memory inside NCCL at step 7 and skipped the batch",
    ),
    (
        Verdict(
            caught := found(
                "rank_exception",
                "explanation",
                ranks=[1],
                details={"exception": "ValueError", "swallowed": True},
            ),
            "",
            (
                caught,
                found("stage_divergence", ranks=[1], step=4, details={"departure": "skipped"}),
            ),
        ),
        "Rank 1 caught a ValueError and skipped part of step 4",
    ),
    (
        Verdict(
            found(
                "rank_exception",
                "explanation",
                ranks=[0],
                step=3,
                details={"exception": "torch.OutOfMemoryError", "swallowed": False},
            ),
            "",
        ),
        "Rank 0 died of an OutOfMemoryError at step 3",
    ),
    (
        Verdict(
            found(
                "reducer_unused_params",
                "explanation",
                ranks=[1],
                step=6,
                details={"parameters": ["aux_head.bias"]},
            ),
            "",
        ),
        "Parameters got no gradient on rank 1 at step 6",
    ),
    (
        Verdict(found("reducer_unused_params", "explanation", ranks=[1]), ""),
        "DDP's reducer failed on rank 1",
    ),
    (
        Verdict(
            found("nccl_error", "explanation", ranks=[9], details={"class": "peer"}),
            "",
            (),
        ),
        "Rank 9 lost its NCCL connection to a peer",
    ),
    (
        Verdict(found("nccl_error", "explanation", ranks=[4], details={"class": "infiniband"}), ""),
        "An InfiniBand link failed on rank 4",
    ),
    (
        Verdict(
            found("nccl_error", "explanation", details={"class": "cuda", "host": "gpu-07"}), ""
        ),
        "A CUDA call inside NCCL failed on a process on host gpu-07",
    ),
    (
        Verdict(
            found("nccl_error", "explanation", ranks=[1], details={"checked_in_twice": [1]}),
            "",
        ),
        "Rank 1 was started twice; NCCL could not form the communicator",
    ),
    (
        Verdict(
            found(
                "nccl_error",
                "explanation",
                ranks=[0, 1, 2],
                details={"common_mode": True, "at_once": True},
            ),
            "",
        ),
        "Ranks 0-2 hit the same NCCL error at once",
    ),
    (
        Verdict(
            found("nccl_error", "explanation", details={"common_mode": True, "at_once": False}),
            "",
        ),
        "Several processes hit the same NCCL error",
    ),
    (
        Verdict(found("nccl_error", "consequence", ranks=[3]), ""),
        "Rank 3 failed in NCCL",
    ),
    (
        Verdict(
            found(
                "monitored_barrier", ranks=[6], details={"ranks_that_arrived": [0, 1, 2, 3, 4, 5]}
            ),
            "",
        ),
        "Rank 6 never reached the monitored barrier; ranks 0-5 waited for it",
    ),
    (
        Verdict(
            found(
                "collective_timeout",
                "consequence",
                ranks=[0, 1, 2],
                culprit_ranks=[3],
                details={"phase": "rendezvous"},
            ),
            "",
        ),
        "Process group set-up timed out waiting for rank 3",
    ),
    (
        Verdict(
            found("collective_timeout", "consequence", ranks=[2], details={"phase": "heartbeat"}),
            "",
        ),
        "The NCCL watchdog of rank 2 got stuck",
    ),
    (
        Verdict(
            found(
                "collective_timeout",
                "consequence",
                ranks=[0, 1, 2],
                culprit_ranks=[3],
                details={"timeout_ms": 20_000},
            ),
            "",
        ),
        "Ranks 0-2 timed out after 20 s; rank 3 most likely never joined",
    ),
    (
        Verdict(
            found(
                "collective_timeout",
                "consequence",
                ranks=[4, 5],
                culprit_ranks=[0],
                details={"timeout_ms": 600_000, "culprits_from": "rank 0's own work"},
            ),
            "",
        ),
        "Ranks 4 and 5 timed out after 10 min; rank 0 was most likely busy with work of its own",
    ),
    (
        Verdict(timeout([0, 1, 2], 180_000_000, "ALLREDUCE"), ""),
        "Ranks 0-2 timed out in ALLREDUCE after 2,083 days; the logs do not say why",
    ),
    (
        Verdict(found("peer_lost", "consequence", ranks=[0]), ""),
        "Rank 0 lost the connection to a peer; the logs do not say why",
    ),
    (
        Verdict(found("fr_mismatch", ranks=[3], seq=41, details={"skipped": {"3": 1}}), ""),
        "Rank 3 skipped collective #41 (Flight Recorder)",
    ),
    (
        Verdict(found("fr_mismatch", ranks=[5], seq=8, details={"stopped": [5]}), ""),
        "Rank 5 never issued collective #8 (Flight Recorder)",
    ),
    (
        Verdict(found("fr_mismatch", ranks=[1], seq=12, details={"skipped": {}}), ""),
        "Rank 1 issued another collective as #12 (Flight Recorder)",
    ),
    (
        Verdict(
            found(
                "stuck_location",
                ranks=[2],
                details={
                    "groups": [
                        {"ranks": [0, 1, 3], "waiting": "dist.all_reduce", "where": "t.py:120"},
                        {
                            "ranks": [2],
                            "waiting": "the DataLoader (waiting for a batch)",
                            "where": "t.py:88",
                        },
                    ]
                },
            ),
            "",
        ),
        "Rank 2 is stuck in the DataLoader (waiting for a batch) at t.py:88 (py-spy); ranks 0, "
        "1 and 3 wait in dist.all_reduce at t.py:120",
    ),
    (
        Verdict(
            found(
                "rpc_transport",
                "explanation",
                ranks=[0],
                details={
                    "peers": ["Test1"],
                    "error": "ECONNREFUSED: connection refused",
                    "connect": True,
                },
            ),
            "",
        ),
        "Rank 0's RPC agent could not connect to Test1 (`ECONNREFUSED: connection refused`)",
    ),
    (
        Verdict(
            found(
                "rendezvous_split",
                "explanation",
                details={"run_ids": ["1745", "3045"], "generated": True},
            ),
            "",
        ),
        "The nodes joined 2 different rendezvous and never met; torchrun made up a run id on each",
    ),
    (
        Verdict(
            found(
                "last_common_stage",
                "explanation",
                ranks=[0, 1, 2, 3],
                blames_nobody=True,
                details={"never_ready": [0, 1, 2, 3], "waited_s": 600},
            ),
            "",
        ),
        "Shards 0-3 never finished loading; the server's start-up hung",
    ),
    (None, "No failure found"),
]


@pytest.mark.parametrize(("verdict", "said"), HEADLINES, ids=lambda value: str(value)[:40])
def test_the_headline_says_what_happened_in_plain_words(verdict, said):
    assert verdict_headline(verdict) == said
    if verdict is not None:
        assert verdict.headline == said


def test_every_verdict_kind_has_its_own_words():
    from logforensics.headline import WHAT
    from logforensics.registry import rules

    context_only = {"implausible_number"}
    can_be_verdict = {rule.kind for rule in rules()} - context_only
    assert can_be_verdict <= set(WHAT)
    told = {verdict.finding.kind for verdict, _ in HEADLINES if verdict is not None}
    assert can_be_verdict <= told


@pytest.mark.parametrize(
    ("sample", "said"),
    [
        (
            "skip_backward_hang",
            "Rank 2 skipped part of step 5 after a NaN loss; ranks 0, 1 and 3 waited for it "
            "until the timeout (20 s)",
        ),
        ("skip_flag_fixed", "No failure found"),
        (
            "uneven_loader_hang",
            "Rank 3 ran out of batches at step 11 before the others (uneven DataLoaders); "
            "ranks 0-2 waited for it until the timeout (20 s)",
        ),
    ],
)
def test_the_headline_of_a_sample(sample, said):
    (analysis,) = analyze_upload(SAMPLE_LOGS / sample / "logs").jobs
    assert headline(analysis) == said


# --- plain text ----------------------------------------------------------------------------


def test_plain_summary_says_the_verdict_each_finding_and_the_absolute_report_path(tmp_path):
    lines = cli.plain_summary(summary_of(SKIP_SAMPLE, target=Path("r.html"))).splitlines()
    assert lines[0] == "read 9 files, 638 lines (0 not recognised); ranks seen: 4 of 4"
    assert lines[2] == (
        "verdict: Rank 2 skipped part of step 5 after a NaN loss; ranks 0, 1 and 3 waited for "
        "it until the timeout (20 s)"
    )
    assert lines[3].startswith("fix: Every rank must run the same collectives")
    findings = [line.split() for line in lines if line.startswith("  ")]
    assert [words[:4] for words in findings] == [
        ["error", "stage_divergence", "rank", "2"],
        ["error", "collective_timeout", "ranks", "0-3"],
    ]
    assert lines[-1] == f"report: {Path('r.html').resolve()}"
    assert not any("\x1b" in line for line in lines)


def test_rank_ids_of_inferred_lines_do_not_read_as_counts():
    said = cli.plain_summary(summary_of(SKIP_SAMPLE))
    assert "ranks inferred for lines" not in said
    assert (
        "lines that name no rank got it from: other lines of the same file (ranks 0-3); the "
        "local rank plus the node's first rank (ranks 0-3)"
    ) in said


def test_one_file_is_one_file_and_skipped_files_say_why(tmp_path):
    logs = write_logs(tmp_path / "logs", {"rank0.log": marks(0, range(3))})
    (logs / "train.py").write_text("print('hi')\n")
    (logs / "notes.md").write_text("# notes\n")
    first = cli.plain_summary(summary_of(logs)).splitlines()[0]
    assert first.startswith("read 1 file, 12 lines")
    assert first.endswith("; skipped 2 files (not a log: 2)")


def test_every_error_and_warning_is_one_line_with_ranks_as_ranges(tmp_path):
    files = {f"rank{r}.log": marks(r, range(8)) for r in range(6)}
    files["rank2.log"] = marks(2, range(8), skip={4: ("after_backward", "after_step")})
    files["rank0.log"] = ["{'rank': 0, 'local_rank': 0, 'device': 0, 'world_size': 12}"] + files[
        "rank0.log"
    ]
    said = cli.plain_summary(summary_of(write_logs(tmp_path / "logs", files)))
    rows = [line for line in said.splitlines() if line.startswith("  ")]
    assert any(row.split()[:2] == ["error", "stage_divergence"] for row in rows)
    missing = [row for row in rows if row.split()[:2] == ["warning", "missing_rank"]]
    assert len(missing) == 1 and "ranks 6-11" in missing[0]


def test_several_jobs_each_get_their_headline():
    lines = cli.plain_summary(summary_of(SAMPLE_LOGS / "two_jobs_one_folder" / "logs"))
    lines = lines.splitlines()
    assert "2 jobs" in lines[0]
    jobs = [line for line in lines if line.startswith("job ")]
    assert jobs[0].endswith(
        "Rank 2 skipped part of step 5 after a NaN loss; ranks 0, 1 and 3 waited for it until "
        "the timeout (20 s)"
    )
    assert jobs[1].endswith("No failure found")
    assert any(line.startswith("    error  stage_divergence") for line in lines)


def test_log_text_cannot_send_control_sequences_to_the_terminal(tmp_path):
    files = {f"rank{r}.log": marks(r, range(6)) for r in range(3)}
    files["rank1.log"] = (
        marks(1, range(3))
        + ["2026-11-29 10:00:03,001 WARNING bad batch \x1b]0;pwned\x07\x1b[2J skipping"]
        + marks(1, range(4, 6))
    )
    lines = summary_of(write_logs(tmp_path / "logs", files))
    assert "\x1b" not in cli.plain_summary(lines)
    terminal = io.StringIO()
    cli.show_summary(lines, Console(file=terminal, force_terminal=True, width=100))
    assert "pwned\x07" not in terminal.getvalue() and "\x1b]0;" not in terminal.getvalue()
    assert "\x1b[2J" not in terminal.getvalue()


# --- on a terminal -------------------------------------------------------------------------


def test_on_a_terminal_the_summary_is_coloured_and_wrapped_to_its_width():
    terminal = io.StringIO()
    console = Console(file=terminal, force_terminal=True, width=60, color_system="standard")
    cli.show_summary(summary_of(SKIP_SAMPLE, target=Path("r.html")), console)
    shown = terminal.getvalue()
    assert ANSI.search(shown), "no colour"
    text = ANSI.sub("", shown)
    assert all(len(line) <= 60 for line in text.splitlines())
    assert "stage_divergence" in text and "collective_timeout" in text
    assert "Rank 2 skipped part of step 5" in text.replace("\n", " ")


def test_no_color_is_respected(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    terminal = io.StringIO()
    cli.show_summary(
        summary_of(SKIP_SAMPLE), Console(file=terminal, force_terminal=True, width=100)
    )
    assert not re.search(r"\x1b\[[0-9;]*3[0-7]m", terminal.getvalue())  # no foreground colour


def test_the_summary_in_a_pipe_is_plain(tmp_path, capsys):
    cli._print_summary(summary_of(SKIP_SAMPLE))
    said = capsys.readouterr().err
    assert said.startswith("read 9 files") and "\x1b" not in said


# --- progress ------------------------------------------------------------------------------


def test_progress_shows_files_and_bytes_on_a_terminal_after_the_delay(monkeypatch):
    monkeypatch.setattr(cli, "PROGRESS_DELAY", 0.0)
    terminal = io.StringIO()
    console = Console(file=terminal, force_terminal=True, width=120)
    with cli._Progress(SKIP_SAMPLE, shown=True, lang="en", console=console):
        time.sleep(0.5)
    assert re.search(
        r"reading .*skip_backward_hang/logs: \d+ files, [\d.]+ kB \(\d+ s\)",
        ANSI.sub("", terminal.getvalue()),
    )


def test_no_progress_for_a_quick_run_or_off_a_terminal(monkeypatch):
    terminal = io.StringIO()
    console = Console(file=terminal, force_terminal=True, width=120)
    with cli._Progress(SKIP_SAMPLE, shown=True, lang="en", console=console):
        pass  # done before the delay
    assert terminal.getvalue() == ""
    with cli._Progress(SKIP_SAMPLE, shown=True, lang="en") as progress:  # stderr is no terminal
        assert progress.thread is None


# --- words for people ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seconds", "said"),
    [
        (0.001, "1 ms"),  # a watchdog timeout set to 1 ms (instructlab/training#520)
        (0.4, "0.4 s"),
        (2, "2 s"),
        (20, "20 s"),
        (600, "10 min"),
        (1800, "30 min"),
        (180_000, "50 h"),
        (180_000_000, "2,083 days"),
    ],
)
def test_durations_are_said_as_people_say_them(seconds, said):
    from logforensics.text import duration

    assert duration(seconds) == said


@pytest.mark.parametrize(
    ("text", "first"),
    [
        ("Ranks 0-3 timed out after 20 s. Rank 3 lagged.", "Ranks 0-3 timed out after 20 s."),
        (
            "Rank 2 raised OOM (out of memory. Tried 3 MiB.), caught it. It left.",
            "Rank 2 raised OOM (out of memory. Tried 3 MiB.), caught it.",
        ),
        ('It logged: "x. Y". Then more.', 'It logged: "x. Y".'),
        ("rank 2 跳过了第 5 步。rank 0 等待。", "rank 2 跳过了第 5 步。"),
        ("No full stop", "No full stop"),
    ],
)
def test_a_finding_in_one_line_is_its_first_sentence(text, first):
    from logforensics.text import first_sentence

    assert first_sentence(text) == first
