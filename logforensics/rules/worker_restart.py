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
    """One finding per file whose console the analysis cut at a restart: the failures of the
    attempt just before that restart (after the one before it, if any)."""
    earlier = job.earlier_attempts
    if earlier.is_empty():
        return []
    restarts = job.events.filter(pl.col("event") == "workers_restarted")
    findings = []
    for (file,), before in earlier.group_by("file", maintain_order=True):
        lines = restarts.filter(pl.col("file") == file).get_column("line").sort()
        last_before = before.get_column("line").max()
        cut = lines.filter(lines > last_before).min()
        previous = lines.filter(lines < last_before).max()
        cause = restarts.filter((pl.col("file") == file) & (pl.col("line") == cut))
        if cut is None or cause.get_column("extra").is_null().all():
            continue  # a restart for new nodes, with no failure to tell
        failed = before.filter(
            (pl.col("line") > (previous or 0)) & (pl.col("severity") == "error")
        ).sort("line")
        if not failed.is_empty():
            findings.append(_finding(job, str(file), int(cut), cause.item(0, "text"), failed))
    return findings


def _finding(
    job: Job, file: str, restart_line: int, restart_text: str | None, failed: pl.DataFrame
) -> Finding:
    # a traceback is quoted at its exception line (where its block ends)
    ends = failed.select(
        "file",
        pl.coalesce(_column(failed, "end_line"), "line").cast(pl.UInt32).alias("line"),
        "rank",
    ).unique(["file", "line"], keep="first", maintain_order=True)
    shown = job.quote(ends.head(QUOTED))
    evidence = [
        Evidence(row["file"], int(row["line"]), row["text"] or "", row["rank"])
        for row in shown.iter_rows(named=True)
    ]
    evidence.append(Evidence(file, restart_line, restart_text or ""))
    first = ends.row(0, named=True)
    on = f" on rank {first['rank']}" if first["rank"] is not None else ""
    summary = (
        f"The launcher restarted the workers after a failure ({file}:{restart_line}): the "
        "other findings are those of the attempt after it. "
        f"The attempt before it failed first at {file}:{first['line']}{on}."
    )
    return Finding(
        kind="worker_restart",
        severity="warning",
        part="context",
        summary=summary,
        fix=FIX,
        ranks=[int(first["rank"])] if first["rank"] is not None else [],
        evidence=evidence,
        evidence_total=failed.height + 1,
        details={"restart": {"file": file, "line": restart_line}},
    )


def _column(frame: pl.DataFrame, name: str) -> pl.Expr:
    return pl.col(name) if name in frame.columns else pl.lit(None, dtype=pl.UInt32)


RULE = Rule(kind="worker_restart", check=check)
