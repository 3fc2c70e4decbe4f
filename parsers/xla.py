# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""torch_xla's multiprocessing launcher (`xmp.spawn`) on each process's failure: it catches the
exception, prints it under the process's device and raises it again. The device's ordinal is
the process's global ordinal, its rank. Verbatim (pytorch/xla#3122, a Colab TPU; pytorch/xla#2246):

    Exception in device=TPU:0: Aborted: Session 1a625b17752b2794 is not found.
    Traceback (most recent call last):
      ...
    RuntimeError: Aborted: Session 1a625b17752b2794 is not found.
    Exception in device=TPU:6: tensorflow/compiler/xla/xla_client/mesh_service.cc:294 : Failed to meet rendezvous 'init': Socket closed (14)

An `exception` event of that rank, its type taken from the traceback printed after it with
the same message (`Exception`, what the launcher caught, when none is in the lines). A
rendezvous whose socket closed under it is a process that left the mesh: a `peer_closed`
event of the rank that waited (a maintainer, pytorch/xla#2190: "if one of the process exit
early ... other process will wait for a while and then report Failed to meet rendezvous").
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser
from parsers.traceback import MESSAGE_CHARS

EXCEPTION_IN_DEVICE = (
    r"^Exception in device=(?P<device>(?:TPU|GPU|CPU|CUDA|XPU|NEURON):(?P<ordinal>\d{1,7})):"
    r" (?P<message>.*)$"
)
RENDEZVOUS_SOCKET_CLOSED = r"Failed to meet rendezvous '[^']*': Socket closed"
# the traceback's own exception line: `RuntimeError: Aborted: Session ... is not found.`
EXCEPTION_LINE = r"^(?P<type>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)): (?P<message>.*)$"
# the traceback follows within this many lines (8 processes' tracebacks may interleave)
TRACEBACK_LINES = 60


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    said = pl.col("message").str.extract_groups(EXCEPTION_IN_DEVICE)
    reports = lines.filter(
        pl.col("candidate") & pl.col("message").str.contains(EXCEPTION_IN_DEVICE)
    )
    reports = reports.select(
        "file",
        "line",
        said.struct.field("ordinal").cast(pl.Int32, strict=False).alias("rank"),
        said.struct.field("device").alias("device"),
        said.struct.field("message").str.strip_chars().alias("_said"),
    )
    left_the_mesh = pl.col("_said").str.contains(RENDEZVOUS_SOCKET_CLOSED)
    return (
        reports.join(_raised_types(lines, reports), on=["file", "line"], how="left")
        .with_columns(
            pl.when(left_the_mesh)
            .then(pl.lit("peer_closed"))
            .otherwise(pl.lit("exception"))
            .alias("event"),
            pl.lit("error").alias("severity"),
            pl.when(~left_the_mesh)
            .then(pl.coalesce("_type", pl.lit("Exception")))
            .alias("exc_type"),
            pl.when(pl.col("_said") != "")
            .then(pl.col("_said").str.slice(0, MESSAGE_CHARS))
            .alias("exc_message"),
        )
        .drop("_said", "_type")
    )


def _raised_types(lines: pl.DataFrame, reports: pl.DataFrame) -> pl.DataFrame:
    """Per report (`file, line`), the type of the first exception line after it that says the
    same message (`_type`)."""
    raised = pl.col("message").str.extract_groups(EXCEPTION_LINE)
    exception_lines = lines.filter(pl.col("message").str.contains(EXCEPTION_LINE)).select(
        "file",
        pl.col("line").alias("_at"),
        raised.struct.field("type").alias("_type"),
        raised.struct.field("message").str.strip_chars().alias("_said"),
    )
    return (
        reports.join(exception_lines, on=["file", "_said"])
        .filter(pl.col("_at") > pl.col("line"))
        .group_by("file", "line")
        .agg(pl.col("_type").sort_by("_at").first())
    )


PARSER = LineParser(
    name="xla",
    literals=("Exception in device=",),
    parse=parse,
    context_after=TRACEBACK_LINES,
)
