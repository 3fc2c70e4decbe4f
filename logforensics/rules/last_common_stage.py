"""The last point of the training loop that every rank reached, and who got further."""

from __future__ import annotations

import polars as pl

from logforensics.findings import Finding, evidence_from
from logforensics.job import Job
from logforensics.registry import Rule
from logforensics.setup_stall import stalled_in_first_communicator, stalled_joining
from logforensics.shard_wait import shards_never_ready
from logforensics.text import rank_list


def check(job: Job) -> list[Finding]:
    return (
        shards_never_ready(job)
        + stalled_joining(job)
        + stalled_in_first_communicator(job)
        + _from_progress(job)
    )


def _from_progress(job: Job) -> list[Finding]:
    progress = job.progress
    if progress is None:
        return []
    rank_count = len(progress.ranks)
    common_key = _last_reached_by_all(progress.marks, rank_count)
    last = progress.last_key()
    if common_key is None:
        return [
            Finding(
                kind="last_common_stage",
                severity="info",
                part="context",
                summary="No stage mark was reached by every rank.",
                fix="",
                ranks=list(progress.ranks),
            )
        ]
    common = progress.key_of(common_key)
    stuck = last.filter(pl.col("key") == common_key)
    further = last.filter(pl.col("key") > common_key)
    stuck_ranks = stuck.get_column("rank").to_list()
    further_ranks = further.get_column("rank").to_list()
    where = progress.said(common)
    if rank_count == 1:  # one rank's progress says nothing of the others
        return [
            Finding(
                kind="last_common_stage",
                severity="info",
                part="context",
                summary=(
                    f"Only {rank_list(progress.ranks)} printed progress here; its last was "
                    f"{progress.said(progress.key_of(int(last.get_column('key').max())))}."
                ),
                fix="",
                ranks=list(progress.ranks),
                confidence="medium",
            )
        ]
    if further_ranks and not stuck_ranks:
        summary = f"Every rank reached {where}; {rank_list(further_ranks)} got further."
    elif further_ranks:
        summary = (
            f"Every rank reached {where}; {rank_list(stuck_ranks)} stopped there while "
            f"{rank_list(further_ranks)} got further."
        )
    else:
        summary = f"Every rank reached {where} and no rank got further."
    world = job.world_size.value if job.world_size is not None else len(set(job.ranks_seen))
    if world > rank_count:
        # "every rank" is every rank whose progress is in the logs, not the job's every rank
        summary = summary.replace(
            "Every rank", f"Every rank that printed progress ({rank_count} of {world})", 1
        )
    evidence, total = evidence_from(stuck.select("file", "line", "text", "rank"))
    return [
        Finding(
            kind="last_common_stage",
            severity="info",
            part="context",
            summary=summary,
            fix="",
            ranks=stuck_ranks,
            step=None if progress.has_no_step(common) else common["step"],
            stage=common["stage"],
            epoch=None if common["epoch"] == -1 else common["epoch"],
            evidence=evidence,
            evidence_total=total,
            order=float(common_key),
            details={"ranks_further": further_ranks, "ranks_stopped_here": stuck_ranks},
        )
    ]


# Keys looked at first, below the highest key every rank could have reached: a hang leaves
# the ranks within a step or two of each other, so the answer is nearly always among them
NEAR_THE_END = 256


def _last_reached_by_all(marks: pl.DataFrame, rank_count: int) -> int | None:
    """The highest key every rank has a mark at, None when there is none. It is at most the
    lowest of the ranks' highest keys; the keys just below that are counted first, so a run's
    millions of earlier marks are grouped only when none of those is shared."""
    ceiling = marks.group_by("rank").agg(pl.col("key").max()).get_column("key").min()
    near = pl.col("key").is_between(int(ceiling) - NEAR_THE_END, int(ceiling))
    for candidates in (marks.filter(near), marks):
        shared = (
            candidates.group_by("key")
            .agg(pl.col("rank").n_unique().alias("ranks"))
            .filter(pl.col("ranks") == rank_count)
        )
        if not shared.is_empty():
            return int(shared.get_column("key").max())
    return None


RULE = Rule(kind="last_common_stage", check=check)
