"""Give a rank to lines that carry only a process identity (host, pid), such as NCCL_DEBUG
lines: the job's world communicator init lines map each (host, pid) to a global rank.

A communicator is the world when its size is the largest seen; its `comm_rank` is then the
global rank. Lines of sub-communicators keep their own `comm_rank` as a separate column.

A process no init line names (NCCL 2.4-era excerpts print only ring, tree and channel lines)
takes the own rank its topology lines state (`nccl_topology` events), or its proxy's WARNs
(`[Proxy Service 93] Failed to execute operation Setup from rank 93`), when they state one
rank only: a process in several communicators states several, and then none is taken.

Failing both, a process's rank is what names its rank and pid together: the rank's own print
(`rank=2 pid=18459`, parsers/process_ids.py) or torchrun's failure summary (`rank : 3
(local_rank: 3)` / `exitcode : -9 (pid: 4268)`). That is how the kernel's `Killed process
25315` in a pasted `dmesg` finds its rank.

Last, a rank's ProcessGroupNCCL error quotes its process's last NCCL WARN (`Last error:` and
the WARN's words: NCCL keeps the last error per process), so a WARN of one (host, pid) whose
words a rank's error in the same file repeats, and no other's, is that rank's
(deepspeedai/DeepSpeed#6875: `50428e4af543:34610:36821 [4] ... NCCL WARN NET/IB: Got
completion from peer 10.0.1.23<34696> ...` and `[Rank 4] ... Last error: NET/IB: Got
completion from peer 10.0.1.23<34696> ...`).

A line that names a pid without a host (`Unhandled exception ... proc 2834`, c10's `SIGABRT(6),
PID: 3154296`) takes the rank of that pid when exactly one process of the job has it.
"""

from __future__ import annotations

import polars as pl

PROCESS = ["host", "pid"]
DEVICE = ["host", "pid", "cuda_dev"]


def attribute_by_process(events: pl.DataFrame) -> pl.DataFrame:
    """Fill `rank` (with `rank_from = "process"`) from the (host, pid) of world-comm inits, else
    of topology lines."""
    if not {"host", "pid"} <= set(events.columns):
        return events
    mapping = _process_ranks(events)
    devices = _device_ranks(events)
    if mapping.is_empty() and devices.is_empty():
        return events
    by_process = (
        events.join(mapping, on=PROCESS, how="left")
        .join(_lone_pids(mapping), on="pid", how="left")
        .join(devices, on=DEVICE, how="left")
        .with_columns(
            pl.coalesce(
                "process_rank",
                "device_rank",
                pl.when(pl.col("host").is_null()).then(pl.col("pid_rank")),
            ).alias("process_rank")
        )
        .drop("pid_rank", "device_rank")
    )
    # a file whose processes are of different ranks is no one rank's: the rank its name gave
    # it goes (NVIDIA/nccl#1808: `worker-9.log` holds ranks 80 and 82's NCCL lines)
    shared = pl.col("process_rank").drop_nulls().n_unique().over("file") > 1
    named = pl.col("rank_from").is_in(["path", "path_local"]).fill_null(False)
    # nor is one whose process NCCL states is of another rank than the name says
    # (LlamaFactory#6849: `worker0.log`, a pod's log, holds rank 5's `comm ... rank 5 nranks 8`)
    contradicted = (named & (pl.col("process_rank") != pl.col("rank")).fill_null(False)).any()
    by_name = named & (shared | contradicted.over("file"))
    fill = (pl.col("rank").is_null() | by_name) & pl.col("process_rank").is_not_null()
    return by_process.with_columns(
        pl.when(fill)
        .then(pl.col("process_rank"))
        .when(by_name)
        .then(None)
        .otherwise(pl.col("rank"))
        .alias("rank"),
        pl.when(fill)
        .then(pl.lit("process"))
        .when(by_name)
        .then(None)
        .otherwise(pl.col("rank_from"))
        .alias("rank_from"),
    ).drop("process_rank")


