"""Every rank announced that it was joining the process group, and the logs end there: a job
that hung while its ranks connected to one another (parsers/world_size.py reads the
announcements).

Frameworks print a line per rank as it enters `init_process_group`: Lightning's
`Initializing distributed: GLOBAL_RANK: r, MEMBER: m/w`, Ray Train's `Setting up process group
for: env:// [rank=r, world_size=w]`, vLLM's worker's `world_size=w rank=r local_rank=l
distributed_init_method=...`, fairseq's and the DeiT/MAE family's `distributed init (rank r):
<address>` (no world in it: the ranks from 0 on stand for it). Once the group is up, Lightning's
rank 0 says so (`All distributed processes registered. Starting with w processes`), fairseq
says `initialized host <host> as rank r`, and training output follows.
Logs in which every rank of the world announced itself, nothing said the group came up, and
nothing at all failed, ending within a few lines of the last announcement, stopped with every
rank inside the group's set-up: the rendezvous or the backend's first connections never
completed (threestudio-project/threestudio#81: four Lightning ranks, then nothing;
ray-project/ray#23060: five Ray Train workers on two hosts, NCCL, then nothing).
"""

from __future__ import annotations

import polars as pl

from logforensics.findings import Finding
from logforensics.job import Job
from logforensics.placement import placed_finding
from logforensics.plausible import MAX_LISTED_RANKS
from logforensics.text import clipped, rank_ranges
from parsers.world_size import DISTRIBUTED_INIT, JOINING, READY

FIX = (
    "The ranks never finished connecting to one another. Check that every node reaches the "
    "rendezvous address (`MASTER_ADDR:MASTER_PORT`: same value on every node, a routable "
    "address, the port open in the firewall), that the backend picks an interface the nodes "
    "share (`NCCL_SOCKET_IFNAME` / `GLOO_SOCKET_IFNAME`), and that the world size and node "
    "ranks given to each node agree. Run again with `NCCL_DEBUG=INFO` and "
    "`TORCH_DISTRIBUTED_DEBUG=DETAIL` to see the connection that waits; trying the gloo "
    "backend tells the network from NCCL."
)
# lines a log may hold after the last announcement and still end in the set-up (a driver's own
# line, a blank, a stray print); a log that goes on past them shows something else
TAIL_LINES = 8


def stalled_joining(job: Job) -> list[Finding]:
    events = job.events
    if not job.nothing_failed():
        return []
    setup = events.filter(pl.col("event").is_in(["world_size", "group_setup"])).with_columns(
        pl.col("extra").fill_null("").alias("_setup")
    )
    if not setup.filter(pl.col("_setup") == READY).is_empty():
        return []
    joining = setup.filter((pl.col("_setup") == JOINING) & pl.col("rank").is_not_null())
    if joining.is_empty():
        return _unranked_stall(job, setup.filter(pl.col("_setup") == JOINING))
    # the world the announcements state, else the job's; without one, the ranks from 0 on
    worlds = joining.get_column("world_size").drop_nulls().unique()
    if worlds.len() > 1:
        return []
    world = int(worlds.item()) if worlds.len() else _stated_world(job)
    ranks = sorted(joining.get_column("rank").unique().to_list())
    expected = list(range(world if world is not None else max(ranks) + 1))
    if len(ranks) < 2 or ranks != expected or not logs_end_there(job, joining):
        return []
    if _master_went_on(job, joining):
        return []
    announced = joining.sort("file", "line")
    who = (
        f"All {world} ranks ({rank_ranges(ranks)})"
        if world is not None
        else f"Every rank in the logs ({rank_ranges(ranks)})"
    )
    summary = (
        f"{who} announced that they were joining the process "
        "group, and the logs end there: nothing says the group came up and nothing failed. "
        "The job hung while its ranks connected to one another (the rendezvous or the "
        "backend's first connections), the last point they all reached."
    )
    return [
        placed_finding(
            job,
            pl.concat([announced.head(1), announced.tail(1)]).unique(maintain_order=True),
            kind="last_common_stage",
            severity="error",
            part="explanation",
            summary=summary,
            fix=FIX,
            ranks=ranks,
            blames_nobody=True,
            confidence="medium",
            details={"joining": ranks, "world": world or len(ranks), "world_known": bool(world)},
        )
    ]


FIRST_COMMUNICATOR_FIX = (
    "The ranks met, then never finished connecting their GPUs for the first collective. Run "
    "with `NCCL_DEBUG=INFO` to see the transport each connection picks and where it stops; "
    "try `NCCL_P2P_DISABLE=1` (GPU peer-to-peer is broken on some machines: IOMMU or ACS "
    "settings, virtualisation, some PCIe switches) or `NCCL_SHM_DISABLE=1`, and across nodes "
    "`NCCL_SOCKET_IFNAME`. `all_reduce_perf` from nccl-tests on the same GPUs shows it without "
    "the job."
)


