"""NCCL network, system and CUDA errors: which process failed first, and the cascade after it.

When one process dies or loses its link, every rank talking to it fails next: their NCCL
WARNs say `Connection closed by remote peer`, `Broken pipe` or `retcode 6` and PyTorch says
`remote process exited or there was a network error`. Those are symptoms. The candidate root
cause is the first error that is not such a report about a peer (an InfiniBand completion
error, a CUDA failure, a failed system call), earliest by printed time where NCCL prints one
(2.26+), then by position in the run; failing that, the first report about a peer.

Errors NCCL raises because two ranks share a GPU (`invalid usage` after `Duplicate GPU
detected`) are left to `duplicate_device` and reported here as its symptoms; the errors of a
process after NCCL's own `Cuda failure 'out of memory'` are left to `oom` likewise.

Where NCCL's return-code chain follows a WARN, its ncclResult_t says what kind of failure it
was (system, internal, invalid usage, remote, CUDA) whatever the WARN's words, and the WARN's
source names the subsystem (bootstrap, socket, InfiniBand, ...). The bootstrap root's `rank 1
of 8 ranks has already checked in` is its own finding: a rank started twice.

Ranks whose NCCL versions differ are reported as a warning: mixed NCCL builds can hang or fail
at communicator init.
"""

from __future__ import annotations

import re

import polars as pl

from logforensics.backend_error import backend_error_unsaid
from logforensics.findings import (
    Evidence,
    Finding,
    Severity,
    differences_masked,
    evidence_from,
)
from logforensics.gloo_interface import gloo_interface
from logforensics.job import Job
from logforensics.nccl_interface import nccl_interface, refused_to_the_end
from logforensics.never_completed import first_collective_never_completed
from logforensics.placement import AFTER_MARK, earliest_time, placed_keys
from logforensics.registry import Rule
from logforensics.stopped_workers import (
    ListedFailure,
    UnstoppedWorker,
    no_line_ties,
    one_reported_failure,
    unstopped_worker,
)
from logforensics.text import clipped, rank_list
from logforensics.watchdog_abort import watchdog_abort_alone
from parsers.nccl import (
    ABOUT_A_PEER,
    IB_ASYNC_ERROR,
    INVALID_RANK,
    LAST_ERROR,
    RESULT_CODES,
    RESULT_WORDS,
    WRAPPER,
    subsystem_of,
)
from parsers.traceback import crashed_in_nccl

# The peer's EFA queue pair no longer exists: its process is gone, whatever the reason (a
# container's OOM kill in awslabs/awsome-distributed-ai#312). The rank that says so is not it.
PEER_GONE = r"(?i)invalid receiver queue pair"
# NCCL's report of a failed InfiniBand completion, and the RDMA provider's own (libmlx5)
INFINIBAND = r"Got completion from peer|mlx5: got completion with error"
# A request the network plugin's fabric failed (aws-ofi-nccl on EFA: `NET/OFI Request 0x...
# completed with error. RC: 20. Error: unknown error.`, aws/aws-ofi-nccl#156)
FABRIC = r"completed with error"
# NCCL's own last error about the host it runs on, not about a peer or a rank: no interface
# for NCCL_SOCKET_IFNAME (EvolvingLMMs-Lab/open-r1-multimodal#7: `Bootstrap : no socket
# interface found`), shared memory it cannot create or open (pytorch#37004, torchtitan#853)
ENVIRONMENT = (
    r"(?i)no socket interface found|NCCL_SOCKET_IFNAME|/dev/shm|shm_open|shmutils|"
    # a bus error in NCCL's own code: a mapping of its segments in /dev/shm that the host could
    # not back (msr-fiddle/pipedream#76 and CarperAI/trlx#536, both fixed with `--shm-size`)
    r"\bBus error\b|"
    # NCCL 2.7's words for the same segment, named without its folder (dmlc/xgboost#5963:
    # `include/shm.h:48 NCCL WARN Error while creating shared memory segment nccl-shm-recv-...`)
    r"shared memory segment|"
    r"No space left on device|No IB device found|No device found|"
    # NCCL_NET naming a network no loaded plugin provides (the CSCS Alps docs:
    # `Error: network AWS Libfabric not found.`)
    r"\bnetwork .{1,40} not found"
)
# Which part of the host's set-up: NCCL's shared memory between a node's GPUs (a segment in
# /dev/shm it could not create, open or grow: torchtitan#853 in a CI container with 16 MB of
# it), or the interface NCCL_SOCKET_IFNAME names
HOST_PARTS = {
    "shared_memory": (
        r"(?i)/dev/shm|shm_open|shmutils|shared memory|No space left on device|\bBus error\b"
    ),
    "interface": r"(?i)no socket interface found|NCCL_SOCKET_IFNAME",
}
CUDA = r"(?i)cuda"
# the two sides of a transfer expected different sizes (NVIDIA/nccl#626: `NET/Socket : peer
# 192.168.161.30<59210> message truncated : receiving 1048576 bytes instead of 65536`)
SIZES_DISAGREE = r"(?i)message truncated|collective mismatch error"
# A connection to NCCL's port that did not start with NCCL's magic number: not NCCL's
FOREIGN = r"wrong magic (?P<magic>[0-9a-fA-F]{16})\b"
DUPLICATE_GPU = r"Duplicate GPU detected|same GPU"
# ncclResult_t (NVIDIA/nccl src/init.cc ncclGetErrorString) -> the class it makes an error.
RESULT_CLASSES = {
    "1": "cuda",
    "2": "system",
    "3": "internal",
    "4": "usage",
    "5": "usage",
    "6": "peer",
}

