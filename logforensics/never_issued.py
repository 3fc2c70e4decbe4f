"""Ranks that never issued the collective the others timed out in (a departure that
`rules/stage_divergence.py` reports; `rules/collective_timeout.py` singles them out too).

A rank that did not time out, and whose own record of its process group (the dump signal's
`Last enqueued NCCL work: 59957`, `PG status: last enqueued work: 77`) stops below the
collective the others timed out in, never reached that collective: it had left the path the
others kept before it (work of its own, a step it skipped, an exception it caught). That is the
hang's divergence, and the timeout is its symptom (TorchInferno's 8-rank server: rank 7
enqueued up to #59957 while ranks 0-6 timed out in #59958; deveshpat/Ouroboros' Kaggle run:
rank 0 at #58724 ran validation while rank 1 timed out in ALLREDUCE #58725).
"""

from __future__ import annotations

import polars as pl

from logforensics.desync import TIMEOUT_EVENTS, group_key, per_rank_timeouts
from logforensics.findings import Finding
from logforensics.job import Job
from logforensics.placement import departure_over_timeouts
from logforensics.text import rank_list

FIX = (
    "{Who} stopped issuing collectives before this one while the others went on into it. Find "
    "what {who} did instead at that point (work only {it} {does}: an evaluation, a checkpoint, "
    "a log upload; a step {it} skipped; an exception {it} caught and went on from) in {its} "
    "last lines, and make every rank issue the same collectives in the same order (decide a "
    "skip together with `all_reduce(MAX)` on a flag; run evaluation on every rank or outside "
    "the process group)."
)


def never_enqueued(job: Job, per_rank: pl.DataFrame, reporters: list[int]) -> list[int]:
    """Ranks that did not time out and whose last enqueued work is below the collective the
    others timed out in, in the same group. Where the others' reports name no work, the one
    after their last completed is it (TorchInferno's 8-rank server: ranks 0-6 `Last enqueued
    NCCL work: 59998, last completed NCCL work: 59957`, rank 7 enqueued up to 59957)."""
    behind = _behind(job, per_rank, reporters)
    return sorted(behind.get_column("rank").unique().to_list())


def _behind(job: Job, per_rank: pl.DataFrame, reporters: list[int]) -> pl.DataFrame:
    """`pg, rank, last_enqueued, seq` of the ranks that never enqueued the timed-out work."""
    progress = _own_records(job).filter(~pl.col("rank").is_in(reporters))
    # the work after the last completed is the one that timed out only where the reporter had
    # enqueued it: a record level at both (`Last enqueued NCCL work: 233659, last completed NCCL
    # work: 233659`) says nothing was pending in that group, the timeout was in another
    # (vllm-project/vllm-omni#2928: the dump signal on PG 0, the watchdog's ALLREDUCE on PG 11)
    enqueued, completed = pl.col("last_enqueued"), pl.col("last_completed")
    pending = enqueued.is_null() | (enqueued > completed)
    failing = pl.coalesce("seq", pl.when(pending).then(completed + 1)).alias("seq")
    timed = per_rank.select("pg", failing).drop_nulls("seq").group_by("pg").agg(pl.col("seq").min())
    if progress.is_empty() or timed.is_empty():
        return pl.DataFrame(schema={"pg": pl.String, "rank": pl.Int32})
    return (
        progress.group_by("pg", "rank")
        .agg(pl.col("last_enqueued").max())
        .join(timed, on="pg")
        .filter(pl.col("last_enqueued") < pl.col("seq"))
    )


def _own_records(job: Job) -> pl.DataFrame:
    return job.events.filter(
        (pl.col("event") == "work_progress")
        & pl.col("rank").is_not_null()
        & pl.col("last_enqueued").is_not_null()
    ).with_columns(group_key(pl.col("pg")).alias("pg"))


def never_issued(job: Job) -> list[Finding]:
    timeouts = job.events.filter(pl.col("event").is_in(TIMEOUT_EVENTS))
    reporters = sorted(set(timeouts.get_column("rank").drop_nulls().to_list()))
    # the desync report names whom the others waited for in its own words
    if not reporters or not job.events.filter(pl.col("event") == "desync_report").is_empty():
        return []
    per_rank = per_rank_timeouts(timeouts)
    behind = _behind(job, per_rank, reporters)
    if behind.is_empty():
        return []
    never = sorted(behind.get_column("rank").unique().to_list())
    seq = int(behind.get_column("seq").min())
    ops = per_rank.filter(pl.col("seq") == seq).get_column("op").drop_nulls()
    op = ops.item(0) if ops.len() else None
    last = int(behind.get_column("last_enqueued").max())
    who = rank_list(never)
    one = len(never) == 1
    waiters = rank_list(reporters)
    collective = f"{op} #{seq}" if op else f"collective #{seq}"
    summary = (
        f"{who.capitalize()} never issued {collective}, the collective {waiters} timed out in: "
        f"{'its' if one else 'their'} own record of the group stops at work #{last} (the last "
        f"{'it' if one else 'they'} enqueued), so {who} had left the path the others kept "
        "before that collective."
    )
    records = _own_records(job).filter(pl.col("rank").is_in(never))
    it, its, does = ("it", "its", "does") if one else ("they", "their", "do")
    return [
        departure_over_timeouts(
            job,
            records,
            timeouts,
            never,
            summary=summary,
            fix=FIX.format(Who=who.capitalize(), who=who, it=it, its=its, does=does),
            seq=seq,
            op=op,
            details={
                "departure": "never_issued",
                "other_ranks": reporters,
                "last_enqueued": last,
            },
        )
    ]
