# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""The Python stack of a failed collective, as ProcessGroupNCCL's watchdog prints it after a
timeout or an error when the Flight Recorder is on (torch >= 2.5, `TORCH_NCCL_TRACE_BUFFER_SIZE`;
pytorch/pytorch TraceUtils.h: `#<idx> <func> from <file>:<line>`, innermost first). Under its
header (vllm-project/vllm#41160):

    Stack trace of the failed collective:
    #0 broadcast from /usr/local/lib/python3.12/dist-packages/torch/distributed/distributed_c10d.py:2968
    #1 wrapper from /usr/local/lib/python3.12/dist-packages/torch/distributed/c10d_logger.py:83

or alone where a paste kept only the frames (pytorch/torchtitan#3338, a rank stuck in the loss's
all_reduce while another one's data download timed out):

    #4 all_reduce from /home/zeus/.../torch/distributed/_functional_collectives.py:179
    #5 _dist_reduce from /teamspace/studios/this_studio/torchtitan/torchtitan/distributed/utils.py:72
    #7 train_step from /teamspace/studios/this_studio/torchtitan/torchtitan/trainer.py:720

The watchdog prints it only for a collective that failed, so a run of these frames through a
collective is a `collective_timeout` of its process at the collective's frame, marked
`"inferred_from":"failed_collective"` in `extra` (the report itself may not be in the excerpt),
`op` the collective, `frame` the innermost frame of the job's own code; `extra` also says
where the stack stood as parsers/traceback.py does for a traceback (`collective`,
`own_frame`, its line `own_line`, and `"snapshot":"flight_recorder"`: frames alone, no code
lines). Runs through no collective are recognised, no event.

The header is the rank's own record and its frames come unprefixed below it
(bobrenjc93/inference-bench's committed run summary of a TP=4 server, torch 2.x):

    [rank3]:[E725 02:39:41.244128842 ProcessGroupNCCL.cpp:733] Stack trace of the failed collective:
    #0 all_reduce from /workspace/.../torch/distributed/distributed_c10d.py:3068

so a stack right below a rank's header is that rank's, and a header ends the stack above it.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser
from parsers.traceback import LIBRARY_FRAME, collective_name

FRAME = r"^#\d+ (?P<function>\S+) from (?P<path>\S.*):(?P<number>\d+)$"
HEADER = "Stack trace of the failed collective:"
WRITER = ["file", "prefix_host", "prefix_pid", "prefix_rank", "prefix_local_rank"]


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    parts = pl.col("message").str.strip_chars().str.extract_groups(FRAME)
    text = pl.format(
        "{}:{} in {}",
        parts.struct.field("path"),
        parts.struct.field("number"),
        parts.struct.field("function"),
    )
    writer = [pl.col(name) for name in WRITER if name in lines.columns]
    header = pl.col("message").str.strip_chars_end().str.ends_with(HEADER)
    header_rank = pl.col("prefix_rank") if "prefix_rank" in lines.columns else pl.lit(None)
    is_frame = pl.col("_text").is_not_null()
    frames = (
        lines.sort("file", "line")
        .with_columns(text.alias("_text"), header.alias("_header"))
        .with_columns(
            # a stack is a run of frame lines of one writer, no other line of that writer's
            # between, and no header (any writer's) either
            (~is_frame).cum_sum().over(writer).alias("_run"),
            pl.col("_header").cum_sum().over("file").alias("_headers_above"),
            # the rank of the header right above a run (-1 below any other line)
            pl.when(pl.col("_header"))
            .then(header_rank.cast(pl.Int32).fill_null(-1))
            .when(is_frame)
            .then(None)
            .otherwise(-1)
            .forward_fill()
            .over("file")
            .alias("_header_rank"),
        )
        .filter(is_frame)
        .with_columns(collective_name(pl.col("_text")).alias("_collective"))
    )
    if frames.is_empty():
        return pl.DataFrame(schema={"file": pl.String, "line": pl.UInt32, "event": pl.String})
    own = ~pl.col("_text").str.contains(LIBRARY_FRAME)
    stacks = frames.group_by([*writer, "_run", "_headers_above"], maintain_order=True).agg(
        pl.col("file").first().alias("_file"),
        # the collective's own frame: the line a report quotes
        pl.col("line").filter(pl.col("_collective").is_not_null()).first().alias("_line"),
        pl.col("line").last().alias("_end"),
        pl.col("_collective").drop_nulls().first().alias("_op"),
        pl.col("_text").filter(own).first().alias("_own"),
        pl.col("line").filter(own).first().alias("_own_line"),
        pl.col("_header_rank").first().alias("_rank"),
        pl.len().alias("_frames"),
    )
    failed = stacks.filter(pl.col("_op").is_not_null() & (pl.col("_frames") >= 2))
    events = failed.select(
        pl.col("_file").alias("file"),
        pl.col("_line").alias("line"),
        pl.lit("collective_timeout").alias("event"),
        pl.lit("error").alias("severity"),
        pl.col("_end").alias("end_line"),
        pl.col("_op").alias("op"),
        pl.col("_own").alias("frame"),
        pl.when(pl.col("_rank") >= 0).then(pl.col("_rank")).alias("rank"),
        pl.struct(
            inferred_from=pl.lit("failed_collective"),
            snapshot=pl.lit("flight_recorder"),
            collective=pl.col("_op"),
            own_frame=pl.col("_own"),
            own_line=pl.col("_own_line"),
        )
        .struct.json_encode()
        .str.replace_all(r',?"\w+":null', "")
        .alias("extra"),
    )
    told = frames.join(events.select("file", "line"), on=["file", "line"], how="anti").select(
        "file", "line", pl.lit(None, pl.String).alias("event")
    )
    return pl.concat([events, told], how="diagonal_relaxed")


PARSER = LineParser(name="failed_collective", literals=(" from ", HEADER), parse=parse)