# nccl-tests' validation summary of results that came out wrong (parsers/nccl_tests.py)
WRONG_RESULTS = "wrong results"
CLASS_WORDS = {
    "wrong_results": (
        " nccl-tests checked the collective's results against the expected values and found "
        "them wrong: the data was corrupted on its way (a faulty GPU, NVLink or network link, "
        "memory errors), not a call that failed."
    ),
    "peer": (
        " It reports that the peer went away or the network to it failed (NCCL cannot tell "
        "which): the failure most likely began at that peer or on that link; this is the "
        "earliest place the logs show it."
    ),
    "infiniband": " The InfiniBand transport to that peer failed on this rank.",
    "ib_device": " The InfiniBand adapter of this host reported an error of its own (its port "
    "or the adapter itself failed).",
    "fabric": (
        " NCCL's network plugin (NET/OFI: libfabric, AWS EFA) reported a request to that peer "
        "failed on the fabric."
    ),
    "cuda": " A CUDA call inside NCCL failed on this rank.",
    "system": " A system or network call inside NCCL failed on this rank.",
    "unknown": " PyTorch names only the error class; NCCL's own lines are not in the logs.",
    "environment": (
        " It is about the host the process ran on (its network interfaces, network plugin or "
        "shared memory), "
        "not about a rank or a peer: every process set up alike fails the same way."
    ),
    "topology": (
        " NCCL could not map the node's devices (GPUs, NICs, PCI) while building its "
        "communicators: a problem of the node's hardware or of this NCCL version with it."
    ),
    "internal": " NCCL returned an internal error (ncclInternalError) on this rank.",
    "crash": " The process died on a signal in NCCL: a crash of the library, not an error it "
    "returned.",
    "foreign": (
        " Something that is not a process of this job connected to this rank's NCCL port: a "
        "port scanner, a metrics scraper or another job. NCCL's proxy thread can stall on such "
        "a connection, and the job with it."
    ),
    "usage": (
        " NCCL returned invalid usage on this rank: the ranks did not call it alike (sizes, "
        "order or settings differ)."
    ),
}
FIX_PEER = (
    "This rank lost its connection to a peer; the peer is most likely where the failure "
    "started. Find the process at the peer address printed here (the host with that IP) and "
    "why it exited: its own log and traceback, `dmesg` / `journalctl -k` for the OOM killer or "
    "a segfault, the scheduler's log for a preemption. If no process died, check the network "
    "between the two hosts and NCCL_SOCKET_IFNAME / NCCL_IB_HCA."
)
FIX_INFINIBAND = (
    "An InfiniBand completion error on the link to the peer named here: check both hosts' HCAs "
    "and ports (`ibstat`, `ibv_devinfo`, the switch port error counters) and the fabric "
    "(subnet manager logs). Status 12 (IBV_WC_RETRY_EXC_ERR) means the transport gave up "
    "retrying: a flapping link or a dead peer. Drain the bad node, or raise NCCL_IB_TIMEOUT / "
    "NCCL_IB_RETRY_CNT if the fabric is only congested."
)
FIX_IB_DEVICE = (
    "The InfiniBand adapter or its port failed on the host named here (a port that went down, "
    "a cable, a switch port, or the adapter's firmware): on that host read `ibstat` / "
    "`ibv_devinfo` (port state), `dmesg -T | grep -i mlx` and the switch's port counters; drain "
    "the node and resume from the last checkpoint on healthy ones."
)
FIX_FABRIC = (
    "A request on the network plugin's fabric failed. On AWS EFA: the instances' security group "
    "must allow all inbound and outbound traffic to and from itself, `fi_info -p efa` must list "
    "the EFA devices on every node, and every node must load the same aws-ofi-nccl and "
    "libfabric; then run nccl-tests between two nodes. If the error names the peer's queue "
    "pair, the peer's process is gone: read its log and the node's OOM killer."
)
# NVIDIA/nccl#1488: `transport/nvls.cc:244 NCCL WARN Cuda failure 1 'invalid argument'` after
# nvidia-fabricmanager had been stopped and started again; a reboot fixed it
FIX_NVLS = (
    "NCCL failed setting up NVLink SHARP (NVLS, multicast over NVSwitch). It needs "
    "nvidia-fabricmanager running since the node booted: a fabric manager stopped and started "
    "again without a reboot breaks it. Check `systemctl status nvidia-fabricmanager` and the "
    "fabric state in `nvidia-smi -q`; reboot the node, or run with `NCCL_NVLS_ENABLE=0` to do "
    "without NVLS."
)
FIX_CUDA = (
    "A CUDA call inside NCCL failed on this rank: check the GPU (`nvidia-smi`, Xid errors in "
    "`dmesg`), that the driver supports the CUDA version NCCL was built for, and that the "
    "process did not run out of GPU memory just before."
)
FIX_SYSTEM = (
    "A system call inside NCCL failed on this rank: in containers give /dev/shm room "
    "(`--shm-size` or `--ipc=host`), check the open-files and locked-memory limits "
    "(`ulimit -n`, `ulimit -l`) and the network interface NCCL picked (NCCL_SOCKET_IFNAME)."
)
FIX_UNKNOWN = (
    "PyTorch reports only the NCCL error class here. Rerun with `NCCL_DEBUG=INFO` (and "
    "`NCCL_DEBUG_FILE=nccl.%h.%p` to get one file per process) to see which peer, link or call "
    "failed first."
)
COMMON_FIX = (
    "Several processes failed alike: look at what they share (the node or nodes, the driver "
    "and CUDA versions, the container image, NCCL settings) rather than at one rank."
)
FIX_INTERNAL = (
    "NCCL failed inside its {subsystem}. In the bootstrap (communicator set-up) a truncated or "
    "unexpected message means the ranks did not agree on what to exchange: every rank must run "
    "the same NCCL build (`torch.cuda.nccl.version()` on each node), and no other job or "
    "earlier run may use the same MASTER_ADDR:MASTER_PORT. Elsewhere, rerun with "
    "`NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET` and compare the ranks' settings."
)
FIX_CRASH = (
    "NCCL itself crashed: keep the whole backtrace, rerun with `NCCL_DEBUG=INFO` to see what "
    "NCCL was doing, and make sure the process loads one NCCL (the one its PyTorch was built "
    "with: `torch.cuda.nccl.version()`; no other libnccl on LD_LIBRARY_PATH, network plugins "
    "built for it). A crash in a known NCCL version is often fixed in a later one: upgrade, or "
    "report it to NVIDIA/nccl with the backtrace."
)
FIX_USAGE = (
    "NCCL rejected what this rank asked of it. A size mismatch between the two sides of a link "
    "(`collective mismatch`, `message truncated`) means the ranks called collectives with "
    "different sizes or in a different order, or run with different NCCL_PROTO / NCCL_ALGO / "
    "NCCL_BUFFSIZE: run with TORCH_DISTRIBUTED_DEBUG=DETAIL to name the mismatching "
    "collectives, and give every rank the same environment."
)
FIX_CHECKED_IN = (
    "Two processes joined NCCL's set-up as the same rank. Check how ranks are numbered: "
    "`--node_rank` (or RANK) given twice, two launches of the same node, or another job on the "
    "same MASTER_ADDR:MASTER_PORT; or the rank's process restarted (an elastic restart, a "
    "retry loop around `init_process_group`) while the others were still setting up. Start "
    "every rank once, with its own rank, and use a fresh port per job."
)
FIX_INVALID_RANK = (
    "Start exactly as many processes as the world size, each with its own rank below it: "
    "WORLD_SIZE (or `--world-size`, `init_process_group(world_size=...)`) must equal nnodes x "
    "nproc_per_node, and RANK must be node_rank x nproc_per_node + local_rank. A script that "
    "takes its rank from a GPU index while more GPUs are visible than the world size counts "
    "(set CUDA_VISIBLE_DEVICES), or a launch with more processes per node than the world size "
    "allows, asks for ranks past the end."
)
FIX_AFTER_OOM = (
    "Nothing to fix here on its own: NCCL could not allocate its buffers because the GPU was "
    "full (the oom finding). Fix the memory use, then these errors go away."
)
FIX_CASCADE = (
    "Nothing to fix on these ranks: they failed because a peer went away. Fix the first "
    "failure (the root-cause finding)."
)
FIX_OWN = (
    "Read these errors as well: they report no lost peer, so they may fail again once the first "
    "failure (the root-cause finding) is fixed."
)
FIX_TEARDOWN = (
    "Nothing to fix here: these errors follow the timeout. Find why the collective that timed "
    "out never completed (the verdict)."
)
FIX_CLOSING = (
    "Nothing to fix for the run: NCCL's network plugin warns when a connection is closed with "
    "requests in flight, as communicators are aborted at exit. If the job did fail, its cause "
    "is elsewhere; destroying the process group (`dist.destroy_process_group()`) once every "
    "rank is done makes the exit clean."
)
FIX_WENT_ON = (
    "Nothing stopped the job here. If NCCL went on without the network it first tried (a "
    "network plugin that failed to load, then `Using network Socket`), collectives between "
    "nodes run over TCP sockets, far slower: check the plugin's install (`NCCL_NET_PLUGIN`, "
    "its libfabric) if that network was meant to be used."
)
FIX_DUPLICATE = (
    "Fix the duplicate GPU assignment (see the duplicate_device finding); NCCL raises this "
    "error on every rank that shares a GPU."
)
FIX_VERSIONS = (
    "Run every rank from the same image or environment so they load one NCCL library "
    "(`python -c 'import torch; print(torch.cuda.nccl.version())'` on each node; check "
    "LD_LIBRARY_PATH and NCCL from pip `nvidia-nccl-cu*` against a system copy)."
)


# NVIDIA/NeMo#13996: `Could not find NET with id 0` on every multi-node run, gone with NCCL
# 2.27.3 (NVIDIA/nccl#1748: NIC fusion falling back to a hard-coded NET id)
FIX_TOPOLOGY = (
    "Run once with `NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH,NET` to see the devices NCCL "
    "found; if it fails on every node, try a newer NCCL (or container) first, then pin the "
    "interfaces (`NCCL_IB_HCA`, `NCCL_SOCKET_IFNAME`); if on one node only, check that node's "
    "NICs and GPUs."
)
FIX_ENVIRONMENT = (
    "Fix the host's set-up, not the code: `NCCL_SOCKET_IFNAME` must name an interface every "
    "node has (`ip -br addr`; unset it to let NCCL choose), `NCCL_NET` and "
    "`NCCL_NET_PLUGIN` must name a network and a plugin every node has (NCCL's INFO lines say "
    "which plugin it loaded), and containers need room in /dev/shm (`--shm-size`, "
    "`--ipc=host`, a memory-backed emptyDir on Kubernetes)."
)
FIX_SHARED_MEMORY = (
    "Give the node's shared memory room: NCCL keeps the buffers between a node's GPUs in "
    "/dev/shm, and a container gets 64 MB of it unless told (`docker run --shm-size=16g` or "
    "`--ipc=host`; on Kubernetes a memory-backed emptyDir mounted at /dev/shm). `df -h "
    "/dev/shm` on the node shows its size and use; segments (`/dev/shm/nccl-*`) left by killed "
    "jobs fill it too. `NCCL_SHM_DISABLE=1` works around it at some speed between GPUs."
)
# /dev/shm refusing the process, not full: its mode (NVIDIA/nccl#328's node08: `Call to
# shm_open failed : Permission denied`, fixed with a chmod of /dev/shm)
PERMISSION_DENIED = r"(?i)permission denied|EACCES"
FIX_SHARED_MEMORY_PERMISSION = (
    "Let the job's user create files in /dev/shm: NCCL keeps the buffers between a node's "
    "GPUs there, and shm_open was refused, not short of room. The directory must be writable "
    "by everyone with the sticky bit (`ls -ld /dev/shm` shows `drwxrwxrwt`; `chmod 1777 "
    "/dev/shm`), and a container must mount it writable for the job's user. "
    "`NCCL_SHM_DISABLE=1` works around it at some speed between GPUs."
)
FIX_INTERFACE = (
    "Name an interface the host has: `NCCL_SOCKET_IFNAME` (and `GLOO_SOCKET_IFNAME`) must "
    "match one of the interfaces `ip -br addr` lists on every node, by name (`eth0`), prefix "
    "(`eth`) or exclusion (`^docker,lo`); unset it to let NCCL choose."
)
HOST_PART_CLASS_WORDS = {
    "shared_memory": (
        " It is about the host's shared memory (/dev/shm), where NCCL keeps the buffers between "
        "a node's GPUs, not about a rank or a peer: every process set up alike fails the same "
        "way."
    ),
    "interface": (
        " It is about the host's network interfaces (NCCL found none it was allowed to use), "
        "not about a rank or a peer: every process set up alike fails the same way."
    ),
}
HOST_PART_FIXES = {"shared_memory": FIX_SHARED_MEMORY, "interface": FIX_INTERFACE}
FIX_FOREIGN = (
    "Keep other programs off the ports NCCL listens on: bind NCCL to the job's private "
    "interface (NCCL_SOCKET_IFNAME), close the job's port range to scanners and scrapers, and "
    "point monitoring at its own port; a newer NCCL may ignore such connections."
)
FIXES = {
    "wrong_results": (
        "Find the faulty part: run the test on each node alone (`-g` with that node's GPUs), "
        "then on pairs of nodes, until the wrong results follow one GPU, node or link; check "
        "that GPU's memory errors (`nvidia-smi -q -d ECC,ROW_REMAPPER`) and the kernel log "
        "(Xid messages), and take it out of service before training on it."
    ),
    "foreign": FIX_FOREIGN,
    "peer": FIX_PEER,
    "infiniband": FIX_INFINIBAND,
    "ib_device": FIX_IB_DEVICE,
    "fabric": FIX_FABRIC,
    "cuda": FIX_CUDA,
    "system": FIX_SYSTEM,
    "unknown": FIX_UNKNOWN,
    "environment": FIX_ENVIRONMENT,
    "topology": FIX_TOPOLOGY,
    "internal": FIX_INTERNAL,
    "crash": FIX_CRASH,
    "usage": FIX_USAGE,
}


