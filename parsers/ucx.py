# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""UCX, the transport under Open MPI (and under UCC and NIXL), reporting a connection it could
not make, in its own logger's words and then in Open MPI's UCX layer's:

    [1695144496.484294] [hpci5201:103648:0]       ib_device.c:1250 UCX  ERROR   ibv_create_ah(dlid=49152 sl=0 port=1 src_path_bits=0 dgid=::ffff:192.160.0.55 sgid_index=3 traffic_class=106) for UD verbs connect on bnxt_re0 failed: Connection timed out
    [hpci5201:103648] pml_ucx.c:419  Error: ucp_ep_create(proc=1) failed: Endpoint timeout
    [hpci5201:103648] pml_ucx.c:472  Error: Failed to resolve UCX endpoint for rank 1

(mlcommons/training_results_v3.0#5: HugeCTR's DLRM on two nodes, the RoCE address handle to the
other node timed out; open-mpi/ompi#8003 and openucx/ucx#9908 print the same lines after a
socket `connect(...) failed: Connection timed out` or `Connection refused`, some pastes with
single spaces.) Each is an `nccl_error` of the process `[host:pid]` names (UCX plays NCCL's part
for MPI): the transport failed on that host, whatever MPI or the program raise after it. The
rank such a line names is the peer's, not the writer's.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

# [1695144496.484294] [hpci5201:103648:0]       ib_device.c:1250 UCX  ERROR   <what failed>
UCX_ERROR = (
    r"^\s*(?:\[\d+\.\d+\] )?\[(?P<host>[^\]\s:]+):(?P<pid>\d+):\d+\]\s+[\w.]+:\d+\s+UCX\s+ERROR\s+"
    r"(?P<said>\S.*?)\s*$"
)
# [hpci5201:103648] pml_ucx.c:472  Error: Failed to resolve UCX endpoint for rank 1
# (its `[host:pid] ` tag may be peeled already, as Open MPI's process tag: logforensics/framing.py)
LAYER_ERROR = (
    r"^\s*(?:\[(?P<host>[^\]\s:]+):(?P<pid>\d+)\] )?(?:pml|osc|spml|mtl|btl)_ucx\.c:\d+\s+Error:\s+"
    r"(?P<said>\S.*?)\s*$"
)


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    own, layer = message.str.extract_groups(UCX_ERROR), message.str.extract_groups(LAYER_ERROR)

    def field(name: str) -> pl.Expr:
        return pl.coalesce(own.struct.field(name), layer.struct.field(name))

    said = field("said")
    return lines.filter(said.is_not_null()).select(
        "file",
        "line",
        pl.lit("nccl_error").alias("event"),
        pl.lit("error").alias("severity"),
        field("host").alias("host"),
        field("pid").cast(pl.Int64, strict=False).alias("pid"),
        pl.format("UCX: {}", said).alias("exc_message"),
    )


PARSER = LineParser(
    name="ucx",
    literals=("UCX  ERROR", "UCX ERROR", "_ucx.c:"),
    parse=parse,
)
