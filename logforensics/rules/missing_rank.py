"""Ranks the logs say should exist but that left no log, ranks whose log simply ends, and
ranks that never finished creating the NCCL world communicator.

A rank with no log at all is usually an incomplete upload, so that is a warning that limits
the analysis. The world size comes from the events that state it, else from the size of
NCCL's world communicator (the largest `nranks` of the init records). A rank whose log ends
with nothing after its last stage mark, while the other ranks carried on past that point, is
a process that vanished (OOM killer, SIGKILL, node loss) and is the one the others wait for.

NCCL prints `Init START` and `Init COMPLETE` for each communicator (2.18.3+; older versions
only COMPLETE). A rank of the world communicator that began its init, or printed NCCL lines,
but never completed it while other ranks did is stuck in (or died during) communicator
creation: that is a cause when the rank printed no NCCL error or warning of its own, and
context for the rank's own error otherwise.
"""

from __future__ import annotations

import polars as pl

from logforensics.desync import per_rank_timeouts
from logforensics.findings import (
    Confidence,
    Evidence,
    Finding,
    differences_masked,
    evidence_from,
    exception_text,
)
from logforensics.gloo_interface import wrong_interface
from logforensics.job import Job
from logforensics.placement import earliest_time
from logforensics.plausible import MAX_LISTED_RANKS
from logforensics.registry import Rule
from logforensics.setup_stall import logs_end_there
from logforensics.stopped_workers import EXIT_REPORTS, child_failed_error
from logforensics.store_barrier import short_at_barrier
from logforensics.text import clipped, describe_key, duration, rank_list
from parsers.nccl import ABOUT_A_PEER
from parsers.progress_bars import bar_name, last_snapshot
from parsers.rendezvous import DUMP_FLAG_UNREAD, UNRESOLVED_WHAT

NO_LOG_FIX = (
    "Collect the logs of every rank (all nodes' torchrun --log-dir trees or per-rank files); if "
    "these ranks never started, check the launch: --nnodes, --nproc_per_node and the host list."
)
VANISHED_FIX = (
    "The process ended without a word: look in the node's kernel log (`dmesg`, "
    "`journalctl -k`) for the OOM killer, in the scheduler's log for a kill or preemption, and "
    "in torchrun's summary for the exit code or signal of this rank."
)


INIT_STUCK_FIX = (
    "These ranks never finished `ncclCommInitRank` for the world communicator. Look at what "
    "they printed last (a hang in bootstrap points at the network: NCCL_SOCKET_IFNAME, "
    "firewalls between nodes, the MASTER_ADDR host), and at their own errors if they have any; "
    "`NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET` shows how far init got."
)
INIT_PHASES = ("start", "complete")
NCCL_PROBLEMS = ("nccl_error", "nccl_warn", "duplicate_gpu", "nccl_unwind", "nccl_mismatch")


def check(job: Job) -> list[Finding]:
    claimed = _claimed_twice(job)
    absent = claimed or _absent(job)
    return (
        (absent or _never_formed(job))
        + _vanished(job)
        + _init_never_completed(job)
        + (
            _store_unreachable(job)
            or _store_wait_timed_out(job)
            or _closed_at_first_join(job)
            or _agent_left_joining(job)
        )
        + _mesh_never_formed(job)
        + (short_at_barrier(job, default_group=True) if not claimed else [])
        + (_unreachable_nodes(job) or _not_launched(job))
        + _not_started_by_a_launcher(job)
        + _rendezvous_lost(job)
        + _store_without_libuv(job)
    )


UNREACHABLE_FIX = (
    "The launching node could not open ssh to that host, so nothing was started there. Check "
    "that the host is up and its name or address in the hostfile is right, that it accepts ssh "
    "from the launching node without a password (`ssh <host> hostname` from there), and the "
    "port and firewall in between; in containers, that sshd runs and listens where the hostfile "
    "says. For a single node, drop the hostfile."
)


def _unreachable_nodes(job: Job) -> list[Finding]:
    """A launcher that could not reach a node over ssh before it started anything there
    (DeepSpeed's runner checking its hostfile: BAAI-WuDao/EVA#3, hpcac/2023-APAC-HPC-AI#1): the
    job never formed, and no rank is to blame."""
    failures = job.events.filter(pl.col("event") == "node_unreachable").sort("file", "line")
    if failures.is_empty() or not _went_on(job).is_empty():
        return []
    hosts = failures.get_column("host").drop_nulls().unique(maintain_order=True).to_list()
    reasons = failures.get_column("exc_message").drop_nulls().unique(maintain_order=True)
    why = f" (`{clipped(reasons[0])}`)" if len(reasons) else ""
    summary = (
        f"The launcher could not reach {', '.join(hosts)} over ssh{why}, so it started nothing "
        "there and the job never formed. No rank is to blame."
    )
    details: dict[str, object] = {"phase": "launch", "unreachable": hosts}
    return [_start_up_failure(failures, summary, UNREACHABLE_FIX, "high", details)]


NOT_LAUNCHED_FIX = (
    "The launcher found no executable it could run at that path on that node. Install the same "
    "environment at the same path on every node (the conda env or venv, the container image), "
    "or keep it on a filesystem all nodes share, and pass the interpreter's full path; "
    "`mpirun --host <node> which python` shows what a node resolves. The shells that `srun`, "
    "`ssh` and pdsh start are not interactive and do not read `~/.bashrc`: load the module or "
    "activate the environment in the job script itself. For Open MPI's own "
    "`orted`, put its install on the PATH of a non-interactive shell on every node, or run "
    "`mpirun --prefix <its install>`."
)


def _not_launched(job: Job) -> list[Finding]:
    """A launcher could not start a process: the executable was missing (or not runnable) on
    its node, so the job never started (mpi4py/mpi4py#573: the conda env's python absent on
    gpu2; CSCfi/pytorch-ddp-examples#1: no `torchrun` in the module srun ran). Open MPI names
    the first rank it failed for; others may have failed too."""
    failures = job.events.filter(pl.col("event") == "launch_failed").sort("file", "line")
    # a launch that failed before the job went on in the same file was retried or was another's
    failures = _before_going_on(job, failures)
    if failures.is_empty():
        return []
    said = failures.filter(pl.col("exc_message").is_not_null())
    first = (said if not said.is_empty() else failures).row(0, named=True)
    rank, host, executable = first["rank"], first["host"], first["exc_message"]
    who = f"rank {rank}" if rank is not None else "a process"
    on = f" on {host}" if host else ""
    if executable:
        summary = (
            f"The launcher could not start {who}{on}: it found no executable "
            f"`{clipped(executable)}` it could run there, so the job never started (the first "
            "process it failed for; others may have failed the same way)."
        )
    else:
        summary = (
            "The launcher could not start its daemons on one or more nodes, so the job never "
            "started there."
        )
    details = {"not_launched": True, "host": host, "executable": executable}
    ranks = [rank] if rank is not None else []
    return [_start_up_failure(failures, summary, NOT_LAUNCHED_FIX, "high", details, ranks)]


TWICE_FIX = (
    "Two processes started as the same global rank, so the ranks above them never joined and "
    "the group waits for them forever. Check how each node learns its rank offset: NODE_RANK "
    "(or --node_rank) set on every node, SLURM's task count per node (`--ntasks-per-node` "
    "equal to the GPUs per node when the framework reads SLURM's variables), a hostfile that "
    "lists every node once."
)


# How a line's rank was guessed from the rest of its file, not stated by the line or its place
GUESSED_FOR_A_FILE = ("file_content",)


