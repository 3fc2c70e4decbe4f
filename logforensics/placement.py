"""Place events that are not stage marks in the run, so findings can be ordered in time.

An event is placed just after the last stage mark its rank printed before it in the same
file (a traceback printed between `step=7 stage=before_backward` and the next mark happened
during step 7's backward). Only the file holding the rank's own sequence of marks is used: a
launcher console that copies stdout and stderr separately (`torchrun --tee`) interleaves them
out of order. Events elsewhere stay unplaced; printed timestamps then order them, compared
only within one host.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import polars as pl

from logforensics.attribution import GLOG_STAMP, glog_clock
from logforensics.findings import Finding, evidence_from
from logforensics.job import Job

AFTER_MARK = 0.5  # an event after mark k sorts after findings placed at mark k itself


def placed_keys(job: Job, events: pl.DataFrame) -> pl.DataFrame:
    """`events` with a `key` column: the key of the last mark before each event (or null)."""
    if job.progress is None or events.is_empty():
        return events.with_columns(pl.lit(None, dtype=pl.Int64).alias("key"))
    marks = (
        job.progress.marks.filter(pl.col("rank").is_in(events.get_column("rank").implode()))
        .select("rank", pl.col("file").cast(pl.String), pl.col("line").cast(pl.Int64), "key")
        .sort("line")
    )
    rows = events.with_columns(pl.col("line").cast(pl.Int64)).sort("line")
    return rows.join_asof(
        marks.rename({"line": "mark_line"}),
        left_on="line",
        right_on="mark_line",
        by=["rank", "file"],
        strategy="backward",
        check_sortedness=False,  # both sides are sorted by line above
    ).drop("mark_line")


def place(job: Job, events: pl.DataFrame) -> float | None:
    """The earliest position of these events in the run, or None when none can be placed."""
    return place_with_step(job, events)[0]


def earliest_time(events: pl.DataFrame) -> datetime | None:
    times = events.get_column("timestamp").drop_nulls()
    return None if times.is_empty() else times.min()


def earliest_raise(job: Job, events: pl.DataFrame) -> datetime | None:
    """`earliest_time` of `events`, a line inside a traceback taking the time its traceback
    began: an exception's line comes last in its traceback (a collector stamps each line), and
    what it names happened when the traceback was printed, not some lines later."""
    tracebacks = job.events.filter(
        (pl.col("event") == "exception") & pl.col("end_line").is_not_null()
    ).select(
        "file", pl.col("line").alias("_start"), "end_line", pl.col("timestamp").alias("_began")
    )
    if tracebacks.is_empty():
        return earliest_time(events)
    began = (
        events.select("file", "line", "timestamp")
        .join(tracebacks, on="file")
        .filter(pl.col("line").is_between(pl.col("_start"), pl.col("end_line")))
        .get_column("_began")
    )
    times = pl.concat([events.get_column("timestamp"), began]).drop_nulls()
    return None if times.is_empty() else times.min()


# glog's header inside a line's text, after any prefix: `[rank0]:[E1213 17:24:49.082111648 `,
# `E1213 17:25:50.704000 1497962 ...`
GLOG_CLOCK = rf"(?:^|[\[\]: ]){GLOG_STAMP}"


def clock_of() -> pl.Expr:
    """When each event's line was written, as text that sorts in time within one year: its
    time stamp, else glog's month, day and clock from its text (glog prints no year, so such
    lines keep no time stamp when nothing in their file says the year)."""
    return pl.coalesce(
        pl.col("timestamp").dt.strftime("%m%d %H:%M:%S%.6f"), glog_clock(pl.col("text"), GLOG_CLOCK)
    )


def place_with_step(job: Job, events: pl.DataFrame) -> tuple[float | None, int | None, str | None]:
    """`place`, and the step and stage of the mark the earliest event follows."""
    keys = placed_keys(job, events.filter(pl.col("rank").is_not_null())).get_column("key")
    keys = keys.drop_nulls()
    if keys.is_empty() or job.progress is None:
        return None, None, None
    key = int(keys.min())
    at = job.progress.key_of(key)
    return float(key) + AFTER_MARK, at["step"], at["stage"]


def guessed_departure(
    job: Job,
    rows: pl.DataFrame,
    *,
    guess: int,
    showing: list[int],
    summary: str,
    fix: str,
    details: dict[str, object],
) -> Finding:
    """A departure the logs show only through `showing` ranks' symptoms (`rows`), pinned at low
    confidence on the rank that by convention does the work they wait for (`guess`: rank 0
    makes shared files, sources broadcasts); nobody is blamed when that rank shows the symptom
    itself."""
    among = guess in showing
    return placed_finding(
        job,
        rows,
        kind="stage_divergence",
        severity="error",
        part="departure",
        summary=summary,
        fix=fix,
        ranks=[] if among else [guess],
        blames_nobody=among,
        confidence="low",
        details=details,
    )


def placed_finding(job: Job, rows: pl.DataFrame, **fields: Any) -> Finding:
    """A finding whose evidence is `rows` (capped), placed in the run where the earliest of
    them stands and timed by the earliest printed time among them."""
    evidence, total = evidence_from(
        rows.sort("file", "line").select("file", "line", "text", "rank")
    )
    if "order" not in fields:
        fields["order"] = place(job, rows)
    return Finding(
        evidence=evidence,
        evidence_total=total,
        timestamp=earliest_time(rows),
        **fields,
    )


def departure_over_timeouts(
    job: Job, own: pl.DataFrame, timeouts: pl.DataFrame, ranks: list[int], **fields: Any
) -> Finding:
    """The departure of `ranks` the others' timeouts point to: their own lines first as its
    evidence, then two of the others' reports (the evidence is capped), with medium confidence."""
    shown = pl.concat([own, timeouts.sort("file", "line").head(2)], how="diagonal_relaxed")
    return placed_finding(
        job,
        shown,
        kind="stage_divergence",
        severity="error",
        part="departure",
        ranks=ranks,
        culprit_ranks=ranks,
        confidence="medium",
        **fields,
    )
