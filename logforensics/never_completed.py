"""A process group whose first collective never completed on any rank (an explanation of the
timeouts that `rules/nccl_error.py` reports: the kind stays the timeout's, which is what the
lines show; the transport is the reading).

When every rank of the logs times out in the same collective, and it is the first one of its
group (SeqNum 1, or the watchdog says no work had completed: `last completed work: -1`), then
every rank joined it and no rank stayed away; the collective never completed because the
transport between the GPUs or hosts never carried one:

    [rank0]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST, NumelIn=131072000, NumelOut=131072000, Timeout(ms)=600000) ran for 600081 milliseconds before timing out.
    [rank1]:[E1218 20:27:21.484903450 ProcessGroupNCCL.cpp:2168] [PG ID 1 PG GUID 1 Rank 1]  failure detected by watchdog at work sequence id: 1 PG status: last enqueued work: 547, last completed work: -1

(Hoilap/O-LoRA's notes: two GPUs of one machine, fixed with `NCCL_P2P_DISABLE=1`; the same
shape as vllm-project/vllm#5458's broken peer-to-peer.) Not when the ranks disagree on the
collective (a mismatch, its own rule's), nor when the logs state a world larger than the ranks
they show, or show no rank 0 (a rank not in them may be the one that stayed away).
"""  # noqa: E501 -- verbatim lines

from __future__ import annotations

import polars as pl

from logforensics.desync import per_rank_timeouts
from logforensics.findings import Finding
from logforensics.job import Job
from logforensics.placement import placed_finding
from logforensics.rules.rank_exception import DEATH_EVENTS
from logforensics.text import duration, rank_list

SIGABRT = 6
FIX = (
    "Every rank was in the collective and it never completed: NCCL could not move data "
    "between these GPUs or hosts. Run once with `NCCL_DEBUG=INFO` and read how the channels "
    "connect (`via P2P/...`, `NET/IB`, `NET/Socket`). On one machine try `NCCL_P2P_DISABLE=1` "
    "(peer-to-peer over PCIe breaks with ACS or the IOMMU enabled, and on some virtualised or "
    "consumer GPUs); across machines check `NCCL_SOCKET_IFNAME` / `NCCL_IB_HCA` and the "
    "firewall. NCCL's `all_reduce_perf` (nccl-tests) reproduces it without the job."
)


def first_collective_never_completed(job: Job) -> list[Finding]:
    timeouts = per_rank_timeouts(job.events).filter(pl.col("seq").is_not_null())
    if timeouts.is_empty():
        return []
    nothing_done = (pl.col("seq") == 1) | (pl.col("last_completed").fill_null(1) < 1)
    seen = set(job.ranks_seen)
    world = job.world_size.value if job.world_size is not None else None
    if len(seen) < 2 or (world is not None and world > len(seen)):
        return []
    # rank 0 absent from the logs may be the one the others waited for: it sources the
    # broadcasts and does the work only one rank does (InternLM/xtuner#768: ranks 1-3 time out
    # in BROADCAST #1 while rank 0 still maps the dataset). A rank missing between others is
    # more often a line the paste cut (huggingface/picotron_tutorial#6's rank 6).
    if 0 not in seen:
        return []
    aborted = aborted_ranks(job)
    for _, rows in timeouts.group_by("pg", maintain_order=True):
        first = rows.filter(nothing_done)
        timed_out = set(first.get_column("rank").to_list())
        if len(timed_out) < 2 or timed_out | aborted != seen:
            continue
        named = first.filter(pl.col("op").is_not_null())
        if (
            named.select("op", "numel_in").unique().height > 1
            or rows.get_column("seq").n_unique() > 1
        ):
            continue  # the ranks were not in one collective
        # lines without a PG tag name no group (they may be a subgroup's): the tagged say it
        tagged = timeouts.filter(pl.col("pg_tagged") & pl.col("seq").is_in(first["seq"].implode()))
        groups = tagged.get_column("pg").unique().to_list()
        group = groups[0] if len(groups) == 1 else None
        return [_finding(job, first, group, sorted(timed_out), sorted(aborted - timed_out))]
    return []


def aborted_ranks(job: Job) -> set[int]:
    """Ranks a launcher or a handler reports dead of SIGABRT: while others time out, a rank's
    own watchdog taking it down (it was in a collective too; see `rules/rank_exception.py`)."""
    events = job.events
    deaths = events.filter(
        pl.col("event").is_in(DEATH_EVENTS)
        & ((pl.col("signal") == "SIGABRT") | (pl.col("exitcode") == -SIGABRT))
    )
    return set(deaths.get_column("rank").drop_nulls().to_list())


def _finding(
    job: Job, rows: pl.DataFrame, group: str | None, ranks: list[int], aborted: list[int]
) -> Finding:
    named = rows.filter(pl.col("op").is_not_null())
    op = named.item(0, "op") if not named.is_empty() else "a collective"
    seq = int(rows.get_column("seq").min())
    waited = rows.get_column("timeout_ms").drop_nulls()
    after = f" after {duration(waited.max() / 1000)}" if not waited.is_empty() else ""
    where = f"process group {group}" if group else "its process group"
    summary = (
        f"{rank_list(ranks).capitalize()} timed out in {op} #{seq}{after}, the first collective "
        f"of {where}, with none completed before it"
        + (
            f", and {rank_list(aborted)} died of SIGABRT with them (a watchdog's abort)"
            if aborted
            else ""
        )
        + ": every rank in the logs joined it and it never completed. The transport between "
        "them (GPU peer-to-peer, the network) never carried a collective."
    )
    return placed_finding(
        job,
        rows,
        kind="collective_timeout",
        severity="error",
        part="explanation",
        summary=summary,
        fix=FIX,
        ranks=sorted([*ranks, *aborted]),
        blames_nobody=True,
        confidence="medium" if job.world_size is not None else "low",
        op=op,
        seq=seq,
        details={"never_completed": True, "pg": group},
    )
