"""A synthetic NCCL_DEBUG=INFO log set for a multi-node PyTorch job, with faults planted.

NCCL cannot run here (no GPU), so the lines are assembled from NCCL 2.26.2's format strings
(NVIDIA/nccl@v2.26.2-1: src/debug.cc, init.cc, bootstrap.cc, graph/rings.cc, graph/tuning.cc,
transport/generic.cc, transport/net_ib.cc, misc/socket.cc, include/checks.h) and PyTorch's
NCCL error wrapper (pytorch/pytorch: torch/csrc/distributed/c10d/NCCLUtils.hpp), as quoted in
the team's format reference. Layout: one torchrun `--log-dir` tree per node,
`<host>/attempt_0/<local_rank>/{stdout,stderr}.log`; NCCL writes to stdout, PyTorch's errors
(with torch >= 2.2 `[rankN]:` prefixes) to stderr. Nothing in a path names a global rank: the
analyzer must find each process's rank from its NCCL init records.

Each rank creates three communicators, as a tensor + data parallel job does: the world
(`ncclCommInitRank`), its node's tensor-parallel group and its data-parallel group (both
`ncclCommSplit`), printing the ring, tree and connection lines of each channel.

Planted, each optional:
- a duplicate GPU: on one node a process sets the device of another local rank; both print the
  same busId in their init records and NCCL's `Duplicate GPU detected` WARN, and their init
  never completes;
- an InfiniBand failure on one rank (`NET/IB: Got completion from peer ... status=12`), after
  which its ring neighbours report `Connection closed by remote peer` and every other rank's
  PyTorch raises `remote process exited or there was a network error`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

NCCL_VERSION = "2.26.2"
CUDA_VERSION = "12.4"
# PCI bus ids of an 8-GPU HGX node, in nvmlDev order (as NCCL prints them: %lx).
BUS_IDS = ("18000", "2a000", "3a000", "5d000", "9a000", "ab000", "ba000", "db000")
WORLD_COMM_ID = "0x4e52464bbe9f9659"
WARN_TIME = "[2026-11-30 10:{minute:02d}:{second:02d}] "
SOCKET_PORT = 43109


@dataclass(frozen=True, slots=True)
class JobPlan:
    nodes: int = 128
    gpus_per_node: int = 8
    channels: int = 32
    duplicate: tuple[int, int, int] | None = (37, 2, 5)  # node, local rank a, local rank b
    ib_failure: int | None = 517  # global rank whose IB link fails

    @property
    def world(self) -> int:
        return self.nodes * self.gpus_per_node


@dataclass(slots=True)
class Written:
    """What was written and what an analyzer should find."""

    lines: int = 0
    files: int = 0
    bytes: int = 0
    duplicate_ranks: list[int] = field(default_factory=list)
    duplicate_host: str | None = None
    duplicate_bus: str | None = None
    ib_rank: int | None = None
    ib_peer: str | None = None
    cascade_ranks: list[int] = field(default_factory=list)


def host_name(node: int) -> str:
    """NCCL prints gethostname(): here a fully qualified name with dashes and dots."""
    return f"gpu-h100-{node:03d}.pod-a.example.net"


def node_ip(node: int) -> str:
    return f"10.42.{node // 200}.{node % 200 + 10}"


def pid_of(rank: int) -> int:
    return 200_000 + rank * 37


def comm_pointer(rank: int, which: int) -> str:
    return f"0x{0x55D0C0000000 + rank * 0x100000 + which * 0x1000:x}"


def write_job(root: Path, plan: JobPlan) -> Written:
    """Write the log set under `root` and say what was planted."""
    written = Written()
    duplicates = _duplicate_ranks(plan)
    if plan.duplicate is not None:
        node, local_a, _ = plan.duplicate
        written.duplicate_ranks = sorted(duplicates)
        written.duplicate_host = host_name(node)
        written.duplicate_bus = BUS_IDS[local_a]
    if plan.ib_failure is not None:
        # The IB peer is the same GPU of the next node (its data-parallel ring neighbour).
        peer_node = _node_of(plan, plan.ib_failure + plan.gpus_per_node)
        written.ib_rank = plan.ib_failure
        written.ib_peer = f"{node_ip(peer_node)}<{SOCKET_PORT}>"
        written.cascade_ranks = sorted(_neighbours(plan, plan.ib_failure))
    for rank in range(plan.world):
        node, local = divmod(rank, plan.gpus_per_node)
        folder = root / host_name(node).split(".")[0] / "attempt_0" / str(local)
        folder.mkdir(parents=True, exist_ok=True)
        stdout = list(_stdout(plan, rank, duplicates, written))
        stderr = list(_stderr(plan, rank, duplicates, written))
        for name, lines in (("stdout.log", stdout), ("stderr.log", stderr)):
            text = "\n".join(lines) + "\n" if lines else ""
            (folder / name).write_text(text, encoding="utf-8")
            written.lines += len(lines)
            written.bytes += len(text.encode())
            written.files += 1
    return written


def _node_of(plan: JobPlan, rank: int) -> int:
    return (rank % plan.world) // plan.gpus_per_node


def _duplicate_ranks(plan: JobPlan) -> dict[int, int]:
    """rank -> the local GPU it really uses, for the two ranks sharing a GPU."""
    if plan.duplicate is None:
        return {}
    node, local_a, local_b = plan.duplicate
    base = node * plan.gpus_per_node
    return {base + local_a: local_a, base + local_b: local_a}


def _neighbours(plan: JobPlan, rank: int) -> set[int]:
    """The ranks that talk to `rank` directly: its world ring and its data-parallel ring."""
    g = plan.gpus_per_node
    return {
        (rank - 1) % plan.world,
        (rank + 1) % plan.world,
        (rank - g) % plan.world,
        (rank + g) % plan.world,
    } - {rank}


def _stdout(
    plan: JobPlan, rank: int, duplicates: dict[int, int], written: Written
) -> Iterator[str]:
    node, local = divmod(rank, plan.gpus_per_node)
    gpu = duplicates.get(rank, local)
    host = host_name(node)
    pid = pid_of(rank)
    main = f"{host}:{pid}:{pid} [{gpu}] NCCL INFO "
    init = f"{host}:{pid}:{pid + 91} [{gpu}] NCCL INFO "
    yield main + f"Bootstrap: Using ib0:{node_ip(node)}<0>"
    yield main + "cudaDriverVersion 12040"
    yield main + f"NCCL version {NCCL_VERSION}+cuda{CUDA_VERSION}"
    hcas = " ".join(f"[{i}]mlx5_{i}:1/IB" for i in range(plan.gpus_per_node))
    yield init + f"NET/IB : Using {hcas} [RO]; OOB ib0:{node_ip(node)}<0>"
    yield init + "Using network IB"
    world = _record(rank, plan.world, gpu, comm_pointer(rank, 0), f"commId {WORLD_COMM_ID}")
    yield init + f"ncclCommInitRank {world} - Init START"
    yield init + f"Setting affinity for GPU {gpu} to ffffffff,00000000,ffffffff"
    if rank in duplicates:
        other = next(r for r in duplicates if r != rank)
        second = WARN_TIME.format(minute=0, second=12)
        yield ""
        yield (
            f"{second}{host}:{pid}:{pid + 91} [{gpu}] init.cc:943 NCCL WARN Duplicate GPU "
            f"detected : rank {rank} and rank {other} both on CUDA device {BUS_IDS[gpu]}"
        )
        for source in ("init.cc:1522 -> 5", "init.cc:1804 -> 5", "group.cc:73 -> 5"):
            yield init + source
        return
    yield from _world_topology(plan, rank, init, gpu)
    yield init + f"ncclCommInitRank {world} - Init COMPLETE"
    yield init + (
        f"Init timings - ncclCommInitRank: rank {rank} nranks {plan.world} total 1.53 (kernels "
        "0.21, alloc 0.01, bootstrap 0.58, allgathers 0.04, topo 0.31, graphs 0.01, connections "
        "0.33, rest 0.04)"
    )
    yield from _split(plan, rank, init, gpu, tensor_parallel=True)
    yield from _split(plan, rank, init, gpu, tensor_parallel=False)
    yield from _failure(plan, rank, host, pid, gpu, written)


def _record(rank: int, nranks: int, gpu: int, pointer: str, tail: str) -> str:
    return (
        f"comm {pointer} rank {rank} nranks {nranks} cudaDev {gpu} nvmlDev {gpu} "
        f"busId {BUS_IDS[gpu]} {tail}"
    )


def _world_topology(plan: JobPlan, rank: int, prefix: str, gpu: int) -> Iterator[str]:
    g = plan.gpus_per_node
    node, local = divmod(rank, g)
    channels = plan.channels
    yield prefix + (
        f"comm {comm_pointer(rank, 0)} rank {rank} nRanks {plan.world} nNodes {plan.nodes} "
        f"localRanks {g} localRank {local} MNNVL 0"
    )
    if rank == 0:  # graph/rings.cc prints the first 20 ranks of each ring, from rank 0 only
        ring = "".join(f" {r:3d}" for r in range(min(plan.world, 20)))
        for channel in range(channels):
            yield prefix + f"Channel {channel:02d}/{channels:02d} : {ring}"
    up = rank - g if node > 0 else -1
    down = rank + g if node < plan.nodes - 1 else -1
    trees = " ".join(
        f"[{channel}] {down}/-1/-1->{rank}->{up}" for channel in range(min(channels, 32))
    )
    yield prefix + f"Trees {trees}"
    yield prefix + "P2P Chunksize set to 131072"
    following = (rank + 1) % plan.world
    previous = (rank - 1) % plan.world
    for channel in range(channels):
        if following // g == node:
            yield prefix + (
                f"Channel {channel:02d}/0 : {rank}[{gpu}] -> {following}[{following % g}] "
                "via P2P/CUMEM/read"
            )
        else:
            yield prefix + (
                f"Channel {channel:02d}/0 : {rank}[{gpu}] -> {following}[{following % g}] "
                f"[send] via NET/IB/{local}/GDRDMA"
            )
        if previous // g != node:
            yield prefix + (
                f"Channel {channel:02d}/0 : {previous}[{previous % g}] -> {rank}[{gpu}] "
                f"[receive] via NET/IB/{local}/GDRDMA"
            )
    yield prefix + "Connected all rings, use ring PXN 0 GDR 1"
    for channel in range(channels):
        for peer, side in ((up, "send"), (down, "receive")):
            if peer >= 0:
                yield prefix + (
                    f"Channel {channel:02d}/0 : {rank}[{gpu}] -> {peer}[{peer % g}] [{side}] "
                    f"via NET/IB/{local}/GDRDMA"
                )
    yield prefix + "Connected all trees"
    yield prefix + "threadThresholds 8/8/64 | 8192/8/64 | 512 | 512"
    yield prefix + (
        f"{channels} coll channels, {channels} collnet channels, 0 nvls channels, "
        f"{channels} p2p channels, {channels} p2p channels per peer"
    )


def _split(plan: JobPlan, rank: int, prefix: str, gpu: int, tensor_parallel: bool) -> Iterator[str]:
    """A tensor-parallel (the node's GPUs) or data-parallel (one GPU per node) communicator."""
    g = plan.gpus_per_node
    node, local = divmod(rank, g)
    which = 1 if tensor_parallel else 2
    size, color, key = (g, node, local) if tensor_parallel else (plan.nodes, local, node)
    pointer = comm_pointer(rank, which)
    parent = f"parent {comm_pointer(rank, 0)} splitCount {which} color {color} key {key}"
    record = _record(key, size, gpu, pointer, parent)
    yield prefix + f"ncclCommSplit {record}- Init START"
    for channel in range(plan.channels):
        following = (key + 1) % size
        if tensor_parallel:
            yield prefix + (
                f"Channel {channel:02d}/0 : {key}[{gpu}] -> {following}[{following}] "
                "via P2P/CUMEM/read"
            )
        else:
            for side in ("send", "receive"):
                yield prefix + (
                    f"Channel {channel:02d}/0 : {key}[{gpu}] -> {following}[{gpu}] [{side}] "
                    f"via NET/IB/{local}/GDRDMA"
                )
    yield prefix + "Connected all rings, use ring PXN 0 GDR 1"
    yield prefix + f"ncclCommSplit {record} - Init COMPLETE"


def _failure(
    plan: JobPlan, rank: int, host: str, pid: int, gpu: int, written: Written
) -> Iterator[str]:
    if written.ib_rank is None:
        return
    proxy = f"{host}:{pid}:{pid + 388} [{gpu}] "
    if rank == written.ib_rank:
        yield ""
        yield (
            f"{WARN_TIME.format(minute=42, second=17)}{proxy}transport/net_ib.cc:2358 NCCL WARN "
            f"NET/IB: Got completion from peer {written.ib_peer} with status=12 opcode=129 "
            f"len=0 vendor err 129 (Recv) hca mlx5_{rank % plan.gpus_per_node}"
        )
        for source in ("transport/net_ib.cc:2381 -> 6", "transport/net.cc:1314 -> 6"):
            yield proxy + "NCCL INFO " + source
        yield proxy + "NCCL INFO proxy.cc:731 -> 6"
    elif rank in written.cascade_ranks:
        failed_node = _node_of(plan, written.ib_rank)
        yield ""
        yield (
            f"{WARN_TIME.format(minute=42, second=19)}{proxy}misc/socket.cc:50 NCCL WARN "
            f"socketProgress: Connection closed by remote peer {host_name(failed_node)}"
            f"<{SOCKET_PORT}>"
        )
        yield proxy + "NCCL INFO misc/socket.cc:752 -> 6"
        yield proxy + "NCCL INFO transport/net_socket.cc:474 -> 6"


def _stderr(
    plan: JobPlan, rank: int, duplicates: dict[int, int], written: Written
) -> Iterator[str]:
    prefix = f"[rank{rank}]: "
    if rank in duplicates:
        other = next(r for r in duplicates if r != rank)
        yield prefix + (
            "torch.distributed.DistBackendError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/"
            "distributed/c10d/ProcessGroupNCCL.cpp:1970, invalid usage (run with NCCL_DEBUG=WARN "
            f"for details), NCCL version {NCCL_VERSION}"
        )
        yield prefix + "ncclInvalidUsage: This usually reflects invalid usage of NCCL library."
        yield prefix + "Last error:"
        yield prefix + (
            f"Duplicate GPU detected : rank {rank} and rank {other} both on CUDA device "
            f"{BUS_IDS[duplicates[rank]]}"
        )
        return
    if written.ib_rank is None:
        return
    if rank == written.ib_rank:
        last_error = (
            f"NET/IB: Got completion from peer {written.ib_peer} with status=12 opcode=129 len=0 "
            f"vendor err 129 (Recv) hca mlx5_{rank % plan.gpus_per_node}"
        )
    else:
        failed_node = _node_of(plan, written.ib_rank)
        last_error = (
            f"socketProgress: Connection closed by remote peer {host_name(failed_node)}"
            f"<{SOCKET_PORT}>"
        )
    yield prefix + (
        "torch.distributed.DistBackendError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/"
        "distributed/c10d/NCCLUtils.cpp:77, remote process exited or there was a network error, "
        f"NCCL version {NCCL_VERSION}"
    )
    yield prefix + (
        "ncclRemoteError: A call failed possibly due to a network error or a remote process "
        "exiting prematurely."
    )
    yield prefix + "Last error:"
    yield prefix + last_error
