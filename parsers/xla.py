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
the same message (`Exception`, what the launcher caught, when none is in the lines); an `oom`
of that rank where the status is XLA's `RESOURCE_EXHAUSTED`, what a device out of memory
raises (huggingface/transformers#22328, a TPU v3-8 VM under FSDP):

    Exception in device=TPU:6: RESOURCE_EXHAUSTED: From /job:localservice/replica:0/task:0:
    2 root error(s) found.
      (0) RESOURCE_EXHAUSTED: Attempting to reserve 10.51G at the bottom of memory. That was not possible. There are 8.97G free, 0B reserved, and 8.97G reservable.

XLA's own lines that say a device ran out (`XLA_OUT_OF_MEMORY`, other than a Python
exception's line, which the traceback family reads) are `oom` events of their writer. A
rendezvous whose socket closed under it is a process that left the mesh: a `peer_closed`
event of the rank that waited (a maintainer, pytorch/xla#2190: "if one of the process exit
early ... other process will wait for a while and then report Failed to meet rendezvous").
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser
from parsers.traceback import BARE_EXCEPTION, MESSAGE_CHARS, XLA_OUT_OF_MEMORY

EXCEPTION_IN_DEVICE = (
    r"^Exception in device=(?P<device>(?:TPU|GPU|CPU|CUDA|XPU|NEURON):(?P<ordinal>\d{1,7})):"
    r" (?P<message>.*)$"
)
RENDEZVOUS_SOCKET_CLOSED = r"Failed to meet rendezvous '[^']*': Socket closed"
# the status XLA gives a device that ran out of memory
DEVICE_EXHAUSTED = "RESOURCE_EXHAUSTED"
# the traceback's own exception line: `RuntimeError: Aborted: Session ... is not found.`
EXCEPTION_LINE = r"^(?P<type>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)): (?P<message>.*)$"
# XLA's CPU and GPU collectives warning that a participant waits at a rendezvous the others
# have not reached; the process then hangs (pytorch/xla#7974, verbatim, rank 0 having failed
# an assertion before its AllReduce):
#   E0000 00:00:1725834192.702937  625990 collective_ops_utils.h:310] This thread has been
#   waiting for 5000ms for and may be stuck: participant AllReduceParticipantData{rank=1,
#   element_count=7840, type=F32, rendezvous_key=RendezvousKey{run_id=RunId: 0,
#   global_devices=[0,1], num_local_participants=2, collective_op_kind=cross_replica, op_id=0}}
#   waiting for all participants to arrive at rendezvous RendezvousKey{...}
# A `collective_timeout` of the participant's rank, the op named, its wait so far in
# `elapsed_ms` (no timeout: it waits forever) and the devices of the rendezvous as the world.
RENDEZVOUS_WAIT = (
    r"This thread has been waiting for (?P<ms>\d+)ms for .*?may be stuck: participant "
    r"(?P<op>[A-Za-z]+?)ParticipantData\{rank=(?P<rank>\d+),.*?global_devices=\[(?P<devices>[\d, ]*)\]"
)
# XRT's mesh client failing to reach the mesh master, the service through which the processes
# of an `xmp.spawn` find each other (pytorch/xla#2604, `XRT_TPU_CONFIG` unset, verbatim):
#   Failed to connect to client mesh master: d7c1c93dfe8c:56419
# a `store_unreachable` event: the job could not form, as with torch's rendezvous store
MESH_MASTER_UNREACHABLE = r"Failed to connect to client mesh master: (?P<endpoint>\S+)"
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
    out_of_memory = pl.col("_said").str.starts_with(DEVICE_EXHAUSTED)
    reports = (
        reports.join(_raised_types(lines, reports), on=["file", "line"], how="left")
        .with_columns(
            pl.when(left_the_mesh)
            .then(pl.lit("peer_closed"))
            .when(out_of_memory)
            .then(pl.lit("oom"))
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
    said_by_xla = lines.filter(
        pl.col("candidate")
        & pl.col("message").str.contains(XLA_OUT_OF_MEMORY)
        & ~pl.col("message").str.contains(EXCEPTION_IN_DEVICE)
        & ~pl.col("message").str.contains(BARE_EXCEPTION)  # a Python exception: traceback's
    ).select(
        "file",
        "line",
        pl.lit("oom").alias("event"),
        pl.lit("error").alias("severity"),
        pl.col("message").str.extract(r"(RESOURCE_EXHAUSTED: .*)$", 1).alias("exc_message"),
    )
    wait = pl.col("message").str.extract_groups(RENDEZVOUS_WAIT)
    waits = lines.filter(
        pl.col("candidate") & pl.col("message").str.contains(RENDEZVOUS_WAIT)
    ).select(
        "file",
        "line",
        pl.lit("collective_timeout").alias("event"),
        pl.lit("error").alias("severity"),
        wait.struct.field("rank").cast(pl.Int32, strict=False).alias("rank"),
        wait.struct.field("op").str.to_uppercase().alias("op"),
        wait.struct.field("ms").cast(pl.Int64, strict=False).alias("elapsed_ms"),
        wait.struct.field("devices").str.split(",").list.len().cast(pl.Int32).alias("world_size"),
    )
    unreachable = lines.filter(
        pl.col("candidate") & pl.col("message").str.contains(MESH_MASTER_UNREACHABLE)
    ).select(
        "file",
        "line",
        pl.lit("store_unreachable").alias("event"),
        pl.lit("error").alias("severity"),
        pl.col("message").str.extract(MESH_MASTER_UNREACHABLE, 1).alias("peer"),
        pl.lit("failed to connect to").alias("exc_message"),
    )
    return pl.concat([reports, said_by_xla, waits, unreachable], how="diagonal_relaxed")


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
    literals=(
        "Exception in device=",
        "RESOURCE_EXHAUSTED: ",
        "may be stuck: participant",
        "Failed to connect to client mesh master: ",
    ),
    parse=parse,
    context_after=TRACEBACK_LINES,
)
