"""Two or more ranks on the same GPU of the same host.

Three sources, most trusted first:

- NCCL's own check, as a WARN (`Duplicate GPU detected : rank 2 and rank 0 both on CUDA device
  1000`, NCCL 2.5-2.29, also quoted by PyTorch after `Last error:`) or, from NCCL 2.30, as a
  WARN that names no rank (`Multiple ranks detected using the same GPU on this node`). The
  device there is the PCI bus id.
- NCCL's communicator records: two processes of one communicator on the same (host, busId),
  or (host, nvmlDev) where NCCL 2.4 prints no busId. Init records, and the teardown records
  that carry the same fields (`comm 0x12fd4c240 rank 3 nranks 4 cudaDev 3 busId 70 - Abort
  COMPLETE`, also `Destroy COMPLETE`), which an excerpt may hold alone. Never `cudaDev` alone:
  under `CUDA_VISIBLE_DEVICES` every process may see its GPU as device 0.
- The training script's rank-to-device print. Ranks are on the same host when the print names
  it; otherwise when `rank - local_rank` agrees (torchrun numbers a node's ranks
  contiguously). With neither, the ranks are only *possibly* on one host: a warning. The
  printed device is a CUDA ordinal, so when NCCL shows those ranks on distinct bus ids the
  print is not taken as a duplicate.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from logforensics.findings import Evidence, Finding, evidence_from
from logforensics.job import Job
from logforensics.launchers import launcher_of
from logforensics.registry import Rule
from logforensics.text import rank_list

# What to change depends on what starts the processes: each launcher hands a process its
# local rank in its own way. Keyed by `launcher_of`; "" when the logs name none.
FIXES = {
    "torchrun": (
        "Give each process of a node its own device: call `torch.cuda.set_device(local_rank)` "
        "with `local_rank = int(os.environ['LOCAL_RANK'])` (not the global rank, not a "
        "constant) before creating the process group or the model; check that "
        "`--nproc_per_node` does not exceed the node's GPU count and that "
        "`CUDA_VISIBLE_DEVICES` is not narrowed to one device per node."
    ),
    "srun": (
        "Give each task of a node its own device: call `torch.cuda.set_device(local_rank)` "
        "with `local_rank = int(os.environ['SLURM_LOCALID'])` (not the global rank, not a "
        "constant) before creating the process group or the model; check that "
        "`--ntasks-per-node` does not exceed the node's GPU count, and give each task its own "
        "GPU with `--gpus-per-task=1` (or `--gpu-bind`) rather than narrowing "
        "`CUDA_VISIBLE_DEVICES` to one device per node."
    ),
    "mpirun": (
        "Give each MPI process of a node its own device: with Horovod call "
        "`torch.cuda.set_device(hvd.local_rank())` right after `hvd.init()`; otherwise use "
        "`int(os.environ['OMPI_COMM_WORLD_LOCAL_RANK'])` (Open MPI; `MPI_LOCALRANKID` with "
        "MPICH), never the global rank or a constant, before building the model; check that "
        "`-np` and the host slots (`-H host:N`, `--map-by ppr:N:node`) do not start more "
        "processes per node than it has GPUs and that `CUDA_VISIBLE_DEVICES` is not narrowed "
        "to one device per node."
    ),
    "deepspeed": (
        "Give each process of a node its own device: call "
        "`torch.cuda.set_device(args.local_rank)` (the `--local_rank` the DeepSpeed launcher "
        "passes, also in `LOCAL_RANK`) before `deepspeed.initialize`, not the global rank or "
        "a constant; check that `--num_gpus` (or `--include host:0,1,...`) does not exceed "
        "the node's GPU count and that `CUDA_VISIBLE_DEVICES` is not narrowed to one device "
        "per node."
    ),
    "accelerate": (
        "Let Accelerate place each process: use `accelerator.device` instead of a hard-coded "
        "`cuda:0` or the global rank, and move the model with `accelerator.prepare(model)`; "
        "check that `--num_processes` (or `num_processes` in the Accelerate config) does not "
        "exceed the GPUs of each machine and that `CUDA_VISIBLE_DEVICES` is not narrowed to "
        "one device per node."
    ),
    "": (
        "Give each process of a node its own device, chosen by its local rank (torchrun: "
        "`LOCAL_RANK`; srun: `SLURM_LOCALID`; Open MPI: `OMPI_COMM_WORLD_LOCAL_RANK`; Horovod: "
        "`hvd.local_rank()`): call `torch.cuda.set_device(local_rank)` before creating the "
        "process group or the model, never with the global rank or a constant; check that the "
        "launcher does not start more processes per node than the node has GPUs and that "
        "`CUDA_VISIBLE_DEVICES` is not narrowed to one device per node."
    ),
}
ALLOWED = "NCCL_MULTI_RANK_GPU_ENABLE=1 lets these ranks share the GPU; if that was not intended, "


def device_fix(launcher: str, allowed: bool = False) -> str:
    """What to change, in the words of the launcher that started the processes."""
    fix = FIXES.get(launcher, FIXES[""])
    return ALLOWED + fix[0].lower() + fix[1:] if allowed else fix


# Records that place a communicator rank on a device: init and teardown.
RECORD_EVENTS = ("nccl_init", "nccl_abort")
RECORD_PHASES = ("start", "complete", "abort", "destroy")
UNKNOWN_BUS = "(bus not printed)"


def check(job: Job) -> list[Finding]:
    from_prints, from_nccl = _confirmed(_from_device_map(job), _per_host(_from_nccl(job)))
    named = {rank for finding in from_prints for rank in finding.ranks}
    findings = from_prints + _impossible_layout(job, named) + from_nccl
    if findings:  # in the words of the launcher the logs show (read only when needed)
        launcher = launcher_of(job)
        for finding in findings:
            if finding.details.get("source") != "layout":
                finding.fix = device_fix(launcher, allowed=finding.fix.startswith(ALLOWED))
    return findings


def _confirmed(
    from_prints: list[Finding], from_nccl: list[Finding]
) -> tuple[list[Finding], list[Finding]]:
    """The prints' findings, each taking in NCCL's findings of ranks among its own (NCCL names
    the first two ranks it sees on a GPU; the prints may show every rank on it: ViewDiff#24's
    four processes on `cuda:0` against NCCL's `rank 0 and rank 1`), and NCCL's findings left
    to report apart. What NCCL said leads the evidence."""
    left = list(from_nccl)
    for printed in from_prints:
        for found in [f for f in left if f.ranks and set(f.ranks) <= set(printed.ranks)]:
            left.remove(found)
            printed.summary += f" NCCL found {rank_list(found.ranks)} among them on one GPU."
            printed.evidence = (found.evidence + printed.evidence)[:20]
            printed.evidence_total += found.evidence_total
            printed.severity, printed.confidence = found.severity, found.confidence
    return from_prints, left


# --- NCCL -----------------------------------------------------------------------------------


@dataclass(slots=True)
class _Sharing:
    """Ranks that NCCL shows on one GPU of one host (host None: NCCL said so, host unprinted)."""

    host: str | None
    bus: str
    ranks: set[int] = field(default_factory=set)
    warned: list[Evidence] = field(default_factory=list)  # NCCL's own WARN lines
    inits: list[Evidence] = field(default_factory=list)  # init records on that GPU
    total: int = 0
    allowed: bool = False

    def finding(self) -> Finding:
        ranks = sorted(self.ranks)
        who = rank_list(ranks).capitalize() if ranks else "Several ranks"
        where = f"host {self.host}" if self.host else "one host (NCCL checked; no host printed)"
        if self.bus == UNKNOWN_BUS:
            gpu = "one GPU"
        elif self.bus.startswith(("nvml", CUDA_DEVICE)):
            gpu = f"one GPU ({self.bus})"
        else:
            gpu = f"one GPU (PCI bus {self.bus})"
        said = (
            "their NCCL communicator records show it"
            if not self.warned
            else "PyTorch refused to create the NCCL communicator"
            if self.bus.startswith(CUDA_DEVICE)
            else "NCCL reported it and refused to create the communicator"
        )
        summary = f"{who} use {gpu} on {where}: {said}."
        if self.allowed:
            summary += " NCCL_MULTI_RANK_GPU_ENABLE=1 allowed the sharing."
        evidence = (self.warned + self.inits)[:20]
        return Finding(
            kind="duplicate_device",
            severity="warning" if self.allowed else "error",
            part="context" if self.allowed else "explanation",
            summary=summary,
            fix=device_fix("torchrun", self.allowed),
            ranks=ranks,
            evidence=evidence,
            evidence_total=self.total,
            confidence="high",
            order=-1.0,  # decided at start-up, before any step
            details={"bus_id": self.bus, "host": self.host, "source": "nccl"},
        )


def _per_host(sharings: list[_Sharing]) -> list[Finding]:
    """One finding per host: several GPUs of one host each used by several ranks are one
    launch mistake (huggingface/accelerate#2246: ranks 4 and 6 on one GPU of qgpu2018, 5 and 7
    on another), not separate failures."""
    by_host: dict[tuple[str | None, bool], list[_Sharing]] = {}
    for sharing in sharings:
        by_host.setdefault((sharing.host, sharing.allowed), []).append(sharing)
    findings = []
    for (host, _), group in by_host.items():
        parts = [sharing.finding() for sharing in group]
        if len(parts) == 1 or host is None:
            findings.extend(parts)
            continue
        first = parts[0]
        first.summary = (
            f"{len(parts)} GPUs of host {host} are each used by several ranks (one launch "
            "mistake): " + " ".join(part.summary for part in parts)
        )
        first.ranks = sorted({rank for part in parts for rank in part.ranks})
        first.evidence = [evidence for part in parts for evidence in part.evidence][:20]
        first.evidence_total = sum(part.evidence_total for part in parts)
        first.details["bus_ids"] = [part.details["bus_id"] for part in parts]
        findings.append(first)
    return findings


# The key of a GPU PyTorch's own check names by its CUDA device (no bus id printed)
CUDA_DEVICE = "CUDA device "


def _bus_key() -> pl.Expr:
    """`bus 1b000` (hex without leading zeros), `nvmlDev 3` (NCCL 2.4) or, where PyTorch's own
    check names the CUDA device, `CUDA device 0`."""
    bus = pl.col("bus_id").str.to_lowercase().str.strip_chars_start("0")
    return (
        pl.when(pl.col("bus_id").is_not_null())
        .then(pl.when(bus == "").then(pl.lit("0")).otherwise(bus))
        .when(pl.col("nvml_dev").is_not_null())
        .then(pl.format("nvmlDev {}", pl.col("nvml_dev")))
        .when(pl.col("event").eq_missing(pl.lit("duplicate_gpu")) & pl.col("device").is_not_null())
        .then(pl.format(CUDA_DEVICE + "{}", pl.col("device")))
        .alias("bus")
    )


def _from_nccl(job: Job) -> list[_Sharing]:
    nccl = job.events.filter(pl.col("family") == "nccl")
    if nccl.is_empty():
        return []
    inits = _shared_by_inits(nccl)
    warned = nccl.filter(pl.col("event") == "duplicate_gpu").with_columns(_bus_key())
    groups: dict[tuple[str | None, str], _Sharing] = {}
    for row in inits.iter_rows(named=True):
        group = _group(groups, row["host"], row["bus"])
        group.ranks.update(row["ranks"])
        group.inits.extend(_evidence(row["rows"]))
        group.total += len(row["rows"])
    _add_warned_pairs(groups, warned.filter(pl.col("bus").is_not_null()))
    _add_unnamed_warnings(groups, warned.filter(pl.col("bus").is_null()), nccl)
    return [groups[key] for key in sorted(groups, key=lambda key: (key[0] or "", key[1]))]


def _group(groups: dict[tuple[str | None, str], _Sharing], host: str | None, bus: str) -> _Sharing:
    if (host, bus) not in groups:
        groups[(host, bus)] = _Sharing(host, bus)
    return groups[(host, bus)]


def _evidence(rows: list[dict]) -> list[Evidence]:
    return [Evidence(row["file"], int(row["line"]), row["text"], row["rank"]) for row in rows]


def _shared_by_inits(nccl: pl.DataFrame) -> pl.DataFrame:
    """(host, bus, ranks, rows) where two processes of one communicator sit on one GPU."""
    inits = nccl.filter(
        pl.col("event").is_in(RECORD_EVENTS)
        & pl.col("extra").str.json_path_match("$.phase").is_in(RECORD_PHASES)
        & pl.col("host").is_not_null()
        & pl.col("comm_rank").is_not_null()
    ).with_columns(
        _bus_key(),
        # One communicator: its commId; else (NCCL < 2.16, and splits) its size and color.
        pl.coalesce(
            pl.col("comm_id"),
            pl.format(
                "{} ranks, color {}",
                pl.col("nranks"),
                pl.col("extra").str.json_path_match("$.color").fill_null("-"),
            ),
        ).alias("communicator"),
        pl.coalesce(pl.col("rank"), pl.col("comm_rank")).alias("who"),
    )
    inits = inits.filter(pl.col("bus").is_not_null())
    if inits.is_empty():
        return pl.DataFrame()
    crowded = (
        inits.group_by("communicator", "host", "bus")
        .agg(
            pl.col("pid").n_unique().alias("processes"),
            pl.col("comm_rank").n_unique().alias("comm_ranks"),
        )
        .filter((pl.col("processes") > 1) & (pl.col("comm_ranks") > 1))
        .select("communicator", "host", "bus")
    )
    return (
        inits.join(crowded, on=["communicator", "host", "bus"])
        .sort("file", "line")
        .group_by("host", "bus", maintain_order=True)
        .agg(
            pl.col("who").unique().sort().alias("ranks"),
            pl.struct("file", "line", "text", "rank").alias("rows"),
        )
    )


def _add_warned_pairs(groups: dict[tuple[str | None, str], _Sharing], pairs: pl.DataFrame) -> None:
    """NCCL's `rank a and rank b both on CUDA device <bus>`: pairs that share a rank (or a
    printed host) and a bus are one GPU, also when some of them lost their host."""
    for (bus,), rows in pairs.sort("file", "line").group_by("bus", maintain_order=True):
        components = _components(rows)
        for members, host, component_rows in components:
            # A pair that lost its host (PyTorch's `Last error:` copy) joins the GPU whose
            # ranks it names.
            known = [g for (h, b), g in groups.items() if b == bus and g.ranks & members]
            if host is None and known:
                group = known[0]
            else:
                group = _group(groups, host, str(bus))
            group.ranks.update(members)
            group.warned.extend(_evidence(component_rows))
            group.total += len(component_rows)


def _components(
    rows: pl.DataFrame,
) -> list[tuple[set[int], str | None, list[dict[str, object]]]]:
    """Connected groups of ranks over the printed pairs (a few rows: plain Python)."""
    parent: dict[int, int] = {}

    def root(rank: int) -> int:
        while parent.setdefault(rank, rank) != rank:
            rank = parent[rank]
        return rank

    records = rows.select("file", "line", "text", "rank", "host", "comm_rank", "peer_rank")
    for row in records.iter_rows(named=True):
        a, b = row["comm_rank"], row["peer_rank"]
        if a is not None and b is not None:
            parent[root(a)] = root(b)
    by_root: dict[int, tuple[set[int], set[str], list[dict[str, object]]]] = {}
    for row in records.iter_rows(named=True):
        named = {r for r in (row["comm_rank"], row["peer_rank"]) if r is not None}
        key = root(min(named)) if named else -1
        members, hosts, kept = by_root.setdefault(key, (set(), set(), []))
        members.update(named)
        if row["host"]:
            hosts.add(row["host"])
        kept.append(row)
    return [
        (members, next(iter(hosts)) if len(hosts) == 1 else None, kept)
        for members, hosts, kept in by_root.values()
    ]


def _add_unnamed_warnings(
    groups: dict[tuple[str | None, str], _Sharing], warned: pl.DataFrame, nccl: pl.DataFrame
) -> None:
    """NCCL 2.30's WARN (and the `allowed` INFO) name no rank or bus: attach them to the GPUs
    the init records show shared on that host, else report the warning processes' ranks."""
    for row in warned.sort("file", "line").iter_rows(named=True):
        host = row["host"]
        on_host = [g for (h, _), g in groups.items() if h == host and host is not None]
        allowed = bool(row["extra"]) and "allowed" in row["extra"]
        if not on_host:
            ranks = _ranks_of_process(nccl, host, row["pid"])
            on_host = [_group(groups, host, UNKNOWN_BUS)]
            on_host[0].ranks.update(ranks)
        for group in on_host:
            evidence = Evidence(row["file"], row["line"], row["text"], row["rank"])
            if allowed:
                group.allowed = True
                group.inits.append(evidence)
            else:
                group.warned.append(evidence)
            group.total += 1