def check(job: Job) -> list[Finding]:
    nccl = pl.concat(
        [
            job.events.filter(pl.col("family").is_in(COLLECTIVE_LIBRARIES)),
            _crashes_in_nccl(job),
        ]
    )
    never_completed = (
        first_collective_never_completed(job)
        + gloo_interface(job)
        + nccl_interface(job)
        + refused_to_the_end(job)
        + watchdog_abort_alone(job)
        + backend_error_unsaid(job)
    )
    if nccl.is_empty():
        return never_completed
    return _errors(job, nccl) + never_completed + _versions(nccl, job) + _networks(nccl, job)


def _crashes_in_nccl(job: Job) -> pl.DataFrame:
    """Processes that died on a signal inside NCCL's code (a crash banner whose backtrace runs
    through NCCL: parsers/traceback.py), as NCCL's errors of their own, told by the signal and
    the frame: a bus error there is NCCL's shared memory, whatever the process ran."""
    crashes = job.events.filter(crashed_in_nccl())
    return crashes.with_columns(
        pl.lit("nccl_error").alias("event"), pl.col("message").alias("exc_message")
    )


def _errors(job: Job, nccl: pl.DataFrame) -> list[Finding]:
    errors = pl.concat(
        [
            nccl.filter(pl.col("event") == "nccl_error"),
            _unannounced_chains(nccl, _aborted(job), _handled_probes(job, nccl)),
        ],
        how="diagonal_relaxed",
    )
    if errors.is_empty():
        return []
    errors = _ranked_by_their_wrapper(job, _without_echoes(errors)).with_columns(
        _who().alias("who"),
        pl.concat_str(
            [pl.col("exc_message").fill_null(""), pl.col("error_code").fill_null("")],
            separator=" ",
        ).alias("what"),
        pl.col("extra").str.json_path_match("$.result").alias("result"),
        # the failure a row is: its own words, or those of the WARN its chain is the unwinding of
        pl.coalesce("_failure_of", pl.col("exc_message").fill_null("")).alias("failure"),
        # PyTorch's wrapper quotes NCCL's own `Last error:` words: they name the subsystem too
        pl.coalesce(
            pl.col("extra").str.json_path_match("$.subsystem"),
            subsystem_of(pl.col("exc_message").fill_null("")),
        ).alias("subsystem"),
    )
    findings: list[Finding] = []
    checked_in = pl.col("peer_rank").is_not_null() & (pl.col("subsystem") == "bootstrap")
    if not (twice := errors.filter(checked_in.fill_null(False))).is_empty():
        findings.append(_checked_in_twice(twice))
        errors = errors.filter(~checked_in.fill_null(False))
    past_the_end = pl.col("exc_message").str.contains(INVALID_RANK).fill_null(False)
    if not (refused := errors.filter(past_the_end)).is_empty():
        findings.append(_rank_past_the_end(refused))
        errors = errors.filter(~past_the_end)
    sharing = nccl.filter(pl.col("event") == "duplicate_gpu").height > 0
    explained = (
        pl.col("what").str.contains(DUPLICATE_GPU)
        | (pl.lit(sharing) & (pl.col("error_code") == "invalid usage"))
    ).fill_null(False)
    by_duplicate = errors.filter(explained)
    if not by_duplicate.is_empty():
        findings.append(_explained_by_duplicate(by_duplicate))
    remaining = errors.filter(~explained)
    after_oom = _after_nccl_oom(remaining, nccl)
    if not after_oom.is_empty():
        findings.append(_explained_by_oom(job, after_oom))
        remaining = remaining.join(
            after_oom.select("file", "line"), on=["file", "line"], how="anti"
        )
    teardown = _after_a_timeout(job, remaining)
    if not teardown.is_empty():
        findings.append(_teardown(job, teardown))
        remaining = remaining.join(teardown.select("file", "line"), on=["file", "line"], how="anti")
    went_on = _went_on(remaining, nccl)
    if not went_on.is_empty():
        findings.append(_survived(job, went_on))
        remaining = remaining.join(went_on.select("file", "line"), on=["file", "line"], how="anti")
    candidates = _in_order(job, remaining)
    if candidates.is_empty():
        return findings
    common = _common_mode(candidates)
    if common is not None:
        findings.append(_common_mode_finding(job, common))
        candidates = candidates.filter(~pl.col("who").is_in(common.get_column("who").to_list()))
        if not candidates.is_empty():
            findings.append(_cascade(candidates, common.row(0, named=True)))
        return findings
    candidates, reported = _ranked_by_the_launcher(job, candidates)
    first_who = candidates.item(0, "who")
    findings.append(
        _root_cause(job, candidates.filter(pl.col("who") == first_who), candidates, reported)
    )
    cascade = candidates.filter(pl.col("who") != first_who)
    if not cascade.is_empty():
        findings.append(_cascade(cascade, candidates.row(0, named=True)))
    return findings


# Errors this close together are one event seen by several processes, not a first and its echo.
SAME_MOMENT_SECONDS = 2


def _without_echoes(errors: pl.DataFrame) -> pl.DataFrame:
    """Without the NCCL WARNs no identity names (the paste cut it off) whose words a rank's
    PyTorch error quotes as its `Last error:`: one failure told twice, the rank's, not a first
    error and its cascade (nanochat's two-node notes: `NCCL WARN Call to ibv_create_cq failed
    with error Cannot allocate memory`, and rank 13's DistBackendError quoting it). Nothing
    orders the two: the rank's own report, which says who, stands for both."""
    anonymous = (
        pl.col("rank").is_null() & pl.col("host").is_null() & pl.col("pid").is_null()
    ).fill_null(False)
    quoted = errors.filter(~anonymous & pl.col("exc_message").is_not_null()).select(
        pl.col("exc_message").str.strip_chars()
    )
    echoes = errors.filter(anonymous).join(
        quoted.unique(),
        left_on=pl.col("exc_message").str.strip_chars(),
        right_on="exc_message",
        how="semi",
    )
    return errors.join(
        pl.concat([echoes.select("file", "line"), _wrapped_chains(errors, anonymous)]),
        on=["file", "line"],
        how="anti",
    )


def _ranked_by_their_wrapper(job: Job, errors: pl.DataFrame) -> pl.DataFrame:
    """The rows of a process no line ties to a rank (NCCL's own `host:pid:tid [dev]` WARN and
    its return-code chain) given the rank of the one PyTorch wrapper that raised the chain's
    result after it: one failure told twice, by NCCL as a process and by PyTorch as a rank
    (pytorch/pytorch#150852: `devgpu263:589012:591652 [0] transport/nvls.cc:254 NCCL WARN Cuda
    failure 1 'invalid argument'`, its chain `-> 1`, then `[rank0]: ... unhandled cuda
    error`). Only a pairing one to one: a single such process with that result, a single rank
    raising it, and a rank the logs tie to no process of its own."""
    result = pl.col("extra").str.json_path_match("$.result")
    processes = (
        errors.filter(pl.col("rank").is_null() & pl.col("pid").is_not_null())
        .select("file", "line", "host", "pid", result.alias("_result"))
        .drop_nulls("_result")
    )
    if processes.is_empty():
        return errors
    known = job.events.filter(pl.col("pid").is_not_null()).get_column("rank").drop_nulls()
    wrappers = errors.filter(
        pl.col("rank").is_not_null() & pl.col("pid").is_null() & ~pl.col("rank").is_in(known)
    ).select("file", pl.col("line").alias("_wrapper_line"), "rank", _wrapper_result())
    one_each = (
        processes.unique(["host", "pid", "_result"])
        .group_by("_result")
        .agg(pl.len().alias("_processes"), pl.col("host").first(), pl.col("pid").first())
        .join(
            wrappers.unique(["rank", "_result"])
            .group_by("_result")
            .agg(pl.len().alias("_ranks"), pl.col("rank").first().alias("_rank")),
            on="_result",
        )
        .filter((pl.col("_processes") == 1) & (pl.col("_ranks") == 1))
    )
    if one_each.is_empty():
        return errors
    first_said = processes.group_by("host", "pid").agg(pl.col("file").first(), pl.min("line"))
    pairs = (
        one_each.join(first_said, on=["host", "pid"])
        .join(wrappers.rename({"rank": "_rank"}), on=["file", "_result", "_rank"])
        # the wrapper raises what the chain returned: it comes after the process's WARN
        .filter(pl.col("_wrapper_line") > pl.col("line"))
        .unique(["host", "pid"])
        .select("host", "pid", "_rank")
    )
    if pairs.is_empty():
        return errors
    return (
        errors.join(pairs, on=["host", "pid"], how="left", nulls_equal=False)
        .with_columns(pl.coalesce("rank", "_rank").alias("rank"))
        .drop("_rank")
    )


# ncclResult_t's number for the words PyTorch's `NCCL error in:` wrapper says it in
RESULT_NUMBERS = {RESULT_WORDS[name]: code for name, code in RESULT_CODES.items()}


def _wrapper_result() -> pl.Expr:
    """`_result`: the ncclResult_t number of the class PyTorch's wrapper names in words."""
    return (
        pl.col("error_code")
        .str.strip_chars()
        .replace_strict(RESULT_NUMBERS, default=None, return_dtype=pl.String)
        .alias("_result")
    )


def _wrapped_chains(errors: pl.DataFrame, anonymous: pl.Expr) -> pl.DataFrame:
    """`file, line` of PyTorch wrappers no identity names whose error class is the result the
    return-code chain of exactly one known process carried: that process's failure told twice,
    in its own WARN and in the wrapper (ray-project/ray#16979: `unhandled cuda error` first in
    the paste, then rank 3's `failed to open CUDA IPC handle` and its chain `-> 1`)."""
    results = errors.filter(~anonymous).select(
        _who().alias("_who"), pl.col("extra").str.json_path_match("$.result").alias("_result")
    )
    alone = (
        results.drop_nulls("_result")
        .unique()
        .group_by("_result")
        .agg(pl.len().alias("_processes"))
        .filter(pl.col("_processes") == 1)
    )
    wrappers = errors.filter(anonymous).with_columns(_wrapper_result())
    return wrappers.join(alone, on="_result", how="semi").select("file", "line")


