"""An attempt the elastic agent ended by restarting its workers: what it died of.

Within a console that shows torchrun's `Worker group FAILED. 1/1 attempts left; will restart
worker group`, the failures before that line belong to an attempt that is over (see
`logforensics/attempts.py`): the other findings come from the attempt after it. This rule
quotes the earlier attempt's first failure, so that the report still says why the workers
were restarted. It is context: a restart that was followed by a run that finished leaves no
failure to fix in this job, and a run that failed again has a failure of its own. Where the
logs hold nothing but the restart (no failure before it, nothing after it going on), the
restart is the failure they report, and the verdict.
"""

from __future__ import annotations

import polars as pl

from logforensics.findings import Evidence, Finding
from logforensics.job import Job
from logforensics.registry import Rule
from logforensics.text import clipped

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
        return _restarted_unexplained(job)
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


UNEXPLAINED_FIX = (
    "The failure itself is in the workers' own output, which these logs do not hold: torchrun's "
    "`--log-dir` (or `--redirects`/`--tee`) files, each worker's `error.json` reply file under "
    "the agent's log directory, or the console before these lines. Analyse those; a restart "
    "that fails the same way each attempt spends `--max-restarts` and then ends the job."
)
# what shows the attempt after a restart went on: a worker's progress, or the run's end
WENT_ON = ("stage", "progress_bar", "epoch_start", "epoch_end", "run_finished")


def _restarted_unexplained(job: Job) -> list[Finding]:
    """The agent restarting its workers after a failure, where the logs hold nothing of the
    failed attempt, nothing failing anywhere and nothing of the next attempt going on
    (ylanglbw/Doc2EDAG#24: `Worker group FAILED. 3/3 attempts left; will restart worker
    group`, the rendezvous again, `attempt_1`'s reply files, and the paste ends). The
    restart is then the only failure the logs report: the verdict, as it was reported."""
    restarts = job.events.filter(
        (pl.col("event") == "workers_restarted") & pl.col("extra").is_not_null()
    ).sort("file", "line")
    if restarts.is_empty() or not job.nothing_failed():
        return []
    first = restarts.row(0, named=True)
    after = job.events.filter(
        pl.col("event").is_in(WENT_ON) & (pl.col("line") > first["line"])
    ).filter(pl.col("file") == first["file"])
    if after.height or job.made_progress():
        return []
    text = str(first["text"]).strip()
    said = text[text.find("Worker group") :] if "Worker group" in text else text
    return [
        Finding(
            kind="worker_restart",
            severity="error",
            part="explanation",
            summary=(
                f"The launcher found its worker group failed and restarted it (`{clipped(said)}`); "
                "the logs hold no line of the attempt that failed, so what it died of is not "
                "said here."
            ),
            fix=UNEXPLAINED_FIX,
            ranks=[],
            evidence=[Evidence(first["file"], int(first["line"]), text)],
            evidence_total=restarts.height,
            confidence="low",
            blames_nobody=True,
            details={
                "restart": {"file": first["file"], "line": int(first["line"])},
                "unexplained": True,
            },
        )
    ]


RULE = Rule(kind="worker_restart", check=check)