def _claimed_twice(job: Job) -> list[Finding]:
    """Processes that announce their global rank and world size (Lightning's `GLOBAL_RANK: 1,
    MEMBER: 2/8`): ranks announced twice while others of the world never are, two nodes
    that took the same ranks (Lightning-AI/pytorch-lightning#4389)."""
    # the rank each line claims, as it states it (an `srun -l` task id in front may be a
    # node's, NVIDIA-NeMo/Speech#5819)
    stated = pl.col("text").str.extract(r"GLOBAL_RANK: (\d+)", 1).cast(pl.Int32, strict=False)
    # a claim is said once per process (a barrier's waits repeat: they are no claims)
    once = pl.col("text").str.contains("Waiting in store based barrier", literal=True)
    # nor is a progress line that names its rank and world (`Epoch 1, Rank 0, world_size 3:`
    # on every redraw of a tqdm bar, sample_logs/tee_eval_one_rank)
    is_progress = (pl.col("event") == "progress_bar") | (pl.col("family") == "progress")
    progress = job.events.filter(is_progress).select("file", "line")
    # a claim is a process saying who it is: a rank guessed for the lines of a file from the
    # one rank its other lines name is no claim (tianweiy/CenterPoint#224: two workers'
    # `WORLD_SIZE:2` in one console, both given rank 0 for the watchdog line above them)
    guessed = pl.col("rank_from").is_in(GUESSED_FOR_A_FILE).fill_null(False)
    claims = (
        job.events.filter((pl.col("event") == "world_size") & ~once)
        .join(progress, on=["file", "line"], how="anti")
        .with_columns(pl.coalesce(stated, pl.when(~guessed).then(pl.col("rank"))).alias("rank"))
    )
    claims = claims.filter(pl.col("rank").is_not_null())
    if claims.is_empty():
        return []
    world = int(claims.get_column("world_size").max())
    if world > MAX_LISTED_RANKS:  # a number from the logs: checked before any range is made
        return []
    # twice in one stream: a process prints it once per stream (torchrun --tee copies a line
    # into the console and the rank's own file, which is not a second process)
    # Claims from one host are one node's: its workers restarted and announced their ranks
    # again (a Ray Train worker group restarted after a failure, new pids on the same node).
    # A second process says it in the same words: one process may state its world twice in
    # two (pytorch/examples#772: the command `... --world_size=2 --rank=0` echoed, then the
    # script's own `using world_size 2`)
    shape = differences_masked(pl.col("text")).alias("_shape")
    per_stream = (
        claims.group_by("file", "rank", shape)
        .agg(
            pl.len().alias("claims"),
            pl.col("host").null_count().alias("_unhosted"),
            pl.col("host").n_unique().alias("_hosts"),
        )
        .sort("claims", descending=True)
        .group_by("file", "rank", maintain_order=True)
        .first()
    )
    two_nodes = (pl.col("_unhosted") > 0) | (pl.col("_hosts") > 1)
    twice = sorted(
        per_stream.filter((pl.col("claims") > 1) & two_nodes).get_column("rank").unique().to_list()
    )
    # the ranks above the doubled ones: a node that took ranks already taken took those below
    # them too (each node's ranks run on from its offset), whether the logs show them or not
    unclaimed = set(range(world)) - set(claims.get_column("rank").to_list())
    never = sorted(rank for rank in unclaimed if twice and rank > max(twice))
    if not twice or not never:
        return []
    evidence, total = evidence_from(
        claims.filter(pl.col("rank").is_in(twice))
        .sort("file", "line")
        .select("file", "line", "text", "rank")
    )
    return [
        Finding(
            kind="missing_rank",
            severity="error",
            part="explanation",
            summary=(
                f"{rank_list(twice).capitalize()} {'was' if len(twice) == 1 else 'were'} "
                f"announced by two processes each, while {rank_list(never)} of the world of "
                f"{world} never {'was' if len(never) == 1 else 'were'}: two nodes took the "
                "same global ranks, and the group waits for ranks nobody runs."
            ),
            fix=TWICE_FIX,
            # the ranks nobody runs, as for any absent rank: the group waits for them (the
            # launch gave out the ranks wrongly; the summary and fix say so)
            ranks=never,
            evidence=evidence,
            evidence_total=total,
            order=-1.0,
            confidence="high",
            scope="job",
            details={"claimed_twice": twice, "never_claimed": never, "world_size": world},
        )
    ]


# An exception that fails the job's start-up because a process could not reach the rendezvous
# store: raised in the store's or rendezvous' code, or one of their own error types.
STARTUP_FRAME = r"rendezvous|TCPStore|c10d_rendezvous|_create_c10d_store|init_process_group"
# (not RendezvousClosedError: another agent closed the rendezvous as it stopped, so the job
# had formed and is over; pytorch/pytorch#91943 raises it at the re-rendezvous after a restart)
STARTUP_TYPE = r"DistNetworkError|RendezvousConnectionError"
# c10d's own words for the store's server socket, under any exception type or frame (torch
# before DistNetworkError raised a RuntimeError; Meituan-AutoML/MobileVLM#60 quotes it alone)
STORE_SOCKET = (
    r"The server socket has failed to (?:listen|bind)"
    # torch_xla's mesh service, its processes' rendezvous at set-up (pytorch/xla#2341: `Exception
    # in device=TPU:6: .../mesh_service.cc:331 : Failed to retrieve mesh configuration:
    # Connection reset by peer (14)` on a Kaggle TPU, before any step)
    r"|Failed to retrieve mesh configuration"
    # the port taken, in the words of torch's own process-group code, where it says so
    # (facebookresearch/maskrcnn-benchmark#241, torch 1.0's THD: `RuntimeError: Address already
    # in use at /opt/conda/.../torch/lib/THD/process_group/General.cpp:20`, a second launch)
    r"|Address already in use at \S*(?:/THD/|/c10d/|csrc/distributed/)"
)
STARTUP_WORDS = (
    r"(?i)not known|host not found|no route to host|connection refused|failed to connect"
    r"|timed out .*connect|address already in use|failed to (?:bind|listen)"
)
UNRESOLVED_FIX = (
    "The store's host name did not resolve where this ran: put it in DNS or in every node's "
    "/etc/hosts (`getent hosts <name>` on each node shows what resolves), or give MASTER_ADDR "
    "(`--rdzv-endpoint`, `--master-addr`) as an IP address; where a host alone is asked for, an "
    "IPv6 address goes without its square brackets (`MASTER_ADDR=fd00::1`)."
)
STORE_FIX = (
    "The job never formed: a process could not reach the rendezvous store. Check that the host "
    "that serves it (MASTER_ADDR, the master pod or the first node) is up before the others "
    "start (Kubernetes: create the workers once the master runs), that its name resolves from "
    "every node, that the port is open between the nodes (firewall; a Kubernetes Service must "
    "expose it, and torchrun's c10d rendezvous picks a free port unless --master-port fixes "
    "it) and that no other job holds it (`Address already in use`)."
)


def startup_failures(job: Job) -> pl.DataFrame:
    """The exceptions that failed the job's start-up at the rendezvous: a process that could
    not reach the store (see STARTUP_*), whose wait there timed out (see STORE_WAIT), that no
    launcher started (see NO_LAUNCHER_ENV), or whose PyTorch cannot make the store (NO_LIBUV)."""
    return pl.concat(
        [
            _unreachable(job),
            _store_waits(job),
            _raised(job, NO_LAUNCHER_ENV),
            _raised(job, NO_LIBUV),
        ],
        how="diagonal_relaxed",
    )


# The store's default transport in recent releases, missing from the build (pytorch/pytorch#139990,
# a Windows runner on torch 2.5: `RuntimeError: use_libuv was requested but PyTorch was build
# without libuv support`, raised in `_create_c10d_store`)
NO_LIBUV = r"use_libuv was requested but PyTorch was buil[dt] without libuv support"
NO_LIBUV_FIX = (
    "This PyTorch build has no libuv, which recent releases ask the rendezvous store to use "
    "by default (some Windows wheels are built without it). Set USE_LIBUV=0 in the "
    "environment of every process, or install a build with libuv, and start the job again."
)


def _raised(job: Job, words: str) -> pl.DataFrame:
    exceptions = job.events.filter(pl.col("event") == "exception")
    return exceptions.filter(exception_text().str.contains(words).fill_null(False))


def _store_without_libuv(job: Job) -> list[Finding]:
    failures = _raised(job, NO_LIBUV).sort("file", "line")
    if failures.is_empty():
        return []
    summary = (
        "The rendezvous store could not be made: this PyTorch was built without libuv, which "
        "the store uses by default. The job never formed; no rank is to blame."
    )
    details: dict[str, object] = {"phase": "rendezvous", "side": "no_libuv"}
    return [_start_up_failure(failures, summary, NO_LIBUV_FIX, "high", details)]