def _common_mode(candidates: pl.DataFrame) -> pl.DataFrame | None:
    """The processes that hit the same error as the first one at the same time, when no
    error reports a lost peer: one cause they share (the driver, CUDA, the environment or the
    network), not a root and its cascade (principle 7). None when the first stands alone."""
    if candidates.get_column("about_peer").any():
        return None
    first = candidates.row(0, named=True)
    same = differences_masked(pl.col("failure")) == differences_masked(pl.lit(first["failure"]))
    if first["timestamp"] is not None:
        moment = pl.lit(first["timestamp"])
        same &= (pl.col("timestamp") - moment).dt.total_seconds().abs() <= SAME_MOMENT_SECONDS
    shared = candidates.filter(same.fill_null(False))
    if shared.get_column("who").n_unique() < 2:
        return None
    return shared


def _common_mode_finding(job: Job, rows: pl.DataFrame) -> Finding:
    first = _said_first(rows)
    kind = _class_of(first)
    ranks = sorted(rows.get_column("rank").drop_nulls().unique().to_list())
    processes = rows.get_column("who").n_unique()
    unranked = processes - len(ranks)
    who = rank_list(ranks).capitalize() if ranks else ""
    if unranked:
        who += (" and " if who else "") + f"{unranked} process{'es' if unranked > 1 else ''}"
        who += " of unknown rank" if ranks else ""
    message = (first["exc_message"] or first["error_code"] or "").strip()
    timed = rows.get_column("timestamp").drop_nulls().len() > 1
    when = " at the same time" if timed else ""
    # other ranks in the logs that did not fail place the shared cause at the ranks that did
    spared = sorted(set(job.ranks_seen) - set(ranks)) if ranks and not unranked else []
    # an adapter's own error event is its host's, whoever else the logs show
    adapter = kind == "ib_device"
    local = adapter and bool(ranks) and not unranked
    hosts = sorted(set(rows.get_column("host").drop_nulls()))
    on = f" ({', '.join(hosts)})" if hosts else ""
    where = (
        f", while {rank_list(spared)} did not: the cause is where these ranks run (their "
        "host, GPU, network device or set-up), shared by them"
        if spared
        else f": the InfiniBand adapter of their host{on} failed under them"
        if adapter
        else ": one cause they share (the driver, CUDA, the environment or the network)"
    )
    summary = (
        f"{who} hit the same NCCL error{when} (`{message[:200]}`) and none reports a lost "
        f"peer{where}, not one rank failing first and the others after it."
    ) + _link_local_words(first)
    evidence, total = _first_of_each_process(rows)
    return Finding(
        kind="nccl_error",
        severity="error",
        part="explanation",
        summary=summary,
        fix=COMMON_FIX + " " + _fix(first, kind),
        ranks=ranks,
        blames_nobody=not spared and not local,  # a cause they share: none failed first
        evidence=evidence,
        evidence_total=total,
        confidence="high" if timed else "medium",
        order=_order(rows),
        timestamp=earliest_time(rows),
        scope="job",
        **_position(job, rows),
        details={
            "class": kind,
            "common_mode": True,
            "at_once": timed,
            "spared": spared,
            "processes": processes,
            "error_code": first["error_code"],
            "nccl_version": first["nccl_version"],
        },
    )


def _aborted(job: Job) -> bool:
    """Whether a communicator was taken down: a watchdog's timeout or abort, or NCCL's own
    `Abort COMPLETE`."""
    return not job.events.filter(pl.col("event").is_in(ABORTED_BY)).is_empty()


# the families whose lines are a collective library's own, or its transport's: NCCL's (and
# RCCL's, in NCCL's words), Ascend's HCCL (parsers/hccl.py), Intel's oneCCL (parsers/oneccl.py),
# the RDMA provider's (parsers/rdma.py), UCX's under MPI (parsers/ucx.py)
COLLECTIVE_LIBRARIES = ("nccl", "nccl_tests", "hccl", "oneccl", "rdma", "custom_allreduce", "ucx")
ABORTED_BY = ("collective_timeout", "ops_failed", "process_abort", "nccl_abort")


def _unannounced_chains(
    nccl: pl.DataFrame, aborted: bool = False, handled: pl.DataFrame | None = None
) -> pl.DataFrame:
    """Return-code chains of a failure (`misc/socket.cc:567 -> 2`, then `bootstrap.cc:270 ->
    2`) printed by a process that WARNs about nothing: its failure is the chain's, at INFO level
    (NVIDIA/nccl#1000: bootstrap on two nodes' IPoIB interfaces in different subnets). A
    process's chain after its own WARN is that WARN's unwinding; with a WARN whose process
    the line does not name, every chain may be. One error per process, at its chain's first
    line; the subsystem from every frame of the chain (bootstrap over the socket calls under
    it). `_failure_of` holds the words of the WARN of another process whose failure the chain
    shares a place with (a frame of that process's chain, or the source file of its WARN):
    the same failure, its WARN not shown for this process (NVIDIA/nccl#224: rank 0's
    `init.cu:915 -> 2` beside rank 4's socket WARN and its chain through `init.cu:915`).
    Where a communicator was `aborted`, a process's chain of socket calls alone ending in an
    internal error (`misc/socket.cc:881 -> 3`) is its sockets closed under NCCL's threads by
    the abort, no failure of its own (PKU-YuanGroup/UniWorld#46: three processes' chains as
    rank 6's watchdog took its process down). `handled`: processes whose one-frame chain NCCL
    went on from (`_handled_probes`), no failure."""
    failed = (pl.col("event") == "nccl_unwind") & pl.col("error_code").is_in(list(RESULT_CLASSES))
    said = nccl.filter(pl.col("event").is_in(["nccl_error", "nccl_warn", "oom"]))
    chains = nccl.filter(failed & pl.col("pid").is_not_null())
    if aborted:
        chains = chains.join(_torn_down(chains), on=PROCESS, how="anti", nulls_equal=True)
    if handled is not None and handled.height:
        chains = chains.join(handled, on=PROCESS, how="anti", nulls_equal=True)
    if (
        chains.is_empty()
        or (said.get_column("pid").is_null() | said.get_column("host").is_null()).any()
    ):
        return _no_chains(chains)
    process = ["host", "pid"]
    own = chains.join(said.select(process).unique(), on=process, how="semi", nulls_equal=True)
    chains = chains.join(said.select(process).unique(), on=process, how="anti", nulls_equal=True)
    if chains.is_empty():
        return _no_chains(chains)
    frames = chains.group_by(process).agg(pl.col("frame").str.join(" ").alias("_frames"))
    first = chains.sort("file", "line").unique(process, keep="first", maintain_order=True)
    return (
        first.join(frames, on=process, how="left", nulls_equal=True)
        .join(_failure_places(said, own, chains), on=process, how="left", nulls_equal=True)
        .with_columns(
            pl.lit("nccl_error").alias("event"),
            pl.concat_str(pl.col("frame"), pl.lit(" -> "), pl.col("error_code")).alias(
                "exc_message"
            ),
            pl.struct(
                pl.col("error_code").cast(pl.Int64, strict=False).alias("result"),
                subsystem_of(pl.col("_frames")).alias("subsystem"),
            )
            .struct.json_encode()
            .alias("extra"),
            pl.lit(None, pl.String).alias("error_code"),
            pl.lit(True).alias("_from_chain"),
        )
        .drop("_frames")
    )


# How many lines after a one-frame chain its process must go on printing within
PROBE_FOLLOW_LINES = 3


def _handled_probes(job: Job, nccl: pl.DataFrame) -> pl.DataFrame:
    """`host, pid` of the processes whose return-code chain is a single frame, after which the
    same process printed NCCL's next line of its set-up: the call's caller handled the error
    and NCCL went on (polyaxon/polyaxon#657: `Could not find real path of /sys/class/net/eth0/
    device`, `include/net.h:24 -> 2`, then `CUDA Dev 0[0], Socket NIC distance :  SYS` on each
    of three pods: a virtual NIC's topology probe), and those whose one frame is the same
    place such a process went on from. An error NCCL does not handle goes up the chain, a frame
    per caller."""
    failed = (pl.col("event") == "nccl_unwind") & pl.col("pid").is_not_null()
    chains = nccl.filter(failed)
    if chains.is_empty():
        return chains.select(PROCESS)
    single = chains.filter(pl.len().over(PROCESS) == 1)
    if single.is_empty():
        return single.select(PROCESS)
    after = job.lines_after(single, PROBE_FOLLOW_LINES, *PROCESS)
    own = pl.concat_str(pl.col("host"), pl.lit(":"), pl.col("pid").cast(pl.String), pl.lit(":"))
    went_on = (
        after.filter(
            pl.col("text").str.contains(own, literal=True)
            & pl.col("text").str.contains(" NCCL INFO ", literal=True)
            & ~pl.col("text").str.contains(UNWIND_FRAME)
        )
        .select(PROCESS)
        .unique()
    )
    # the same one-frame failure in a process whose next lines the logs do not show is the
    # same handled probe
    handled_at = single.join(went_on, on=PROCESS, nulls_equal=True).select("frame").unique()
    return single.join(handled_at, on="frame").select(PROCESS).unique()


# a return-code frame's words (`misc/socket.cc:567 -> 2`)
UNWIND_FRAME = r" -> \d+\s*$"