def _process_ranks(events: pl.DataFrame) -> pl.DataFrame:
    """(host, pid, process_rank): from world-comm inits, else from topology lines, else from
    what names a process's rank and pid together (the rank's own `rank=2 pid=18459`, torchrun's
    failure summary)."""
    from_inits = _world_init_ranks(events)
    from_topology = _topology_ranks(events).join(from_inits, on=PROCESS, how="anti")
    known = pl.concat([from_inits, from_topology])
    known = pl.concat([known, _stated_ranks(events).join(known, on=PROCESS, how="anti")])
    known = pl.concat([known, _quoted_ranks(events).join(known, on=PROCESS, how="anti")])
    return pl.concat([known, _device_offset_ranks(events, known)])


# identified processes on a host that must agree on one rank - device offset
OFFSET_WITNESSES = 2


def _device_offset_ranks(events: pl.DataFrame, known: pl.DataFrame) -> pl.DataFrame:
    empty = known.clear()
    if known.is_empty() or "cuda_dev" not in events.columns:
        return empty
    devices = _one_device_each(events)
    offsets = (
        devices.join(known, on=PROCESS)
        .group_by("host")
        .agg((pl.col("process_rank") - pl.col("cuda_dev")).unique().alias("offsets"), pl.len())
        .filter((pl.col("offsets").list.len() == 1) & (pl.col("len") >= OFFSET_WITNESSES))
        .select("host", pl.col("offsets").list.first().alias("offset"))
    )
    guessed = (
        devices.join(known, on=PROCESS, how="anti")
        .join(offsets, on="host")
        .select(
            *PROCESS, (pl.col("offset") + pl.col("cuda_dev")).cast(pl.Int32).alias("process_rank")
        )
    )
    taken = known.select("process_rank")
    return guessed.filter(pl.col("process_rank").is_unique()).join(
        taken, on="process_rank", how="anti"
    )


def _one_device_each(events: pl.DataFrame) -> pl.DataFrame:
    """(host, pid, cuda_dev) for processes whose NCCL lines name one device, on hosts where no
    two processes share a device."""
    named = events.filter(
        pl.col("host").is_not_null()
        & pl.col("pid").is_not_null()
        & pl.col("cuda_dev").is_not_null()
    )
    return (
        named.group_by(PROCESS)
        .agg(pl.col("cuda_dev").unique().alias("devices"))
        .filter(pl.col("devices").list.len() == 1)
        .select(
            pl.col("host").cast(pl.String),
            pl.col("pid").cast(pl.Int64),
            pl.col("devices").list.first().cast(pl.Int32).alias("cuda_dev"),
        )
        .filter(pl.col("cuda_dev").is_unique().over("host"))
    )


# events that state a process's global rank and its pid on one line or block; a worker's own
# announcement of its rank (`world_size`: vLLM's and Ray Train's joining lines) under a prefix
# naming its pid, so a relayed error naming that pid is its (Ray's `RayTaskError(...) (pid=3653,
# ip=...)` printed by the driver)
STATING = ("process_id", "child_failed", "world_size")


def _stated_ranks(events: pl.DataFrame) -> pl.DataFrame:
    stated = events.filter(
        pl.col("event").is_in(STATING) & pl.col("rank").is_not_null() & pl.col("pid").is_not_null()
    )
    return _one_rank_each(stated, "rank")


# NCCL's own error lines, and the rank's error that quotes the last of them
NCCL_ERROR_EVENTS = ("nccl_error", "nccl_warn")


def _no_processes() -> pl.DataFrame:
    return pl.DataFrame(schema={"host": pl.String, "pid": pl.Int64, "process_rank": pl.Int32})


def _quoted_ranks(events: pl.DataFrame) -> pl.DataFrame:
    if "exc_message" not in events.columns:
        return _no_processes()
    errors = events.filter(
        pl.col("event").is_in(NCCL_ERROR_EVENTS) & pl.col("exc_message").is_not_null()
    )
    words = ["file", "exc_message"]
    processes = errors.filter(
        pl.col("rank").is_null() & pl.col("host").is_not_null() & pl.col("pid").is_not_null()
    ).select(*words, *PROCESS)
    ranks = errors.filter(pl.col("rank").is_not_null() & pl.col("pid").is_null()).select(
        *words, "rank"
    )
    pairs = processes.unique().join(ranks.unique(), on=words).filter(pl.len().over(words) == 1)
    one_each = pairs.filter(pl.col("rank").n_unique().over(PROCESS) == 1).filter(
        pl.struct(PROCESS).n_unique().over("rank") == 1
    )
    return _one_rank_each(one_each, "rank")


