"""The stacks Python's faulthandler prints into a rank's output when its watchdog fires
(`faulthandler.dump_traceback_later(seconds)`: the process had not cancelled it in time). A run
here, a 3-process gloo job under `torchrun --tee 3` whose rank 1 blocked reading a batch:

    [default1]:Timeout (0:00:08)!
    [default1]:Thread 0x00007fe3a7820b80 (most recent call first):
    [default1]:  File "/tmp/runs21/fh_hang.py", line 10 in load_batch
    [default1]:  File "/tmp/runs21/fh_hang.py", line 18 in main
    [default1]:  File "/tmp/runs21/fh_hang.py", line 25 in <module>
    [default2]:Timeout (0:00:08)!
    [default2]:Thread 0x00007fd60b7c2b80 (most recent call first):
    [default2]:  File ".../torch/distributed/distributed_c10d.py", line 3252 in all_reduce
    [default2]:  File ".../torch/distributed/c10d_logger.py", line 83 in wrapper
    [default2]:  File "/tmp/runs21/fh_hang.py", line 19 in main

Frames innermost first, no source lines. One `stack_snapshot` event per dump and writer, at
its `Timeout` line, for the thread that runs the script (its outermost frame `<module>`, else
the first listed): `frame` its innermost frame, `extra` the collective its frames pass through
(`collective`, "" for none) and the innermost frame of the job's own code (`own_frame`, its
line `own_line`), as parsers/traceback.py keeps them for a traceback, with
`"snapshot":"faulthandler"`. Every line
of the dump is recognised. A crash's dump (`Fatal Python error`) is parsers/traceback.py's.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser
from parsers.traceback import LIBRARY_FRAME, WATCHDOG_TIMEOUT, collective_name, frame_text

TIMEOUT = WATCHDOG_TIMEOUT
THREAD = r"^(?:Current thread|Thread) 0x[0-9a-fA-F]+ \(most recent call first\):$"
FRAME = r'^\s*File "[^"]+", line \d+ in \S+'
CONTEXT = 200  # the dump's threads and frames after its `Timeout` line
WRITER = ["file", "prefix_rank", "prefix_local_rank"]


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message").str.strip_chars_end()
    marked = (
        lines.sort("file", "line")
        .with_columns(
            message.str.contains(TIMEOUT).alias("_head"),
            message.str.contains(THREAD).alias("_thread"),
            message.str.contains(FRAME).alias("_frame"),
        )
        .with_columns(pl.col("_head").cum_sum().over(WRITER).alias("_dump"))
        .filter(pl.col("_dump") > 0)
    )
    # a dump runs from its `Timeout` line over thread headers and frames; any other line of
    # the same writer ends it
    other = ~(pl.col("_head") | pl.col("_thread") | pl.col("_frame"))
    dumps = marked.with_columns(
        other.cast(pl.Int32).cum_sum().over([*WRITER, "_dump"]).alias("_after")
    ).filter(pl.col("_after") == 0)
    if dumps.is_empty():
        return pl.DataFrame(schema={"file": pl.String, "line": pl.UInt32, "event": pl.String})
    frames = (
        dumps.with_columns(pl.col("_thread").cum_sum().over([*WRITER, "_dump"]).alias("_t"))
        .filter(pl.col("_frame"))
        .with_columns(frame_text(message).alias("_text"))
    )
    collective = collective_name(pl.col("_text"))
    own = ~pl.col("_text").str.contains(LIBRARY_FRAME)
    threads = frames.group_by([*WRITER, "_dump", "_t"], maintain_order=True).agg(
        pl.col("_text").first().alias("_innermost"),
        (pl.col("_text").last().str.ends_with(" in <module>")).alias("_main"),
        pl.col("_text").filter(own).first().alias("_own"),
        pl.col("line").filter(own).first().alias("_own_line"),
        collective.drop_nulls().first().fill_null("").alias("_collective"),
    )
    chosen = threads.sort("_main", "_t", descending=[True, False]).unique(
        [*WRITER, "_dump"], keep="first", maintain_order=True
    )
    heads = dumps.filter(pl.col("_head")).select(*WRITER, "_dump", "line")
    events = heads.join(chosen, on=[*WRITER, "_dump"], how="inner", nulls_equal=True).select(
        "file",
        "line",
        pl.lit("stack_snapshot").alias("event"),
        pl.lit("info").alias("severity"),
        pl.col("_innermost").alias("frame"),
        pl.struct(
            pl.col("_own").alias("own_frame"),
            pl.col("_own_line").alias("own_line"),
            pl.col("_collective").alias("collective"),
            pl.lit("faulthandler").alias("snapshot"),
        )
        .struct.json_encode()
        .alias("extra"),
    )
    told = dumps.join(events.select("file", "line"), on=["file", "line"], how="anti").select(
        "file", "line", pl.lit(None, pl.String).alias("event")
    )
    return pl.concat([events, told], how="diagonal_relaxed")


PARSER = LineParser(
    name="watchdog_stacks", literals=("Timeout (",), parse=parse, context_after=CONTEXT
)