def _torn_down(chains: pl.DataFrame) -> pl.DataFrame:
    """`host, pid` of the processes whose chain is socket calls alone ending in an internal
    error: what an abort leaves behind."""
    socket_only = pl.col("frame").fill_null("").str.starts_with("misc/socket.cc:") & (
        pl.col("error_code") == INTERNAL_ERROR
    )
    return (
        chains.group_by(PROCESS)
        .agg(socket_only.all().alias("_torn_down"))
        .filter("_torn_down")
        .select(PROCESS)
    )


PROCESS = ["host", "pid"]
INTERNAL_ERROR = "3"  # ncclInternalError


def _no_chains(chains: pl.DataFrame) -> pl.DataFrame:
    """No chain error, with the columns the chains' errors carry."""
    return chains.clear().with_columns(
        pl.lit(None, pl.String).alias("_failure_of"), pl.lit(True).alias("_from_chain")
    )


def _failure_places(said: pl.DataFrame, own: pl.DataFrame, chains: pl.DataFrame) -> pl.DataFrame:
    """`host, pid, _failure_of`: for each process of `chains`, the first WARN's words of a
    process that WARNed and whose failure passed a place its chain passed (a frame of the WARN
    process's own chain, or the WARN's source file)."""
    process = ["host", "pid"]
    warned = said.sort("file", "line").unique(process, keep="first", maintain_order=True)
    places = pl.concat(
        [
            warned.select(*process, _source_file(pl.col("frame")).alias("_place")),
            own.select(*process, pl.col("frame").alias("_place")),
        ]
    ).drop_nulls("_place")
    passed = pl.concat(
        [
            chains.select(*process, pl.col("frame").alias("_place")),
            chains.select(*process, _source_file(pl.col("frame")).alias("_place")),
        ]
    ).drop_nulls("_place")
    matched = passed.join(places, on="_place", suffix="_warned").unique(process, keep="first")
    return matched.join(
        warned.select(
            pl.col("host").alias("host_warned"),
            pl.col("pid").alias("pid_warned"),
            pl.col("exc_message").alias("_failure_of"),
        ),
        on=["host_warned", "pid_warned"],
    ).select(*process, "_failure_of")


def _source_file(frame: pl.Expr) -> pl.Expr:
    """`transport/nvls.cc` of `transport/nvls.cc:157` (null for a function's name)."""
    return frame.str.extract(r"^([\w./-]+\.\w+):\d+", 1)


def _who() -> pl.Expr:
    """One identity per failing process: its rank, else host:pid, else its file."""
    return pl.coalesce(
        pl.format("rank {}", pl.col("rank")),
        pl.format("{}:{}", pl.col("host"), pl.col("pid")),
        pl.format("file {}", pl.col("file")),
    )


def _in_order(job: Job, errors: pl.DataFrame) -> pl.DataFrame:
    """Errors about a peer last; then by printed time, position in the run; then a process's
    own NCCL lines before a bare wrapper; then file position."""
    placed = placed_keys(job, errors)
    # not the remote-error code alone: NCCL returns it for a failing InfiniBand link too
    about_peer = pl.col("what").str.contains(ABOUT_A_PEER)
    return placed.with_columns(
        about_peer.alias("about_peer"), _bare_wrapper(job, placed).alias("_bare_wrapper")
    ).sort("about_peer", "timestamp", "key", "_bare_wrapper", "file", "line", nulls_last=True)


def _bare_wrapper(job: Job, errors: pl.DataFrame) -> pl.Expr:
    """PyTorch's wrapper naming only NCCL's result class (`NCCL error in: ..., unhandled cuda
    error`), from a process with no NCCL line of its own in the logs: nothing places it before
    another process's WARN that says what failed, whatever the lines' order (Ray forwards each
    worker's output in batches: ray-project/ray_lightning#24 shows pid 909597's bare wrapper
    above pid 909608's `failed to open CUDA IPC handle : 217 peer access is not supported`)."""
    own = (
        job.events.filter((pl.col("family") == "nccl") & pl.col("pid").is_not_null())
        .filter(~pl.col("text").str.contains(WRAPPER))
        .select("pid")
        .unique()
    )
    wrapper = pl.col("text").str.contains(WRAPPER).fill_null(False)
    # (not when it quotes NCCL's `Last error:`: then it says what failed too)
    said_only_the_class = ~pl.col("what").str.contains(LAST_ERROR, literal=True).fill_null(False)
    return (
        wrapper & said_only_the_class & ~pl.col("pid").is_in(own.get_column("pid").implode())
    ).fill_null(False)


def _class_of(first: dict[str, object]) -> str:
    """What failed: the words of the error where they are telling (an InfiniBand completion, a
    lost peer, the host's own set-up), else the ncclResult_t its return-code chain carried,
    else CUDA or system."""
    what = str(first["what"])
    if first.get("error_code") == WRONG_RESULTS:
        return "wrong_results"
    if _matches(what, FOREIGN):
        return "foreign"
    if _matches(what, ENVIRONMENT):
        return "environment"
    if first.get("signal") is not None:  # a crash banner's (`_crashes_in_nccl`)
        return "crash"
    if _matches(what, IB_ASYNC_ERROR):  # the adapter's own error event, no peer in it
        return "ib_device"
    if _matches(what, INFINIBAND):
        return "infiniband"
    if first["about_peer"]:
        return "peer"
    if _matches(what, FABRIC):
        return "fabric"
    if first["result"] in RESULT_CLASSES:
        return RESULT_CLASSES[str(first["result"])]
    if _matches(what, SIZES_DISAGREE):
        return "usage"
    if _matches(what, CUDA):
        return "cuda"
    if first.get("subsystem") == "topology":
        return "topology"
    # NCCL's own `host:pid:tid` identity (UCX's own tag) marks the library's own line; a host
    # a launcher's prefix gave (a pod, a node) says nothing of what failed
    own_line = first.get("tid") is not None or (
        first["host"] is not None and first["family"] == "ucx"
    )
    if not own_line and not first.get("subsystem"):
        return "unknown"
    return "system"


def _host_part(first: dict[str, object]) -> str | None:
    """The part of the host's set-up NCCL's error names, where it names one."""
    what = str(first["what"])
    return next((part for part, words in HOST_PARTS.items() if _matches(what, words)), None)


def _class_words(first: dict[str, object], kind: str) -> str:
    subsystem = first.get("subsystem")
    words = CLASS_WORDS[kind]
    if kind == "environment" and (part := _host_part(first)) is not None:
        words = HOST_PART_CLASS_WORDS[part]
    if subsystem and kind in ("internal", "usage", "system"):
        words += f" The failing call was in NCCL's {subsystem}."
    if kind == "foreign" and (sent := _sent_text(str(first["what"]))):
        words += f" The bytes it sent, read as text: `{sent}`."
    if first.get("signal") is not None:
        words += f" The crash's backtrace runs through NCCL's own code, at {first['frame']}."
    return words + _link_local_words(first)


def _link_local_words(first: dict[str, object]) -> str:
    link_local = re.search(LINK_LOCAL, str(first["what"]))
    if link_local is None:
        return ""
    return (
        f" The address it connected to, `{link_local[1]}`, is link-local: NCCL picked an "
        "interface with no address the other hosts can route to."
    )


# skypilot-org/skypilot#4448: `Connect to fe80::20d:3aff:fef7:74b3%enP7906s1<51577> failed`
# on both nodes (Azure's accelerated-networking interface); IPv4's link-local block is 169.254/16.
# Only a socket's connect: EFA's own addresses look link-local and are not.
LINK_LOCAL = (
    r"(?i)\bconnect(?:ing)? to (?:address )?"
    r"(fe80:[0-9a-fA-F:]*(?:%[\w.-]+)?|169\.254\.\d{1,3}\.\d{1,3})"
)


def _sent_text(what: str) -> str | None:
    """The 8 bytes a foreign connection sent in place of NCCL's magic number, as text when
    they are printable (NVIDIA/nccl#1808: `74656d2f20544547` is `GET /met`, an HTTP request)."""
    found = re.search(FOREIGN, what)
    if found is None:
        return None
    sent = bytes.fromhex(found["magic"])[::-1]  # the number is printed little-endian
    return sent.decode("ascii") if all(32 <= byte < 127 for byte in sent) else None


def _fix(first: dict[str, object], kind: str) -> str:
    if kind == "environment" and (part := _host_part(first)) is not None:
        if part == "shared_memory" and re.search(PERMISSION_DENIED, str(first["what"])):
            return FIX_SHARED_MEMORY_PERMISSION
        return HOST_PART_FIXES[part]
    if first.get("subsystem") == "nvls" and kind in ("cuda", "system", "internal"):
        return FIX_NVLS
    if kind == "system" and first.get("subsystem") in NETWORK_SUBSYSTEMS:
        return FIX_NETWORK_CALL
    return FIXES[kind].format(subsystem=first.get("subsystem") or "code")


FIX_HCCL = (
    "The Ascend error code's line says what failed, and the runtime prints a `Solution:` line "
    "under it: follow that first. `npu-smi info` on that host shows processes still holding "
    "the NPU (a previous job's), and HCCL's own log (`ASCEND_GLOBAL_LOG_LEVEL=1`, under "
    "`~/ascend/log`) says which peer or link failed."
)

