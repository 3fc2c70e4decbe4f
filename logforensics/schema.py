"""The event table: one declared schema that every parser fills and every rule reads.

A row is one recognised fact from one input line. Parsers return frames holding a subset of
these columns; `conform` adds the rest as typed nulls, casts, and orders them.
"""

from __future__ import annotations

import polars as pl

from logforensics.errors import ImplementationError

# 2: stage marks are rows of family `stage_marks` without their text (a job prints hundreds
# of millions; `file` and `line` lead to each)
SCHEMA_VERSION = 2
SCHEMA_ID = f"logforensics/events@{SCHEMA_VERSION}"

SEVERITY = pl.Enum(["debug", "info", "warning", "error"])

# How a row's global rank was established, most trusted first.
RANK_SOURCES = (
    "prefix",  # a launcher or PyTorch prefix on the line states the global rank
    "content",  # the line itself says `rank=3`, `'rank': 3`, `for rank 3`
    "file_content",  # the one rank the rest of the file (one writer) names
    "node_offset",  # local rank + the node's offset, from lines stating both or NCCL inits
    "path",  # a global rank in the path: rank3.log, rank.0007/
    "path_local",  # a torchrun tree's local-rank folder, when the tree shows one node
    "node_index",  # task or pod index x --nproc_per_node from the launch line
    "process",  # (host, pid) mapped to a rank by the world communicator's NCCL init
    "device",  # a progress line's CUDA device, when the logs show a single node
)

EVENT_SCHEMA: dict[str, pl.DataType] = {
    # provenance: every finding must lead back to a line of an input file
    "file": pl.String(),  # path relative to the analysed PATH
    "line": pl.UInt32(),  # 1-based line number within `file`
    "text": pl.String(),  # the line exactly as read (after decoding)
    "parser": pl.String(),  # module that recognised the line
    # who
    "rank": pl.Int32(),  # global rank; null when nothing says which rank
    "rank_from": pl.String(),  # one of RANK_SOURCES
    "local_rank": pl.Int32(),
    "host": pl.String(),
    "pid": pl.Int64(),
    # when
    "timestamp": pl.Datetime("us"),  # as printed (no zone); null when the line has none
    # what
    "family": pl.String(),  # log family: stage_mark, device_map, loader_size, ...
    "event": pl.String(),  # normalised event name within the family
    "severity": SEVERITY,
    "message": pl.String(),  # the line with launcher prefixes stripped
    # training position
    "epoch": pl.Int64(),
    "step": pl.Int64(),
    "stage": pl.String(),
    # collectives
    "pg": pl.String(),  # process group as printed: "0", "0 (default_pg)", "1 (EXPERT_GROUP)"
    "op": pl.String(),  # ALLREDUCE, BROADCAST, BARRIER, ... (upper case as PyTorch prints)
    "seq": pl.Int64(),  # collective sequence number (SeqNum / SequenceNumber / work id)
    "numel_in": pl.Int64(),
    "numel_out": pl.Int64(),
    "shape": pl.String(),  # TensorShape as printed, e.g. "[25]"
    "dtype": pl.String(),
    "timeout_ms": pl.Int64(),
    "elapsed_ms": pl.Int64(),
    "last_enqueued": pl.Int64(),
    "last_started": pl.Int64(),
    "last_completed": pl.Int64(),
    # the other side of a two-sided message (DETAIL mismatch, monitored barrier, p2p peer)
    "peer_rank": pl.Int32(),
    "peer_op": pl.String(),
    "peer_seq": pl.Int64(),
    "peer_shape": pl.String(),
    "peer_dtype": pl.String(),
    "peer": pl.String(),  # a network peer as printed: "10.0.0.3<58355>", "[18.25.6.30]:28048"
    # exceptions and process exits
    "exc_type": pl.String(),  # e.g. torch.OutOfMemoryError, RuntimeError
    "exc_message": pl.String(),
    "frame": pl.String(),  # innermost frame "file:line in func"
    "end_line": pl.UInt32(),  # last line of a multi-line event (traceback, summary block)
    "end_text": pl.String(),  # that last line as read (a traceback's exception line)
    "exitcode": pl.Int32(),
    "signal": pl.String(),  # SIGABRT, SIGTERM, ...
    # NCCL communicators and devices
    "tid": pl.Int64(),
    "cuda_dev": pl.Int32(),  # CUDA ordinal as the process sees it (after CUDA_VISIBLE_DEVICES)
    "nvml_dev": pl.Int32(),  # physical GPU index
    "bus_id": pl.String(),  # PCI bus id, as printed (e.g. "1000", "0000:1b:00.0")
    "comm": pl.String(),  # communicator pointer, e.g. "0x7f1c0c002f80"
    "comm_id": pl.String(),  # communicator id (commId / hash)
    "comm_rank": pl.Int32(),  # rank within that communicator (may differ from the global rank)
    "nranks": pl.Int32(),  # size of that communicator
    "nccl_version": pl.String(),
    "error_code": pl.String(),  # ncclResult / errno name or number as printed
    # devices and sizes
    "device": pl.String(),  # device ordinal or bus id as printed
    "world_size": pl.Int32(),
    "value": pl.Int64(),  # a single number the event reports (e.g. a loader length)
    "values": pl.List(pl.Int64()),  # a list the event reports (loader sizes, failed ranks, ...)
    "names": pl.List(pl.String()),  # names the event reports (e.g. parameters without grad)
    "extra": pl.String(),  # JSON for the long tail; promote to a column once two rules use it
}


