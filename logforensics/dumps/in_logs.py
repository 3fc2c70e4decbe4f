"""Stacks a process printed into its own log (faulthandler's threads with no fatal error above
them: a signal handler's, a framework's hang report), read by
`parsers/traceback.py` as `thread_stack` events and attributed like any line, by the line's
prefix or its file. They join the dumps' stacks for the ranks no dump file covers, each rank's
last dump of its log.
"""

from __future__ import annotations

from dataclasses import replace

import polars as pl

from logforensics.dumps.faulthandler import processless_frames, short_source
from logforensics.dumps.load import Dumps
from parsers.traceback import PLACE

THREAD_ID = r"Thread (0x[0-9a-fA-F]+)"


def with_log_stacks(dumps: Dumps, events: pl.DataFrame) -> Dumps:
    """`dumps` with the stacks printed in the logs of ranks it holds no stacks of."""
    stacks = log_stacks(events)
    if stacks.is_empty():
        return dumps
    covered = dumps.stacks.get_column("rank").unique().implode()
    added = stacks.filter(~pl.col("rank").is_in(covered))
    if added.is_empty():
        return dumps
    # (a job with no dump file has a bare stacks table: the added rows bring `tool`, `is_worker`)
    merged = pl.concat([dumps.stacks, added], how="diagonal_relaxed")
    return replace(dumps, stacks=merged)


def log_stacks(events: pl.DataFrame) -> pl.DataFrame:
    """The frames of each rank's last dump printed into its logs, as the dumps' stacks table
    (FRAME_SCHEMA, `rank`, `is_worker`, `tool`)."""
    if "names" not in events.columns:
        return pl.DataFrame()
    threads = events.filter((pl.col("event") == "thread_stack") & pl.col("rank").is_not_null())
    if threads.is_empty():
        return pl.DataFrame()
    # (several dumps of one rank: a hang reported every few minutes; the last is where it stood)
    last_dump = pl.col("value") == pl.col("value").max().over("file", "rank")
    frames = (
        threads.filter(last_dump)
        .select(
            "file",
            "line",
            "rank",
            pl.col("text").str.extract(THREAD_ID, 1).alias("_thread"),
            pl.col("names").alias("text"),
        )
        .with_row_index("_block")
        .explode("text")
        .drop_nulls("text")
        .with_columns(pl.col("text").str.extract_groups(PLACE).alias("_place"))
        .with_columns(
            pl.col("_place").struct.field("func").alias("function"),
            short_source(pl.col("_place").struct.field("path")).alias("source"),
            pl.col("_place")
            .struct.field("lineno")
            .cast(pl.Int64, strict=False)
            .alias("source_line"),
        )
    )
    runs_script = (pl.col("function").last() == "<module>").over("_block")
    stacks = processless_frames(
        frames,
        pl.col("_thread").str.slice(2).str.to_integer(base=16, strict=False),
        pl.when(runs_script).then(pl.lit("MainThread")).otherwise(pl.lit("")),
        ["_block"],
    )
    return stacks.with_columns(
        frames.get_column("rank").cast(pl.Int32),
        pl.lit(False).alias("is_worker"),
        pl.lit("faulthandler").alias("tool"),
    )
