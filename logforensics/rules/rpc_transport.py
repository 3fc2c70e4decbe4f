"""torch.distributed.rpc's TensorPipe transport failing between two workers.

TensorPipe connects each pair of RPC workers directly, at the address each advertised at
`init_rpc`, over its own transports (TCP through libuv, shared memory, InfiniBand). A connect
refused at that address means the peer listened elsewhere or not at all: most often a host
whose name resolves to a loopback address (127.0.1.1), so that it advertised one the others
cannot reach, until `TP_SOCKET_IFNAME` names the interface (pytorch/tensorpipe#201, its cause
in pytorch/pytorch#42879). A transport whose sends went unacknowledged until its retries ran out
(InfiniBand's `transport retry counter exceeded`) lost the link or the peer (pytorch/pytorch
#104568). Either fails the RPC call on that worker; its exception is the symptom. Diagnosed as
a communication library's error, as NCCL's are.
"""

from __future__ import annotations

import polars as pl

from logforensics.findings import Finding
from logforensics.job import Job
from logforensics.placement import placed_finding
from logforensics.registry import Rule
from logforensics.text import rank_list

CONNECT_FIX = (
    "TensorPipe connects each pair of RPC workers directly, at the address each one "
    "advertised. Make every worker advertise an address the others reach: set TP_SOCKET_IFNAME "
    "(and GLOO_SOCKET_IFNAME) to the interface the hosts share, or fix a host name that "
    "resolves to a loopback address (127.0.1.1 in /etc/hosts). If the peer had exited, its own "
    "log says why."
)
TRANSPORT_FIX = (
    "The transport between the two workers failed, not the job's code. For InfiniBand, check "
    "the port's state on both hosts (`ibstat`, `ibv_devinfo`: `PORT_ACTIVE`) and the fabric "
    "between them; to confirm, restrict TensorPipe to TCP (`TensorPipeRpcBackendOptions("
    "_transports=['uv'])`). If the peer process died, its own log says why."
)


def check(job: Job) -> list[Finding]:
    events = job.events
    refused = events.filter(pl.col("event") == "rpc_connect_failed")
    if not refused.is_empty():
        return [_finding(job, refused, "could not connect", CONNECT_FIX, connect=True)]
    failed = events.filter(pl.col("event") == "rpc_transport_error")
    if not failed.is_empty():
        return [_finding(job, failed, "lost its transport", TRANSPORT_FIX, connect=False)]
    return []


def _finding(job: Job, rows: pl.DataFrame, what: str, fix: str, connect: bool) -> Finding:
    rows = rows.sort("file", "line")
    first = rows.row(0, named=True)
    ranks = sorted(rows.get_column("rank").drop_nulls().unique().to_list())
    who = rank_list(ranks).capitalize() if ranks else "A worker"
    peers = rows.get_column("peer").drop_nulls().unique(maintain_order=True).to_list()
    to = f" to {', '.join(peers[:3])}" if peers else ""
    origin = f", from {first['frame']}" if first["frame"] else ""
    summary = (
        f"{who}'s RPC agent {what}{to} (`{first['exc_message']}`{origin}): TensorPipe's link "
        "between the workers failed, and the RPC calls over it failed with it."
    )
    return placed_finding(
        job,
        rows,
        kind="rpc_transport",
        severity="error",
        part="explanation",
        summary=summary,
        fix=fix,
        ranks=ranks,
        blames_nobody=True,
        confidence="medium",
        details={"peers": peers, "error": first["exc_message"], "connect": connect},
    )


def _diagnosis(finding: Finding) -> str:
    return "nccl_error"


RULE = Rule(kind="rpc_transport", check=check, specificity=8, diagnosis=_diagnosis)
