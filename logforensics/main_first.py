"""Ranks that gave up waiting for the main process inside `main_process_first`: the main
rank's departure into work of its own, the cause of their timeout, which
`rules/collective_timeout.py` reports.

Hugging Face's `TrainingArguments.main_process_first` and Accelerate's `main_process_first` /
`local_main_process_first` let the main process do some work first (dataset preprocessing,
tokenisation, a download) while every other process waits in a barrier. When that work
outlasts the process group's timeout, the others fail in the barrier: their tracebacks pass
through `main_process_first`, and the rank that diverged is the main one, still busy on its
path of its own (NVIDIA/nccl#865: rank 1's barrier inside `main_process_first` gave up while
rank 0's tokenizer bar stood at 47% after 30 minutes).
"""

from __future__ import annotations

import polars as pl

from logforensics.findings import Finding
from logforensics.job import Job
from logforensics.placement import placed_finding
from logforensics.text import rank_list

IN_MAIN_FIRST = '"in_main_process_first":true'
MAIN_RANK = 0
# the context named where a traceback shows none (only its call site's `with` was cut)
DEFAULT_CONTEXT = "main_process_first"
FIX = (
    "The main process's first-only work outlasted the process group's timeout while the "
    "others waited in its barrier. Do that work before the distributed job (preprocess and "
    "cache the dataset once, then load the cache on every rank), or raise the timeout for it "
    "(`init_process_group(timeout=...)`; Hugging Face `--ddp_timeout`)."
)


def main_rank_still_busy(job: Job) -> list[Finding]:
    events = job.events
    if "extra" not in events.columns:
        return []
    waits = events.filter(
        (pl.col("event") == "exception")
        & pl.col("extra").str.contains(IN_MAIN_FIRST, literal=True).fill_null(False)
        & (pl.col("rank").is_null() | (pl.col("rank") != MAIN_RANK))
    ).sort("file", "line")
    if waits.is_empty() or _main_rank_failed(job):
        return []
    waiting = sorted(waits.get_column("rank").drop_nulls().unique().to_list())
    context = (
        waits.get_column("extra").str.json_path_match("$.main_first_context").drop_nulls().first()
        or DEFAULT_CONTEXT
    )
    who = rank_list(waiting) if waiting else "a rank other than the main one"
    ended = _how_it_ended(waits.row(0, named=True))
    summary = (
        f"Rank {MAIN_RANK} was still doing the work the main process does first (inside "
        f"{context}: dataset preprocessing, tokenisation) when {who} gave up "
        f"waiting in its barrier ({ended}): the others wait there for rank {MAIN_RANK} alone."
    )
    return [
        placed_finding(
            job,
            waits,
            kind="collective_timeout",
            severity="error",
            part="departure",
            summary=summary,
            fix=FIX,
            ranks=[MAIN_RANK],
            confidence="medium",
            details={"departure": "main_first", "other_ranks": waiting, "context": context},
        )
    ]


def _how_it_ended(wait: dict[str, object]) -> str:
    kind, message = wait.get("exc_type"), wait.get("exc_message")
    if not kind:
        return "its traceback is cut before the exception"
    return f"{kind}: {message}" if message else str(kind)


def _main_rank_failed(job: Job) -> bool:
    """Whether the main rank reported an exception of its own: then it failed, not lagged."""
    own = job.events.filter(
        (pl.col("event") == "exception")
        & (pl.col("rank") == MAIN_RANK)
        & ~pl.col("extra").str.contains(IN_MAIN_FIRST, literal=True).fill_null(False)
    )
    return not own.is_empty()
