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

An object collective's pickled payload that no receiver could unpickle proves the same desync
without a source to guess at (every rank sends in an all-gather): `rules/collective_mismatch.py`
reports it, blaming no rank (see OUT_OF_SYNC_OBJECTS).
"""

from __future__ import annotations

import polars as pl

from logforensics.findings import Finding, exception_said, exception_text
from logforensics.job import Job
from logforensics.placement import guessed_departure, placed_finding
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


# An object collective pickles each rank's object into a byte buffer and unpickles what the
# others sent: bytes no unpickler can read were no object, the ranks were in different calls
# (fairseq's all_gather_list says so itself: `Unable to unpickle data from other workers.
# all_gather_list requires all workers to enter the function together, so this error usually
# indicates that the workers have fallen out of sync somehow.`, wxjiao/Data-Rejuvenation#1,
# under `_pickle.UnpicklingError: invalid load key, '\xe2'.` in all_gather_list).
OUT_OF_SYNC_OBJECTS = r"Unable to unpickle data from other workers"
OBJECT_COLLECTIVE_FRAME = (
    r" in (?:all_gather_list|all_gather_object|gather_object|broadcast_object_list"
    r"|scatter_object_list|recv_object_list|_tensor_to_object)$"
)
UNDECODED_FIX = (
    "Every rank must enter the same object collective together (`all_gather_object`, "
    "`broadcast_object_list`, fairseq's `all_gather_list`), in the same order: a rank that skips "
    "one, calls it under `if rank == ...`, or runs a collective of its own before it hands the "
    "others bytes that are no object. Find the branch that sends one rank elsewhere (a "
    "validation or logging step on some ranks only, a `continue` on a bad batch) and run it on "
    "every rank."
)


def garbled() -> pl.Expr:
    """True on exception events raised by using a collective's payload that was not meant for
    the call (see the module doc)."""
    return (_garbled_state() | _undecoded_objects()).fill_null(False)


def _garbled_state() -> pl.Expr:
    return exception_text().str.contains(GARBLED_STATE).fill_null(False)


def _undecoded_objects() -> pl.Expr:
    """An object collective's payload no unpickler could read (see OUT_OF_SYNC_OBJECTS)."""
    unpickled = pl.col("exc_type").str.ends_with("UnpicklingError") & pl.col("frame").str.contains(
        OBJECT_COLLECTIVE_FRAME
    )
    return (exception_text().str.contains(OUT_OF_SYNC_OBJECTS) | unpickled).fill_null(False)


def undecoded_objects(job: Job) -> list[Finding]:
    """The ranks' object collectives out of step: a collective_mismatch that blames no rank
    (the one that failed to decode is only the one that noticed)."""
    received, receivers = _received(job, _undecoded_objects())
    if received.is_empty():
        return []
    who = rank_list(receivers).capitalize() if receivers else "A process the logs do not name"
    summary = (
        f"{who} could not unpickle the objects an object collective gathered "
        f"({exception_said(received.row(0, named=True))}): the bytes were no object, so the "
        "ranks were in different collectives; nothing in the logs says which rank left the "
        "path."
    )
    return [
        placed_finding(
            job,
            received,
            kind="collective_mismatch",
            severity="error",
            part="departure",
            summary=summary,
            fix=UNDECODED_FIX,
            ranks=receivers,
            blames_nobody=True,
            confidence="medium",
            details={"departure": "undecoded_objects", "receivers": receivers},
        )
    ]


def _received(job: Job, which: pl.Expr) -> tuple[pl.DataFrame, list[int]]:
    """The exception events `which` marks, in file order, and the ranks that raised them."""
    events = job.events
    if "exc_type" not in events.columns:
        return events.clear(), []
    received = events.filter((pl.col("event") == "exception") & which).sort("file", "line")
    return received, sorted(received.get_column("rank").drop_nulls().unique().to_list())


def garbled_payload(job: Job) -> list[Finding]:
    received, receivers = _received(job, _garbled_state())
    if received.is_empty():
        return []
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
