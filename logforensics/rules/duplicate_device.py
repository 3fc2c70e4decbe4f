"""Two or more ranks on the same device of the same host.

From the rank-to-device print. Ranks are on the same host when the print names it; otherwise
when `rank - local_rank` agrees (torchrun numbers a node's ranks contiguously). With neither,
the ranks are only *possibly* on one host and the finding is a warning.
"""

from __future__ import annotations

import polars as pl

from logforensics.findings import Finding, evidence_from
from logforensics.job import Job
from logforensics.registry import Rule
from logforensics.text import rank_list

FIX = (
    "Give each process of a node its own device: call `torch.cuda.set_device(local_rank)` with "
    "`local_rank = int(os.environ['LOCAL_RANK'])` (not the global rank, not a constant) before "
    "creating the process group or the model; check that `--nproc_per_node` does not exceed the "
    "node's GPU count and that `CUDA_VISIBLE_DEVICES` is not narrowed to one device per node."
)


def check(job: Job) -> list[Finding]:
    mapping = job.events.filter(
        (pl.col("event") == "device_map")
        & pl.col("rank").is_not_null()
        & (pl.col("device") != "cpu")
    )
    if mapping.is_empty():
        return []
    mapping = mapping.unique(subset=["rank"], keep="first", maintain_order=True).with_columns(
        pl.coalesce(
            pl.col("host"),
            pl.format("node of rank {}", pl.col("rank") - pl.col("local_rank")),
        ).alias("node"),
        pl.when(pl.col("host").is_not_null())
        .then(pl.lit("host"))
        .when(pl.col("local_rank").is_not_null())
        .then(pl.lit("local_rank"))
        .alias("node_from"),
    )
    known = mapping.filter(pl.col("node").is_not_null())
    unknown = mapping.filter(pl.col("node").is_null()).with_columns(
        pl.lit("(host unknown)").alias("node")
    )
    findings = [_finding(group, certain=True) for group in _shared(known)] + [
        _finding(group, certain=False) for group in _shared(unknown)
    ]
    return findings


def _shared(mapping: pl.DataFrame) -> list[pl.DataFrame]:
    if mapping.is_empty():
        return []
    crowded = (
        mapping.group_by("node", "device")
        .agg(pl.col("rank").n_unique().alias("ranks"))
        .filter(pl.col("ranks") > 1)
        .sort("node", "device")
    )
    return [
        mapping.filter((pl.col("node") == row["node"]) & (pl.col("device") == row["device"]))
        for row in crowded.iter_rows(named=True)
    ]


def _finding(group: pl.DataFrame, certain: bool) -> Finding:
    ranks = sorted(group.get_column("rank").to_list())
    device = group.item(0, "device")
    node = group.item(0, "node")
    node_from = group.item(0, "node_from")
    if node_from == "host":
        where = f"host {node}"
    elif node_from == "local_rank":
        where = "one node (their rank minus local rank agrees)"
    else:
        where = "the same host, if they share one (no host is printed)"
    summary = (
        f"{rank_list(ranks).capitalize()} {'both' if len(ranks) == 2 else 'all'} use device "
        f"{device} on {where}: "
        f"they share one GPU, which NCCL refuses or which hangs the first collective."
    )
    evidence, total = evidence_from(group.sort("rank").select("file", "line", "text", "rank"))
    return Finding(
        kind="duplicate_device",
        severity="error" if certain else "warning",
        role="root_cause",
        summary=summary,
        fix=FIX,
        ranks=ranks,
        evidence=evidence,
        evidence_total=total,
        confidence="high" if node_from == "host" else ("medium" if certain else "low"),
        order=-1.0,  # decided at start-up, before any step
        details={"device": device, "node": node},
    )


RULE = Rule(kind="duplicate_device", check=check, specificity=10)