FIX_ONECCL = (
    "The Level Zero code at the end of oneCCL's line says what failed: "
    "`ZE_RESULT_ERROR_DEVICE_LOST` or `ZE_RESULT_ERROR_UNKNOWN` point at the GPU, its driver or "
    "the path between GPUs (check the GPUs with `xpu-smi` and the kernel log; GPUs passed "
    "through to a virtual machine may not reach each other directly). Rerun with "
    "`CCL_LOG_LEVEL=debug` to see the collective and the peer it failed on."
)
FIX_CUSTOM_ALLREDUCE = (
    "vLLM's custom all-reduce reads the other GPUs' memory directly (CUDA peer access); a failed "
    "CUDA call there most often means the GPUs cannot reach each other's memory (consumer or "
    "PCIe GPUs without peer access, IOMMU or ACS on, a virtual machine). Turn the custom "
    "all-reduce off (`--disable-custom-all-reduce`, `disable_custom_all_reduce=True`) so NCCL "
    "does the all-reduce, or fix peer access (`nvidia-smi topo -p2p r` shows which pairs can)."
)
FIX_UCX = (
    "UCX could not connect this process to its peer: the words after `UCX  ERROR` say which "
    "transport and device failed. Check that the hosts reach each other on that device "
    "(`ucx_info -d` lists the devices, `ibv_devinfo` the ports; RoCE needs the same subnet and "
    "GID index on both ends), then pin the transports and device that work (`UCX_TLS=rc,sm,self`"
    " or `tcp`, `UCX_NET_DEVICES=mlx5_0:1`) for every process of the job."
)
# the other collective libraries' names (their families), and the fix for each
LIBRARY_NAMES = {
    "hccl": "HCCL",
    "oneccl": "oneCCL",
    "custom_allreduce": "vLLM's custom all-reduce",
    "ucx": "UCX",
}
LIBRARY_FIXES = {
    "UCX": FIX_UCX,
    "HCCL": FIX_HCCL,
    "oneCCL": FIX_ONECCL,
    "vLLM's custom all-reduce": FIX_CUSTOM_ALLREDUCE,
}

# where a failed system call is the network's: the interface NCCL picked comes first
NETWORK_SUBSYSTEMS = ("bootstrap", "socket", "network transport")
FIX_NETWORK_CALL = (
    "A network call inside NCCL failed while connecting. Most often NCCL picked an interface "
    "the other host cannot reach (a docker bridge, a virtual or loopback interface): pin "
    "NCCL_SOCKET_IFNAME to the interface the hosts reach each other on (`eth0`, `bond0`; "
    "`^docker,lo` excludes), then check the firewall between the hosts and the open-files "
    "limit (`ulimit -n`). `NCCL_DEBUG=INFO` prints the interfaces NCCL uses (`NET/Socket : "
    "Using ...`)."
)


def _matches(text: str, pattern: str) -> bool:
    return re.search(pattern, text) is not None


def _describe_process(first: dict[str, object], start: bool = True) -> str:
    """`Rank 9 (host a100-22, pid 183006)`; `a process (...)` inside a sentence."""
    if first["rank"] is not None:
        who = f"{'R' if start else 'r'}ank {first['rank']}"
    else:
        who = "A process" if start else "a process"
    where = []
    if first["host"]:
        where.append(f"host {first['host']}")
    if first["pid"] is not None:
        where.append(f"pid {first['pid']}")
    return who + (f" ({', '.join(where)})" if where else "")


def _spared(job: Job, candidates: pl.DataFrame) -> bool:
    """Whether the logs show a rank that hit no NCCL error: then a host's set-up that failed
    one process (its /dev/shm full as it grew a segment) is that process's failure, not every
    process's alike (ai-dynamo/dynamo#1408: rank 1 alone could not extend /dev/shm/nccl-*)."""
    failed = set(candidates.get_column("rank").drop_nulls().to_list())
    return bool(failed) and bool(set(job.ranks_seen) - failed)


def _ranked_by_the_launcher(
    job: Job, candidates: pl.DataFrame
) -> tuple[pl.DataFrame, UnstoppedWorker | ListedFailure | None]:
    """The errors of one process no line ties to a rank, where the launcher reports one worker
    alone failed (on one node, whose local ranks are the global ones): that worker's
    (zai-org/ChatGLM3#1174: an unprefixed `DistBackendError ... Failed to find reverse path`,
    then the agent's `failed (exitcode: 1) local_rank: 0`)."""
    # (one row: the same error said several times in one file may be several processes',
    # deocclusion#45's interleaved tracebacks of four workers under an agent naming one)
    anonymous = candidates.get_column("rank").null_count() == candidates.height
    if not anonymous or candidates.height != 1:
        return candidates, None
    failed = unstopped_worker(job) or one_reported_failure(job)
    if failed is None:
        return candidates, None
    ranked = candidates.with_columns(
        pl.lit(failed.rank, dtype=pl.Int32).alias("rank"),
        pl.lit(f"rank {failed.rank}").alias("who"),
    )
    return ranked, failed


def _root_cause(
    job: Job,
    rows: pl.DataFrame,
    candidates: pl.DataFrame,
    reported: UnstoppedWorker | ListedFailure | None = None,
) -> Finding:
    first = rows.row(0, named=True)
    kind = _class_of(first)
    message = (first["exc_message"] or first["error_code"] or "").strip()
    peer = f" with peer {first['peer']}" if first["peer"] else ""
    library = LIBRARY_NAMES.get(str(first["family"]), "NCCL")
    # (a library named by its owner reads as the error's owner: "the first error of vLLM's ...")
    error = f"error of {library}" if "'s " in library else f"{library} error"
    summary = f"{_describe_process(first)} hit the first {error}{peer}: `{message[:200]}`."
    others = candidates.filter(pl.col("who") != first["who"])
    peer_gone = _matches(str(first["what"]), PEER_GONE)
    if peer_gone:
        summary += (
            " The endpoint it sent to no longer existed: the peer's process was gone (killed, "
            "crashed or exited), so the cause is on the peer's host, not on this rank."
        )
    elif library == "NCCL":  # (HCCL's and oneCCL's lines say what failed in their own words)
        summary += _class_words(first, kind)
    if not others.is_empty():
        summary += (
            f" {others.get_column('who').n_unique()} other process"
            f"{'es' if others.get_column('who').n_unique() > 1 else ''} failed after it."
        )
    shown = rows.select("file", "line", "text", "rank")
    if reported is not None:
        summary += no_line_ties(reported)
        launcher = reported.stopped.head(1).select(shown.columns)
        shown = pl.concat([shown, launcher], how="vertical_relaxed")
    timed = candidates.get_column("timestamp").drop_nulls().len() > 1
    alone = others.is_empty()
    evidence, total = evidence_from(shown)
    fix = _fix(first, kind) if library == "NCCL" else LIBRARY_FIXES[library]
    return Finding(
        kind="nccl_error",
        severity="error",
        part="explanation",
        summary=summary,
        fix=fix,
        ranks=[first["rank"]] if first["rank"] is not None else [],
        # the host's set-up: no rank left the path; nor does one process's failed system or
        # network call say which side of its link is bad when no other process is in the logs
        # (NVIDIA/nccl#697: rank 0's `transport/net.cc:515 -> 2` alone, NCCL striping over
        # every interface, docker bridges included)
        blames_nobody=(kind == "environment" and not _spared(job, candidates))
        or (kind in ("system", "fabric") and len(job.ranks_seen) < 2)
        or peer_gone
        # an address no other host can route to was the peer's to give: the interfaces' set-up
        or re.search(LINK_LOCAL, str(first["what"])) is not None,
        evidence=evidence,
        evidence_total=total,
        confidence="medium"
        if reported is not None or kind == "peer" or not (timed or alone)
        else "high",
        order=_order(rows),
        timestamp=earliest_time(rows),
        **_position(job, rows),
        details={
            "class": kind,
            "host_part": _host_part(first) if kind == "environment" else None,
            "library": library,
            "host": first["host"],
            "pid": first["pid"],
            "peer": first["peer"],
            "error_code": first["error_code"],
            "nccl_version": first["nccl_version"],
            "result": first["result"],
            "subsystem": first["subsystem"],
            "sizes_disagree": kind == "usage" and _matches(str(first["what"]), SIZES_DISAGREE),
        },
    )


# What a watchdog prints when a collective timed out or its communicator was aborted: after
# it, NCCL tears the communicators down and its proxies and service threads fail on closed
# sockets (`Failed to execute operation Close`, `Could not receive type from localRank 1`).
TIMED_OUT = ("collective_timeout", "store_timeout", "heartbeat_timeout")


# NCCL was closing the communicator already: a proxy failing to run a Close or Deregister, or
# the network plugin's close of a connection with requests still in flight (aws/aws-k8s-tester
# PR #524, a passing run: `NET/OFI Attempt to call recv_close with outstanding requests!`).
CLOSING = (
    r"Failed to execute operation (?:Close|Deregister)"
    r"|\b(?:recv|send)_close with outstanding requests"
)


def _after_a_timeout(job: Job, errors: pl.DataFrame) -> pl.DataFrame:
    """The NCCL errors of a job that had already hung: printed after a watchdog timeout in the
    same file, dated later than the first timeout anywhere (by more than clocks disagree), or
    failing to close a communicator. They are its teardown, not its cause: a cause comes
    before the others give up waiting. The other errors of a thread that failed to close are
    that teardown too (deepseek-ai/DeepEP#41, after every test had passed: the proxy's service
    thread's `Accept failed Resource temporarily unavailable`, then its failed Close)."""
    timeouts = job.events.filter(pl.col("event").is_in(TIMED_OUT))
    closing = pl.col("what").str.contains(CLOSING) | pl.col("failure").str.contains(CLOSING)
    thread = ["file", "pid", "tid"]
    closers = errors.filter(closing & pl.col("pid").is_not_null() & pl.col("tid").is_not_null())
    closing |= pl.struct(thread).is_in(closers.select(pl.struct(thread)).to_series().implode())
    if timeouts.is_empty():
        return errors.filter(closing)
    first_in_file = timeouts.group_by("file").agg(pl.col("line").min().alias("_timed_out_at"))
    first_time = timeouts.get_column("timestamp").min()
    later = pl.col("line") > pl.col("_timed_out_at")
    if first_time is not None:
        later |= (pl.col("timestamp") - pl.lit(first_time)).dt.total_seconds() > SAME_MOMENT_SECONDS
    return (
        errors.join(first_in_file, on="file", how="left")
        .filter((later.fill_null(False)) | closing)
        .drop("_timed_out_at")
    )