def _ranks_of_process(nccl: pl.DataFrame, host: str | None, pid: int | None) -> set[int]:
    if host is None or pid is None:
        return set()
    ranks = nccl.filter((pl.col("host") == host) & (pl.col("pid") == pid)).get_column("rank")
    return set(ranks.drop_nulls().unique().to_list())


# --- the training script's rank-to-device print ---------------------------------------------


def _from_device_map(job: Job) -> list[Finding]:
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
    buses = _nccl_bus_of_rank(job)
    groups = [(group, True) for group in _shared(known)] + [
        (group, False) for group in _shared(unknown)
    ]
    return [
        _finding(group, certain)
        for group, certain in groups
        if not _distinct_gpus_per_nccl(group, buses)
    ]


IMPOSSIBLE_FIX = (
    "Check how each process computes its local rank and device: with torchrun, read "
    "`LOCAL_RANK` from the environment and call `torch.cuda.set_device(local_rank)`; with "
    "another launcher, derive it the same way on every node (e.g. `SLURM_LOCALID`, "
    "`OMPI_COMM_WORLD_LOCAL_RANK`), never from the global rank with a hard-coded GPU count."
)


def _impossible_layout(job: Job, already: set[int]) -> list[Finding]:
    """Local ranks that no node layout can explain. torchrun numbers each node's processes
    from local rank 0 and its global ranks contiguously, so the ranks with the same
    `rank - local_rank` form one node holding local ranks 0..n-1, and the nodes tile the
    world. Where the prints break that (`{0, 1, 1}` in a 3-rank job), two processes share a
    local rank, which most likely means a GPU."""
    mapping = job.events.filter(
        (pl.col("event") == "device_map")
        & pl.col("rank").is_not_null()
        & pl.col("local_rank").is_not_null()
    ).unique(subset=["rank"], keep="first", maintain_order=True)
    world = job.world_size.value if job.world_size else None
    if mapping.height < 2 or world is None or mapping.height != world:
        return []
    nodes = mapping.with_columns((pl.col("rank") - pl.col("local_rank")).alias("offset"))
    per_node = nodes.group_by("offset").agg(
        pl.col("local_rank").sort().alias("locals"), pl.len().alias("size")
    )
    broken = per_node.filter(
        pl.col("locals") != pl.int_ranges(pl.col("size")).cast(pl.List(pl.Int32))
    )
    if broken.is_empty():
        return []
    clashing = set(broken.explode("locals").get_column("locals").to_list())
    shared = nodes.filter(pl.col("local_rank").is_in(list(clashing)))
    shared = shared.filter(pl.col("local_rank").count().over("local_rank") > 1)
    ranks = sorted(set(shared.get_column("rank").to_list()) - already)
    if len(ranks) < 2:
        return []
    locals_said = ", ".join(map(str, sorted(nodes.get_column("local_rank").to_list())))
    hosted = nodes.get_column("host").drop_nulls().n_unique() > 0
    summary = (
        f"{rank_list(ranks).capitalize()} report the same local rank, and no node layout "
        f"explains the local ranks of this {world}-rank job ({locals_said}): torchrun numbers "
        "each node's processes from local rank 0 and its ranks contiguously. Two processes "
        "most likely share a local rank, and with it a GPU."
    )
    if not hosted:
        summary += (
            " No host is printed: if these processes ran on different nodes, each numbered "
            "on its own, the same prints would be healthy; the launch decides."
        )
    evidence, total = evidence_from(shared.sort("rank").select("file", "line", "text", "rank"))
    return [
        Finding(
            kind="duplicate_device",
            severity="warning",
            part="explanation",
            summary=summary,
            fix=IMPOSSIBLE_FIX,
            ranks=ranks,
            evidence=evidence,
            evidence_total=total,
            confidence="medium" if hosted else "low",
            order=-1.0,  # decided at start-up, before any step
            details={"local_ranks": locals_said, "source": "layout"},
        )
    ]


