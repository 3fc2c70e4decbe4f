"""Attempts of a run in one console: what came before the elastic agent's last restart of
its workers is over.

torchrun with `--max-restarts` restarts every worker of a node when one fails, in the same
console; a `--log-dir` tree keeps each attempt in a folder of its own (`attempt_<n>`, of which
intake reads the latest). Within a file that shows the agent's restart (`workers_restarted`),
the failures and progress printed before its last restart belong to an attempt that ended,
when the file goes on to show the next one (a failure, progress or a finish after it):
the findings come from the attempt after it, as they would from the latest `attempt_<n>`. The
facts a run states once (the launch command, the world size, the device map) are kept from
every attempt. The rule `worker_restart` says what the earlier attempt died of.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

# What an attempt that is over may not leave behind: its failures and its progress.
OVER = pl.col("severity").is_in(["error", "warning"]) | pl.col("event").is_in(
    ["stage", "progress_bar"]
)


# The agent's failure to form the next attempt: its workers never ran.
JOINING_FAILED = r"Rendezvous\w*Error|DistStoreError|DistNetworkError"
# ... or a worker's traceback, its exception line cut, that stops where it forms its group
# (open-mmlab/OpenPCDet-based CenterPoint#224: attempt 3's `torch.distributed.
# init_process_group(backend="nccl", init_method="env://")` as the paste's last line)
FORMING_GROUP = r"\binit_process_group\("


@dataclass(frozen=True, slots=True)
class Attempts:
    events: pl.DataFrame  # the last attempt's, with every attempt's facts
    marks: pl.DataFrame  # the last attempt's
    earlier: pl.DataFrame  # the failures and progress of attempts that are over


def last_attempts(events: pl.DataFrame, marks: pl.DataFrame) -> Attempts:
    """`events` and `marks` without what each file printed before its agent's last restart."""
    restarts = events.filter(pl.col("event") == "workers_restarted").select("file", "line")
    if restarts.is_empty():
        return Attempts(events, marks, events.clear())
    # a restart the file shows nothing of after it (pytorch/pytorch#147064: the paste ends at
    # the restart line), or only its own failure to form the next attempt (pytorch/pytorch
    # #91943: `RendezvousClosedError` at the re-rendezvous), leaves the attempt before it as
    # the latest news
    cut_forming = (
        (pl.col("event") == "exception")
        & pl.col("exc_type").is_null()
        & pl.col("end_text").fill_null("").str.contains(FORMING_GROUP)
    )
    joining_failed = pl.col("exc_type").fill_null("").str.contains(JOINING_FAILED) | cut_forming
    ran = (OVER | (pl.col("event") == "run_finished")) & ~joining_failed
    activity = pl.concat(
        [
            events.filter(ran).select("file", "line"),
            marks.select(pl.col("file").cast(pl.String), "line"),
        ],
        how="vertical_relaxed",
    )
    last_activity = activity.group_by("file").agg(pl.col("line").max().alias("_last"))
    restarts = (
        restarts.join(last_activity, on="file")
        .filter(pl.col("line") < pl.col("_last"))
        .group_by("file")
        .agg(pl.col("line").max().alias("_restart"))
    )
    if restarts.is_empty():
        return Attempts(events, marks, events.clear())
    before = pl.col("line") < pl.col("_restart").fill_null(0)
    placed = events.join(restarts, on="file", how="left")
    over = before & OVER
    mark_restarts = restarts.with_columns(pl.col("file").cast(marks.schema["file"]))
    marks = (
        marks.join(mark_restarts, on="file", how="left")
        .filter(~before.fill_null(False))
        .drop("_restart")
    )
    return Attempts(
        placed.filter(~over.fill_null(False)).drop("_restart"),
        marks,
        placed.filter(over.fill_null(False)).drop("_restart"),
    )
