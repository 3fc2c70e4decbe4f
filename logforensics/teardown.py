"""Failures printed after the run had finished: teardown, not the hang.

A process that printed a finish mark (`run_finished`: the training loop's or the program's
end, googletest's tear-down, the interpreter's exit) and only then a watchdog, NCCL or
connection failure did not hang in training: its process groups hung or broke while being
torn down (destroyed in different orders on different ranks, a watchdog stuck in a CUDA call
at exit; NVIDIA/Fuser#3055, modelscope/ms-swift#7992). Such findings become warnings that
say so, and no verdict is drawn from them.

A mark that names its rank covers that rank's later lines in the same file; one that names
none covers every later line of its file only when it ends the whole program (its main
returned, the tests were torn down, torchrun saw every worker succeed): a rank-less "training
completed" may be one rank's, and the others' failures after it the divergence itself.
"""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

from logforensics.findings import Evidence, Finding
from logforensics.job import Job

# Failures that a teardown produces; a rank's own exception or OOM is never teardown.
TEARDOWN_KINDS = ("collective_timeout", "nccl_error", "peer_lost")
TEARDOWN_FIX = (
    "Destroy the process groups in the same order on every rank, once every rank is done "
    "(`dist.barrier()` then `dist.destroy_process_group()` at the end of the script), and let "
    "no rank exit while another still uses a group."
)
# How close after a rank's finish mark a line of no known rank is taken for that rank's.
NEXT_LINES = 3
# Finish marks that end the whole program, whichever process printed them.
# (`tests_validated`: nccl-tests' validation summary after its last size, parsers/nccl_tests.py)
PROGRAM_ENDS = (
    "main_returned",
    "program_exit",
    "tests_done",
    "tests_validated",
    "workers_succeeded",
    "max_reached",
)
# The CUDA runtime's error once the process has begun to exit (cudaErrorCudartUnloading): a
# failure that says so was printed during teardown whatever the logs hold before it
# (bigscience-workshop/Megatron-DeepSpeed#265: the watchdog thread's `CUDA error: driver
# shutting down` after the run reached its exit interval).
DRIVER_SHUTTING_DOWN = "driver shutting down"


def mark_after_finish(findings: Iterable[Finding], job: Job) -> list[Finding]:
    """`findings`, those wholly after a finish mark, or failing because the CUDA driver was
    shutting down, turned into teardown warnings."""
    findings = list(findings)
    marks = _finish_marks(job)
    alone = _sole_failure(findings)
    for finding in findings:
        if finding.severity != "error" or not _teardown_kind(finding):
            continue
        if not finding.evidence:
            continue
        first = _finished_before_each(marks, finding.evidence)
        if first is not None:
            _as_teardown(
                finding,
                f"After the run had finished ({first[0]}:{first[1]}): {finding.summary} "
                "A hang or error while process groups are torn down, not in training.",
            )
            finding.details["after_finish"] = {"file": first[0], "line": first[1]}
        elif _exiting(finding) and finding is alone:
            finding.confidence = "low"
            finding.summary = (
                "A process crashed while exiting (the CUDA driver was shutting down): "
                f"{finding.summary} Its exit code fails the job; nothing else in the logs does."
            )
            finding.fix = TEARDOWN_FIX
            finding.details["exiting"] = True
        elif _exiting(finding):
            _as_teardown(
                finding,
                "While the process was exiting (the CUDA driver was shutting down): "
                f"{finding.summary} A failure of its teardown, not of the run.",
            )
            finding.details["exiting"] = True
    return findings


def _as_teardown(finding: Finding, summary: str) -> None:
    finding.severity = "warning"
    finding.part = "context"
    finding.summary = summary
    finding.fix = TEARDOWN_FIX


# Finish marks that say a rank's own work was done (not only that its process exited).
WORK_DONE = ("rank_done", "training_done", "main_returned")


