"""The Python stack gdb prints with CPython's extension (`py-bt`, from the interpreter's
`libpython.py`), attached to a hung process (deepspeedai/DeepSpeed#1969, a rank of a 512-GPU
ZeRO-2 job waiting in the gradient all-reduce):

    (gdb) py-bt
    Traceback (most recent call first):
      <built-in method allreduce of PyCapsule object at remote 0x7fb3b12c3f90>
      File "/opt/conda/lib/python3.8/site-packages/torch/distributed/distributed_c10d.py", line 1209, in all_reduce
        work = group.allreduce([tensor], opts)
      File "/opt/conda/lib/python3.8/site-packages/deepspeed/runtime/zero/stage2.py", line 1326, in allreduce_bucket

Frames innermost first, as faulthandler lists them, with the source line under each and a
builtin's call (`<built-in method ...>`) where the stack enters C; one thread, no process id.
Paths are shortened as faulthandler's are (`faulthandler.short_source`), so stacks of every
tool group alike.
"""  # noqa: E501 -- verbatim lines

from __future__ import annotations

import polars as pl

from logforensics.dumps.faulthandler import processless_frames, short_source

HEADER = "Traceback (most recent call first):"
PROMPT = "(gdb) "
FRAME = r'^\s+File "(.*)", line (\d+), in (.*)$'


def looks_like_gdb_pybt(head: bytes) -> bool:
    """Whether a file opens with py-bt's header, after gdb's prompt lines."""
    for raw in head[:2048].decode("utf-8", "replace").splitlines():
        line = raw.strip()
        if line and not line.startswith(PROMPT):
            return line == HEADER
    return False


def gdb_frames(lines: pl.DataFrame) -> pl.DataFrame:
    """FRAME_SCHEMA rows from the lines (`file, line, text`) of py-bt stacks: each header
    starts a stack (one thread's)."""
    text = pl.col("text")
    marked = lines.with_columns(
        (text.str.strip_chars() == HEADER).cum_sum().over("file").alias("_block"),
        text.str.extract_groups(FRAME).alias("_frame"),
    )
    block = ["file", "_block"]
    frames = marked.filter(
        (pl.col("_block") > 0) & pl.col("_frame").struct.field("1").is_not_null()
    ).with_columns(
        pl.col("_frame").struct.field("3").alias("function"),
        short_source(pl.col("_frame").struct.field("1")).alias("source"),
        pl.col("_frame").struct.field("2").cast(pl.Int64, strict=False).alias("source_line"),
    )
    # (the thread gdb stopped in, the one it was attached to)
    return processless_frames(frames, pl.col("_block"), pl.lit("MainThread"), block)
