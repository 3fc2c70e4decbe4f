"""An attempt the elastic agent ended by restarting its workers: what it died of.

Within a console that shows torchrun's `Worker group FAILED. 1/1 attempts left; will restart
worker group`, the failures before that line belong to an attempt that is over (see
`logforensics/attempts.py`): the other findings come from the attempt after it. This rule
quotes the earlier attempt's first failure, so that the report still says why the workers
were restarted. It is context, never the verdict: a restart that was followed by a run that
finished leaves no failure to fix in this job, and a run that failed again has a failure of
its own.
"""

from __future__ import annotations

import polars as pl

from logforensics.findings import Evidence, Finding
from logforensics.job import Job
from logforensics.registry import Rule

FIX = (
    "Nothing to change for the restart itself: torchrun restarted the workers as "
    "`--max-restarts` allows. If the earlier attempt's failure recurs, fix it as its own "
    "failure (rerun the analysis on the lines of that attempt alone to see the whole story)."
)
# the few lines of an earlier attempt quoted before the restart line
QUOTED = 3


def check(job: Job) -> list[Finding]:
    """One finding for the consoles the analysis cut at a restart: the failures of the attempt
    just before each console's cut (after the restart before it, if any), the earliest first."""
    earlier = job.earlier_attempts
    if earlier.is_empty():
        return []
    restarts = job.events.filter(pl.col("event") == "workers_restarted").select(
        "file", "line", "text", "extra"
    )
    last_before = earlier.group_by("file").agg(pl.col("line").max().alias("_last"))
    placed = restarts.join(last_before, on="file")
    # each console's cut: its first restart after what the analysis left out
    cuts = (
        placed.filter(pl.col("line") > pl.col("_last"))
        .sort("file", "line")
        .group_by("file", maintain_order=True)
        .first()
        .filter(pl.col("extra").is_not_null())  # not a restart for new nodes
        .select("file", pl.col("line").alias("_cut"), pl.col("text").alias("_cut_text"))
    )
    previous = (
        placed.filter(pl.col("line") < pl.col("_last"))
        .group_by("file")
        .agg(pl.col("line").max().alias("_previous"))
    )
    failed = (
        earlier.join(cuts, on="file")
        .join(previous, on="file", how="left")
        .filter(
            (pl.col("line") > pl.col("_previous").fill_null(0)) & (pl.col("severity") == "error")
        )
        .sort("file", "line")
    )
    if failed.is_empty():
        return []
    return [_finding(job, failed)]


def _finding(job: Job, failed: pl.DataFrame) -> Finding:
    # a traceback is quoted at its exception line (where its block ends); within a console in
    # its order, the console whose failures were printed first (by their stamps) first
    ends = (
        failed.select(
            "file",
            pl.coalesce("end_line", "line").cast(pl.UInt32).alias("line"),
            "rank",
            pl.col("timestamp").min().over("file").alias("_first_time"),
            "_cut",
            "_cut_text",
        )
        .unique(["file", "line"], keep="first")
        .sort("_first_time", "file", "line", nulls_last=True)
    )
    first = ends.row(0, named=True)
    shown = job.quote(ends.head(QUOTED).select("file", "line", "rank"))
    evidence = [
        Evidence(row["file"], int(row["line"]), row["text"] or "", row["rank"])
        for row in shown.iter_rows(named=True)
    ]
    evidence.append(Evidence(first["file"], int(first["_cut"]), first["_cut_text"] or ""))
    consoles = ends.get_column("file").n_unique()
    where = f"{first['file']}:{first['_cut']}"
    if consoles > 1:
        where += f", and in {consoles - 1:,} other console{'s' if consoles > 2 else ''}"
    on = f" on rank {first['rank']}" if first["rank"] is not None else ""
    summary = (
        f"The launcher restarted the workers after a failure ({where}): the other findings "
        "are those of the attempt after it. "
        f"The attempt before it failed first at {first['file']}:{first['line']}{on}."
    )
    return Finding(
        kind="worker_restart",
        severity="warning",
        part="context",
        summary=summary,
        fix=FIX,
        ranks=[int(first["rank"])] if first["rank"] is not None else [],
        evidence=evidence,
        evidence_total=failed.height + consoles,
        details={"restart": {"file": first["file"], "line": int(first["_cut"])}},
    )


RULE = Rule(kind="worker_restart", check=check)
