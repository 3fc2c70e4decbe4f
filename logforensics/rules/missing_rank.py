"""Ranks the logs say should exist but that left no log, and ranks whose log simply ends.

A rank with no log at all is usually an incomplete upload, so that is a warning that limits
the analysis. A rank whose log ends with nothing after its last stage mark, while the other
ranks carried on past that point, is a process that vanished (OOM killer, SIGKILL, node loss)
and is the one the others wait for.
"""

from __future__ import annotations

import polars as pl

from logforensics.findings import Evidence, Finding
from logforensics.job import Job
from logforensics.registry import Rule
from logforensics.text import describe_key, rank_list

NO_LOG_FIX = (
    "Collect the logs of every rank (all nodes' torchrun --log-dir trees or per-rank files); if "
    "these ranks never started, check the launch: --nnodes, --nproc_per_node and the host list."
)
VANISHED_FIX = (
    "The process ended without a word: look in the node's kernel log (`dmesg`, "
    "`journalctl -k`) for the OOM killer, in the scheduler's log for a kill or preemption, and "
    "in torchrun's summary for the exit code or signal of this rank."
)


def check(job: Job) -> list[Finding]:
    return _absent(job) + _vanished(job)


def _absent(job: Job) -> list[Finding]:
    if job.world_size is None:
        return []
    seen = set(job.ranks_seen)
    absent = sorted(set(range(job.world_size.value)) - seen)
    if not absent:
        return []
    world = job.world_size
    return [
        Finding(
            kind="missing_rank",
            severity="warning",
            role="context",
            summary=(
                f"The world size is {world.value} but {rank_list(absent)} left no log line that "
                f"could be attributed to {'it' if len(absent) == 1 else 'them'}; the analysis "
                f"sees only {len(seen)} of {world.value} ranks."
            ),
            fix=NO_LOG_FIX,
            ranks=absent,
            evidence=[Evidence(world.file, world.line, world.text)],
            evidence_total=1,
            details={"world_size_from": world.source},
        )
    ]


def _vanished(job: Job) -> list[Finding]:
    progress = job.progress
    if progress is None:
        return []
    findings: list[Finding] = []
    last_marks = progress.last_key()
    for departure in progress.departures:
        if departure.kind != "stopped" or departure.tie:
            continue
        last = last_marks.filter(pl.col("rank") == departure.rank).row(0, named=True)
        stats = job.file_stats.filter(pl.col("file") == last["file"])
        if stats.is_empty() or stats.item(0, "last_line") != last["line"]:
            continue  # the rank wrote more after its last mark: not silent
        if _has_other_output(job, departure.rank, last["file"]):
            continue  # e.g. a separate stderr.log; without times its order is unknown
        expected = progress.key_of(departure.expected_key)
        others = sorted(set(progress.ranks) - {departure.rank})
        findings.append(
            Finding(
                kind="missing_rank",
                severity="error",
                role="root_cause",
                summary=(
                    f"The log of rank {departure.rank} ends at its mark "
                    f"{describe_key(progress.key_of(last['key']))} with nothing after it, while "
                    f"{rank_list(others)} went on to {describe_key(expected)}: the process "
                    f"vanished without an error."
                ),
                fix=VANISHED_FIX,
                ranks=[departure.rank],
                step=expected["step"],
                stage=expected["stage"],
                epoch=None if expected["epoch"] == -1 else expected["epoch"],
                evidence=[Evidence(last["file"], int(last["line"]), last["text"], departure.rank)],
                evidence_total=1,
                order=float(departure.expected_key),
                confidence="medium",
            )
        )
    return findings


def _has_other_output(job: Job, rank: int, marks_file: str) -> bool:
    other = job.file_stats.filter(
        (pl.col("rank") == rank)
        & (pl.col("file") != marks_file)
        & pl.col("last_line").is_not_null()
    )
    return not other.is_empty()


RULE = Rule(kind="missing_rank", check=check, specificity=15)
