"""Numbers in the logs that no job can have: a negative rank, a rank at or above the world size
the job states (or above MAX_WORLD_SIZE - 1 when it states none), a world size or NCCL
communicator above MAX_WORLD_SIZE (2**20) ranks, a per-rank list (`loader sizes: [...]`)
longer than the world. The limits are in `logforensics/plausible.py`.

Such a number is a misprint, a variable printed in place of another, two writers' output
interleaved in one line, or a line of another program: believing it would size tables, the
rank map and missing-rank lists by a number nobody ran. The analysis leaves those values out
(the job's other findings are what they would be without them) and says so here, quoting the
lines, so that a reader who knows the number is right knows what was not used.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from logforensics.findings import EVIDENCE_CAP, Evidence, Finding
from logforensics.job import Job
from logforensics.plausible import MAX_WORLD_SIZE
from logforensics.registry import Rule

FIX = (
    "Read the quoted lines: a number this far off is usually a misprint, a variable printed "
    "in place of another, two processes' output interleaved in one line, or a line of another "
    "program. Nothing else in this report used it; if it is right after all, the world size "
    "the job prints is wrong, or the job is larger than this analyzer believes any job to be."
)
# Which flagged numbers make one finding, and what each is called.
GROUPS = {
    "rank": ("rank", "peer_rank"),
    "world size": ("world_size", "nranks"),
    "per-rank list": ("list",),
}
WORDS = {
    "rank": "Rank {values}",
    "peer_rank": "Peer rank {values}",
    "world_size": "World size {values}",
    "nranks": "NCCL communicator size {values}",
    "list": "A `loader sizes` list of {values} numbers",
}
LEFT_OUT = {
    "rank": (
        "The analysis does not use {it}: no rank table, rank map, progress picture or other "
        "finding holds {it} (a line that states {it} is left out whole)."
    ),
    "world size": (
        "The analysis does not use {it}: no missing-rank list or rank map is sized by {it}."
    ),
    "per-rank list": "The analysis leaves {it} out of the comparison of DataLoader lengths.",
}
# How a rank is found for a line that states none (logforensics/attribution.py): the quoted
# line then does not hold the number.
INFERRED_RANK_SOURCES = (
    "file_content",
    "path",
    "node_offset",
    "path_local",
    "node_index",
    "process",
    "device",
)
# The lines quoted are cut here: the number may be the whole line (200,000 list entries).
MAX_QUOTE_CHARS = 2000
SHOWN_VALUES = 3


# A process's own word as it joins the group (the store-based barrier's check-in, NCCL's
# communicator init): the rank is no misprint, a process ran with it.
JOINS = ("store_barrier_joined", "nccl_init")
EXTRA_PROCESS_FIX = (
    "Start exactly as many processes as the world size: compare the launcher's processes "
    "(`--nproc_per_node` times `--nnodes`, `srun`'s tasks, `mpirun -np`) with the world size the "
    "job sets (an explicit `world_size=` to `init_process_group`, a model-parallel setting that "
    "sizes it, a stale `WORLD_SIZE` or `RANK` in the environment), and look for a process of an "
    "earlier launch still running against the same store."
)


def check(job: Job) -> list[Finding]:
    flagged = job.implausible
    findings = []
    # (with no world size stated, the limit is the analyzer's own: no process is extra)
    if job.world_size is not None:
        joined = (pl.col("number") == "rank") & pl.col("event").is_in(JOINS)
        extra = flagged.filter(joined & (pl.col("value") >= 0)).sort("file", "line")
        if not extra.is_empty():
            findings.append(_extra_processes(job, extra, job.world_size.value))
            flagged = flagged.join(extra.select("file", "line"), on=["file", "line"], how="anti")
    for group, numbers in GROUPS.items():
        rows = flagged.filter(pl.col("number").is_in(numbers)).sort("file", "line")
        if not rows.is_empty():
            findings.append(_finding(job, group, rows))
    return findings


def _extra_processes(job: Job, rows: pl.DataFrame, world: int) -> Finding:
    """Processes that joined the group with ranks at or above the world size the job states
    (facebookresearch/metaseq#86: `Added key: store_based_barrier_key:1 to store for rank: 2`
    while rank 1 `Completed store-based barrier ... with 2 nodes`): the launch started more
    processes than the world has ranks, and the group formed without some of them or never
    formed. Blames no rank: the launch."""
    values = sorted(set(rows.get_column("value").to_list()))
    named = ", ".join(_number(value) for value in values[:SHOWN_VALUES])
    first = rows.row(0, named=True)
    summary = (
        f"A process joined the process group as rank{'s' if len(values) > 1 else ''} {named} "
        f"({first['file']}:{first['line']}), but the job's world size is {world:,} (ranks "
        f"0-{world - 1:,}): more processes were started than the world has ranks, so the group "
        "formed without some of them or never formed."
    )
    evidence, total = _quoted(job, rows)
    return Finding(
        kind="implausible_number",
        severity="error",
        part="explanation",
        summary=summary,
        fix=EXTRA_PROCESS_FIX,
        evidence=evidence,
        evidence_total=total,
        confidence="medium",
        details={"numbers": "rank", "values": values[:EVIDENCE_CAP], "extra_processes": True},
    )


def _quoted(job: Job, rows: pl.DataFrame) -> tuple[list[Evidence], int]:
    """The flagged lines as evidence (each once, capped), and how many there are."""
    lines = rows.unique(["file", "line"], keep="first", maintain_order=True)
    quoted = job.quote(lines.head(EVIDENCE_CAP))
    evidence = [
        Evidence(row["file"], int(row["line"]), _cut(row["text"]), row["rank"])
        for row in quoted.iter_rows(named=True)
    ]
    return evidence, lines.height


def _finding(job: Job, group: str, rows: pl.DataFrame) -> Finding:
    lines = rows.unique(["file", "line"], keep="first", maintain_order=True)
    evidence, total = _quoted(job, rows)
    first = lines.row(0, named=True)
    values = lines.get_column("value").unique(maintain_order=True).to_list()
    shown = ", ".join(_number(value) for value in values[:SHOWN_VALUES])
    more = f" and {len(values) - SHOWN_VALUES} more values" if len(values) > SHOWN_VALUES else ""
    at = f"{first['file']}:{first['line']}"
    if first["number"] == "rank" and first["source"] in INFERRED_RANK_SOURCES:
        at += f", by {first['source'].replace('_', ' ')}"
    where = at if lines.height == 1 else f"{lines.height:,} lines, the first at {at}"
    summary = (
        f"{WORDS[first['number']].format(values=shown + more)} ({where}) "
        f"cannot be right: {_why(job, first)} "
        + LEFT_OUT[group].format(it="it" if len(values) == 1 else "them")
    )
    return Finding(
        kind="implausible_number",
        severity="warning",
        part="context",
        summary=summary,
        fix=FIX,
        evidence=evidence,
        evidence_total=total,
        details={
            "numbers": group,
            "values": values[:EVIDENCE_CAP],
            "largest_believed": int(first["limit"]),
        },
    )


def _why(job: Job, row: dict[str, Any]) -> str:
    """Why the first value was not believed, in words."""
    number, value, limit = row["number"], row["value"], int(row["limit"])
    if number in ("rank", "peer_rank"):
        if value is not None and value < 0:
            return "ranks count from 0."
        if limit + 1 < MAX_WORLD_SIZE:
            return f"the job states a world size of {limit + 1:,} (ranks 0-{limit:,})."
        return f"no job has more than {MAX_WORLD_SIZE:,} ranks (0-{limit:,})."
    if number in ("world_size", "nranks"):
        if value is not None and value < 1:
            return "a job has at least one rank."
        return f"no job has more than {MAX_WORLD_SIZE:,} ranks."
    world = job.world_size
    if world is not None and world.source != "nccl":
        return f"it holds one number per rank, and the job states a world size of {limit:,}."
    seen = job.ranks_seen
    shown = f"ranks up to {max(seen)}" if seen else "no rank"
    return (
        f"it holds one number per rank, the job states no world size and its logs show "
        f"{shown} (at most {limit:,} numbers are believed)."
    )


def _number(value: int | None) -> str:
    return f"{value:,}" if value is not None else "(a number too large to read)"


def _cut(text: str | None) -> str:
    if text is None or len(text) <= MAX_QUOTE_CHARS:
        return text or ""
    return f"{text[:MAX_QUOTE_CHARS]} … ({len(text) - MAX_QUOTE_CHARS:,} more characters)"


RULE = Rule(kind="implausible_number", check=check)
