# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""NCCL's trace of every collective a process launches (`NCCL_DEBUG=INFO` with
`NCCL_DEBUG_SUBSYS=COLL`), one line per call (NVIDIA/nccl#147, PyTorch DDP's first broadcasts
on two of eight GPUs):

    learnfair062:32615:32615 [0] NCCL INFO Broadcast: opCount 0 sendbuff 0x7f88e4000000 recvbuff 0x7f88e4000000 count 25503912 datatype 6 op 0 root 0 comm 0x7f88e005a260 [nranks=8] stream 0x55f20d2f5db0
    learnfair062:32617:32617 [1] NCCL INFO Broadcast: opCount 0 sendbuff 0x7f3bfe7f5400 recvbuff 0x7f3bfe7f5400 count 53 datatype 4 op 0 root 0 comm 0x7f3bf405a260 [nranks=8] stream 0x55d5ffb73110

(the same grammar in NVIDIA/nccl#203, #584, #1193, #1238 and pytorch/torchtitan#1369). Each
is an `nccl_coll` event of the process (host, pid; `rank` comes from `process_map`): `op` in
PyTorch's upper case (BROADCAST), `seq` the communicator's operation count (printed in hex),
`numel_in` the element count, `dtype` the ncclDataType_t's name, `comm` the communicator's
pointer in that process and `nranks` its size. Two processes' calls with one operation count
on a communicator of one size are the same collective: their op, count and type must agree.

The identity is searched for, not anchored: two processes' writes can interleave on one line
(`learnfair062:32619:32711 [2] NCCL INFO learnfair062:32629:32629 [7] NCCL INFO Broadcast: ...`
is process 32629's call), and a call whose identity the line lost is recognised, no event.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

CALL = (
    r"(?:(?P<host>[^\s:\[\]]+):(?P<pid>\d+):\d+ \[(?P<dev>\d+)\] NCCL INFO )?"
    r"(?P<op>[A-Za-z]+): opCount (?P<count_hex>[0-9a-fA-F]+) sendbuff \S+ recvbuff \S+ "
    r"count (?P<count>\d+) datatype (?P<dtype>\d+) op (?P<redop>\d+) root (?P<root>\d+) "
    r"comm (?P<comm>0x[0-9a-fA-F]+|\(nil\)) \[nranks=(?P<nranks>\d+)\]"
)
# ncclDataType_t (NVIDIA/nccl:src/nccl.h.in)
DATATYPES = {
    "0": "int8",
    "1": "uint8",
    "2": "int32",
    "3": "uint32",
    "4": "int64",
    "5": "uint64",
    "6": "float16",
    "7": "float32",
    "8": "float64",
    "9": "bfloat16",
    "10": "float8e4m3",
    "11": "float8e5m2",
}
# NCCL's names, as PyTorch prints its own ops
OPS = {
    "AllReduce": "ALLREDUCE",
    "Broadcast": "BROADCAST",
    "Reduce": "REDUCE",
    "AllGather": "ALLGATHER",
    "ReduceScatter": "REDUCE_SCATTER",
    "Send": "SEND",
    "Recv": "RECV",
    "AllToAll": "ALLTOALL",
}


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    call = pl.col("message").str.extract_groups(CALL)
    found = lines.with_columns(call.alias("_call")).filter(
        pl.col("_call").struct.field("op").is_not_null()
    )
    field = pl.col("_call").struct.field
    identified = field("pid").is_not_null()
    return found.select(
        "file",
        "line",
        pl.when(identified).then(pl.lit("nccl_coll")).alias("event"),
        pl.lit("info").alias("severity"),
        field("host").alias("host"),
        field("pid").cast(pl.Int64, strict=False).alias("pid"),
        field("dev").cast(pl.Int32, strict=False).alias("cuda_dev"),
        field("op").replace_strict(OPS, default=field("op").str.to_uppercase()).alias("op"),
        field("count_hex").str.to_integer(base=16, strict=False).alias("seq"),
        field("count").cast(pl.Int64, strict=False).alias("numel_in"),
        field("dtype").replace_strict(DATATYPES, default=field("dtype")).alias("dtype"),
        field("comm").alias("comm"),
        field("nranks").cast(pl.Int32, strict=False).alias("nranks"),
    )


PARSER = LineParser(name="nccl_coll", literals=(": opCount ",), parse=parse)
