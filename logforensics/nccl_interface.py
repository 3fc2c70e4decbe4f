"""NCCL's bootstrap on a loopback interface in a job that reaches past its host, a network
setting that keeps the communicator from forming: read by the nccl_error rule."""

from __future__ import annotations

import polars as pl

from logforensics.findings import Finding
from logforensics.gloo_interface import interface_finding
from logforensics.job import Job
from logforensics.text import rank_list

# the interface or address NCCL names when it took a loopback one: `lo:127.0.0.1`, `lo:::1`
LOOPBACK_ADDRESS = r"^(?:127\.\d+\.\d+\.\d+|::1)$"
NCCL_INTERFACE_FIX = (
    "Tell NCCL which network interface reaches the other nodes: set NCCL_SOCKET_IFNAME on "
    "every node to that interface's name (`ip -br addr` lists them; `^lo,docker` excludes "
    "those instead), never `lo`, and check that MASTER_ADDR names an address the other nodes "
    "reach. A loopback address reaches only the host itself."
)
PROCESS = ["host", "pid"]


def nccl_interface(job: Job) -> list[Finding]:
    """A process whose NCCL bootstrap or socket transport took a loopback interface (`Bootstrap
    : Using [0]lo:127.0.0.1<0>`) and whose connects were then refused and retried: the peer
    it must reach listens on another host, which no loopback address reaches
    (pytorch/pytorch#52916: NCCL_SOCKET_IFNAME=lo on the second of two nodes). On one host a
    loopback bootstrap works, so without refused connects it is no fault."""
    nccl = job.events.filter(pl.col("family") == "nccl")
    loopback = nccl.filter(
        (pl.col("event") == "nccl_interface")
        & ((pl.col("device") == "lo") | pl.col("peer").fill_null("").str.contains(LOOPBACK_ADDRESS))
    )
    if loopback.is_empty():
        return []
    on_loopback = loopback.select(PROCESS).unique()
    refused = nccl.filter(pl.col("event") == "connect_retry").join(
        on_loopback, on=PROCESS, how="semi", nulls_equal=True
    )
    if refused.is_empty():
        return []
    rows = pl.concat([loopback.head(1), refused], how="diagonal_relaxed").sort("file", "line")
    ranks = sorted(rows.get_column("rank").drop_nulls().unique().to_list())
    who = f"{rank_list(ranks).capitalize()}'s NCCL" if ranks else "NCCL"
    first = loopback.row(0, named=True)
    why = refused.item(0, "exc_message") or "refused"
    summary = (
        f"{who} bootstrap took the loopback interface ({first['device']}:{first['peer']}) and "
        f"its connects failed ({why.lower()}, retried {refused.height} times): a loopback "
        "address reaches no other host, so the communicator never formed; the network "
        "setting is the cause."
    )
    return [
        interface_finding(
            rows,
            summary=summary,
            fix=NCCL_INTERFACE_FIX,
            ranks=ranks,
            transport="nccl",
            interfaces=[first["device"]],
            confidence="high",
            blames_nobody=True,
        )
    ]
