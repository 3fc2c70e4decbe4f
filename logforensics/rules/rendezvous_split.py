"""Nodes of one job that joined different rendezvous, and so never met.

A dynamic rendezvous (torchrun's c10d or etcd backend) keys what it keeps in its store on the
run id (`--rdzv-id`): agents given different ids each wait in a rendezvous of their own, however
well they reach the store, until it times out. torchrun makes up a random id on every node
given an empty one (`config has no run_id, generated a random run_id: ...`), which is how this
usually comes about: `--rdzv-id=$JOB_ID` with the variable unset (ymcui/Chinese-LLaMA-Alpaca-2
#274: two nodes, two ids, the master's rendezvous timing out and the other node's store
connection reset as the master's agent left). Diagnosed as `missing_rank`: the world never
formed.

Each file's agent must name one run id: a console with several ids may be several launches one
after the other, not nodes apart.

A multi-node launch with a dynamic backend and no `--rdzv-endpoint` splits the same way: torchrun
holds the rendezvous at `localhost:29400` on every node, and `--master-addr`/`--master-port` are
for the static backend only, as its own warning says (QwenAudio/CosyVoice#241: `--nnodes=2
--master_addr=11.214.25.222 --master_port 9999 --rdzv_id=1986 --rdzv_backend=c10d`).
"""

from __future__ import annotations

import polars as pl

from logforensics.findings import Finding
from logforensics.job import Job
from logforensics.placement import placed_finding
from logforensics.registry import Rule

FIX = (
    "Give every node the same `--rdzv-id` (and the same `--rdzv-backend` and "
    "`--rdzv-endpoint`): a fixed string, or a job id every node's launch command sees (the "
    "scheduler's `$SLURM_JOB_ID`; check the variable is set where each node runs torchrun). "
    "Nodes with different ids never meet, whatever the network."
)
# what shows the job failed: an exception, or a node's rendezvous handler reporting an error
FAILED = (pl.col("event") == "exception") | (
    (pl.col("event") == "rendezvous_run") & pl.col("exc_type").is_not_null()
)


ENDPOINT_FIX = (
    "Point every node at one rendezvous: give each the same `--rdzv-endpoint=<host>:<port>` "
    "(a host every node reaches, such as the first node's address), or launch with "
    "`--rdzv-backend=static` and `--master-addr`/`--master-port` with `--node-rank` per node."
)
# a torchrun launch, its dynamic backend, its nodes (`2`, or an elastic range `1:4`), its endpoint
TORCHRUN = r"\btorchrun\b|-m torch\.distributed\.(?:run|launch)\b"
DYNAMIC_BACKEND = r"--rdzv[_-]backend[= ](c10d|etcd-v2|etcd)\b"
NODES = r"--nnodes[= ](?:\d+:)?(\d+)\b"
ENDPOINT = r"--rdzv[_-]endpoint[= ]\S"


def check(job: Job) -> list[Finding]:
    if job.events.filter(FAILED).is_empty():
        return []
    return _run_ids_apart(job) or _no_endpoint(job)


def _no_endpoint(job: Job) -> list[Finding]:
    """A multi-node launch with a dynamic backend that names no rendezvous endpoint."""
    text = pl.col("text")
    nodes = text.str.extract(NODES, 1).cast(pl.Int64, strict=False)
    launched = job.events.filter(
        (pl.col("event") == "launch_command")
        & text.str.contains(TORCHRUN)
        & text.str.contains(DYNAMIC_BACKEND)
        & ~text.str.contains(ENDPOINT)
        & (nodes > 1)
    )
    if launched.is_empty():
        return []
    backend, count = launched.select(text.str.extract(DYNAMIC_BACKEND, 1), nodes.alias("n")).row(0)
    summary = (
        f"The launch asks for a {backend} rendezvous of {count} nodes and names no "
        "`--rdzv-endpoint`: torchrun then holds it at localhost:29400 on every node "
        "(`--master-addr` and `--master-port` serve the static backend only), so each node "
        "waited in a rendezvous of its own and the nodes never met."
    )
    details = {"no_endpoint": True, "backend": backend, "nodes": count}
    return [_split(job, launched.head(1), summary, ENDPOINT_FIX, details)]


def _run_ids_apart(job: Job) -> list[Finding]:
    """Nodes whose agents name different run ids, one each."""
    named = job.events.filter(pl.col("event") == "rendezvous_run")
    if named.is_empty():
        return []
    named = named.with_columns(
        pl.col("extra").str.json_path_match("$.run_id").alias("_run"),
        (pl.col("extra").str.json_path_match("$.generated") == "true").alias("_generated"),
    )
    ids = named.group_by("file").agg(pl.col("_run").unique().alias("_runs"))
    single = ids.filter(pl.col("_runs").list.len() == 1)
    runs = single.get_column("_runs").list.first().unique()
    if single.height < 2 or runs.len() < 2:
        return []
    nodes = named.join(single.select("file"), on="file").sort("file", "line")
    shown = nodes.unique("file", keep="first", maintain_order=True)
    # (a node's handler names the id too: torchrun made it up where the node's agent said so)
    generated = bool(nodes.group_by("file").agg(pl.col("_generated").any())["_generated"].all())
    told = ", ".join(
        f"{row['file']} `{row['_run']}`" for row in shown.head(4).iter_rows(named=True)
    )
    more = f" and {shown.height - 4} more" if shown.height > 4 else ""
    why = (
        "torchrun made up each id itself, its `--rdzv-id` being empty"
        if generated
        else "they were launched with different `--rdzv-id`s"
    )
    summary = (
        f"The nodes' agents joined {runs.len()} different rendezvous ({told}{more}): {why}. "
        "Agents with different run ids never meet: each waited for nodes that were waiting "
        "elsewhere until its rendezvous timed out or its store went away."
    )
    details = {"run_ids": sorted(runs.to_list()), "generated": generated}
    return [_split(job, shown, summary, FIX, details)]


def _split(
    job: Job, rows: pl.DataFrame, summary: str, fix: str, details: dict[str, object]
) -> Finding:
    """The nodes' split, told by `rows`: no rank left the others' path, so none is blamed."""
    return placed_finding(
        job,
        rows,
        kind="rendezvous_split",
        severity="error",
        part="explanation",
        summary=summary,
        fix=fix,
        ranks=[],
        blames_nobody=True,
        confidence="medium",
        details=details,
    )


def _diagnosis(finding: Finding) -> str:
    return "missing_rank"


RULE = Rule(kind="rendezvous_split", check=check, specificity=20, diagnosis=_diagnosis)
