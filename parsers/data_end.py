"""Lines that say a rank's data for the epoch ran out:

    2023-04-13 16:00:05,621 INFO [trainer.py:650] (5/8) Reaches end of dataloader.

(lifeiteng/vall-e#86: ranks 4-7 reached the end of their batches and went on to validation
while ranks 0-3 still had batches; the job hung.) Each is a `data_end` event with the rank
and world size the line states (an icefall header's `(rank/world)`, or `rank N`). A rank whose
data ends before the others' stops joining the collectives they still issue: the DataLoader
lengths differ (`rules/loader_size_mismatch.py`).

wenet's and CosyVoice's training loop joins the ranks at every step through a monitored
barrier; a rank whose barrier fails because another rank ran out of batches says so and stops
(FunAudioLLM/CosyVoice#1727, verbatim):

    2025-12-19 09:03:13,768 INFO Detected uneven workload distribution: Rank 5 successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.

AllenNLP's trainer says so of each worker whose epoch's batches ran out, where the job hung at
the epoch's end (allenai/allennlp#5030, verbatim, the row of its console's box):

    0 | 2021-03-02 00:46:12,994 - WARNING - allennlp.training.trainer - Worker 0 completed its entire epoch (training).

a `data_end` of the worker it names.

An `uneven_data` event of the rank that says it (`current rank 5` on a later line): the rank
with batches left, not the one whose data ended, which the line does not name.
"""  # noqa: E501 -- a verbatim line

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser
from parsers.key_values import stated_rank

DATA_END = (
    r"(?i)\b(?:reach(?:es|ed)? (?:the )?end of (?:the |its |my )?(?:data ?loader|dataset|data)"
    r"|data ?loader (?:is |was )?exhausted|ran out of (?:data|batches)|no more (?:data|batches))\b"
)


# AllenNLP's `Worker 0 completed its entire epoch (training).`
WORKER_EPOCH_DONE = r"\bWorker (\d+) completed its entire epoch\b"

UNEVEN_WORKLOAD = "Detected uneven workload distribution"
# `Rank 5 successfully reached monitoredBarrier` in the same line
REACHED = r"Rank (\d+) successfully reached monitoredBarrier"


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    rank, world_size = stated_rank()
    message = pl.col("message")
    worker = message.str.extract(WORKER_EPOCH_DONE, 1).cast(pl.Int32, strict=False)
    ends = lines.filter(message.str.contains(DATA_END) | worker.is_not_null()).select(
        "file",
        "line",
        pl.lit("data_end").alias("event"),
        pl.lit("info").alias("severity"),
        pl.coalesce(worker, rank).alias("rank"),
        world_size,
    )
    uneven = lines.filter(message.str.contains(UNEVEN_WORKLOAD, literal=True)).select(
        "file",
        "line",
        pl.lit("uneven_data").alias("event"),
        pl.lit("warning").alias("severity"),
        pl.coalesce(message.str.extract(REACHED, 1).cast(pl.Int32, strict=False), rank).alias(
            "rank"
        ),
        world_size,
    )
    return pl.concat([ends, uneven], how="diagonal_relaxed")


PARSER = LineParser(
    name="data_end",
    literals=(
        "end of",
        "nd of data",
        "xhausted",
        "ran out of",
        "no more",
        "No more",
        " completed its entire epoch",
        UNEVEN_WORKLOAD,
    ),
    parse=parse,
)