# `init_process_group` with the env:// rendezvous in a process no launcher started, the variables
# a launcher sets missing (tinyvision/DAMO-YOLO#63, `python train.py` on Windows: `ValueError:
# Error initializing torch.distributed using env:// rendezvous: environment variable RANK
# expected, but not set`)
NO_LAUNCHER_ENV = r"environment variable (\w+) expected, but not set"
NO_LAUNCHER_FIX = (
    "The script called `init_process_group` in a process no launcher started, so the "
    "variables the env:// rendezvous reads (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, "
    "LOCAL_RANK) were never set. Start it with `torchrun --nproc_per_node=<GPUs> <script>` "
    "(or the framework's launcher: `accelerate launch`, `deepspeed`, `srun` with the "
    "variables exported), or set them yourself for a single process (RANK=0, WORLD_SIZE=1, "
    "MASTER_ADDR=localhost, MASTER_PORT=<free port>)."
)


def _not_started_by_a_launcher(job: Job) -> list[Finding]:
    failures = _raised(job, NO_LAUNCHER_ENV).sort("file", "line")
    if failures.is_empty() or not _went_on(job).is_empty():
        return []
    variable = failures.select(exception_text().str.extract(NO_LAUNCHER_ENV, 1)).item(0, 0)
    summary = (
        f"No launcher started the job's processes: `init_process_group` found the environment "
        f"variable {variable} unset, which torchrun and the other launchers set for each "
        "process. The job never formed; no rank is to blame."
    )
    details: dict[str, object] = {"phase": "launch", "unset": variable}
    return [_start_up_failure(failures, summary, NO_LAUNCHER_FIX, "high", details)]


# A connection dropped under a process while it formed the group: the store's server (or the
# peer it was meeting) went away or refused it (kubeflow/trainer#2008: the worker pod's
# `RuntimeError: Connection reset by peer` raised in `init_process_group`, the master pod up).
# Only a start-up failure when nothing else failed: a peer that died first explains the drop.
# (the store's client reading end-of-file says the same: `failed to recv, got 0 bytes`)
STARTUP_DROPPED = r"(?i)connection (?:reset|closed) by peer|broken pipe|got 0 bytes"


def _unreachable(job: Job) -> pl.DataFrame:
    exceptions = job.events.filter(pl.col("event") == "exception")
    at_startup = pl.col("frame").fill_null("").str.contains(STARTUP_FRAME)
    said = exception_text()
    unreachable = exceptions.filter(
        pl.col("exc_type").fill_null("").str.contains(STARTUP_TYPE)
        | (at_startup & said.str.contains(STARTUP_WORDS))
        | said.str.contains(STORE_SOCKET)
    )
    is_dropped = (at_startup & said.str.contains(STARTUP_DROPPED)).fill_null(False)
    dropped = exceptions.filter(is_dropped)
    if dropped.is_empty():
        return unreachable
    if not _nothing_else_at_startup(job, exceptions, is_dropped):
        return unreachable
    return pl.concat([unreachable, dropped]).unique(["file", "line"], maintain_order=True)


def _nothing_else_at_startup(job: Job, exceptions: pl.DataFrame, own: pl.Expr) -> bool:
    """Whether the logs show nothing but the `own` exceptions going wrong, and the job never
    past its start-up: no other process raised anything (the launcher's report of its children
    aside), no collective ran, no progress."""
    others = exceptions.filter(~own & ~child_failed_error() & pl.col("exc_type").is_not_null())
    # the store's count of the processes that joined it is a wait at start-up, not a collective
    at_the_store = pl.col("text").str.contains(CLIENTS_WAIT).fill_null(False) | pl.col(
        "text"
    ).str.contains(SOCKET_WAIT, literal=True).fill_null(False)
    ran = job.events.filter(pl.col("event").is_in(RAN) & ~at_the_store)
    return others.is_empty() and ran.is_empty() and _went_on(job).is_empty()


# A wait at the TCPStore that gave up without naming whom it waited for
# (hiyouga/LlamaFactory#6154: `torch.distributed.DistStoreError: Socket Timeout` alone, the nodes
# launched with settings the launcher no longer read)
STORE_WAIT = (
    r"(?i)^(?:torch\.distributed\.)?(?:DistStoreError|RuntimeError): "
    r"(?:Socket Timeout|wait timeout)"
    # torchrun's agent whose rendezvous join passed its deadline (`--rdzv-conf join_timeout`)
    # with fewer nodes than `--nnodes` asks: a run here, one node of `--nnodes=2` launched
    # (`torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError`, no message); a store
    # it could not reach raises RendezvousConnectionError instead
    r"|^(?:[\w.]+\.)?RendezvousTimeoutError\b"
)
# The store's host giving up on the processes it waited for as the group formed: they never all
# met there, whatever count follows (hurryingauto3/navsim-ijepa-planning-agent's notes:
# `DistStoreError: Timed out after 3601 seconds waiting for clients.` then `1/16 clients
# joined.`, srun missing from the launch). The wait ends as soon as enough have joined, so it
# never times out with more than the world.
CLIENTS_WAIT = r"Timed out after \d+ seconds waiting for clients"
# what shows collectives ran, so a later store wait is not the start-up's (a monitored
# barrier's report too: it runs on a process group that formed)
RAN = (
    "collective_timeout",
    "store_timeout",
    "nccl_init",
    "collective_run",
    "barrier_peer_error",
    "barrier_failed",
)
# A key of a process group created after the default one: the job was past its start-up
# (huggingface/trl#2923: `DistStoreError: wait timeout after 600000ms, keys:
# //worker/attempt_0/default_pg/0//7//cuda//pg_wrapper:7/0/1`, rank 0 alone creating group 7)
LATER_GROUP_KEY = r"default_pg/\d+//0*[1-9]\d*//|pg_wrapper:0*[1-9]"
# A store client's own wait on its socket (parsers/watchdog.py reads it as a timeout) ...
SOCKET_WAIT = "waitForInput: "
# ... in the launcher's process: a frame of torchrun (or the older `torch.distributed.launch`)
# or of its elastic agent, within the traceback that follows the wait
LAUNCHER_FRAME = (
    r"torch/distributed/(?:run|launch)\.py\", line \d+|torch/distributed/elastic/agent/server/"
    r"|torch/distributed/launcher/api\.py\""
)
LAUNCHER_FRAME_LINES = 16
# torchrun's agent at the end of its run, waiting for the other nodes' agents
# (skypilot-org/skypilot#825: `ERROR:torch.distributed.elastic.agent.server.api:Error waiting
# on exit barrier. Elapsed: 309.24648356437683 seconds`, then the store's `Socket Timeout`):
# the job had formed and run; the wait says nothing of its start
EXIT_BARRIER = "Error waiting on exit barrier"
# ... or the wait's own traceback through that barrier, the agent's record cut (huggingface/
# accelerate#2229: `File ".../torch/distributed/elastic/agent/server/api.py", line 904, in
# _exit_barrier` above the store's `RuntimeError: Socket Timeout`)
EXIT_BARRIER_FRAME = ", in _exit_barrier"


def _store_waits(job: Job) -> pl.DataFrame:
    """Store waits that timed out while the job was starting: nothing in the logs shows it past
    its rendezvous (no progress, no collective) and no process raised anything else. The
    processes then never all met at the store: one of them was not started, or was started with
    other settings."""
    exceptions = job.events.filter(pl.col("event") == "exception")
    said = exception_text()
    is_wait = (said.str.contains(STORE_WAIT) | said.str.contains(CLIENTS_WAIT)).fill_null(False)
    waits = exceptions.filter(is_wait & ~said.str.contains(LATER_GROUP_KEY).fill_null(False))
    waits = pl.concat([waits, _launcher_socket_waits(job)], how="diagonal_relaxed")
    if waits.is_empty():
        return waits
    if not _nothing_else_at_startup(job, exceptions, is_wait):
        return waits.clear()
    return _before_exit_barriers(job, waits)


def _launcher_socket_waits(job: Job) -> pl.DataFrame:
    """A store client's socket wait that timed out in the launcher itself: the traceback right
    after it runs through torchrun's own code, not a training script's (modelscope/ms-swift
    #3343: `waitForInput: socket ... remote=[...]:23456) timed out after 900000ms`, then
    `File ".../torch/distributed/run.py", line 923, in <module>`). The agent waits at the store
    for the other nodes' agents to rendezvous; no worker had started."""
    sockets = job.events.filter(
        (pl.col("event") == "collective_timeout")
        & pl.col("text").str.contains(SOCKET_WAIT, literal=True)
    )
    if sockets.is_empty():
        return sockets
    launched = (
        job.lines_after(sockets, LAUNCHER_FRAME_LINES, pl.col("line").alias("_wait"))
        .filter(pl.col("text").str.contains(LAUNCHER_FRAME))
        .select("file", pl.col("_wait").alias("line"))
        .unique()
    )
    return sockets.join(launched, on=["file", "line"], how="semi")