def empty_events() -> pl.DataFrame:
    """An event table with no rows."""
    return pl.DataFrame(schema=EVENT_SCHEMA)


def conform(frame: pl.LazyFrame | pl.DataFrame) -> pl.LazyFrame:
    """Add missing columns as typed nulls, cast to the schema and order the columns.

    The cast is lenient: a number a log wrote that its column cannot hold (a GPU index past an
    Int32) becomes null rather than failing the whole analysis; parsers cast their own numbers
    leniently too, this is the net under the ones that do not.

    Raises ImplementationError when a parser emits a column the schema does not declare.
    """
    lazy = frame.lazy()
    present = lazy.collect_schema().names()
    unknown = [name for name in present if name not in EVENT_SCHEMA]
    if unknown:
        raise ImplementationError(f"columns not in the event schema: {unknown}")
    return lazy.select(
        (pl.col(name) if name in present else pl.lit(None)).cast(dtype, strict=False).alias(name)
        for name, dtype in EVENT_SCHEMA.items()
    )


def with_marks(events: pl.DataFrame, marks: pl.DataFrame, writers: pl.DataFrame) -> pl.DataFrame:
    """The event table with a row per stage mark (`marks`, events.MARK_SCHEMA), each ranked as
    its writer was (`writers`: file, rank, rank_from), for export."""
    rank_from = writers.group_by("file", "rank").agg(pl.col("rank_from").first())
    rows = (
        marks.with_columns(pl.col("file").cast(pl.String), pl.col("stage").cast(pl.String))
        .join(rank_from, on=["file", "rank"], how="left")
        .with_columns(
            pl.lit("stage_marks").alias("parser"),
            pl.lit("stage_marks").alias("family"),
            pl.lit("stage").alias("event"),
        )
    )
    return pl.concat([events, conform(rows).collect()]).sort("file", "line", "parser")


def write_parquet(events: pl.DataFrame, path: str) -> None:
    """Write the event table with the schema version in the file's key/value metadata."""
    from logforensics import __version__

    events.sort("file", "line").write_parquet(
        path,
        compression="zstd",
        statistics=True,
        metadata={
            "logforensics.schema": SCHEMA_ID,
            "logforensics.schema_version": str(SCHEMA_VERSION),
            "logforensics.version": __version__,
        },
    )