def _nccl_bus_of_rank(job: Job) -> dict[int, str]:
    """Each rank's GPU as its NCCL init records state it (bus id, or nvmlDev)."""
    inits = job.events.filter(
        (pl.col("event") == "nccl_init") & pl.col("rank").is_not_null()
    ).with_columns(_bus_key())
    inits = inits.filter(pl.col("bus").is_not_null()).unique(subset=["rank"], keep="first")
    return {row["rank"]: row["bus"] for row in inits.select("rank", "bus").iter_rows(named=True)}


def _distinct_gpus_per_nccl(group: pl.DataFrame, buses: dict[int, str]) -> bool:
    """True when NCCL shows every rank of the group on its own GPU: the printed ordinals were
    per-process views (CUDA_VISIBLE_DEVICES), not a shared device."""
    ranks = group.get_column("rank").to_list()
    if not all(rank in buses for rank in ranks):
        return False
    return len({buses[rank] for rank in ranks}) == len(ranks)


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
        part="explanation",
        summary=summary,
        fix=device_fix("torchrun"),
        ranks=ranks,
        evidence=evidence,
        evidence_total=total,
        confidence="high" if node_from == "host" else ("medium" if certain else "low"),
        order=-1.0,  # decided at start-up, before any step
        details={"device": device, "node": node},
    )


RULE = Rule(kind="duplicate_device", check=check, specificity=10)