def finished_ranks(job: Job) -> pl.DataFrame:
    """The ranks that said their work was done: `file, line, rank, text, finish` of each one's
    first such mark. A rank that finished got past every collective of its run."""
    marks = _finish_marks(job)
    if marks.is_empty():
        return pl.DataFrame(
            schema={"file": pl.String, "line": pl.UInt32, "rank": pl.Int32, "text": pl.String}
        )
    return (
        marks.filter(pl.col("rank").is_not_null() & pl.col("finish").is_in(WORK_DONE))
        .sort("file", "line")
        .unique(subset=["rank"], keep="first", maintain_order=True)
    )


def _exiting(finding: Finding) -> bool:
    """A crash whose error is the CUDA driver shutting down."""
    return DRIVER_SHUTTING_DOWN in str(finding.details.get("exception") or "")


def _sole_failure(findings: list[Finding]) -> Finding | None:
    """The one error finding, if there is exactly one. A crash at exit that is all the logs
    show failed the job (its abort is a non-zero exit: pytorch/pytorch#56390, a test worker
    that crashed so); beside another failure it is that failure's teardown."""
    errors = [finding for finding in findings if finding.severity == "error"]
    return errors[0] if len(errors) == 1 else None


def _teardown_kind(finding: Finding) -> bool:
    """A failure teardown can produce: a watchdog, NCCL or connection failure, or a crash no
    line ties to a rank (ms-swift#5109: a C++ abort in a CUDA allocator at exit, after the
    checkpoints were saved), or a launcher's report of an exit code alone (VITS-fast-fine-tuning
    #353: `exit()` after the last epoch). A rank's own exception or OOM is never teardown, nor
    a rank's departure: one still busy with its own work after training ended (an evaluation,
    a save) is why the others timed out."""
    if finding.part == "departure":
        return False
    return finding.kind in TEARDOWN_KINDS or (
        finding.kind == "rank_exception"
        and finding.blames_nobody
        and (not finding.ranks or "exit_code" in finding.details)
    )


def _finish_marks(job: Job) -> pl.DataFrame:
    events = job.events
    if "event" not in events.columns:
        return pl.DataFrame()
    return events.filter(pl.col("event") == "run_finished").select(
        "file",
        "line",
        "rank",
        "text",
        pl.col("extra").str.extract(r'"finish":"(\w+)"', 1).alias("finish"),
    )


def finished_before_all(job: Job, rows: pl.DataFrame) -> tuple[str, int] | None:
    """The first finish mark before `rows` (`file, line, rank`) when one covers every row: a
    failure printed only once the run had finished, as (file, line); else None."""
    evidence = [
        Evidence(row["file"], row["line"], "", row["rank"])
        for row in rows.select("file", "line", "rank").iter_rows(named=True)
    ]
    return _finished_before_each(_finish_marks(job), evidence)


def _finished_before_each(
    marks: pl.DataFrame, evidence: Iterable[Evidence]
) -> tuple[str, int] | None:
    """The first finish mark among those covering each evidence line, when every line has one
    (and there is a line); else None."""
    if marks.is_empty():
        return None
    found = [_finished_before(marks, line) for line in evidence]
    if not found or any(mark is None for mark in found):
        return None
    return min(found)  # type: ignore[type-var]


def _finished_before(marks: pl.DataFrame, evidence: Evidence) -> tuple[str, int] | None:
    """The first finish mark that covers this evidence line, as (file, line)."""
    same_file = marks.filter((pl.col("file") == evidence.file) & (pl.col("line") < evidence.line))
    whole_program = pl.col("rank").is_null() & pl.col("finish").is_in(PROGRAM_ENDS)
    if evidence.rank is None:
        # a line of no known rank: a rank-less mark before it in its file, or a rank's mark
        # just before it (the exiting process's next lines: ms-swift#5109's allocator abort
        # right after rank 4's exit warning)
        near = pl.col("line") >= evidence.line - NEXT_LINES
        covers = whole_program | pl.col("rank").is_null() | near
    else:
        covers = whole_program | (pl.col("rank") == evidence.rank)
    found = same_file.filter(covers.fill_null(False)).sort("line")
    if found.is_empty():
        return None
    row = found.row(0, named=True)
    return row["file"], int(row["line"])