def _before_exit_barriers(job: Job, waits: pl.DataFrame) -> pl.DataFrame:
    """`waits` without those after torchrun's report of its exit barrier in the same file, nor
    those whose traceback passes through that barrier."""
    waits = _outside_the_exit_barrier(job, waits)
    ends = (
        job.events.filter(pl.col("text").str.contains(EXIT_BARRIER, literal=True))
        .group_by("file")
        .agg(pl.col("line").min().alias("_end"))
    )
    if ends.is_empty():
        return waits
    marked = waits.join(ends, on="file", how="left")
    return marked.filter(pl.col("_end").is_null() | (pl.col("line") < pl.col("_end"))).drop("_end")


def _outside_the_exit_barrier(job: Job, waits: pl.DataFrame) -> pl.DataFrame:
    through = (
        job.span_lines(waits)
        .filter(pl.col("text").str.contains(EXIT_BARRIER_FRAME, literal=True))
        .select("file", pl.col("_start").alias("line"))
    )
    return waits.join(through, on=["file", "line"], how="anti")


# The client tries every address the store's host name resolves to, IPv6 and IPv4 in turn; an
# address this host cannot use fails at once and the next one is tried. Healthy runs print
# these and go on: EADDRNOTAVAIL (99; Windows' WSAEADDRNOTAVAIL, 10049), EINVAL (22: a link-
# local IPv6 address without its interface, NVIDIA/NeMo#7351 on SLURM) and EAFNOSUPPORT (97;
# Windows' WSAEAFNOSUPPORT, 10047). A refused, unrouted or timed-out connect says the store
# was not there.
RETRIED = (22, 97, 99, 10047, 10049)


def _store_unreachable(job: Job) -> list[Finding]:
    sockets = job.events.filter(
        (pl.col("event") == "store_unreachable") & ~pl.col("value").fill_null(0).is_in(RETRIED)
    )
    # a connect that timed out gave up after its whole timeout: no retry follows it, whatever
    # other processes went on to do (openrlhf/OpenRLHF#265: a vLLM worker's `timed out after
    # 1800s while trying to connect to (172.17.0.2, 44737)`, the other actors loading on)
    gave_up = sockets.filter(_connect_timed_out())
    sockets = sockets.filter(~_connect_timed_out())
    if job.made_progress():
        sockets = sockets.clear()  # the job trained: the client got through on a retry
    sockets = pl.concat([_before_going_on(job, sockets), gave_up], how="diagonal_relaxed")
    failures = pl.concat(
        [sockets, _unreachable(job), _store_drops(job)], how="diagonal_relaxed"
    ).sort("file", "line")
    if failures.is_empty():
        return []
    first = failures.row(0, named=True)
    endpoint = next((p for p in failures.get_column("peer").drop_nulls()), None)
    reasons = failures.get_column("error_code").drop_nulls().unique(maintain_order=True).to_list()
    reason = reasons[0] if reasons else (first["exc_message"] or first["exc_type"] or "").strip()
    reporters = sorted(failures.get_column("rank").drop_nulls().unique().to_list())
    who = rank_list(reporters).capitalize() if reporters else "A process"
    where = f" at {endpoint}" if endpoint else ""
    details = {"phase": "rendezvous", "endpoint": endpoint, "reporters": reporters}
    if _port_held(failures):
        summary = (
            f"{who} could not open the rendezvous store's port{where} while the job was "
            f"starting (`{clipped(reason)}`): another process on that host already holds it. "
            "No collective ran; no rank is to blame."
        )
        details["side"] = "server"
        return [_start_up_failure(failures, summary, PORT_HELD_FIX, "high", details)]
    if _server_side(failures):
        # the store's own listen or bind failed, its reason not in these logs: not a client
        # that could not reach it (a MetaX forum paste broke torch's `... port: 29500, code:
        # -98, name: EADDRINUSE ...` onto lines of their own)
        summary = (
            f"{who} could not open the rendezvous store's port{where} while the job was "
            f"starting (`{clipped(reason)}`): it serves the store itself, so the port is held by "
            "another process on that host or the address is not one of the host's own. No "
            "collective ran; no rank is to blame."
        )
        details["side"] = "server_unsaid"
        return [_start_up_failure(failures, summary, PORT_HELD_FIX, "medium", details)]
    if failures.select(pl.col("exc_message").eq(UNRESOLVED_WHAT).all()).item():
        summary = (
            f"{who} could not look up the address of the rendezvous store{where} while the job "
            f"was starting (`{clipped(reason)}`): its host's name does not resolve there. No "
            "collective ran; no rank is to blame."
        )
        details["side"] = "unresolved"
        return [_start_up_failure(failures, summary, UNRESOLVED_FIX, "high", details)]
    if failures.select(exception_text().str.contains(STARTUP_DROPPED).all()).item():
        summary = (
            f"{who} lost {_its(reporters)} connection to the rendezvous store{where} while the "
            "job was "
            f"starting (`{clipped(reason)}`): the host that serves it closed it or went down, or "
            "something between the nodes dropped it. No collective ran; no rank is to blame."
        )
        details["side"] = "dropped"
        return [_start_up_failure(failures, summary, STORE_FIX, "medium", details)]
    ran = not job.events.filter(pl.col("event").is_in(RAN)).is_empty()
    summary = (
        f"{who} could not reach the rendezvous store{where} while "
        f"{'a process group was forming' if ran else 'the job was starting'} "
        f"(`{clipped(reason)}`): the host that serves it was not up, not reachable from there, or "
        "not the one the address names. "
        + (
            "The collectives waiting on it followed."
            if ran
            else "No collective ran; no rank is to blame."
        )
    )
    if ran:
        details["ran"] = True
    return [_start_up_failure(failures, summary, STORE_FIX, "high", details)]


def _its(ranks: list[int]) -> str:
    return "their" if len(ranks) > 1 else "its"


def _store_drops(job: Job) -> pl.DataFrame:
    """The store's side closing a client's connection (`store_dropped`, parsers/rendezvous.py),
    the start-up's failure only where nothing else went wrong and the job never went on: in a
    job that ran or failed otherwise, it is the store's host going down with the job
    (vllm-project/vllm#19483: ranks 1-3's `recvValue failed ... got 0 bytes` after rank 0's CUDA
    error ended the server)."""
    drops = job.events.filter(pl.col("event") == "store_dropped")
    if drops.is_empty():
        return drops
    # the watchdog looks for a dump signal in the store only once a process group exists: the
    # job had formed (sgl-project/sglang#20859)
    if drops.select(pl.col("text").str.contains(DUMP_FLAG_UNREAD).any()).item():
        return drops.clear()
    exceptions = job.events.filter(pl.col("event") == "exception")
    other_errors = job.events.filter(pl.col("severity") == "error")
    if not other_errors.is_empty() or not _nothing_else_at_startup(job, exceptions, pl.lit(False)):
        return drops.clear()
    return drops


STORE_WAIT_FIX = (
    "The processes never all met at the rendezvous store: one of them was not started, or was "
    "started with other settings. Check that every node ran the launch with the same master "
    "address and port, the same number of nodes and its own node rank (after an upgrade, that "
    "the launcher still reads the variables you set: print them on each node), and that every "
    "node can reach the master's port. The wait's timeout only ends the wait."
)


def _store_wait_timed_out(job: Job) -> list[Finding]:
    waits = _store_waits(job).sort("file", "line")
    if waits.is_empty():
        return []
    first = waits.row(0, named=True)
    reason = exception_text().str.strip_chars(": ")
    said = waits.select(reason).item(0, 0) or first["exc_type"] or _socket_wait_said(first)
    reporters = sorted(waits.get_column("rank").drop_nulls().unique().to_list())
    never_came = _never_came(waits)
    if never_came:
        summary = (
            f"Rank 0 hosted the rendezvous store and waited there until the wait timed out "
            f"while the job was starting (`{clipped(said)}`): it alone joined, and "
            f"{rank_list(never_came)} never reached the store. No collective ran."
        )
        reporters = [0]
    else:
        who = rank_list(reporters).capitalize() if reporters else "A process"
        summary = (
            f"{who} waited at the rendezvous store until the wait timed out while the job was "
            f"starting (`{clipped(said)}`): not every process joined the store. No collective "
            "ran; no rank is to blame."
        )
    details = {"phase": "rendezvous", "side": "wait", "reporters": reporters}
    return [_start_up_failure(waits, summary, STORE_WAIT_FIX, "medium", details, never_came)]


