"""Errors the job went on past: NCCL warnings and allocation failures a process printed and
then trained through.

An old NCCL's remote-allocator thread can log `Net : Connection closed by remote peer`,
`[Rem Allocator] Allocation failed` and `Cuda failure 'out of memory'` for a connection not
meant for it, and the job trains on (NVIDIA/nccl#844: "while I do get that message, the
training keeps moving forward"). When the writer of such an error printed training progress
after it, and the logs hold no other failure, the error is a warning: it did not stop the
job. With another failure in the logs the survived error stays what it was, since a rank
that went on past an error its peers did not see may be what made them wait.
"""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

from logforensics.findings import Evidence, Finding
from logforensics.job import Job

# Kinds a process can print and live through; an exception or a timeout it went on past is
# a different story (a swallowed exception is a divergence of its own).
SURVIVABLE = ("nccl_error", "oom")
# Progress lines (distinct steps) after the error, from its writer, that say it trained on.
STEPS_AFTER = 2

FIX = (
    "Nothing to change for this job: it trained on after the error. If the messages recur, "
    "upgrade NCCL (old versions log errors for connections not meant for them) and compare "
    "with a run where they do not appear."
)


def mark_survived(findings: Iterable[Finding], job: Job) -> list[Finding]:
    """`findings`, the errors of SURVIVABLE kinds whose writers trained on after them turned
    into warnings, when they are all the errors there are."""
    findings = list(findings)
    errors = [finding for finding in findings if finding.severity == "error"]
    if not errors or any(finding.kind not in SURVIVABLE for finding in errors):
        return findings
    progress = _progress(job)
    after = [_trained_on_after(finding.evidence, progress) for finding in errors]
    if any(place is None for place in after):
        return findings
    for finding, place in zip(errors, after, strict=True):
        file, line = place  # type: ignore[misc]
        finding.severity = "warning"
        finding.part = "context"
        finding.summary = (
            f"Training went on after it ({file}:{line}): {finding.summary} The job lived "
            "through this error; it is not what stopped it."
        )
        finding.fix = FIX
        finding.details["survived"] = {"file": file, "line": line}
    return findings


def _progress(job: Job) -> pl.DataFrame:
    """`file, line, rank, step` of every progress line and stage mark."""
    events = job.events.filter(pl.col("event").is_in(["stage", "progress_bar"])).select(
        "file", "line", "rank", "step"
    )
    marks = job.marks.select(pl.col("file").cast(pl.String), "line", "rank", "step")
    return pl.concat([events, marks], how="vertical_relaxed")


def _trained_on_after(evidence: list[Evidence], progress: pl.DataFrame) -> tuple[str, int] | None:
    """Where training went on after every evidence line (the latest of the places each line's
    writer printed its first progress after it, of STEPS_AFTER steps at least); None when one
    of them did not."""
    if not evidence:
        return None
    latest: tuple[str, int] | None = None
    for line in evidence:
        later = progress.filter(
            (pl.col("file") == line.file)
            & (pl.col("line") > line.line)
            & pl.col("rank").eq_missing(pl.lit(line.rank, pl.Int32))
        ).sort("line")
        if later.get_column("step").n_unique() < STEPS_AFTER:
            return None
        place = (line.file, int(later.item(0, "line")))
        latest = place if latest is None or place > latest else latest
    return latest
