"""Python's `faulthandler` stacks: `faulthandler.dump_traceback()` to a file, or the
`dump_traceback` handler of PyTorch's debug server.

    Current thread 0x00007f6ee6ffd6c0 (most recent call first):
      <no Python frame>

    Thread 0x00007f6f099bbb80 (most recent call first):
      File "/venv/lib/python3.11/site-packages/torch/distributed/c10d_logger.py", line 83 in wrapper
      File "/job/train.py", line 267 in train
      File "/job/train.py", line 333 in <module>

Frames innermost first, absolute paths, hex thread ids, no thread names and no process id.
The thread whose outermost frame is `<module>` is taken for the main thread (the one that
ran the script); paths under `site-packages/` and the standard library are shortened the way
py-spy prints them (`torch/distributed/distributed_c10d.py`, `threading.py`), so stacks from
both tools group alike.
"""

from __future__ import annotations

import polars as pl

from logforensics.dumps.pyspy import FRAME_SCHEMA

THREAD = r"^(?:Current thread|Thread) (0x[0-9a-fA-F]+) \(most recent call first\):"
FRAME = r'^  File "(.*)", line (\d+) in (.*)$'
# what py-spy leaves out of a path: the interpreter's library folders
LIBRARY_PREFIX = r"^.*/(?:site-packages|dist-packages|lib/python3\.\d+)/"
PARENT_STEP = r"/[^/]+/\.\./"  # `/job/run/../train.py` is `/job/train.py`


def looks_like_faulthandler(head: bytes) -> bool:
    first = head.lstrip()[:200].decode("utf-8", "replace")
    return (
        first.startswith(("Thread 0x", "Current thread 0x"))
        and "(most recent call first):" in first
    )


def short_source(path: pl.Expr) -> pl.Expr:
    """A frame's path as py-spy prints it: from the import root, `..` steps resolved."""
    return path.str.replace(LIBRARY_PREFIX, "").str.replace_all(PARENT_STEP, "/")


def faulthandler_frames(lines: pl.DataFrame) -> pl.DataFrame:
    """FRAME_SCHEMA rows from the lines (`file, line, text`) of faulthandler stacks."""
    text = pl.col("text")
    marked = lines.with_columns(
        text.str.extract(THREAD, 1).alias("_thread"),
        text.str.extract_groups(FRAME).alias("_frame"),
    ).with_columns(pl.col("_thread").is_not_null().cum_sum().over("file").alias("_block"))
    block = ["file", "_block"]
    frames = (
        marked.with_columns(pl.col("_thread").forward_fill().over(block))
        .filter(pl.col("_frame").struct.field("1").is_not_null() & pl.col("_thread").is_not_null())
        .with_columns(
            pl.col("_frame").struct.field("3").alias("function"),
            short_source(pl.col("_frame").struct.field("1")).alias("source"),
            pl.col("_frame").struct.field("2").cast(pl.Int64, strict=False).alias("source_line"),
        )
    )
    runs_script = (pl.col("function").last() == "<module>").over(block)
    return processless_frames(
        frames,
        pl.col("_thread").str.slice(2).str.to_integer(base=16, strict=False),
        pl.when(runs_script).then(pl.lit("MainThread")).otherwise(pl.lit("")),
        block,
    )


def processless_frames(
    frames: pl.DataFrame, thread_id: pl.Expr, thread_name: pl.Expr, block: list[str]
) -> pl.DataFrame:
    """FRAME_SCHEMA rows of a tool that names no process and no thread state (faulthandler,
    gdb): `frames` (`file, line, text, function, source, source_line`) innermost first in each
    `block`, one thread's stack."""
    return frames.select(
        "file",
        pl.lit(None, pl.Int64).alias("pid"),
        pl.lit(None, pl.Int64).alias("parent_pid"),
        pl.lit(None, pl.String).alias("command"),
        pl.lit(None, pl.Int32).alias("command_rank"),
        thread_id.cast(pl.Int64).alias("thread_id"),
        thread_name.alias("thread_name"),
        pl.lit("idle").alias("thread_state"),  # neither tool says
        pl.int_range(pl.len()).over(block).cast(pl.Int32).alias("depth"),
        "function",
        "source",
        "source_line",
        pl.col("line").cast(pl.UInt32),
        "text",
    ).cast(FRAME_SCHEMA)  # type: ignore[arg-type]