def stalled_in_first_communicator(job: Job) -> list[Finding]:
    """Every rank said it joined the group (Lightning's `All distributed processes registered.
    Starting with 4 processes`), then the logs end among NCCL's lines as it creates the first
    communicator, none saying it completed, nothing failed and no progress: the job hung
    connecting the GPUs for its first collective, the last point every rank reached
    (Lightning-AI/pytorch-lightning#18221: four ranks, rank 0's `NCCL INFO Bootstrap : Using
    ...` last; `NCCL_P2P_DISABLE=1` helped)."""
    if not job.nothing_failed() or job.made_progress():
        return []
    setup = job.events.filter(pl.col("event").is_in(["world_size", "group_setup"]))
    ready = setup.filter(pl.col("extra").fill_null("") == READY).sort("file", "line").tail(1)
    if ready.is_empty() or ready.item(0, "world_size") is None:
        return []
    file, at, world = ready.item(0, "file"), ready.item(0, "line"), ready.item(0, "world_size")
    after = job.events.filter((pl.col("file") == file) & (pl.col("line") > at))
    others = job.events.filter((pl.col("file") != file) & (pl.col("family") != "launch"))
    if after.is_empty() or not others.is_empty():
        return []
    in_nccl = bool(after.select((pl.col("family") == "nccl").all()).item())
    completed = after.filter(pl.col("text").str.contains("COMPLETE", literal=True))
    if not in_nccl or not completed.is_empty() or not logs_end_there(job, after):
        return []
    summary = (
        f"All {world} ranks joined the process group (`{clipped(ready.item(0, 'text'))}`), "
        "then the logs end among NCCL's lines as it created the first communicator, none "
        "saying it completed, with nothing failed: the job hung connecting the GPUs for its "
        "first collective, the last point every rank reached."
    )
    return [
        placed_finding(
            job,
            pl.concat([ready, after.sort("line").tail(1)], how="diagonal_relaxed"),
            kind="last_common_stage",
            severity="error",
            part="explanation",
            summary=summary,
            fix=FIRST_COMMUNICATOR_FIX,
            ranks=list(range(world)) if world <= MAX_LISTED_RANKS else [],
            blames_nobody=True,
            confidence="low",
            details={"first_communicator": True, "world": world},
        )
    ]


def _unranked_stall(job: Job, joining: pl.DataFrame) -> list[Finding]:
    """A framework's word that the group is being created, which names no rank (DeepSpeed's
    first rank's `Initializing TorchBackend in DeepSpeed with backend nccl`, wenet's `training
    on multiple gpus, this gpu 7`), the last thing the logs hold: no progress anywhere,
    nothing failed, nothing after it (RLHFlow/Online-RLHF#11: `main_process_port: 0` in the
    accelerate config, so the ranks never met). Which ranks got there is not said: a guess
    that blames none."""
    if joining.is_empty() or job.progress is not None or not logs_end_there(job, joining):
        return []
    if job.file_stats.height != joining.get_column("file").n_unique():
        return []  # another file goes on: the set-up is not where the job stopped
    announced = joining.sort("file", "line")
    summary = (
        "The logs end as the processes were creating the process group (the framework said "
        "so, and no rank printed anything after), with nothing failed: the job most likely "
        "hung while its ranks connected to one another. Which ranks got that far is not "
        "said."
    )
    return [
        placed_finding(
            job,
            announced.tail(1),
            kind="last_common_stage",
            severity="error",
            part="explanation",
            summary=summary,
            fix=FIX,
            ranks=[],
            blames_nobody=True,
            confidence="low",
            details={"joining": [], "world": None, "world_known": False, "unranked": True},
        )
    ]


def _stated_world(job: Job) -> int | None:
    return job.world_size.value if job.world_size is not None else None


def _master_went_on(job: Job, joining: pl.DataFrame) -> bool:
    """Whether a file whose last announcement is fairseq's or the DeiT family's `distributed
    init (rank r)` goes on with any line: those frameworks print it before
    `init_process_group`, then silence every rank but the first, so whatever follows is the
    first rank's own output once the group was up (facebookresearch/fairseq#247: four ranks'
    announcements, then rank 0's `Namespace(...)` of its arguments, in a run that trained)."""
    last = (
        joining.sort("file", "line")
        .group_by("file", maintain_order=True)
        .last()
        .filter(pl.col("message").str.contains(DISTRIBUTED_INIT))
    )
    if last.is_empty():
        return False
    after = job.lines_after(last, TAIL_LINES)
    return not after.filter(pl.col("text").str.strip_chars() != "").is_empty()


def logs_end_there(job: Job, joining: pl.DataFrame) -> bool:
    """Whether every file holding announcements ends within TAIL_LINES of its last one, with
    no event after it."""
    lasts = joining.group_by("file").agg(pl.col("line").max().alias("_last"))
    lines = job.file_stats.group_by("file").agg(pl.col("last_line").max().alias("_end"))
    ends = lasts.join(lines, on="file", how="left")
    if (
        ends.get_column("_end").null_count()
        or not ends.filter(pl.col("_end") - pl.col("_last") > TAIL_LINES).is_empty()
    ):
        return False
    later = job.events.join(lasts, on="file").filter(pl.col("line") > pl.col("_last"))
    return later.is_empty()
