# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring and comments
"""TORCH_DISTRIBUTED_DEBUG=DETAIL: ProcessGroupWrapper's collective fingerprints
(pytorch/pytorch:torch/csrc/distributed/c10d/ProcessGroupWrapper.cpp). Verbatim, with the long
`TensorDeviceTypes=TensorOptions(...)` shortened:

    RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=485, OpType=ALLREDUCE, TensorShape=[25], TensorDtypes=Float, TensorDeviceTypes=TensorOptions(...)), but Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=485, OpType=BROADCAST, TensorShape=[1], TensorDtypes=Long, TensorDeviceTypes=TensorOptions(...)).Collectives differ in the following aspects:   Op type: ALLREDUCEvs BROADCAST  Tensor Tensor shapes: 25vs 1  Tensor Tensor dtypes: Floatvs Long
    RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=1OpType=BARRIER), but Rank 2 is running collective: CollectiveFingerPrint(SequenceNumber=0OpType=BARRIER).Collectives di
    [rank3]:[I1130 15:15:01.588855496 ProcessGroupWrapper.cpp:710] [Rank 3] Running collective: CollectiveFingerPrint(SequenceNumber=37, OpType=ALLREDUCE, TensorShape=[16, 8], TensorDtypes=Float, TensorDeviceTypes=TensorOptions(...))

and, from the source, `ProcessGroupWrapper: Monitored Barrier encountered error running
collective: <fingerprint>. Error: ` with the monitored barrier's error on the next line.

Its check of the tensors' shapes across ranks before a collective (PyTorch's distributed docs,
"TORCH_DISTRIBUTED_DEBUG", verbatim):

    RuntimeError: Error when verifying shape tensors for collective ALLREDUCE on rank 0. This likely indicates that input shapes into the collective are mismatched across ranks. Got shapes:  10

a `shape_check_failed` event of the rank that raised it, with the collective's op.

Versions: torch <= 1.11 prints one side only ("Rank 0 is running inconsistent collective: ..."),
1.12 names only the other side's op ("but Rank 1 is running collective: REDUCE."), ~2.0 added
SequenceNumber, and a fingerprint without tensors is printed without the comma
(`SequenceNumber=20OpType=BARRIER`). "Rank X" is the reporting process's rank in the wrapped
group: the global rank for the default group (the common case), so it fills both `rank` and
`comm_rank`.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

# CollectiveFingerPrint(SequenceNumber=485, OpType=ALLREDUCE, TensorShape=[25], TensorDtypes=Float, TensorDeviceTypes=...
# CollectiveFingerPrint(SequenceNumber=20OpType=BARRIER)      CollectiveFingerPrint(OpType=BROADCAST, TensorShape=[34112], ...
FINGERPRINT = (
    r"CollectiveFingerPrint\(\s*(?:SequenceNumber=(?P<seq>\d+),?\s*)?OpType=(?P<op>\w+)"
    r"(?:,\s*TensorShape=(?P<shape>\[[^\]]*\]))?"
    r"(?:,\s*TensorDtypes=\[?(?P<dtype>\w+(?:, \w+)*?)\]?(?:,\s*TensorDeviceTypes=|\s*\)))?"
)
# Detected mismatch between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint(...
MISMATCH_OWN = (
    r"Rank (?P<rank>\d+) is running (?:inconsistent )?collective:(?: " + FINGERPRINT + ")?"
)
# ..., but Rank 0 is running collective: CollectiveFingerPrint(...   /  ..., but Rank 1 is running collective: REDUCE.
# (or, its sentences a line each, `but Rank 0 is running collective: ...` with no comma before)
MISMATCH_PEER = (
    r"(?:, |\s)but Rank (?P<rank>\d+) is running collective: (?:"
    + FINGERPRINT
    + r"|(?P<bare_op>\w+)\.)"
)
# ..., but Rank 0 is running   (the rest cut by a paste: the other side's rank alone)
MISMATCH_PEER_RANK = r"(?:, |\s)but Rank (\d+) is running"
# [Rank 0] Running collective: CollectiveFingerPrint(SequenceNumber=20OpType=BARRIER)
RUNNING = r"\[Rank (?P<rank>\d+)\] Running collective: " + FINGERPRINT
# ProcessGroupWrapper: Monitored Barrier encountered error running collective: CollectiveFingerPrint(...
BARRIER_ERROR = r"Monitored Barrier encountered error running collective: " + FINGERPRINT

MISMATCH_WORDING = "Detected mismatch between collectives on ranks"
SHAPE_CHECK_WORDING = "Error when verifying shape tensors for collective"
SHAPE_CHECK = SHAPE_CHECK_WORDING + r" (?P<op>\w+) on rank (?P<rank>\d+)\b"
# torch 1.10-1.11 print the fingerprint one field per line under the sentence
# (huggingface/transformers#20366):
#   Detected mismatch between collectives on ranks. Rank 1 is running inconsistent collective:
#   CollectiveFingerPrint(
#       OpType=ALLGATHER,
#       TensorShape=[1, 279, 44, 72],
#       TensorDtypes=Float,
# and an SGLang server's report a sentence per line (sgl-project/sglang#13227, verbatim):
#   RuntimeError: Detected mismatch between collectives on ranks.
#   Rank 7 is running collective: CollectiveFingerPrint(SequenceNumber=18, OpType=BROADCAST, ...)
#   but Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=30, OpType=BROADCAST, ...)
FINGERPRINT_LINES = 5
OPEN_ENDS = ("collective:", MISMATCH_WORDING + ".")


def _fingerprint_columns(found: pl.Expr) -> list[pl.Expr]:
    return [
        found.struct.field("seq").cast(pl.Int64, strict=False).alias("seq"),
        found.struct.field("op").alias("op"),
        found.struct.field("shape").alias("shape"),
        found.struct.field("dtype").alias("dtype"),
    ]


def _with_the_fingerprint_below(lines: pl.DataFrame) -> pl.DataFrame:
    """Each sentence that ends at `collective:` (or at `on ranks.`) with the fingerprints
    printed on the lines under it joined on (the other lines as they are)."""
    message = pl.col("message")
    ends = message.str.strip_chars_end()
    ends_open = pl.col("candidate") & pl.any_horizontal(
        ends.str.ends_with(end) for end in OPEN_ENDS
    )
    if not lines.select(ends_open.any()).item():
        return lines
    below = [
        pl.when(pl.col("line").shift(-k).over("file") == pl.col("line") + k)
        .then(message.shift(-k).over("file").str.strip_chars())
        .otherwise(pl.lit(""))
        for k in range(1, FINGERPRINT_LINES + 1)
    ]
    joined = pl.concat_str([message, *below], separator=" ")
    return lines.with_columns(pl.when(ends_open).then(joined).otherwise(message).alias("message"))


def _mismatches(lines: pl.DataFrame) -> pl.DataFrame:
    lines = _with_the_fingerprint_below(lines)
    message = pl.col("message")
    own = message.str.extract_groups(MISMATCH_OWN)
    peer = message.str.extract_groups(MISMATCH_PEER)
    return lines.filter(
        pl.col("candidate")
        & message.str.contains(MISMATCH_WORDING, literal=True)
        & message.str.contains(MISMATCH_OWN)
    ).select(
        "file",
        "line",
        pl.lit("collective_mismatch").alias("event"),
        pl.lit("error").alias("severity"),
        own.struct.field("rank").cast(pl.Int32, strict=False).alias("rank"),
        own.struct.field("rank").cast(pl.Int32, strict=False).alias("comm_rank"),
        *_fingerprint_columns(own),
        pl.coalesce(peer.struct.field("rank"), message.str.extract(MISMATCH_PEER_RANK, 1))
        .cast(pl.Int32, strict=False)
        .alias("peer_rank"),
        peer.struct.field("seq").cast(pl.Int64, strict=False).alias("peer_seq"),
        pl.coalesce(peer.struct.field("op"), peer.struct.field("bare_op")).alias("peer_op"),
        peer.struct.field("shape").alias("peer_shape"),
        peer.struct.field("dtype").alias("peer_dtype"),
    )


def _runs(lines: pl.DataFrame) -> pl.DataFrame:
    running = pl.col("message").str.extract_groups(RUNNING)
    return lines.filter(pl.col("message").str.contains(RUNNING)).select(
        "file",
        "line",
        pl.lit("collective_run").alias("event"),
        pl.lit("info").alias("severity"),
        running.struct.field("rank").cast(pl.Int32, strict=False).alias("rank"),
        running.struct.field("rank").cast(pl.Int32, strict=False).alias("comm_rank"),
        *_fingerprint_columns(running),
    )


def _barrier_errors(lines: pl.DataFrame) -> pl.DataFrame:
    failed = pl.col("message").str.extract_groups(BARRIER_ERROR)
    return lines.filter(pl.col("message").str.contains(BARRIER_ERROR)).select(
        "file",
        "line",
        pl.lit("monitored_barrier_error").alias("event"),
        pl.lit("error").alias("severity"),
        *_fingerprint_columns(failed),
    )


def _shape_checks(lines: pl.DataFrame) -> pl.DataFrame:
    failed = pl.col("message").str.extract_groups(SHAPE_CHECK)
    return lines.filter(pl.col("message").str.contains(SHAPE_CHECK)).select(
        "file",
        "line",
        pl.lit("shape_check_failed").alias("event"),
        pl.lit("error").alias("severity"),
        failed.struct.field("rank").cast(pl.Int32, strict=False).alias("rank"),
        failed.struct.field("op").alias("op"),
    )


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    # the lines after each candidate are read only as a mismatch's fingerprint
    candidates = lines.filter(pl.col("candidate"))
    return pl.concat(
        [
            _mismatches(lines),
            _runs(candidates),
            _barrier_errors(candidates),
            _shape_checks(candidates),
        ],
        how="diagonal_relaxed",
    )


PARSER = LineParser(
    name="detail",
    literals=(
        MISMATCH_WORDING,
        "Running collective: CollectiveFingerPrint",
        "Monitored Barrier encountered error running collective",
        SHAPE_CHECK_WORDING,
    ),
    parse=parse,
    context_after=FINGERPRINT_LINES,
)
