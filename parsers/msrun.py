# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""MindSpore's launcher, msrun, telling how its workers ended (the same failure shapes as
torchrun's, on Ascend NPUs):

    [WARNING] ME(162078:281473590168608,MainProcess):2025-03-10-09:40:12.444.000 [mindspore/parallel/cluster/process_entity/_api.py:318] There's worker exits with exception, kill all other workers.
    [ERROR] ME(162078:281473590168608,MainProcess):2025-03-10-09:40:38.720.000 [mindspore/parallel/cluster/process_entity/_api.py:331] Scheduler process 162146 exit with exception.
    [ERROR] ME(162078:281473590168608,MainProcess):2025-03-10-09:40:38.722.000 [mindspore/parallel/cluster/process_entity/_api.py:431] Time out nodes are ['3']

(candle-org/MindAct#1983: DeepSeek-R1-Distill-Qwen-32B on four 910A.) A worker that exited with
an exception is a `worker_failed` of no rank, no code said (`aborted`: msrun does not say which
worker, nor how it ended). The last line is msrun's reading of its scheduler's log, the nodes
whose heartbeat the scheduler lost: each is a `node_timed_out` event, the node id its `peer` (a
worker's node id is its rank id under msrun; the line is the launcher's, not that rank's). An
empty list (`Time out nodes are []`) says nothing and is only recognised.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

WORKER_EXITED = "There's worker exits with exception, kill all other workers"
SCHEDULER_EXITED = r"Scheduler process \d+ exit with exception"
TIMED_OUT_NODES = r"Time out nodes are \[(?P<nodes>[^\]]*)\]"
NODE_ID = r"'([^']*)'"


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    exited = lines.filter(message.str.contains(WORKER_EXITED, literal=True)).select(
        "file",
        "line",
        pl.lit("worker_failed").alias("event"),
        pl.lit("error").alias("severity"),
        pl.lit('{"launcher":"msrun","aborted":true}').alias("extra"),
    )
    listed = lines.filter(message.str.contains(TIMED_OUT_NODES)).select(
        "file",
        "line",
        message.str.extract(TIMED_OUT_NODES, 1).str.extract_all(NODE_ID).alias("_nodes"),
    )
    nodes = (
        listed.filter(pl.col("_nodes").list.len() > 0)
        .explode("_nodes")
        .select(
            "file",
            "line",
            pl.lit("node_timed_out").alias("event"),
            pl.lit("error").alias("severity"),
            pl.col("_nodes").str.strip_chars("'").alias("peer"),
        )
    )
    recognised = pl.concat(
        [
            listed.filter(pl.col("_nodes").list.len() == 0).select("file", "line"),
            lines.filter(message.str.contains(SCHEDULER_EXITED)).select("file", "line"),
        ]
    ).with_columns(pl.lit(None, pl.String).alias("event"))
    return pl.concat([exited, nodes, recognised], how="diagonal_relaxed")


PARSER = LineParser(
    name="msrun",
    literals=(WORKER_EXITED, "Time out nodes are", "Scheduler process "),
    parse=parse,
)