# The process group's own store (`init_process_group` through torch.distributed.rendezvous's
# `_create_c10d_store`) is hosted by rank 0, which counts itself among the store's clients:
# `1/2 clients joined` there is rank 0 alone, every other rank of the world absent (xorbitsai/
# inference#2486: `Timed out after 601 seconds waiting for clients. 1/2 clients joined.` raised
# in `_create_c10d_store`, a 2-way tensor-parallel vLLM). A launcher's store counts its agents.
ALONE_AT_THE_STORE = r"\b1/(\d+) clients joined"
HOSTED_BY_RANK_0 = " in _create_c10d_store"


def _never_came(waits: pl.DataFrame) -> list[int]:
    """The ranks that never joined the process group's store where its host waited alone."""
    hosted = waits.filter(pl.col("frame").fill_null("").str.ends_with(HOSTED_BY_RANK_0))
    worlds = (
        hosted.select(exception_text().str.extract(ALONE_AT_THE_STORE, 1).cast(pl.Int64))
        .to_series()
        .drop_nulls()
    )
    if worlds.is_empty() or worlds.min() < 2:
        return []
    return _absent_ranks({0}, int(worlds.min()))[1]


def _socket_wait_said(wait: dict[str, object]) -> str:
    """A launcher's socket wait in a few words: whom it waited for and how long."""
    peer = f" on {wait['peer']}" if wait.get("peer") else ""
    timeout = wait.get("timeout_ms")
    waited = f" after {duration(int(timeout) / 1000)}" if isinstance(timeout, int) else ""
    return f"the launcher's wait for the store{peer} timed out{waited}"


CLOSED = r"\bRendezvousClosedError\b"
CLOSED_FIX = (
    "The agent joined a rendezvous that was already closed: one left over from a run that had "
    "ended, under the same run id. Give every job its own `--rdzv-id` (torchrun makes one up "
    "only where none is given; an operator or script that passes a fixed one, or `none`, reuses "
    "it), or clear the backend's state (etcd's keys for that id) before the relaunch. An agent "
    "that starts after the others finished finds their rendezvous closed the same way."
)


def _closed_at_first_join(job: Job) -> list[Finding]:
    """torchrun's agent finding the rendezvous closed as it first joined, before any worker
    ran (kubeflow/trainer#1638, etcd backend: `Rendezvous'ing worker group`, then the error
    record's `"message": "RendezvousClosedError: "`; the reporter's pytorch/pytorch#82160 gives
    the cause, every job on run id `none`, so a restarted pod joined the last run's closed
    rendezvous). Not at a re-rendezvous after the agent restarted its workers (pytorch/pytorch
    #91943): the job had formed and ended elsewhere first."""
    said = pl.concat_str(
        pl.col("exc_type").fill_null(""), exception_text().fill_null(""), separator=" "
    )
    exceptions = job.events.filter(pl.col("event") == "exception")
    closed = exceptions.filter(said.str.contains(CLOSED))
    if closed.is_empty() or not _nothing_else_at_startup(
        job, exceptions, said.str.contains(CLOSED)
    ):
        return []
    restarted = pl.concat([job.events, job.earlier_attempts], how="diagonal_relaxed").filter(
        pl.col("event") == "workers_restarted"
    )
    if restarted.height:
        return []
    closed = _at_the_start(job, closed).sort("file", "line")
    if closed.is_empty():
        return []
    reporters = sorted(closed.get_column("rank").drop_nulls().unique().to_list())
    who = rank_list(reporters).capitalize() if reporters else "A node's agent"
    summary = (
        f"{who} found the rendezvous already closed when it first joined "
        "(`RendezvousClosedError`): no worker started. A rendezvous closes when its run "
        "ends, so this run id most likely belonged to an earlier run. No rank is to blame."
    )
    details = {"phase": "rendezvous", "side": "closed", "reporters": reporters}
    return [_start_up_failure(closed, summary, CLOSED_FIX, "medium", details)]


# the dynamic rendezvous handler as a node's agent asks to join (`The node '<host>_<pid>_0'
# attempts to join the next round of the rendezvous '1234'.`; older torch `attempted`)
JOINING_ROUND = "to join the next round of the rendezvous"
JOINING_FIX = (
    "The other nodes never joined this node's rendezvous. Start every node with the same "
    "`--rdzv-endpoint host:port` (give the port: without one the first node picks a random "
    "port the others cannot know), the same `--rdzv-id` and `--nnodes`, and check that every "
    "node reaches that address and port; then read the other nodes' own logs for why they did "
    "not arrive."
)


def _agent_left_joining(job: Job) -> list[Finding]:
    """A node's agent asking to join the rendezvous as the last thing the logs hold: nothing
    failed, nothing after it (no worker started, no other node's join), no progress
    (pytorch/pytorch#64990: the second node's agent `attempts to join the next round of the
    rendezvous '1234'`; the first node had picked a random port, since `--rdzv_endpoint` gave
    none). The other nodes never joined it: a guess, the logs do not show the wait's end."""
    joins = job.events.filter(
        (pl.col("event") == "rendezvous_run")
        & pl.col("text").str.contains(JOINING_ROUND, literal=True)
    )
    if joins.is_empty() or not job.nothing_failed():
        return []
    if job.progress is not None or not logs_end_there(job, joins):
        return []
    last = joins.sort("file", "line").tail(1)
    host = last.item(0, "host")
    run = last.select(pl.col("extra").str.json_path_match("$.run_id")).item()
    who = f"The agent on {host}" if host else "A node's agent"
    summary = (
        f"{who} asked to join the rendezvous '{run}' and the logs end there: no worker "
        "started and nothing failed. The other nodes most likely never joined it."
    )
    details = {"phase": "rendezvous", "side": "joining", "reporters": [], "host": host}
    return [_start_up_failure(last, summary, JOINING_FIX, "low", details)]


# The keep-alive each node's agent sends the rendezvous while its workers run, failing: the
# store it had joined is gone (pytorch/pytorch#76287, a node of the job crashed: `The node
# 'jean-zay-iam37-ib0_187281_0' has failed to send a keep-alive heartbeat to the rendezvous
# 'none' due to an error of type RendezvousConnectionError.`, for 8 hours until cancelled)
KEEP_ALIVE_LOST = "failed to send a keep-alive heartbeat"
KEEP_ALIVE_FIX = (
    "This node's agent could no longer reach the rendezvous store, which lives in the agent "
    "on the `--rdzv-endpoint` host (or in etcd): that node went down, its launcher exited "
    "(after a failure anywhere in the job), or this node lost the network. Read that node's "
    "log and the scheduler's record of it "
    "(`sacct`, the node's events) for why. Run the job with `srun --kill-on-bad-exit=1` (or "
    "the scheduler's equivalent) so that one node's loss ends every node's step instead of "
    "leaving the others waiting."
)


def _rendezvous_lost(job: Job) -> list[Finding]:
    """A node's agent that kept failing to send its keep-alive to the rendezvous, where nothing
    else failed and no run finished: it lost the store every node meets at, and with it the
    job (a finished run's agents may outlive the store's host: no failure then)."""
    lost = job.events.filter(
        (pl.col("event") == "rendezvous_run")
        & pl.col("exc_type").is_not_null()
        & pl.col("text").str.contains(KEEP_ALIVE_LOST, literal=True)
    )
    if lost.is_empty() or not job.nothing_failed():
        return []
    if not job.events.filter(pl.col("event") == "run_finished").is_empty():
        return []
    lost = lost.sort("file", "line")
    first = lost.row(0, named=True)
    host, error = first["host"], first["exc_type"]
    who = f"The agent on {host}" if host else "A node's agent"
    times = f" ({len(lost)} times)" if len(lost) > 1 else ""
    summary = (
        f"{who} could not send its keep-alive to the rendezvous{times}: `{error}`. The store "
        "every node meets at was gone: the node that hosted it went down or its launcher "
        "exited, or this node lost the network. No worker's own failure is in these logs."
    )
    details = {"phase": "rendezvous", "side": "heartbeat", "reporters": [], "host": host}
    # lost at any point of the run, not at its start
    return [_start_up_failure(lost, summary, KEEP_ALIVE_FIX, "low", details, order=None)]


