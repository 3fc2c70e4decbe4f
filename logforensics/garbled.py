"""A rank that could not use what a collective handed it: the bytes came from another
collective, so the ranks were out of step (a departure that `rules/stage_divergence.py`
reports).

A broadcast of state from one rank (Accelerate's RNG sync before each epoch's DataLoader,
`broadcast_object_list`) pairs with whatever collective the source rank issues next. When the
source went off on a path of its own (work under `if accelerator.is_main_process:` that issues
a collective, an evaluation on rank 0 alone), the others receive bytes that were never the
state they expect, and fail using them:

    [rank1]: generator.set_state(rng_state)
    [rank1]: RuntimeError: Invalid mt19937 state

(huggingface/accelerate#190: rank 0 ran inference alone.) The exception is the symptom; the
rank to look at is the source of the broadcast: rank 0 for both, said as a guess.
"""

from __future__ import annotations

import polars as pl

from logforensics.findings import Finding, exception_said, exception_text
from logforensics.job import Job
from logforensics.placement import guessed_departure
from logforensics.text import rank_list

# What a receiver says when a collective's payload is no state it can use: an RNG state that
# fails its check.
GARBLED_STATE = r"Invalid mt19937 state"
SOURCE_RANK = 0  # the source of Accelerate's RNG sync and of broadcast_object_list by default
FIX = (
    "Every rank must issue the same collectives in the same order. Look for work on the main "
    "process alone that issues a collective (inference, evaluation or saving under `if "
    "accelerator.is_main_process:` or `if rank == 0:`, a DataLoader created on one rank) and "
    "run it on every rank, or move the collective out of the rank check."
)


def garbled() -> pl.Expr:
    """True on exception events raised by using a collective's payload that was not meant for
    the call (see the module doc)."""
    return exception_text().str.contains(GARBLED_STATE).fill_null(False)


def garbled_payload(job: Job) -> list[Finding]:
    events = job.events
    if "exc_type" not in events.columns:
        return []
    received = events.filter((pl.col("event") == "exception") & garbled()).sort("file", "line")
    if received.is_empty():
        return []
    receivers = sorted(received.get_column("rank").drop_nulls().unique().to_list())
    row = received.row(0, named=True)
    what = exception_said(row)
    who = rank_list(receivers).capitalize() if receivers else "A rank the logs do not name"
    source_among = SOURCE_RANK in receivers
    summary = (
        f"{who} could not use what a collective handed {'it' if len(receivers) < 2 else 'them'} "
        f"({what}): the bytes came from another collective, so the ranks were out of step."
    )
    if not source_among:
        summary += (
            f" Rank {SOURCE_RANK}, the source of the broadcast, had taken a path of its own "
            "(a guess: the logs do not show it)."
        )
    return [
        guessed_departure(
            job,
            received,
            guess=SOURCE_RANK,
            showing=receivers,
            summary=summary,
            fix=FIX,
            details={"departure": "garbled_payload", "receivers": receivers, "exception": what},
        )
    ]
