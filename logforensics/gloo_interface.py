"""gloo on the wrong network interface, a network setting that keeps a process group from
forming: read by the nccl_error rule (the transport's fault), and by missing_rank so that it
does not also call the group's failure a start-up without a cause."""

from __future__ import annotations

import polars as pl

from logforensics.findings import Finding, evidence_from
from logforensics.job import Job
from logforensics.placement import earliest_time
from logforensics.text import rank_list

# an IPv4 or IPv6 loopback address as gloo prints it: `[127.0.0.1]:14215`, `[127.0.1.1]:3210`
LOOPBACK = r"^\[(?:127\.\d+\.\d+\.\d+|::1)\]"
GLOO_INTERFACE_FIX = (
    "Tell gloo which network interface reaches the other nodes: set GLOO_SOCKET_IFNAME (and "
    "NCCL_SOCKET_IFNAME) on every node to that interface's name (`ip -br addr` lists them). "
    "GLOO_SOCKET_IFNAME takes interface names, not NCCL's `^` exclusion list. Without it gloo "
    "uses the address the host name resolves to, which is the loopback where /etc/hosts maps "
    "the name to 127.x (common in containers and pods)."
)


def wrong_interface(job: Job) -> pl.DataFrame:
    """gloo's lines that show it on the wrong network interface (see `gloo_interface`); none
    unless one of them is a failure (the loopback warning alone is no fault)."""
    gloo = job.events.filter(pl.col("family") == "gloo")
    loopback = pl.col("peer").fill_null("").str.contains(LOOPBACK)
    # a failed connect with no peer printed, on a host (else in a file) where gloo fell back to
    # the loopback (vllm-project/vllm#7074: rank 9's fallback warning, then rank 8's
    # `Gloo connectFullMesh failed with [.../pair.cc:144] no error`, both on 10.41.0.8)
    fell_back = gloo.filter(pl.col("event") == "loopback_fallback")
    place = pl.coalesce(pl.col("host"), pl.col("file"))
    beside_fallback = place.is_in(fell_back.select(place).to_series().implode())
    wrong = gloo.filter(
        (pl.col("event") == "no_interface")
        | (pl.col("event") == "loopback_fallback")
        | (
            (pl.col("event") == "connect_failed")
            & (loopback | (pl.col("peer").is_null() & beside_fallback))
        )
    ).sort("file", "line")
    if wrong.filter(pl.col("event") != "loopback_fallback").is_empty() or _formed(job):
        return wrong.clear()
    return wrong


def _formed(job: Job) -> bool:
    """Whether the job's processes once reached each other: it made progress, or a connection
    to a peer broke (it had been made). Then the interface worked, and a later failed connect
    is no fault of it (a run here: torchrun's restart after a rank's failure, whose new workers'
    connects on the loopback of a one-host job were refused)."""
    progressed = job.made_progress()
    broke = job.events.filter(pl.col("event").is_in(["peer_closed", "peer_reset"]))
    return progressed or not broke.is_empty()


def gloo_interface(job: Job) -> list[Finding]:
    """gloo on the wrong network interface: the address it tried to reach peers at, or bound
    itself, is a loopback one (its host name resolved to none other: `Using the loopback
    address as fallback`), or the interface it was told to use does not exist (`Unable to find
    address for: ^lo`, an NCCL-style exclusion given to GLOO_SOCKET_IFNAME). A network
    setting, not a rank's fault nor a missing peer (aws-samples/aws-do-eks#50, #51, #69;
    pytorch/pytorch#15592)."""
    wrong = wrong_interface(job)
    if wrong.is_empty():
        return []
    failed = wrong.filter(pl.col("event") != "loopback_fallback")
    ranks = sorted(wrong.get_column("rank").drop_nulls().unique().to_list())
    who = rank_list(ranks).capitalize() if ranks else "A process"
    named = failed.get_column("device").drop_nulls()
    unnamed = failed.filter((pl.col("event") == "no_interface") & pl.col("device").is_null())
    if not named.is_empty():
        summary = (
            f"{who}'s gloo could not find the network interface it was told to use "
            f"(`{named.item(0)}`): GLOO_SOCKET_IFNAME must name an interface that exists on "
            "the node. The process group never formed; the network setting is the cause."
        )
    elif not unnamed.is_empty():
        summary = (
            f"{who}'s gloo was given neither a network interface nor a host name to bind to: "
            "the host's name came out empty where the process group was made. The process "
            "group never formed; the network setting is the cause."
        )
    else:
        addresses = failed.get_column("peer").drop_nulls().unique(maintain_order=True).to_list()
        shown = f" ({', '.join(addresses[:2])})" if addresses else ""
        summary = (
            f"{who}'s gloo connected over a loopback address{shown} in a "
            "group that spans hosts: the host name resolved to no routable address, so gloo "
            "fell back to 127.x, where no peer of another host listens. The process group "
            "never formed; the network setting is the cause."
        )
    return [
        interface_finding(
            wrong,
            summary=summary,
            fix=GLOO_INTERFACE_FIX,
            ranks=ranks,
            transport="gloo",
            interfaces=named.to_list(),
            confidence="medium" if named.is_empty() and unnamed.is_empty() else "high",
        )
    ]


def interface_finding(
    rows: pl.DataFrame,
    *,
    summary: str,
    fix: str,
    ranks: list[int],
    transport: str,
    interfaces: list[str],
    confidence: str,
    blames_nobody: bool = False,
) -> Finding:
    """A process group that never formed because a transport was on the wrong network
    interface: the job's network setting, while the group formed, before any step."""
    evidence, total = evidence_from(rows.select("file", "line", "text", "rank"))
    return Finding(
        kind="nccl_error",
        severity="error",
        part="explanation",
        summary=summary,
        fix=fix,
        ranks=ranks,
        blames_nobody=blames_nobody,
        evidence=evidence,
        evidence_total=total,
        order=-1.0,  # while the group formed, before any step
        timestamp=earliest_time(rows),
        confidence=confidence,
        scope="job",
        details={"transport": transport, "phase": "connect", "interface": interfaces},
    )