# The store's own side failed (bind, listen), no client's connect, and for the reason that the
# port was taken (EADDRINUSE; wenet-e2e/wekws#93: a second job on the host with port 29400)
SERVER_SIDE = r"(?i)failed to (?:bind|listen)|address already in use"
PORT_TAKEN = r"(?i)address already in use"
PORT_HELD_FIX = (
    "The port the store listens on is taken on that host: a job still running there (or one "
    "not yet exited), or a second launcher with the same fixed port. Find the holder "
    "(`ss -ltnp | grep :<port>`), or give each job its own port (`--master-port`, "
    "`--rdzv-endpoint host:<port>`; torchrun's c10d rendezvous picks a free port when none is "
    "fixed)."
)


def _store_said() -> pl.Expr:
    """What a store failure says: its exception's message and the system's reason."""
    return pl.concat_str(
        pl.col("exc_message").fill_null(""), pl.col("error_code").fill_null(""), separator=" "
    )


def _server_side(failures: pl.DataFrame) -> bool:
    """Whether every failure is the store's own (bind, listen)."""
    return bool(failures.select(_store_said().str.contains(SERVER_SIDE).all()).item())


def _port_held(failures: pl.DataFrame) -> bool:
    """Whether every failure is the store's own (bind, listen) and one says its port is taken."""
    said = _store_said()
    server, taken = said.str.contains(SERVER_SIDE).all(), said.str.contains(PORT_TAKEN).any()
    return bool(failures.select(server & taken).item())


def _start_up_failure(
    failures: pl.DataFrame,
    summary: str,
    fix: str,
    confidence: Confidence,
    details: dict[str, object],
    ranks: list[int] | None = None,
    order: float | None = -1.0,  # before the first training step
) -> Finding:
    """A job that never formed (or, `order` None, lost what it formed with): no rank to blame
    but those `ranks` the launcher could not start."""
    evidence, total = evidence_from(failures.select("file", "line", "text", "rank"))
    return Finding(
        kind="missing_rank",
        severity="error",
        part="explanation",
        summary=summary,
        fix=fix,
        ranks=ranks or [],
        evidence=evidence,
        evidence_total=total,
        order=order,
        timestamp=earliest_time(failures),
        confidence=confidence,
        scope="job",
        details=details,
    )


MESH_FIX = (
    "The processes reached each other's addresses through the store but could not connect "
    "directly. Check that nothing else uses the job's ports on these hosts (two jobs on one "
    "node with the same MASTER_PORT connect to each other's processes), that the interface "
    "gloo picks is reachable between the nodes (`GLOO_SOCKET_IFNAME`), that no firewall cuts "
    "the port range, and read the log of the peer named for an error during its own set-up."
)


def _mesh_never_formed(job: Job) -> list[Finding]:
    """gloo's `connectFullMesh failed`: a process group's processes could not connect to each
    other while it formed (rwth-i6/i6_core#459: two jobs on one host sharing the rendezvous
    port). Before any training, with no rank to blame."""
    failures = _at_the_start(
        job, _before_going_on(job, job.events.filter(pl.col("event") == "connect_failed"))
    )
    if failures.is_empty() or not wrong_interface(job).is_empty():
        return []  # gloo on the wrong interface: nccl_error says so
    failures = failures.sort("file", "line")
    peers = failures.get_column("peer").drop_nulls().unique(maintain_order=True).to_list()
    reporters = sorted(failures.get_column("rank").drop_nulls().unique().to_list())
    who = rank_list(reporters).capitalize() if reporters else "A process"
    closed = f" (peer {', '.join(peers[:3])})" if peers else ""
    summary = (
        f"{who} could not connect to the other processes of its group while the group was "
        f"forming: gloo's full-mesh connection failed{closed}. No collective ran; no rank is "
        "to blame."
    )
    details = {"phase": "connect", "peers": peers, "reporters": reporters}
    return [_start_up_failure(failures, summary, MESH_FIX, "medium", details)]


def _connect_timed_out() -> pl.Expr:
    return (pl.col("exc_message").fill_null("").str.contains("timed out", literal=True)) & (
        pl.col("text").fill_null("").str.contains("client socket", literal=True)
    )


def _before_going_on(job: Job, failures: pl.DataFrame) -> pl.DataFrame:
    """The `failures` after which their file shows no sign of the job going on."""
    if failures.is_empty():  # the usual case: no need to look through every mark
        return failures
    return failures.join(_went_on(job), on="file", how="left").filter(
        pl.col("_went_on").is_null() | (pl.col("_went_on") < pl.col("line"))
    )


def _at_the_start(job: Job, failures: pl.DataFrame) -> pl.DataFrame:
    """The `failures` before anything in their file shows the job started: progress, or the
    launcher's report of a worker's failure. One after those is a later group's, or that of the
    workers torchrun restarted after the failure (a run here: `--max-restarts=1`, the restarted
    rank's full-mesh connect refused), not the job's start."""
    if failures.is_empty():
        return failures
    started = (
        pl.concat(
            [
                _went_on(job, first=True),
                job.events.filter(pl.col("event").is_in(EXIT_REPORTS))
                .group_by("file")
                .agg(pl.col("line").min().alias("_went_on")),
            ]
        )
        .group_by("file")
        .agg(pl.col("_went_on").min())
    )
    return (
        failures.join(started, on="file", how="left")
        .filter(pl.col("_went_on").is_null() | (pl.col("line") < pl.col("_went_on")))
        .drop("_went_on")
    )


def _went_on(job: Job, first: bool = False) -> pl.DataFrame:
    """Per file, the last line that shows the job past its rendezvous: torchrun's result
    (`global_world_sizes=[4, 4]`), a progress bar or mark, an epoch's start or end. A store
    failure before it was overcome (pytorch#116974: port 29500 held by another job, then three
    epochs trained)."""
    progress = job.events.filter(
        ((pl.col("family") == "rendezvous") & (pl.col("event") == "world_size"))
        | pl.col("event").is_in(["stage", "progress_bar", "epoch_start", "epoch_end"])
    ).select("file", "line")
    if job.progress is not None:  # the plain stage marks, read apart from the events
        marks = job.progress.marks.select(pl.col("file").cast(pl.String), "line")
        progress = pl.concat([progress, marks], how="vertical_relaxed")
    line = pl.col("line").min() if first else pl.col("line").max()
    return progress.group_by("file").agg(line.alias("_went_on"))


def _absent(job: Job) -> list[Finding]:
    world = job.world_size
    if world is None:
        return []
    seen = set(job.ranks_seen)
    if not seen:  # no line tied to any rank: the logs are unattributed, not the ranks absent
        return []
    if _deduplicated(job):
        return []
    count, absent = _absent_ranks(seen, world.value)
    if not count:
        return []
    who = rank_list(absent) if absent else f"{count:,} ranks"
    details: dict[str, object] = {"world_size_from": world.source}
    if not absent:
        details["absent"] = count
    summary = (
        f"The world size is {world.value} but {who} left no log line that could be attributed "
        f"to {'it' if count == 1 else 'them'}; the analysis sees only {len(seen)} of "
        f"{world.value} ranks."
    )
    waited = _ended_at_start_up(job)
    if waited:
        details["started"] = sorted(seen)
        summary = (
            f"{rank_list(sorted(seen)).capitalize()} of {world.value} started and the logs end "
            f"right after {'its' if len(seen) == 1 else 'their'} start-up; {who} left no line "
            f"at all: the job most likely waits for {'it' if count == 1 else 'them'} to join."
        )
    return [
        Finding(
            kind="missing_rank",
            severity="error" if waited else "warning",
            part="departure" if waited else "context",
            summary=summary,
            fix=NEVER_STARTED_FIX if waited else NO_LOG_FIX,
            ranks=absent,
            evidence=[Evidence(world.file, world.line, world.text)],
            evidence_total=1,
            # that they never started is read from where the logs end, not from a line
            confidence="medium" if waited else "high",
            details=details,
        )
    ]


# Ray's note after a line it kept for several processes (`... [repeated 3x across cluster]`),
# wherever colour codes or a pod's prefix leave it on the line
RAY_FOLDED = r"\[repeated \d+x across cluster\]"


def _deduplicated(job: Job) -> bool:
    """Whether Ray folded processes' like lines into one: `[repeated 3x across cluster]` after
    the one it kept stands for three more processes' lines, whose ranks it does not say
    (OpenRLHF/OpenRLHF#350: one `init_process_group: ... rank=2, world_size=5` line for the
    weight-sync group's four workers, a run that then succeeded)."""
    return bool(
        job.events.select(pl.col("text").str.contains(RAY_FOLDED).fill_null(False).any()).item()
    )


