"""An exception on a subset of ranks, other than the communication errors every rank gets
once the job is already broken.

If the rank went on printing stage marks after it, or logged it as a warning and carried on,
the exception was swallowed (caught and `continue`d) and that is where the rank left the
others' path. If the rank went silent, it is the rank the others are waiting for. The same
exception on several ranks is one finding naming them all (a common cause: the data, the
environment), not one rank's failure and its echoes. A traceback cut off before its exception
line (a killed process, a truncated paste) only shows where the rank was: it is no cause.
"""

from __future__ import annotations

import polars as pl

from logforensics.findings import Finding, evidence_from
from logforensics.job import Job
from logforensics.placement import AFTER_MARK, earliest_time, placed_keys
from logforensics.registry import Rule
from logforensics.text import rank_list

# Exceptions that report a collective that already failed: symptoms, handled by other rules.
CONSEQUENCE = (
    r"(?i)DistBackendError|DistStoreError|ChildFailedError|timed? ?out|timeout|Connection closed"
    r"|Connection reset|NCCL (?:error|communicator)|ProcessGroup|[Ww]atchdog|monitoredBarrier"
    r"|Detected mismatch between collectives|finished reduction"
    r"|KeyboardInterrupt|SignalException|Broken pipe|Socket|gloo"
)
SWALLOWED_FIX = (
    "The exception was caught and the rank carried on, skipping collectives the other ranks "
    "still issue. Either let it propagate (re-raise it: the job fails fast instead of "
    "hanging), or make the skip collective: every rank sets a flag, "
    "`dist.all_reduce(flag, op=dist.ReduceOp.MAX)`, and all ranks skip the step together. Fix "
    "the cause of the exception itself too."
)
FATAL_FIX = (
    "Fix the exception on {who}; the other ranks hung in the next collective because {it} "
    "stopped issuing collectives. Wrapping the script with "
    "`torch.distributed.elastic.multiprocessing.errors.record` makes torchrun report it first."
)
LOGGED = '"logged":true'  # set by parsers/log_levels.py on a caught exception it logged
COMMON_FIX = (
    "Every rank named raised the same exception: look for what they share (the data shard "
    "format, the environment, a version or a path), not for one rank's divergence."
)


def check(job: Job) -> list[Finding]:
    exceptions = job.events.filter(
        (pl.col("event") == "exception")
        & pl.col("rank").is_not_null()
        & pl.col("exc_type").is_not_null()  # a traceback cut before its exception: no cause
    ).with_columns(
        pl.concat_str(
            [pl.col("exc_type").fill_null(""), pl.col("exc_message").fill_null("")], separator=": "
        ).alias("what"),
        pl.col("extra")
        .str.contains('"logged":true', literal=True)
        .fill_null(False)
        .alias("logged"),
    )
    primary = exceptions.filter(~pl.col("what").str.contains(CONSEQUENCE))
    if primary.is_empty():
        return []
    placed = placed_keys(job, primary).with_columns(_same_error().alias("same_error"))
    findings = []
    for (_,), rows in placed.sort("file", "line").group_by("same_error", maintain_order=True):
        findings.append(_finding(job, rows, primary))
    return sorted(findings, key=lambda f: f.ranks)


def _same_error() -> pl.Expr:
    """What makes two exceptions the same error: the type and message with numbers masked."""
    return pl.concat_str(
        pl.col("exc_type"),
        pl.col("exc_message").fill_null("").str.replace_all(r"\d+", "N").str.slice(0, 200),
        separator=": ",
    )


def _finding(job: Job, rows: pl.DataFrame, all_primary: pl.DataFrame) -> Finding:
    first = rows.row(0, named=True)
    ranks = sorted(rows.get_column("rank").unique().to_list())
    exc = first["exc_type"]
    message = (first["exc_message"] or "").strip()
    where = f" at {first['frame']}" if first["frame"] else ""
    after = [_after_effect(job, int(row["rank"]), row["key"]) for row in rows.iter_rows(named=True)]
    logged = bool(rows.get_column("logged").all())
    swallowed = logged or all(kept_going for kept_going, _, _ in after)
    step, stage = next(((s, st) for _, s, st in after if s is not None), (None, None))
    everyone = set(all_primary.get_column("rank").unique().to_list())
    on_all = job.progress is not None and set(job.progress.ranks) <= everyone
    who = rank_list(ranks).capitalize()
    verb = "logged" if logged else "raised"
    text = f"{who} {verb} {exc}" + (f" ({message[:160]})" if message else "") + where
    if step is not None and job.progress is not None and stage == job.progress.stage_order[-1]:
        text += f" after step {step}"  # between two steps: after the last stage of one
    elif step is not None:
        text += f" during step {step} ({stage})"
    if swallowed:
        text += ", caught it and kept going."
        fix = SWALLOWED_FIX
    else:
        text += "."
        fix = FATAL_FIX.format(who=rank_list(ranks), it="it" if len(ranks) == 1 else "they")
    if len(ranks) > 1:
        fix = COMMON_FIX + " " + fix
    if on_all:
        text += " Every rank raised an exception like it, so it is not one rank's divergence."
    evidence, total = evidence_from(_with_exception_lines(rows))
    key = rows.get_column("key").drop_nulls()
    return Finding(
        kind="rank_exception",
        # caught and logged, it is a failure only if the rank left the path (the reasoner says)
        severity="warning" if logged else "error",
        part="explanation",
        summary=text,
        fix=fix,
        ranks=ranks,
        step=step,
        stage=stage,
        evidence=evidence,
        evidence_total=total,
        order=None if key.is_empty() else float(key.min()) + AFTER_MARK,
        timestamp=earliest_time(rows),
        confidence="high" if not key.is_empty() or not swallowed else "medium",
        details={
            "exception": exc,
            "message": message[:500],
            "swallowed": swallowed,
            "logged": logged,
            "frame": first["frame"],
        },
    )


def _with_exception_lines(rows: pl.DataFrame) -> pl.DataFrame:
    """Each traceback's first line and its exception line: where it began and what it says."""
    ends = rows.filter(pl.col("end_text").is_not_null()).select(
        "file", pl.col("end_line").alias("line"), pl.col("end_text").alias("text"), "rank"
    )
    starts = rows.select("file", "line", "text", "rank")
    return pl.concat([starts, ends], how="vertical_relaxed").sort("file", "line")


def _after_effect(job: Job, rank: int, key: int | None) -> tuple[bool, int | None, str | None]:
    """Whether the rank went on after the exception, and the step it happened in.

    Placed by the marks around it: marks after it mean it was caught. Unplaced (the traceback
    is in another file than the marks): a rank whose marks go on as far as the others' did
    not die of it, so it was caught too."""
    progress = job.progress
    if progress is None or rank not in progress.ranks:
        return False, None, None
    own = progress.marks.filter(pl.col("rank") == rank)
    if key is None:
        stopped = any(d.rank == rank and d.kind == "stopped" for d in progress.departures)
        return not stopped and own.height > 1, None, None
    at = progress.key_of(int(key))
    kept_going = not own.filter(pl.col("key") > key).is_empty()
    return kept_going, at["step"], at["stage"]


RULE = Rule(kind="rank_exception", check=check, specificity=25)