def _device_ranks(events: pl.DataFrame) -> pl.DataFrame:
    """(host, pid, cuda_dev, device_rank) for a process that drives several GPUs, one rank on
    each (nccl-tests `-g 2`, `ncclCommInitAll`; NVIDIA/nccl-tests#287: pid 4766 is rank 0 on
    `[0]` and rank 1 on `[1]`): its lines' device says which of its ranks wrote them."""
    device_type = events.schema.get("cuda_dev", pl.Int32)
    if "cuda_dev" not in events.columns:
        return _no_devices(device_type)
    world = _world_inits(events).filter(pl.col("cuda_dev").is_not_null())
    if world.is_empty():
        return _no_devices(device_type)
    several = pl.col("comm_rank").n_unique().over(PROCESS) > 1
    one_each = pl.col("comm_rank").n_unique().over(DEVICE) == 1
    return (
        world.filter(several & one_each)
        .group_by(DEVICE)
        .agg(pl.col("comm_rank").first().cast(pl.Int32).alias("device_rank"))
        .with_columns(pl.col("host").cast(pl.String), pl.col("pid").cast(pl.Int64))
        # a device no two ranks share in one process
        .filter(pl.col("device_rank").is_unique().over(PROCESS))
    )


def _no_devices(device_type: pl.DataType) -> pl.DataFrame:
    return pl.DataFrame(
        schema={
            "host": pl.String,
            "pid": pl.Int64,
            "cuda_dev": device_type,
            "device_rank": pl.Int32,
        }
    )


def _world_init_ranks(events: pl.DataFrame) -> pl.DataFrame:
    world = _world_inits(events)
    return _no_processes() if world.is_empty() else _one_rank_each(world)


def _world_inits(events: pl.DataFrame) -> pl.DataFrame:
    """The identified init records of the world communicator (the largest one seen)."""
    if "nranks" not in events.columns:
        return _identified(events).clear()
    inits = _identified(events).filter(pl.col("nranks").is_not_null())
    return inits.filter(pl.col("nranks") == pl.col("nranks").max())


# events whose `comm_rank` is the process's own rank in a communicator
OWN_RANK_EVENTS = ("nccl_topology", "nccl_error", "nccl_warn")


def _topology_ranks(events: pl.DataFrame) -> pl.DataFrame:
    return _one_rank_each(_identified(events).filter(pl.col("event").is_in(OWN_RANK_EVENTS)))


def _identified(events: pl.DataFrame) -> pl.DataFrame:
    if "comm_rank" not in events.columns:
        return events.clear().with_columns(pl.lit(None, dtype=pl.Int32).alias("comm_rank"))
    return events.filter(
        pl.col("host").is_not_null()
        & pl.col("pid").is_not_null()
        & pl.col("comm_rank").is_not_null()
    )


def _one_rank_each(records: pl.DataFrame, rank: str = "comm_rank") -> pl.DataFrame:
    """(host, pid, process_rank) for processes whose records state one rank in column `rank`
    (a process with two is ambiguous)."""
    return (
        records.group_by(PROCESS)
        .agg(pl.col(rank).unique().alias("ranks"))
        .filter(pl.col("ranks").list.len() == 1)
        .select(
            pl.col("host").cast(pl.String),
            pl.col("pid").cast(pl.Int64),
            pl.col("ranks").list.first().cast(pl.Int32).alias("process_rank"),
        )
    )


def _lone_pids(mapping: pl.DataFrame) -> pl.DataFrame:
    """(pid, pid_rank) for pids that one mapped process has: the rank of a line that names a
    pid without a host."""
    return mapping.filter(pl.col("pid").is_unique()).select(
        "pid", pl.col("process_rank").alias("pid_rank")
    )