def _went_on(errors: pl.DataFrame, nccl: pl.DataFrame) -> pl.DataFrame:
    """The errors after which their process set up a communicator (`Init START` or `Init
    COMPLETE` below them in the same file): the failed call did not stop it. NCCL goes on
    when a network plugin fails to load (awslabs/awsome-distributed-ai#386: `NET/OFI
    aws-ofi-nccl initialization failed` on all 16 workers, then `Using network Socket` and
    `Init START`, and the epochs advanced)."""
    process = ["file", "host", "pid"]
    inits = (
        nccl.filter((pl.col("event") == "nccl_init") & pl.col("pid").is_not_null())
        .group_by(process)
        .agg(pl.col("line").max().alias("_last_init"))
    )
    return (
        errors.filter(pl.col("pid").is_not_null())
        .join(inits, on=process, how="inner", nulls_equal=True)
        .filter(pl.col("_last_init") > pl.col("line"))
        .drop("_last_init")
    )


def _processes_failing(job: Job, rows: pl.DataFrame) -> tuple[pl.DataFrame, int, list[int], str]:
    """`rows` placed in the run, how many processes they come from, their ranks, and the first
    error's words."""
    rows = placed_keys(job, rows)
    processes = rows.get_column("who").n_unique()
    ranks = sorted(rows.get_column("rank").drop_nulls().unique().to_list())
    first = _said_first(rows.sort("file", "line"))
    message = (first["exc_message"] or first["error_code"] or "").strip()
    return rows, processes, ranks, message


def _said_first(rows: pl.DataFrame) -> dict[str, object]:
    """The first row a WARN or PyTorch printed: a return-code chain says less."""
    said = rows.filter(pl.col("_from_chain").is_null())
    return (said if not said.is_empty() else rows).row(0, named=True)


def _survived(job: Job, rows: pl.DataFrame) -> Finding:
    rows, processes, ranks, message = _processes_failing(job, rows)
    who = f"{processes} process{'es' if processes > 1 else ''}"
    summary = (
        f"NCCL reported a failure in {who} (`{clipped(message)}` first), and the same "
        f"{'processes' if processes > 1 else 'process'} went on to set up "
        f"{'their communicators' if processes > 1 else 'its communicator'}: it did not stop "
        "the job."
    )
    details = {"processes": processes, "went_on": True}
    return _consequence(rows, "warning", summary, FIX_WENT_ON, ranks, details)


def _teardown(job: Job, rows: pl.DataFrame) -> Finding:
    rows, processes, ranks, message = _processes_failing(job, rows)
    hung = not job.events.filter(pl.col("event").is_in(TIMED_OUT)).is_empty()
    who = f"{processes} process{'es' if processes > 1 else ''}"
    summary = (
        f"{who} then failed in NCCL (`{clipped(message)}` first), after the watchdog had "
        "reported a timeout in the same log: communicators being torn down once the job was "
        "already hung, not its cause."
        if hung
        else f"{who} failed in NCCL while closing a communicator (`{clipped(message)}` first): "
        "its teardown, not a failure of the run."
    )
    fix = FIX_TEARDOWN if hung else FIX_CLOSING
    details = {"processes": processes, "after_timeout": hung}
    return _consequence(rows, "warning", summary, fix, ranks, details)


def _consequence(
    rows: pl.DataFrame,
    severity: Severity,
    summary: str,
    fix: str,
    ranks: list[int],
    details: dict[str, object],
) -> Finding:
    """An NCCL finding that follows from something else (a teardown, a cascade, an error its
    process went past): each failing process's first error line as evidence."""
    evidence, total = _first_of_each_process(rows)
    return Finding(
        kind="nccl_error",
        severity=severity,
        part="consequence",
        summary=summary,
        fix=fix,
        ranks=ranks,
        evidence=evidence,
        evidence_total=total,
        confidence="medium",
        order=_order(rows),
        timestamp=earliest_time(rows),
        details=details,
    )


def _first_of_each_process(rows: pl.DataFrame) -> tuple[list[Evidence], int]:
    """Evidence: each failing process's first error line."""
    return evidence_from(
        rows.unique(subset=["who"], keep="first", maintain_order=True).select(
            "file", "line", "text", "rank"
        )
    )


def _cascade(rows: pl.DataFrame, first: dict[str, object]) -> Finding:
    ranks = sorted(rows.get_column("rank").drop_nulls().unique().to_list())
    processes = rows.get_column("who").n_unique()
    unranked = processes - len(ranks)
    who = rank_list(ranks).capitalize() if ranks else ""
    if unranked:
        who += (" and " if who else "") + f"{unranked} process{'es' if unranked > 1 else ''}"
        who += " of unknown rank"
    about_peer = rows.get_column("about_peer").sum()
    before = _describe_process(first, start=False)
    if not about_peer:
        # no report of a lost peer: failures of their own, which nothing says the first caused
        # (aws/aws-ofi-nccl#24: rank 23's `Couldn't open AV` after rank 31's failed NIC lookup)
        summary = (
            f"{who} also failed in NCCL, with errors of {'its' if processes == 1 else 'their'} "
            f"own (none reports a peer that went away): a failure beside {before}'s, not "
            "necessarily caused by it."
        )
        return _consequence(rows, "error", summary, FIX_OWN, ranks, {"processes": processes})
    summary = (
        f"{who} then failed in NCCL too ({about_peer} of their {rows.height} errors report a "
        f"peer that went away): the cascade after {before}'s error."
    )
    return _consequence(rows, "error", summary, FIX_CASCADE, ranks, {"processes": processes})


def _checked_in_twice(rows: pl.DataFrame) -> Finding:
    """The bootstrap root heard from one rank twice: that rank was started twice, or its
    process restarted while the communicator was being set up."""
    first = rows.sort("file", "line").row(0, named=True)
    twice = sorted(rows.get_column("peer_rank").drop_nulls().unique().to_list())
    of = f" of {first['nranks']}" if first["nranks"] is not None else ""
    who = rank_list(twice)
    root = "NCCL's bootstrap root"
    if first["host"]:
        root += f" ({_describe_process(first, start=False)})"
    summary = (
        f"{root} heard from {who}{of} twice: two processes were started as "
        f"{who} (the same RANK or --node_rank given twice, or another job on the same "
        f"MASTER_ADDR:MASTER_PORT), or {'its' if len(twice) == 1 else 'their'} process "
        "restarted and joined a communicator still being set up. The communicator cannot "
        "form: the other ranks wait in its init."
    )
    evidence, total = evidence_from(
        rows.sort("file", "line").select("file", "line", "text", "rank")
    )
    return Finding(
        kind="nccl_error",
        severity="error",
        part="explanation",
        summary=summary,
        fix=FIX_CHECKED_IN,
        ranks=twice,
        evidence=evidence,
        evidence_total=total,
        order=-1.0,  # communicator set-up, before any step
        timestamp=earliest_time(rows),
        details={
            "class": "bootstrap",
            "checked_in_twice": twice,
            "nranks": first["nranks"],
            "host": first["host"],
            "pid": first["pid"],
        },
    )


def _rank_past_the_end(rows: pl.DataFrame) -> Finding:
    """NCCL refused a rank at or past the communicator's size: the launch started more processes
    than the world has, or numbered them past it. No rank of the world is at fault."""
    rows = rows.sort("file", "line")
    asked = sorted(rows.get_column("comm_rank").drop_nulls().unique().to_list())
    sizes = sorted(rows.get_column("nranks").drop_nulls().unique().to_list())
    world = f" of a world of {sizes[0]}" if len(sizes) == 1 else ""
    valid = f" (its ranks run from 0 to {sizes[0] - 1})" if len(sizes) == 1 and sizes[0] else ""
    said = str(rows.item(0, "exc_message")).strip()
    summary = (
        f"NCCL refused {rank_list(asked) if asked else 'a rank'}{world}{valid}: `{said}`. "
        "More processes were started than the world size says, or their ranks were numbered "
        "past it; the communicator cannot form, and the other ranks wait in its init."
    )
    evidence, total = evidence_from(rows.select("file", "line", "text", "rank"))
    return Finding(
        kind="nccl_error",
        severity="error",
        part="explanation",
        summary=summary,
        fix=FIX_INVALID_RANK,
        ranks=[],
        blames_nobody=True,  # the launch's numbering, not a rank of the world
        evidence=evidence,
        evidence_total=total,
        order=-1.0,  # communicator set-up, before any step
        timestamp=earliest_time(rows),
        details={"class": "invalid_rank", "requested": asked, "nranks": sizes},
    )


def _after_nccl_oom(errors: pl.DataFrame, nccl: pl.DataFrame) -> pl.DataFrame:
    """The errors of processes whose NCCL ran out of GPU memory, from that line on."""
    # a process is its host and pid, or what a prefix tells of it (`192.168.1.51: `, no pid)
    ooms = (
        nccl.filter(
            (pl.col("event") == "oom")
            & (pl.col("host").is_not_null() | pl.col("pid").is_not_null())
        )
        .group_by("file", "host", "pid")
        .agg(pl.col("line").min().alias("oom_line"))
    )
    # PyTorch's error quoting NCCL's failed allocation is the oom's own line (no process
    # identity needed)
    quoting = nccl.filter(pl.col("event") == "oom").select("file", "line")
    return pl.concat(
        [
            errors.join(ooms, on=["file", "host", "pid"], nulls_equal=True)
            .filter(pl.col("line") >= pl.col("oom_line"))
            .drop("oom_line"),
            errors.join(quoting, on=["file", "line"]),
        ]
    ).unique(["file", "line"], maintain_order=True)


