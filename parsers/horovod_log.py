# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring and comments
"""Horovod's own error records: the background loop that runs every collective of a rank died
of an exception (horovod/common/operations.cc), and the rank's next collective then finds
Horovod shut down. NVIDIA-Merlin/NVTabular#1320, verbatim:

    [1,1]<stderr>:[2021-12-14 10:18:27.983077: E /tmp/pip-install-mwp6l21a/horovod_1f03263b83654efeb4c82a546f8aadfa/horovod/common/operations.cc:649] [1]: Horovod background loop uncaught exception: CUDA error: invalid configuration argument

An `exception` event of the rank in brackets (Horovod's rank), its words as `exc_message`: the
rank's own failure, which the others' `Horovod has been shut down` follows.

`horovodrun`'s gloo launcher on a process that ended with a non-zero code, by its rank
(horovod/runner/gloo_run.py; horovod/horovod#3472, a process killed for memory):

    Process 0 exit with status code 137.

a `worker_failed` event of that rank with the code, or, past 128 (the shell's way of saying a
signal ended it), a `fatal_signal` event naming the signal, as Open MPI's reports are read.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser
from parsers.mpirun import SIGNAL_NAMES, how_it_ended, signal_in_code

BACKGROUND_DIED = "Horovod background loop uncaught exception"
# `[<date> <time>: E <source>:<line>] [<rank>]: ` before Horovod's words (the microseconds may
# be space-padded: `03:23:51. 70957`)
RECORD = (
    r"^\[\d{4}-\d{2}-\d{2} [\d:. ]+: [EF] [^\]]*\] (?:\[(?P<rank>\d+)\]: )?"
    + BACKGROUND_DIED
    + r": ?(?P<what>.*)$"
)
MESSAGE_CHARS = 300
GLOO_EXIT = r"^Process (?P<rank>\d{1,7}) exit with status code (?P<code>-?\d+)\.$"


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    return pl.concat([_background_deaths(lines), _gloo_exits(lines)], how="diagonal_relaxed")


def _gloo_exits(lines: pl.DataFrame) -> pl.DataFrame:
    said = pl.col("message").str.strip_chars_end().str.extract_groups(GLOO_EXIT)
    code = said.struct.field("code").cast(pl.Int32, strict=False)
    name = signal_in_code(code).replace_strict(SIGNAL_NAMES, default=None, return_dtype=pl.String)
    signalled = name.is_not_null()
    return (
        lines.with_columns(said.alias("_said"))
        .filter(pl.col("_said").struct.field("rank").is_not_null())
        .select(
            "file",
            "line",
            *how_it_ended(signalled, name),
            pl.col("_said").struct.field("rank").cast(pl.Int32, strict=False).alias("rank"),
            name.alias("signal"),
            pl.when(signalled).then(pl.format("exit status code {}", code)).alias("exc_message"),
            pl.when(~signalled).then(code).alias("exitcode"),
        )
    )


def _background_deaths(lines: pl.DataFrame) -> pl.DataFrame:
    record = pl.col("message").str.extract_groups(RECORD)
    return (
        lines.with_columns(record.alias("_record"))
        .filter(pl.col("_record").struct.field("what").is_not_null())
        .select(
            "file",
            "line",
            pl.lit("exception").alias("event"),
            pl.lit("error").alias("severity"),
            pl.lit("Horovod background loop exception").alias("exc_type"),
            pl.col("_record")
            .struct.field("what")
            .str.strip_chars()
            .str.slice(0, MESSAGE_CHARS)
            .alias("exc_message"),
            pl.col("_record").struct.field("rank").cast(pl.Int32, strict=False).alias("rank"),
        )
    )


PARSER = LineParser(
    name="horovod_log", literals=(BACKGROUND_DIED, " exit with status code "), parse=parse
)
