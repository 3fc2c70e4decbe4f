"""Shards an inference server's launcher waited for until its log ends, none of their own lines
saying why: a start-up that hung (parsers/tgi_launcher.py).

Text Generation Inference's launcher logs `Waiting for shard to be ready... rank=N` every ten
seconds while shard N loads its model; a shard that fails prints its error through the
launcher. A log that ends in those waits, with no error anywhere, is a start-up that never
finished: every shard still waiting is a common point they all stopped at (huggingface/
text-generation-inference#1838: four shards, `rank=0` to `rank=3`, until the paste ends); the
shards still waiting while others were ready are the ones that held the server up.
"""

from __future__ import annotations

import polars as pl

from logforensics.findings import Finding
from logforensics.job import Job
from logforensics.placement import placed_finding
from logforensics.text import duration, rank_ranges

FIX = (
    "The launcher shows only that the shards did not finish loading; their own output says "
    "why. Run the shard alone with its logs (`text-generation-launcher ... --num-shard 1`, or "
    "the shard's `text-generation-server serve` command) and look for a model download or "
    "conversion still running, a GPU out of memory, kernels being compiled, or NCCL stuck in "
    "its init between the shards (`NCCL_DEBUG=INFO`; `NCCL_P2P_DISABLE=1` on GPUs without "
    "peer access)."
)
# the launcher's first wait comes ten seconds into a shard's loading: a shard waited on once
# may be loading as it should; below a minute of waits the finding is a guess
MIN_WAITS = 2
SURE_WAIT_SECONDS = 60


def shards_never_ready(job: Job) -> list[Finding]:
    events = job.events
    waits = events.filter((pl.col("event") == "shard_waiting") & pl.col("rank").is_not_null())
    if waits.is_empty() or not job.nothing_failed():
        return []
    ready = set(
        events.filter(pl.col("event") == "shard_ready").get_column("rank").drop_nulls().to_list()
    )
    still = waits.filter(~pl.col("rank").is_in(list(ready)))
    if still.is_empty():
        return []
    if still.group_by("rank").len().get_column("len").max() < MIN_WAITS:
        return []
    seconds = _waited_seconds(still)
    confidence = "medium" if seconds is not None and seconds >= SURE_WAIT_SECONDS else "low"
    ranks = sorted(still.get_column("rank").unique().to_list())
    shards = shard_list(ranks)
    waited = f" for {duration(seconds)}" if seconds is not None else ""
    last = still.sort("file", "line").tail(1)
    if not ready:
        summary = (
            f"The launcher waited{waited} for {shards} to load, and the log ends with none of "
            "them ready and no error: the server's start-up hung while the shards loaded, the "
            "last point they all reached."
        )
        return [
            placed_finding(
                job,
                pl.concat([still.sort("file", "line").head(1), last]),
                kind="last_common_stage",
                severity="error",
                part="explanation",
                summary=summary,
                fix=FIX,
                ranks=ranks,
                blames_nobody=True,
                confidence=confidence,
                details={"never_ready": ranks, "waited_s": seconds},
            )
        ]
    done = shard_list(sorted(ready))
    summary = (
        f"The launcher waited{waited} for {shards} to load while {done} "
        f"{'was' if len(ready) == 1 else 'were'} ready, and the log ends with no error: "
        f"{shards} held the server's start-up."
    )
    return [
        placed_finding(
            job,
            last,
            kind="missing_rank",
            severity="error",
            part="departure",
            summary=summary,
            fix=FIX,
            ranks=ranks,
            culprit_ranks=ranks,
            confidence=confidence,
            details={"never_ready": ranks, "ready": sorted(ready), "waited_s": seconds},
        )
    ]


def _waited_seconds(waits: pl.DataFrame) -> int | None:
    """From the first wait to the last, by the launcher's clock; None where it printed none."""
    times = waits.get_column("timestamp").drop_nulls()
    if times.is_empty():
        return None
    return int((times.max() - times.min()).total_seconds())


def shard_list(ranks: list[int]) -> str:
    """`shard 1`, `shards 0-3`: the launcher's shards by their ranks."""
    return f"shard{'s' if len(ranks) > 1 else ''} {rank_ranges(ranks)}"