def _explained_by_oom(job: Job, rows: pl.DataFrame) -> Finding:
    rows = placed_keys(job, rows)
    ranks = sorted(rows.get_column("rank").drop_nulls().unique().to_list())
    processes = rows.get_column("who").n_unique()
    # (these are the errors of the processes that ran out themselves, from that line on: no
    # other process's failure; NVIDIA/TensorRT-LLM#1670, one process's OOM and its 7 WARNs)
    same = "The same process" if processes == 1 else "The same processes"
    who = rank_list(ranks).capitalize() if ranks else same
    evidence, total = evidence_from(
        rows.sort("file", "line").select("file", "line", "text", "rank")
    )
    return Finding(
        kind="nccl_error",
        severity="error",
        part="consequence",
        summary=(
            f"{who} then failed in NCCL ({rows.height} error line(s)): NCCL could not allocate "
            "GPU memory for its buffers (see the oom finding)."
        ),
        fix=FIX_AFTER_OOM,
        ranks=ranks,
        evidence=evidence,
        evidence_total=total,
        confidence="medium",
        order=_order(rows),
        timestamp=earliest_time(rows),
        details={"processes": processes, "after_oom": True},
    )


def _explained_by_duplicate(rows: pl.DataFrame) -> Finding:
    ranks = sorted(rows.get_column("rank").drop_nulls().unique().to_list())
    codes = sorted(rows.get_column("error_code").drop_nulls().unique().to_list())
    who = rank_list(ranks).capitalize() if ranks else "The ranks"
    summary = (
        f"{who} failed with NCCL error `{', '.join(codes) or 'invalid usage'}`: NCCL refused "
        "to create a communicator because ranks share a GPU."
    )
    evidence, total = evidence_from(
        rows.sort("file", "line").select("file", "line", "text", "rank")
    )
    ops = rows.get_column("op").drop_nulls()
    return Finding(
        kind="nccl_error",
        severity="error",
        part="consequence",
        summary=summary,
        fix=FIX_DUPLICATE,
        ranks=ranks,
        op=ops.item(0) if len(ops) else None,
        evidence=evidence,
        evidence_total=total,
        order=-1.0,
        timestamp=earliest_time(rows),
        details={"error_code": codes},
    )


def _position(job: Job, rows: pl.DataFrame) -> dict[str, object]:
    """The step and stage the error came in (after its rank's last mark), when marks say."""
    keys = rows.get_column("key").drop_nulls()
    if keys.is_empty() or job.progress is None:
        return {}
    key = job.progress.key_of(int(keys.min()))
    epoch = key["epoch"]
    return {"step": key["step"], "stage": key["stage"], "epoch": None if epoch == -1 else epoch}


def _order(rows: pl.DataFrame) -> float | None:
    """After the last stage mark its rank printed before the error, when there is one."""
    keys = rows.get_column("key").drop_nulls()
    return None if keys.is_empty() else float(keys.min()) + AFTER_MARK


def _versions(nccl: pl.DataFrame, job: Job) -> list[Finding]:
    """Different NCCL versions (x.y.z) stated by different ranks or processes: context, or the
    explanation where the releases differ (x.y) and nothing in the logs failed otherwise
    (NVIDIA/nccl#1267: one node loads 2.14.3, the others 2.19.3, and the posted logs hold only
    their init lines; the reporter's fix was one version on every node)."""
    stated = nccl.filter(pl.col("nccl_version").is_not_null()).with_columns(
        pl.col("nccl_version").str.extract(r"^(\d+\.\d+\.\d+)", 1).alias("version"),
        _who().alias("who"),
    )
    stated = stated.filter(pl.col("version").is_not_null())
    if stated.get_column("version").n_unique() < 2:
        return []
    per_version = (
        stated.sort("file", "line")
        .group_by("version", maintain_order=True)
        .agg(
            pl.col("rank").drop_nulls().unique().sort().alias("ranks"),
            pl.col("who").n_unique().alias("processes"),
            pl.struct("file", "line", "text", "rank").first().alias("first"),
        )
        .sort("version")
    )
    parts = []
    evidence = []
    for row in per_version.iter_rows(named=True):
        ranks = row["ranks"]
        on = rank_list(ranks) if ranks else f"{row['processes']} process(es) of unknown rank"
        parts.append(f"{row['version']} on {on}")
        first = row["first"]
        evidence.append(Evidence(first["file"], first["line"], first["text"], first["rank"]))
    ranks = sorted({rank for row in per_version.iter_rows(named=True) for rank in row["ranks"]})
    releases = stated.get_column("version").str.extract(r"^(\d+\.\d+)", 1).n_unique()
    alone = releases > 1 and _nothing_else_failed(job)
    summary = (
        "The ranks do not run the same NCCL version ("
        + "; ".join(parts)
        + "): mixed NCCL builds can fail or hang at communicator init."
    )
    return [
        _set_up_apart(
            summary,
            FIX_VERSIONS,
            alone,
            cause="the mix",
            ranks=ranks,
            evidence=(evidence, stated.height),
            details={"versions": per_version.get_column("version").to_list()},
        )
    ]


FIX_NETWORKS = (
    "Give every node the same NCCL network set-up: the same network plugin or none (the "
    "`libnccl-net*.so` of HPC-X or aws-ofi-nccl on every node's library path, `NCCL_NET_PLUGIN` "
    "alike everywhere), the same transport (an InfiniBand device on every node, or "
    "`NCCL_IB_DISABLE=1` on all of them), and one container image. `NCCL_DEBUG=INFO "
    "NCCL_DEBUG_SUBSYS=INIT,NET` prints each node's choice."
)


def _networks(nccl: pl.DataFrame, job: Job) -> list[Finding]:
    """Hosts whose NCCL set up the network differently: an external network plugin on some,
    NCCL's internal one on others, or another transport (`Using network IB` beside `Using
    network Socket`). Processes on such nodes do not connect, or hang in their first
    collective (NVIDIA/nccl#1634: HGX-H100-11 finds no `libnccl-net.so` while HGX-H100-04
    loads HPC-X's; the pair hangs in nccl-tests and nothing fails). Context, or the
    explanation where nothing in the logs failed otherwise."""
    chosen = nccl.filter(
        (pl.col("event") == "nccl_network") & pl.col("host").is_not_null()
    ).with_columns(
        pl.when(pl.col("device").str.starts_with("network "))
        .then(pl.lit("transport"))
        .otherwise(pl.lit("plugin"))
        .alias("facet")
    )
    if chosen.is_empty():
        return []
    per_host = chosen.group_by("facet", "host").agg(
        pl.col("device").unique().alias("choices"), pl.col("device").first().alias("choice")
    )
    # a facet every host states one choice for, the hosts disagreeing on it
    split = (
        per_host.group_by("facet")
        .agg(
            (pl.col("choices").list.len() == 1).all().alias("single"),
            pl.col("choice").n_unique().alias("kinds"),
        )
        .filter(pl.col("single") & (pl.col("kinds") > 1))
        .get_column("facet")
    )
    if split.is_empty():
        return []
    facet = "plugin" if "plugin" in split.to_list() else split.item(0)
    apart = (
        per_host.filter(pl.col("facet") == facet)
        .group_by("choice")
        .agg(pl.col("host").sort().alias("hosts"))
        .sort("choice")
    )
    parts = [
        f"{_network_said(row['choice'])} on {', '.join(row['hosts'][:3])}"
        + (f" (+{len(row['hosts']) - 3})" if len(row["hosts"]) > 3 else "")
        for row in apart.iter_rows(named=True)
    ]
    cited = (
        chosen.filter(pl.col("facet") == facet)
        .sort("file", "line")
        .unique(subset=["device"], keep="first", maintain_order=True)
    )
    alone = _nothing_else_failed(job)
    summary = (
        "The nodes set up NCCL's network differently ("
        + "; ".join(parts)
        + "): processes on nodes set up apart fail to connect or hang in their first collective."
    )
    return [
        _set_up_apart(
            summary,
            FIX_NETWORKS,
            alone,
            cause="the difference",
            ranks=sorted(chosen.get_column("rank").drop_nulls().unique().to_list()),
            evidence=evidence_from(cited.select("file", "line", "text", "rank")),
            details={"networks": apart.get_column("choice").to_list()},
            blames_nobody=True,
        )
    ]


def _set_up_apart(
    summary: str,
    fix: str,
    alone: bool,
    *,
    cause: str,
    ranks: list[int],
    evidence: tuple[list[Evidence], int],
    details: dict[str, object],
    blames_nobody: bool = False,
) -> Finding:
    """Processes whose NCCL was set up differently (its version, its network): the
    explanation, as a guess, where nothing else failed and no communicator got past its init
    (`alone`: `cause` is then said to be the likeliest); context beside a failure."""
    lines, total = evidence
    if alone:
        summary += f" Nothing else in these logs failed: {cause} is the likeliest cause."
    return Finding(
        kind="nccl_error",
        severity="error" if alone else "warning",
        part="explanation" if alone else "context",
        summary=summary,
        fix=fix,
        ranks=ranks,
        evidence=lines,
        evidence_total=total,
        confidence="low" if alone else "high",
        blames_nobody=blames_nobody,
        details=details,
    )


def _nothing_else_failed(job: Job) -> bool:
    return job.nothing_failed() and not _past_init(job)


def _network_said(choice: str) -> str:
    if choice == "internal plugin":
        return "NCCL's internal network plugin"
    if choice.startswith("plugin "):
        return f"the network plugin `{choice.removeprefix('plugin ')}`"
    return f"the {choice.removeprefix('network ')} transport"


def _past_init(job: Job) -> bool:
    """Whether the logs show the job got past communicator init: an init NCCL reports
    complete (a record with no `Init START` phase), or progress."""
    inits = job.events.filter(pl.col("event") == "nccl_init")
    started_only = pl.col("extra").fill_null("").str.contains('"phase":"start"', literal=True)
    progressed = job.made_progress()
    return progressed or not inits.filter(~started_only).is_empty()


RULE = Rule(kind="nccl_error", check=check, specificity=8)
