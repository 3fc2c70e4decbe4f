"""Ranks NCCL's RAS report names as behind or gone (a departure that
`rules/stage_divergence.py` reports; the report's lines are read by `parsers/nccl_ras.py`).

RAS compares what every rank of a communicator has launched. A rank that launched fewer
collective operations than the others stopped issuing them (hung, or on a path of its own); a
rank whose data is missing, or whose process RAS considers dead, left the job. Either way the
others go on to wait for it:

    7 ranks have launched up to operation 64
    Rank 7 has launched up to operation 60 -- GPU 3 managed by process 1650386 on node node1

(NVIDIA/nccl docs/examples/08_ras/01_fault_detection: rank 7 made to sleep, then to exit.) One
snapshot of a running job may catch counts in passing; a skew that stays is the evidence, so
the finding says it is a snapshot's.
"""

from __future__ import annotations

import polars as pl

from logforensics.findings import Finding
from logforensics.job import Job
from logforensics.placement import placed_finding
from logforensics.text import capitalized, rank_list

BEHIND_FIX = (
    "Read what the rank RAS names did instead of launching the next collectives (its own log "
    "at that time, `py-spy dump --pid` of its process on that node): a hang of its own, a "
    "slow step, or a path that skips collectives. Run `ncclras` again: a count that stays "
    "behind is a hang, one that catches up was a moment's skew."
)
OTHERS_BEHIND_FIX = (
    "Find the rank that stopped among those RAS does not list: read their logs at that time "
    "(the last step each printed) or `py-spy dump --pid` their processes, for the one stuck "
    "before the operation the listed ranks already launched. The listed ranks only wait in it."
)
GONE_FIX = (
    "The process RAS names is gone: read its own log's last lines and the node's kernel log "
    "(`dmesg -T` for the OOM killer or Xid errors) for why it exited or died; the other ranks "
    "waited for it."
)


def named_by_ras(job: Job) -> list[Finding]:
    events = job.events
    if "event" not in events.columns:
        return []
    listed = events.filter(pl.col("event") == "ras_rank").with_columns(
        pl.col("extra").str.json_path_match("$.state").alias("_state"),
        pl.col("extra").str.json_path_match("$.front").cast(pl.Int64, strict=False).alias("_front"),
        pl.col("extra").str.json_path_match("$.back").cast(pl.Int64, strict=False).alias("_back"),
    )
    behind = listed.filter(pl.col("_state") == "behind")
    ahead = listed.filter(pl.col("_state") == "ahead")
    gone = pl.concat(
        [listed.filter(pl.col("_state") == "missing"), _dead(events, listed)],
        how="diagonal_relaxed",
    )
    return (
        ([_behind(job, behind)] if not behind.is_empty() else [])
        + ([_gone(job, gone)] if not gone.is_empty() else [])
        + ([_others_behind(job, ahead)] if behind.is_empty() and not ahead.is_empty() else [])
    )


def _dead(events: pl.DataFrame, listed: pl.DataFrame) -> pl.DataFrame:
    """Dead processes, each with the rank RAS lists for the same process when it does."""
    dead = events.filter(pl.col("event") == "ras_dead")
    if dead.is_empty():
        return dead
    ranks = listed.select("host", "pid", pl.col("rank").alias("_listed_rank")).unique(
        subset=["host", "pid"]
    )
    return dead.join(ranks, on=["host", "pid"], how="left").with_columns(
        pl.coalesce("_listed_rank", "rank").alias("rank")
    )


def _behind(job: Job, rows: pl.DataFrame) -> Finding:
    ranks = sorted(rows.get_column("rank").drop_nulls().unique().to_list())
    first = rows.sort("file", "line").row(0, named=True)
    summary = (
        f"NCCL's RAS report found {rank_list(ranks)} behind: {'it' if len(ranks) == 1 else 'they'}"
        f" had launched collectives up to operation {first['value']} while the other ranks of "
        f"the communicator had reached {first['_front']}. {capitalized(rank_list(ranks))} stopped "
        "launching the collectives the others went on to (one snapshot of the counts)."
    )
    details = {"departure": "ras_behind", "launched": first["value"], "front": first["_front"]}
    return _departure(job, rows, ranks, summary, BEHIND_FIX, details)


def _others_behind(job: Job, rows: pl.DataFrame) -> Finding:
    """The ranks RAS lists are ahead of the rest: it names the smaller group, so the ranks that
    stopped launching are the ones it does not name, and the logs do not say which of them."""
    ranks = sorted(rows.get_column("rank").drop_nulls().unique().to_list())
    first = rows.sort("file", "line").row(0, named=True)
    back = first["_back"]
    summary = (
        f"NCCL's RAS report lists {rank_list(ranks)} ahead: {'it' if len(ranks) == 1 else 'they'}"
        f" had launched collectives up to operation {first['value']} while the other ranks of "
        f"the communicator had launched up to {back}. RAS names the smaller group: the ranks "
        "that stopped launching are the others, which it does not name, and the hang is among "
        f"them; {rank_list(ranks)} only wait for them (one snapshot of the counts)."
    )
    details = {"departure": "ras_others_behind", "launched": back, "front": first["value"]}
    return _departure(job, rows, ranks, summary, OTHERS_BEHIND_FIX, details, blames_nobody=True)


def _gone(job: Job, rows: pl.DataFrame) -> Finding:
    ranks = sorted(rows.get_column("rank").drop_nulls().unique().to_list())
    first = rows.sort("file", "line").row(0, named=True)
    where = f"process {first['pid']} on node {first['host']}, GPU {first['cuda_dev']}"
    who = rank_list(ranks) if ranks else "a process"
    summary = (
        f"NCCL's RAS report lost {who} ({where}): its communicator data is missing or its "
        "process is considered dead, so it left the job while the other ranks ran on."
    )
    details = {"departure": "ras_gone", "pid": first["pid"], "host": first["host"]}
    return _departure(job, rows, ranks, summary, GONE_FIX, details)


def _departure(
    job: Job,
    rows: pl.DataFrame,
    ranks: list[int],
    summary: str,
    fix: str,
    details: dict[str, object],
    blames_nobody: bool = False,
) -> Finding:
    """The departure the report's `rows` name, at medium confidence: one snapshot of it."""
    return placed_finding(
        job,
        rows,
        kind="stage_divergence",
        severity="error",
        part="departure",
        summary=summary,
        fix=fix,
        ranks=ranks,
        blames_nobody=blames_nobody,
        confidence="medium",
        details=details,
    )
