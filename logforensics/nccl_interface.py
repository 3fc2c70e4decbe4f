"""NCCL's bootstrap on a loopback interface in a job that reaches past its host, a network
setting that keeps the communicator from forming: read by the nccl_error rule."""

from __future__ import annotations

import polars as pl

from logforensics.findings import Finding
from logforensics.gloo_interface import interface_finding
from logforensics.job import Job
from logforensics.text import enumerated, rank_list

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
        return _loopback_across_hosts(job, nccl, loopback)
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


REFUSED_FIX = (
    "Find the process that should listen at that address (the host whose NCCL `Bootstrap : "
    "Using` line shows it): if it exited, its own log says why; if it is alive, the address is "
    "stale (a restarted job reusing an earlier attempt's) or a firewall refuses the port range. "
    "Pin NCCL to the interface that reaches the other nodes with NCCL_SOCKET_IFNAME."
)


# NCCL numbers its retries: the first one as a log's last line is one failed try, which an
# excerpt may well end at (NVIDIA/nccl#1618's healthy run: `retrying (1/34) after sleep for 100
# msec`), no sign that the connects never succeeded
FIRST_RETRY = r"retrying \(1/\d+\)"


def refused_to_the_end(job: Job) -> list[Finding]:
    """A process whose NCCL connects to one address were refused and retried until its log
    ends (pytorch/pytorch#167288: `socketPollConnect: connect to 10.29.224.148<52333> returned
    Connection refused, retrying (21/34)` is the process's last line): nothing listens there,
    so its communicator cannot form. A loopback bootstrap's retries are nccl_interface's."""
    nccl = job.events.filter(pl.col("family") == "nccl")
    retries = nccl.filter(pl.col("event") == "connect_retry")
    if retries.is_empty() or nccl_interface(job):
        return []
    last = nccl.group_by("file", *PROCESS).agg(pl.col("line").max().alias("_last"))
    ending = retries.join(last, on=["file", *PROCESS], nulls_equal=True).filter(
        (pl.col("line") == pl.col("_last")) & ~pl.col("text").str.contains(FIRST_RETRY)
    )
    if ending.is_empty():
        return []
    stuck = retries.join(ending.select("file", *PROCESS), on=["file", *PROCESS], nulls_equal=True)
    ranks = sorted(stuck.get_column("rank").drop_nulls().unique().to_list())
    peers = stuck.get_column("peer").drop_nulls().unique(maintain_order=True).to_list()
    hosts = stuck.get_column("host").drop_nulls().unique(maintain_order=True).to_list()
    who = (
        rank_list(ranks).capitalize()
        if ranks
        else f"A process on {', '.join(hosts)}"
        if hosts
        else "A process"
    )
    why = (stuck.item(0, "exc_message") or "refused").lower()
    where = f" to {', '.join(peers[:3])}" if peers else ""
    summary = (
        f"{who} kept retrying NCCL's connect{where} ({why}, {stuck.height} retries shown) until "
        "its log ends: nothing listens at that address, so the communicator cannot form. The "
        "process that should listen there exited, or the address is stale (an earlier "
        "attempt's), or the port is blocked."
    )
    return [
        interface_finding(
            stuck.sort("file", "line"),
            summary=summary,
            fix=REFUSED_FIX,
            ranks=ranks,
            transport="nccl",
            interfaces=[],
            confidence="low",
            blames_nobody=True,
        )
    ]


def _loopback_across_hosts(job: Job, nccl: pl.DataFrame, loopback: pl.DataFrame) -> list[Finding]:
    """NCCL's socket transport using a loopback interface in a job whose NCCL lines come from
    two hosts or more, when nothing failed and nothing went on: a peer on another host given
    the loopback address connects to itself (horovod/horovod#789: NCCL 2.3 in two Docker
    containers lists `NET : Using interface lo:127.0.0.1<0>` before eth0 on both, and the job
    hangs; the fix is NCCL_SOCKET_IFNAME). A guess: the logs do not show the connects."""
    hosts = _hosts_of_processes(nccl)
    if hosts.len() < 2:
        return []
    if not job.nothing_failed():
        return []
    if job.made_progress():
        return []
    on = loopback.get_column("host").drop_nulls().unique().sort().to_list()
    first = loopback.row(0, named=True)
    ranks = sorted(loopback.get_column("rank").drop_nulls().unique().to_list())
    summary = (
        f"NCCL uses the loopback interface ({first['device']}:{first['peer']}) on "
        f"{_hosts(on)}, in a job across "
        f"{hosts.len()} hosts: a peer on another host given a loopback address connects to "
        "itself, so the communicator cannot form. Nothing else in these logs failed; the "
        "network setting is the likeliest cause."
    )
    return [
        interface_finding(
            loopback.sort("file", "line").head(3),
            summary=summary,
            fix=NCCL_INTERFACE_FIX,
            ranks=ranks,
            transport="nccl",
            interfaces=[first["device"]],
            confidence="low",
            blames_nobody=True,
        )
    ]


def _hosts_of_processes(nccl: pl.DataFrame) -> pl.Series:
    """The hosts NCCL's own identities name (`host:pid:tid`; a line without one took its host
    from a launcher's or a pod's prefix, another name for a machine), less a name that is the
    end of another's for the same process: a paste that cut the start of its first line (a
    single process driving three GPUs, `ufee:19773:20233 [0] ... NCCL WARN ...` above
    `lufee:19773:20233 [0] ...`). Two containers may well run processes of the same pid under
    names of their own."""
    named = nccl.filter(pl.col("host").is_not_null())
    identified = named.filter(pl.col("pid").is_not_null()).select("host", "pid").unique()
    if identified.is_empty():
        return named.get_column("host").unique()
    longer = identified.join(identified, on="pid", suffix="_other").filter(
        (pl.col("host") != pl.col("host_other"))
        & pl.col("host_other").str.ends_with(pl.col("host"))
    )
    return (
        identified.join(longer.select("host", "pid"), on=["host", "pid"], how="anti")
        .get_column("host")
        .unique()
    )


def _hosts(hosts: list[str]) -> str:
    if len(hosts) > 3:
        return f"{', '.join(hosts[:3])} and {len(hosts) - 3} more"
    return enumerated(hosts)