NEVER_STARTED_FIX = (
    "Check that every rank was launched: `srun` in front of the command in a batch script (or "
    "the launcher on every node), --nnodes/--nproc_per_node and NODE_RANK on each node, the "
    "host list. If they were, their own logs (or the scheduler's) say why they did not start."
)
# Lines that only say a process came up: its place in the world, its device, its process, its
# connection to the store. Not NCCL's `Init COMPLETE`: a communicator completes only once all
# of its ranks have joined it.
START_UP_EVENTS = ("world_size", "device_map", "node_ranks", "process_id", "store_connected")
# lines that say how the run is set up, read wherever they stand
SETTINGS = ("debug_setting", "launch_command", "launch_config")
# a few lines of a framework's start-up banner may follow the last one the parsers know
START_UP_TAIL = 5


def _ended_at_start_up(job: Job, ranked: bool = True) -> bool:
    """Whether the processes (the ranks seen, with `ranked`) did nothing but start: no failure,
    no progress, and every file ends within a few lines of its last start-up line
    (Lightning-AI/pytorch-lightning#8707: `initializing ddp: GLOBAL_RANK: 3, MEMBER: 4/8`
    last, the other node never launched). A job that ran, or an upload cut short of some
    nodes' files, has lines past start-up."""
    events = job.events
    if job.progress is not None or not job.marks.is_empty() or _training_advanced(events):
        return False
    if not events.filter(pl.col("severity").is_in(["error", "warning"])).is_empty():
        return False
    said = events.filter(pl.col("event").is_not_null() & ~pl.col("event").is_in(SETTINGS))
    if ranked:
        said = said.filter(pl.col("rank").is_not_null())
    if said.is_empty() or not said.get_column("event").is_in(START_UP_EVENTS).all():
        return False
    last_start = said.group_by("file").agg(pl.col("line").max().alias("_start"))
    ends = job.file_stats.select("file", "last_line").join(last_start, on="file", how="left")
    if not ranked and ends.get_column("_start").null_count():
        return False  # a file that says nothing of start-up: no telling where it ended
    ends = ends.drop_nulls("_start")
    return bool((ends.get_column("last_line") - ends.get_column("_start") <= START_UP_TAIL).all())


# A bar of the training loop, by its name (`Epoch 0:`, `Training:`, `Steps:`)
TRAINING_BAR = r"(?i)^(?:epoch\b|train(?:ing)?\b|steps?\b)"


def _training_advanced(events: pl.DataFrame) -> bool:
    """Whether a training loop's bar counted a step: its collectives completed, so every rank
    had joined, whichever start-up lines the logs kept (Lightning-AI/pytorch-lightning#4225:
    four of sixteen ranks' `initializing ddp` lines before the excerpt ends, the epoch bar at
    3/35 in the other file)."""
    bars = events.filter(pl.col("event") == "progress_bar")
    if bars.is_empty():
        return False
    name = bar_name(last_snapshot(pl.col("message"))).fill_null("")
    return not bars.filter(name.str.contains(TRAINING_BAR) & (pl.col("value") >= 1)).is_empty()


NEVER_FORMED_FIX = (
    "Find the rank that did not join or could not reach the others: that every process was "
    "launched (the launcher on every node, the pod of every replica), then the network between "
    "them (a firewall, a sidecar proxy intercepting the pods' ports, the interface picked: "
    "GLOO_SOCKET_IFNAME / NCCL_SOCKET_IFNAME). TORCH_CPP_LOG_LEVEL=INFO and "
    "TORCH_DISTRIBUTED_DEBUG=DETAIL show how far `init_process_group` got on each rank."
)


def _never_formed(job: Job) -> list[Finding]:
    """Processes whose logs end as they joined the job, before a world size or rank says who
    is missing: connected to the rendezvous store, then nothing (pytorch/pytorch#81704, cause in
    kubeflow/trainer#1637: a service mesh's sidecar in every pod, the gloo process group never
    formed). Blames no rank."""
    if not _ended_at_start_up(job, ranked=False):
        return []
    joined = job.events.filter(pl.col("event").is_in(START_UP_EVENTS))
    connected = joined.filter(pl.col("event") == "store_connected")
    if connected.is_empty():
        return []  # the ranks' own start-up prints: `_absent` reads them against the world
    store = connected.item(0, "peer")
    evidence, total = evidence_from(
        joined.sort("file", "line")
        .group_by("file")
        .agg(pl.all().last())
        .sort("file")
        .select("file", "line", "text", "rank")
    )
    return [
        Finding(
            kind="missing_rank",
            severity="error",
            part="departure",
            summary=(
                f"The logs end right after connecting to the rendezvous store at {store}, with "
                "nothing after it: the process group never formed (a rank never joined or could "
                "not reach the others)."
            ),
            fix=NEVER_FORMED_FIX,
            ranks=[],
            evidence=evidence,
            evidence_total=total,
            confidence="low",
            order=-1.0,
            details={"phase": "start-up", "endpoint": store},
        )
    ]


def _absent_ranks(seen: set[int], world: int) -> tuple[int, list[int]]:
    """How many ranks below `world` are not in `seen`, and which when at most
    MAX_LISTED_RANKS: counted from the ranks seen, the world is walked only to list them."""
    count = world - sum(1 for rank in seen if 0 <= rank < world)
    if count > MAX_LISTED_RANKS:
        return count, []
    return count, sorted(set(range(world)) - seen)


def _vanished(job: Job) -> list[Finding]:
    progress = job.progress
    if progress is None:
        return []
    findings: list[Finding] = []
    last_marks = progress.last_key()
    for departure in progress.departures:
        if departure.kind != "stopped" or departure.tie:
            continue
        last = last_marks.filter(pl.col("rank") == departure.rank).row(0, named=True)
        stats = job.file_stats.filter(pl.col("file") == last["file"])
        if stats.is_empty() or stats.item(0, "last_line") != last["line"]:
            continue  # the rank wrote more after its last mark: not silent
        if _has_other_output(job, departure.rank, last["file"]):
            continue  # e.g. a separate stderr.log; without times its order is unknown
        expected = progress.key_of(departure.expected_key)
        others = sorted(set(progress.ranks) - {departure.rank})
        findings.append(
            Finding(
                kind="missing_rank",
                severity="error",
                part="departure",
                summary=(
                    f"The log of rank {departure.rank} ends at its mark "
                    f"{describe_key(progress.key_of(last['key']))} with nothing after it, while "
                    f"{rank_list(others)} went on to {describe_key(expected)}: the process "
                    f"stopped without an error (it died or hung without a word)."
                ),
                fix=VANISHED_FIX,
                ranks=[departure.rank],
                step=expected["step"],
                stage=expected["stage"],
                epoch=None if expected["epoch"] == -1 else expected["epoch"],
                evidence=[Evidence(last["file"], int(last["line"]), last["text"], departure.rank)],
                evidence_total=1,
                order=float(departure.expected_key),
                confidence="medium",
            )
        )
    return findings


def _has_other_output(job: Job, rank: int, marks_file: str) -> bool:
    other = job.file_stats.filter(
        (pl.col("rank") == rank)
        & (pl.col("file") != marks_file)
        & pl.col("last_line").is_not_null()
    )
    return not other.is_empty()


# Below stage_divergence: a log that just ends says less than the divergence it coincides
# with (a rank asleep in a data loader and then killed looks the same as one that died).
RULE = Rule(kind="missing_rank", check=check, specificity=-1)


def _world_inits(job: Job) -> pl.DataFrame:
    """Init records (START/COMPLETE) of the largest communicator: NCCL's world."""
    inits = job.events.filter(
        (pl.col("family") == "nccl")
        & (pl.col("event") == "nccl_init")
        & pl.col("nranks").is_not_null()
        & pl.col("comm_rank").is_not_null()
    ).with_columns(pl.col("extra").str.json_path_match("$.phase").alias("phase"))
    inits = inits.filter(pl.col("phase").is_in(INIT_PHASES))
    if inits.is_empty():
        return inits
    return inits.filter(pl.col("nranks") == inits.get_column("nranks").max())


