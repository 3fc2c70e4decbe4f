"""The files PyTorch's debug server (`torch.distributed.debug.start_debug_server`, in torch
2.13) writes to its `dump_dir` every `dump_interval` seconds, `<name>_<YYYYmmdd_HHMMSS>.txt`,
one section per rank, each headed by the worker URL it was fetched from:

    === Rank 1: http://node-3:57457/handler/pyspy_dump?nonblocking=1 ===
    Process 31010: /venv/bin/python3 -u train.py
    ...

(a first line `PARTIAL DATA: 3/4 workers responded` when some rank did not answer). The
handler says what a section holds: `pyspy_dump` py-spy text, `dump_traceback` faulthandler
stacks, `fr_trace_json` a Flight Recorder dump as JSON; the others (`wait_counter_values`,
the `tcpstore` listing, the `fr_trace` tables) are not stacks and are left out. The rank in
the header is the section's rank.
"""

from __future__ import annotations

import re

import polars as pl

SECTION = r"^=== Rank (\d{1,7}): \S*/handler/(\w+)\S* ===$"
HEAD = re.compile(rb"^(?:PARTIAL DATA: [^\n]*\n)?=== Rank \d{1,7}: \S*/handler/\w+")


def looks_like_debug_server(head: bytes) -> bool:
    return HEAD.match(head.lstrip()[:1024]) is not None


def sections(lines: pl.DataFrame) -> pl.DataFrame:
    """The lines (`file, line, text`) of debug-server files with `section_rank` and `handler`
    carried from their section's header (header lines themselves dropped)."""
    header = pl.col("text").str.extract_groups(SECTION)
    return (
        lines.with_columns(
            header.struct.field("1").cast(pl.Int32, strict=False).alias("section_rank"),
            header.struct.field("2").alias("handler"),
            header.struct.field("1").is_not_null().alias("_header"),
        )
        .with_columns(
            pl.col("section_rank").forward_fill().over("file"),
            pl.col("handler").forward_fill().over("file"),
        )
        .filter(~pl.col("_header") & pl.col("handler").is_not_null())
        .drop("_header")
    )
