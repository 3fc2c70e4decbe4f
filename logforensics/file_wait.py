"""Ranks that gave up waiting for a file or directory another rank makes (a departure that
`rules/stage_divergence.py` reports).

Jobs often let one rank create a directory or write a file (`if get_fs_local_rank() == 0:
mkdir(...)`) while the others poll for it with a timeout of their own:

    ... CRITICAL [olmo.util:168, rank=3] Uncaught TimeoutError: Waiting for checkpoint model
    directory timed out                                                  (one line in the log)

(allenai/OLMo#829: rank 0 was late to make it; the fix put a barrier after the mkdir.) The
exception is a wait, no failure of the rank that raised it: the rank to look at is the one that
makes the file, rank 0 by convention (a guess, said as one).
"""

from __future__ import annotations

import polars as pl

from logforensics.findings import Finding, exception_said, exception_text
from logforensics.job import Job
from logforensics.placement import guessed_departure
from logforensics.text import rank_list

# A wait that gave up, for something on the file system: `Waiting for checkpoint model
# directory timed out`, `Timed out waiting for file ...`.
FILE_WAIT = (
    r"(?i)(?:waiting for|wait for)\b.*\b(?:director(?:y|ies)|folder|file|path|checkpoint|lock)"
    r"\b.*\btimed? ?out|timed? ?out\b.*\bwaiting for\b.*\b(?:director(?:y|ies)|folder|file|path"
    r"|checkpoint|lock)\b"
)
MAKER_RANK = 0  # the rank that makes shared directories and files by convention
FIX = (
    "The rank that makes the file or directory did not make it before the others gave up "
    "polling for it. Put a barrier (`dist.barrier()`) after the code that makes it, so the "
    "others wait in a collective for it, or raise the polling timeout; check that the shared "
    "file system shows one rank's writes to the others promptly."
)


def waited_for_a_file(job: Job) -> list[Finding]:
    events = job.events
    if "exc_type" not in events.columns:
        return []
    waits = events.filter(
        (pl.col("event") == "exception") & exception_text().str.contains(FILE_WAIT).fill_null(False)
    ).sort("file", "line")
    if waits.is_empty():
        return []
    waiting = sorted(waits.get_column("rank").drop_nulls().unique().to_list())
    row = waits.row(0, named=True)
    said = exception_said(row)
    who = rank_list(waiting).capitalize() if waiting else "A rank the logs do not name"
    maker_waited = MAKER_RANK in waiting
    summary = f"{who} gave up waiting for a file or directory another rank makes ({said})."
    if not maker_waited:
        summary += (
            f" Rank {MAKER_RANK}, which makes them by convention, had not made it in time "
            "(a guess: the logs do not show it)."
        )
    return [
        guessed_departure(
            job,
            waits,
            guess=MAKER_RANK,
            showing=waiting,
            summary=summary,
            fix=FIX,
            details={"departure": "file_wait", "other_ranks": waiting, "wait": said},
        )
    ]