def _init_never_completed(job: Job) -> list[Finding]:
    inits = _world_inits(job)
    if inits.is_empty():
        return []
    world = int(inits.item(0, "nranks"))
    ranks = pl.coalesce("rank", "comm_rank")
    completed = set(inits.filter(pl.col("phase") == "complete").select(ranks).to_series().to_list())
    started = set(inits.filter(pl.col("phase") == "start").select(ranks).to_series().to_list())
    if not completed:
        return []  # nobody finished: the excerpt may end there, or every rank is stuck alike
    # a rank whose NCCL lines are only its error and the unwinding after it may have failed
    # after its init, which the excerpt left out (deepspeedai/DeepSpeed#2931: rank 2's proxy)
    nccl_ranks = set(
        job.events.filter(
            (pl.col("family") == "nccl")
            & pl.col("rank").is_not_null()
            & ~pl.col("event").is_in(NCCL_PROBLEMS)
        )
        .get_column("rank")
        .to_list()
    )
    # a rank whose NCCL lines are only its communicator's teardown (`Abort COMPLETE`) had one
    # to tear down: the excerpt left out its init (aws/aws-k8s-tester#454, a healthy run)
    torn_down = set(
        job.events.filter((pl.col("event") == "nccl_abort") & pl.col("rank").is_not_null())
        .get_column("rank")
        .to_list()
    )
    stuck = sorted(
        r for r in started | (nccl_ranks - torn_down) if r not in completed and 0 <= r < world
    )
    elided = _init_maybe_elided(job, inits, stuck) | _had_a_communicator(job)
    stuck = [rank for rank in stuck if rank not in elided]
    stuck = _not_cut_off(job, inits, stuck)
    if not stuck:
        return []
    with_problem = set(
        job.events.filter(pl.col("event").is_in(NCCL_PROBLEMS) & pl.col("rank").is_in(stuck))
        .get_column("rank")
        .to_list()
    )
    silent = [rank for rank in stuck if rank not in with_problem]
    # an NCCL error no line attributes to a rank may be theirs (huggingface/transformers#11658:
    # `unhandled system error` in the first broadcast, where rank 1's init lines stop)
    unowned_error = not job.events.filter(
        (pl.col("event") == "nccl_error") & pl.col("rank").is_null()
    ).is_empty()
    findings = []
    if silent:
        findings.append(
            _stuck_finding(
                job,
                inits,
                silent,
                completed,
                world,
                explained=False,
                unowned_error=unowned_error,
                failed_beside=_failed_on_their_own(job, sorted(with_problem)),
            )
        )
    if with_problem:
        explained = sorted(with_problem)
        findings.append(_stuck_finding(job, inits, explained, completed, world, explained=True))
    return findings


def _not_cut_off(job: Job, inits: pl.DataFrame, ranks: list[int]) -> list[int]:
    """Those of `ranks` no interleaved write may have cut the `Init COMPLETE` of: a tail of
    the world communicator's record that still names its rank completes that rank; tails that
    name none complete as many ranks, which cannot be told apart, so when there are enough of
    them for every rank left, none is called stuck (a healthy 2 x 8 run under SLURM, six
    records cut by their node's other processes' writes)."""
    tails = job.events.filter(pl.col("event") == "nccl_init_fragment")
    if tails.is_empty():
        return ranks
    world = inits.get_column("comm_id").drop_nulls().unique().to_list()
    tails = tails.filter(pl.col("comm_id").is_in(world) | pl.col("comm_id").is_null())
    named = set(tails.get_column("comm_rank").drop_nulls().to_list())
    left = [rank for rank in ranks if rank not in named]
    unnamed = tails.filter(pl.col("comm_rank").is_null()).height
    return [] if unnamed >= len(left) else left


def _had_a_communicator(job: Job) -> set[int]:
    """Ranks whose watchdog timed out in a numbered collective of the default group: NCCL's
    init had completed for them, as a collective's work is queued only on a communicator that
    exists, whatever became of the `Init COMPLETE` line (argonne-lcf/alcf-nccl-tests: ranks 0
    and 1's records cut mid-line by their own timeouts' writes, `... rank 1 nranks 4 ... -
    Init CO[rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught ...`)."""
    timeouts = per_rank_timeouts(job.events).filter(
        pl.col("seq").is_not_null() & (pl.col("pg") == "0")
    )
    return set(timeouts.get_column("rank").to_list())


def _init_maybe_elided(job: Job, inits: pl.DataFrame, ranks: list[int]) -> set[int]:
    """Those of `ranks` whose `Init COMPLETE` a paste's elision mark may have left out: one
    after the rank's `Init START` in its file, or anywhere in a file of its lines when the
    excerpt kept no START (NVIDIA/nccl#1646: rank 2's only line after `[...]`)."""
    elisions = job.events.filter(pl.col("event") == "elision").select("file", "line")
    if elisions.is_empty():
        return set()
    starts = inits.filter(pl.col("phase") == "start").select(
        "file", "line", pl.coalesce("rank", "comm_rank").alias("rank")
    )
    lines = job.events.filter((pl.col("family") == "nccl") & pl.col("rank").is_in(ranks))
    files = lines.select("file", "rank").unique()
    from_start = (
        files.join(starts, on=["file", "rank"], how="left")
        .group_by("file", "rank")
        .agg(pl.col("line").min().alias("_from"))
    )
    elided = from_start.join(elisions, on="file").filter(
        pl.col("_from").is_null() | (pl.col("line") > pl.col("_from"))
    )
    return set(elided.get_column("rank").to_list())


def _failed_on_their_own(job: Job, ranks: list[int]) -> list[int]:
    """Those of `ranks` (stuck in init at an NCCL error) whose error is their own failure, not
    a report that a peer went away."""
    errors = job.events.filter(
        pl.col("event").is_in(["nccl_error", "nccl_warn"])
        & (pl.col("severity") == "error")
        & pl.col("rank").is_in(ranks)
    )
    own = errors.filter(~pl.col("text").str.contains(ABOUT_A_PEER))
    return sorted(set(own.get_column("rank").to_list()))


def _stuck_finding(
    job: Job,
    inits: pl.DataFrame,
    stuck: list[int],
    completed: set[int],
    world: int,
    explained: bool,
    unowned_error: bool = False,
    failed_beside: list[int] | None = None,
) -> Finding:
    """One finding for ranks whose world-communicator init never completed: a departure when
    nothing explains it, context beside their own NCCL error or one that may be theirs, or
    beside another rank's init that failed with its own error (communicator creation connects
    every rank to its neighbours: one rank failing it leaves the others waiting in it,
    horovod/horovod#1122: rank 3's `Cuda failure 'invalid argument'` in shm.h, rank 0's init
    stopped at its ring connection from rank 3)."""
    rows = job.events.filter((pl.col("family") == "nccl") & pl.col("rank").is_in(stuck)).sort(
        "file", "line"
    )
    starts = inits.filter(
        (pl.col("phase") == "start") & pl.coalesce("rank", "comm_rank").is_in(stuck)
    )
    # Evidence: each stuck rank's START line, else its last NCCL line.
    shown = starts if not starts.is_empty() else rows.group_by("rank").agg(pl.all().last())
    evidence, total = evidence_from(
        shown.sort("file", "line").select("file", "line", "text", "rank")
    )
    they = "it" if len(stuck) == 1 else "they"
    summary = (
        f"{rank_list(stuck).capitalize()} of the {world}-rank NCCL world communicator never "
        f"printed `Init COMPLETE`, while {len(completed)} rank"
        f"{'s' if len(completed) != 1 else ''} did"
    )
    waited = bool(failed_beside) and not explained
    if explained:
        summary += f": {they} stopped at {'its' if len(stuck) == 1 else 'their'} own NCCL error."
    elif waited:
        summary += (
            f": {they} waited in communicator creation for {rank_list(failed_beside or [])}, "
            "whose init failed with an NCCL error."
        )
    elif unowned_error:
        summary += f": {they} may have stopped at the NCCL error that no line attributes to a rank."
    else:
        summary += (
            f": {they} hung or died inside communicator creation without an NCCL error, and "
            "the others wait for them at the first collective."
        )
    return Finding(
        kind="missing_rank",
        severity="warning" if explained or waited or unowned_error else "error",
        part="context" if explained or waited or unowned_error else "departure",
        summary=summary,
        fix=INIT_STUCK_FIX,
        ranks=stuck,
        evidence=evidence,
        evidence_total=total,
        confidence="medium",
        order=-1.0,  # communicator creation comes before the first step
        details={"nccl_world_size": world, "completed": len(completed)},
    )
