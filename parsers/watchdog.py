# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring and comments
"""ProcessGroupNCCL's watchdog: collective timeouts, progress watermarks, heartbeat and
rendezvous-store failures (pytorch/pytorch:torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp,
TCPStore.cpp). Verbatim:

    [E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=469508, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802212 milliseconds before timing out.
    [rank1]:[E626 06:24:44.906457629 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 1] Exception (either an error or timeout) detected by watchdog at work: 808, last enqueued NCCL work: 811, last completed NCCL work: 807.
    [rank1]:[E ProcessGroupNCCL.cpp:537] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.
    torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 1/3 clients joined.

A rank's own report that its collective failed is a `collective_timeout` whether or not it
names the WorkNCCL: the watermark forms (`Timeout at NCCL work:`, `... detected by watchdog at
work: 808`, torch >= 2.4's `failure detected by watchdog at work sequence id: 730`, with the
watermark in `last_enqueued`/`last_completed`), the dump signal `from this local rank`, and a
`Watchdog caught collective ...` line cut before `WorkNCCL(`. A dump signal `from  rank 1` is
another rank's timeout: only this rank's `work_progress`.

The messages are found anywhere in `message`: pdsh (`node04: `) and srun (`11: `) labels are
not peeled yet, and `what():  ` or an exception type may precede them. `[Rank N]` is the rank
within the process group named by the `[PG ...]` tag; it is the global rank only for the default
group (PG id 0, or no tag at all), so only then is it copied to `rank`. The glog header's time
(`E626 06:24:44.906457629`) has no year and is left to the clock logic; torch 2.2/2.3 print the
header without a date (`[E ProcessGroupNCCL.cpp:1414]`), which changes nothing here.

Also read here, each quoted where its pattern is defined: a TCPStore socket wait that timed out
(`socket.cpp`, a `collective_timeout` with no op), the watchdog dying of an error that is not a
timeout (`exception`, the error's own type and text), a watchdog timeout known only from its C++
stack (`collective_timeout` marked `{"inferred_from": "stack"}` in `extra`), the heartbeat
monitor killing a process whose watchdog hung (`heartbeat_timeout`), and the watchdog's report
of the communicator a `destroy_process_group` shut down and that call's own steps
(`pg_shutdown`, info: not a failure), and its warning that the program exited without that
call (`program_exit`, info: the process was leaving).
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser
from parsers.traceback import MESSAGE_CHARS, process_key

# [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=469508, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802212 milliseconds before timing out.
# All generations: `WorkNCCL(OpType=.., TensorShape=[..], Timeout(ms)=..)` (~1.7),
# `WorkNCCL(SeqNum=.., OpType=.., Timeout(ms)=..)` (~1.10), `..., NumelIn=.., NumelOut=.., ...)`
# (~2.1+). Fields torch may add before `Timeout(ms)` are skipped, and so is a paste's elision
# of the sequence number (alan-turing-institute/autocast#381: `WorkNCCL(..., OpType=ALLREDUCE,
# NumelIn=1, NumelOut=1, Timeout(ms)=1800000)`).
WORK_NCCL = (
    r"WorkNCCL\((?:SeqNum=(?P<seq>\d+), ?|(?:\.\.\.|…), ?)?OpType=(?P<op>\w+)"
    r"(?:, TensorShape=(?P<shape>\[[^\]]*\]))?"
    r"(?:, NumelIn=(?P<numel_in>\d+), NumelOut=(?P<numel_out>\d+))?"
    r"[^()]*?Timeout\(ms\)=(?P<timeout_ms>\d+)"
)
# ... ran for 1802212 milliseconds before timing out.
ELAPSED = r"ran for (\d+) milliseconds before timing out"
# Statements that a WorkNCCL timed out (watchdog, torch 1.8 `Caught ...`, blocking wait, and the
# re-raised forms `NCCL communicator was aborted ...` / `... watchdog thread terminated ...`).
TIMEOUT_WORDING = ("collective operation timeout", "timed out in blocking wait")
# Timeouts that name no WorkNCCL, each a rank's own report that its collective failed:
#   [Rank 5] Watchdog caught collective operati…                      (cut before `WorkNCCL(`)
#   [PG 0 Rank 3] Timeout at NCCL work: 4084, last enqueued NCCL work: 4084, ...       (~2.2)
#   [PG 0 Rank 3] Exception (either an error or timeout) detected by watchdog at work: 50, ...
#   [PG ID 0 PG GUID 0(default_pg) Rank 5]  failure detected by watchdog at work sequence id: ...
#   [PG 0 Rank 0] Received a timeout signal from this local rank and will start to dump ...
#   [PG ID 0 PG GUID 0(default_pg) Rank 1] Received a dump signal due to a collective timeout
#   from this local rank and we will try our best to dump the debug info. ...   (one line)
#   NCCL communicator was aborted on rank 19.       (torch 1.8/1.9's re-raise in the rank's own
#                                                   thread, its reason not yet appended)
# (pytorch/pytorch#22834, #122850; NVIDIA/physicsnemo#691; OpenRLHF/OpenRLHF#1126;
# vllm-project/vllm-omni#2928; deepspeedai/DeepSpeed#1834). `... from  rank 1 ...` is another
# rank's timeout: only a progress report of this one.
WATCHDOG_CAUGHT = "Watchdog caught collective"
# SGLang's scheduler, whose batch ran past its watchdog's limit (sgl-project/sglang#29144,
# verbatim: `[DP0 TP0] Scheduler watchdog timeout (self.watchdog_timeout=300.0,
# self.soft=False)`, on every DP rank of an 8-way server): the process stuck, most often in a
# collective another rank never joined
SCHEDULER_WATCHDOG = r"Scheduler watchdog timeout \(self\.watchdog_timeout=(\d+(?:\.\d+)?)"
SCHEDULER_WATCHDOG_LITERAL = "Scheduler watchdog timeout"

OWN_TIMEOUT_WORDING = (
    WATCHDOG_CAUGHT,
    SCHEDULER_WATCHDOG_LITERAL,
    "Timeout at NCCL work:",
    "detected by watchdog at work",
    "timeout signal from this local rank",
    "collective timeout from this local rank",
    "NCCL communicator was aborted on rank",
)

# [PG 1 Rank 0] / [PG 0 (default_pg) Rank 7] / [PG ID 0 PG GUID 0(default_pg) Rank 1]
# [PG ID 12 PG GUID 99(EXPERT_MODEL_PARALLEL_GROUP) Rank 4]
# [PG ID 1 PG GUID d03ba143833c6bf31b072ffdb22f1745957fcbfb Rank 0]  (a hash: PrimeIntellect-ai/
# prime-rl#3186). The ID numbers groups per process, the GUID names one group on all its ranks.
# [PG ID 6 PG GUID  Rank 0]  (no GUID printed: NVIDIA/Fuser#3055, a group created without a name)
PG_TAG = (
    r"\[PG (?:ID )?(?P<pg_id>\d+)(?: PG GUID (?P<pg_guid>[0-9A-Za-z_]*))?"
    r"(?: ?\((?P<pg_desc>[^)]*)\))? Rank (?P<pg_rank>\d+)\]"
)
# [Rank 5] Watchdog caught ...  (no process-group tag: torch before ~2.3)
RANK_TAG = r"\[Rank (\d+)\]"

# [PG 0 Rank 3] Timeout at NCCL work: 4084, last enqueued NCCL work: 4084, last completed NCCL work: 4083.
# ... detected by watchdog at work: 50, last enqueued NCCL work: 50, last completed NCCL work: 49.
# ...  failure detected by watchdog at work sequence id: 120049 PG status: last enqueued work: 120051, last completed work: 120048
FAILING_WORK = r"(?:at NCCL work|at work|at work sequence id): (\d+)"
LAST_ENQUEUED = r"[Ll]ast enqueued (?:NCCL )?work: (-?\d+)"
LAST_STARTED = r"[Ll]ast started (?:NCCL )?work: (-?\d+)"
LAST_COMPLETED = r"[Ll]ast completed (?:NCCL )?work: (-?\d+)"
# ... Received a dump signal due to a collective timeout from  rank 1 and we will try our best to dump the debug info. Last enqueued NCCL work: 233659, last completed NCCL work: 233659.This is ...
DUMP_SIGNAL_FROM = r"dump signal due to a collective timeout from\s+rank (\d+)"

# [PG ID 0 PG GUID 0(default_pg) Rank 2] ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued collectives. ...
STUCK_SECONDS = r"watchdog got stuck for (\d+) seconds"
HEARTBEAT_WORDING = (
    "Heartbeat monitor timed out",  # [PG 0 Rank 1] Heartbeat monitor timed out! Process will ...
    "detected no heartbeat of its watchdog",  # [PG 3 Rank 7] First PG on this rank that ...
    "watchdog got stuck for",
    "NCCL monitor thread timeout",  # torch ~2.2: [Rank 1] NCCL monitor thread timeout. ...
    "monitoring thread detects no heartbeat",
    "No PGNCCL's watchdog heartbeat detected",
    # the monitor's kill after a hang (NVIDIA/Fuser#3055); the same words end in `due to
    # collective timeout or exception.` when it kills after a timeout: not a hung watchdog
    "due to ProcessGroupNCCL watchdog hang",
)

# RuntimeError: [1] is setting up NCCL communicator and retreiving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Socket Timeout
# (`retreiving` is the older spelling.)
STORE_SETUP = (
    r"\[(?P<rank>\d+)\] is setting up NCCL communicator and retr(?:ie|ei)ving ncclUniqueId "
    r"from \[(?P<root>\d+)\]"
)
# torch 1.8-1.13's store-based barrier in init_process_group (ligang-cs/PseCo#15); a worker_count
# above the world size means more processes than ranks checked in:
# RuntimeError: Timed out initializing process group in store based barrier on rank: 0, for key: store_based_barrier_key:1 (world_size=4, worker_count=16, timeout=0:30:00)
STORE_BARRIER = (
    r"Timed out initializing process group in store based barrier on rank: (?P<rank>\d+), "
    r"for key: \S+ \(world_size=(?P<world>\d+), worker_count=(?P<count>\d+), "
    r"timeout=(?P<hours>\d+):(?P<minutes>\d+):(?P<seconds>\d+)"
)
# torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 1/3 clients joined.
STORE_CLIENTS = (
    r"Timed out after (?P<seconds>\d+) seconds waiting for clients\. "
    r"(?P<joined>\d+)/(?P<expected>\d+) clients joined"
)

# A TCPStore client's own wait for the store (or a peer through it) that never answered
# (pytorch/pytorch:torch/csrc/distributed/c10d/socket.cpp; axolotl-ai-cloud/axolotl#2684):
#   [rank1]:[W516 14:34:56.853490829 socket.cpp:464] [c10d] waitForInput: poll for socket SocketImpl(fd=79, addr=[localhost]:41170, remote=[localhost]:29500) returned 0, likely a timeout
#   [rank1]:[W516 14:34:56.854597329 socket.cpp:489] [c10d] waitForInput: socket SocketImpl(fd=79, addr=[localhost]:41170, remote=[localhost]:29500) timed out after 1800000ms
# The second states the timeout; the first says the same a moment earlier, and is an event
# too where an excerpt holds it alone (pytorch/torchtitan#1492).
SOCKET_WAIT_TIMEOUT = r"waitForInput: socket SocketImpl\(.*\) timed out after (\d+)ms"
SOCKET_WAIT_POLL = "waitForInput: poll for socket"
SOCKET_POLL_TIMEOUT = r"waitForInput: poll for socket SocketImpl\(.*\) returned 0, likely a timeout"
SOCKET_REMOTE = r"remote=([^,)\s]+)"

# The watchdog thread died of an error of its own (vllm-project/vllm#6042, torch 2.3):
#   [rank3]:[E ProcessGroupNCCL.cpp:1414] [PG 2 Rank 3] Process group watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered
# (torch < 2.2: `NCCL watchdog thread terminated with exception: `). What follows is the
# error's own `<type>: <message>`; a timeout (`[Rank 1] Watchdog caught collective ...`) is a
# collective_timeout and an NCCL error (`NCCL error: ...`, `NCCL error in: ...`) the nccl
# family's; anything else without a type names no error (a line a console wrapped).
WATCHDOG_DIED = "watchdog thread terminated with exception: "
THROWN = r"^(?P<type>(?:[A-Za-z][\w.:]* ){0,3}[\w.:]*(?:[Ee]rror|Exception)): +(?P<message>\S.*)"
NCCL_ERROR = "NCCL error"

# The watchdog finding the communicator aborted by the process's own shutdown, printed while
# `destroy_process_group` runs (pytorch/pytorch#120849, "False alarm during ProcessGroup
# shutdown?"): no failure.
#   I0228 14:05:56.114109 1619334 ProcessGroupNCCL.cpp:484] [Rank 3] found async exception when checking for NCCL errors: NCCL communicator encountered error set by ProcessGroupNCCL: Process Group shutdown on rank 3
PG_SHUTDOWN = "Process Group shutdown"
ASYNC_CHECK = "found async exception when checking for NCCL errors"
# torch 1.10's ProcessGroupNCCL destructor naming the process's own rank as it goes
# (huggingface/pytorch-image-models#1077, rank 0 after its device-side assert):
#   Process Group destroyed on rank 0
PG_DESTROYED = r"Process Group destroyed on rank (\d+)\s*$"
# `destroy_process_group`'s steps as ProcessGroupNCCL logs them at TORCH_CPP_LOG_LEVEL=INFO
# (torch 2.3+; a 2.13 reproducer's rank 1 tore its group down after an exception of its own
# while rank 0 waited in ALLREDUCE #2, a validation record in the code index):
#   [rank1] ... Rank 1] Watchdog joined, destroying NCCL communicators.
SHUTDOWN_STEPS = (
    "Starting to destroy process group, flushing operations.",
    "Operations flushed, joining watchdog thread.",
    "Watchdog joined, destroying NCCL communicators.",
)
# The process group destructed as its program exits without `destroy_process_group`: the
# process was leaving (NVIDIA/nccl#1504: rank 0's pipeline stage exited, then rank 1 waited 30
# minutes in its first send/recv):
#   [rank0]:[W1106 04:13:02.107228334 ProcessGroupNCCL.cpp:1250] Warning: WARNING: process group has NOT been destroyed before we destruct ProcessGroupNCCL. ...
#   [rank1]:[W326 09:37:44.752383442 ProcessGroupNCCL.cpp:1487] Warning: WARNING: destroy_process_group() was not called before program exit, which can leak resources. ...
# (torch 2.4-2.5 words it `... before it is being destructed.`: parsers/c10_log.py)
PROGRAM_EXIT = (
    "process group has NOT been destroyed before",
    "destroy_process_group() was not called before program exit",
)

# A watchdog timeout's C++ stack whose header (`Watchdog caught collective operation timeout`)
# is not in the excerpt (jpata/particleflow#390 starts at the stack's first frame):
#   frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, std::ratio<1l, 1000l> > >) + 0x1d2 (0x1554e9e0f8f2 in /mnt/home/ewulff/miniforge3/envs/mlpf/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so)
# The checkTimeout frame is only ever on the stack of a timeout; it makes one event per stack,
# and none when the report it belongs to is a few lines above it (in the same process).
CHECK_TIMEOUT_FRAME = r"frame #\d+: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout\("
STACK_REACH = 20  # lines from a report to its checkTimeout frame, wrapped and interleaved
FROM_STACK = '{"inferred_from":"stack"}'

# Lines that repeat a fact already counted: recognised, no event.
# Exception raised from checkTimeout at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:632 (most recent call first):
EXCEPTION_RAISED = r"Exception raised from \w+ at \S*ProcessGroupNCCL\.cpp:\d+"
# frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f83f296c1b6 in /.../libc10.so)
CPP_FRAME = r"frame #\d+: .* \(0x[0-9a-fA-F]+ in \S"
FLIGHT_RECORDER_NOISE = (
    "ProcessGroupNCCL preparing to dump debug info",
    "Stack trace of the failed collective",
    "Finished writing NCCLPG debug info",
    "NCCL_DESYNC_DEBUG report",  # Failed to retrieve NCCL_DESYNC_DEBUG report.  Please file ...
    # torch 2.9+'s words for the dump written (the same validation record, rank 0):
    #   [rank0] ... Rank 0] Flight Recorder trace successfully dumped.
    "Flight Recorder trace successfully dumped",
    "Finished writing Flight Recorder debug info",
)

# A rank that had not timed out itself learns through the store that another one did and
# dumps too (accelerate#3861: rank 1 timed out, rank 0 only observed it): a `dump_observed`.
#   [rank0]:[E1128 21:11:49.041188078 ProcessGroupNCCL.cpp:1806] [PG ID 0 PG GUID 0(default_pg) Rank 0] Observed flight recorder dump signal from another rank via TCPStore.
OBSERVED_DUMP = "Observed flight recorder dump signal from another rank"

# torch >= 2.4's watchdog says when a failed collective (a timeout or an error) makes this
# rank the first to dump; usually after its timeout report, alone when that is not in the
# excerpt (lsdefine/simple_GRPO#46): a `dump_signal`.
#   [rank2]:[E723 01:58:45.511452851 ProcessGroupNCCL.cpp:2103] [PG ID 1 PG GUID 1 Rank 2] First PG on this rank to signal dumping.
FIRST_TO_DUMP = "First PG on this rank to signal dumping"
# torch 2.9+ says it instead as it tells the others (the same validation record, rank 0 after
# its ALLREDUCE timeout):
#   [rank0] ... Rank 0] Broadcasting signal exception_dump to other ranks via TCPStore.
BROADCASTS_DUMP = "Broadcasting signal exception_dump to other ranks"

# A rank aborting its process group (its process going down, after an error of its own or
# at exit) whose abort hung (karpathy/nanochat#554: rank 6 after its download failed):
#   [rank6]:[E222 18:40:45.627415948 ProcessGroupNCCL.cpp:1362] [PG ID 0 PG GUID 0(default_pg) Rank 6] Future for ProcessGroup abort timed out after 600000 ms
ABORT_TIMED_OUT = r"Future for ProcessGroup abort timed out after (\d+) ms"

OPS_FAILED = "Some NCCL operations have failed or timed out"
PROCESS_ABORT = "To avoid data inconsistency, we are taking the entire process down"


def _contains_any(words: tuple[str, ...]) -> pl.Expr:
    return pl.col("message").str.contains_any(list(words))


def _poll_alone() -> pl.Expr:
    """A socket poll that timed out with no statement of the timeout on the next line."""
    stated_next = pl.col("_next_states_timeout").fill_null(False)
    return pl.col("message").str.contains(SOCKET_POLL_TIMEOUT) & ~stated_next


def _with_next_line(lines: pl.DataFrame, value: pl.Expr, name: str) -> pl.DataFrame:
    """`lines` with `value` of the line after each (same file) as column `name`."""
    following = lines.select("file", (pl.col("line") - 1).alias("line"), value.alias(name))
    return lines.join(following, on=["file", "line"], how="left")


# A report a paste cut within its first words, the last thing it holds (ultralytics/yolov5#7481:
# `[E ProcessGroupNCCL.cpp:587] [Rank 1] Watchdog c` after rank 0's caching bar at 29:57)
CUT_WATCHDOG = r"\[Rank \d+\] Watchdog (c[a-z ]*)$"
CUT_WATCHDOG_LITERAL = "] Watchdog c"


def _cut_watchdog() -> pl.Expr:
    """A watchdog report cut before its own words were all written: what is left of them
    begins `caught collective`."""
    cut = pl.col("message").str.extract(CUT_WATCHDOG, 1)
    return pl.lit(WATCHDOG_CAUGHT.removeprefix("Watchdog ")).str.starts_with(cut).fill_null(False)


def _has(word: str) -> pl.Expr:
    return pl.col("message").str.contains(word, literal=True)


def _event() -> pl.Expr:
    message = pl.col("message")
    return (
        pl.when(
            (_has("WorkNCCL(") & _contains_any(TIMEOUT_WORDING))
            | _contains_any(OWN_TIMEOUT_WORDING)
            | _cut_watchdog()
        )
        .then(pl.lit("collective_timeout"))
        .when(
            (_has(PG_SHUTDOWN) & (_has(ASYNC_CHECK) | _has(WATCHDOG_DIED)))
            | message.str.contains(PG_DESTROYED)
            | _contains_any(SHUTDOWN_STEPS)
        )
        .then(pl.lit("pg_shutdown"))
        .when(_contains_any(PROGRAM_EXIT))
        .then(pl.lit("program_exit"))
        .when(message.str.contains(SOCKET_WAIT_TIMEOUT) | _poll_alone())
        .then(pl.lit("collective_timeout"))
        .when(_thrown().struct.field("type").is_not_null())
        .then(pl.lit("exception"))
        .when(message.str.contains(LAST_ENQUEUED))
        .then(pl.lit("work_progress"))
        .when(_has(FIRST_TO_DUMP) | _has(BROADCASTS_DUMP))
        .then(pl.lit("dump_signal"))
        .when(_has(OBSERVED_DUMP))
        .then(pl.lit("dump_observed"))
        .when(message.str.contains(ABORT_TIMED_OUT))
        .then(pl.lit("abort_timeout"))
        .when(_has(OPS_FAILED))
        .then(pl.lit("ops_failed"))
        .when(_has(PROCESS_ABORT))
        .then(pl.lit("process_abort"))
        .when(_contains_any(HEARTBEAT_WORDING))
        .then(pl.lit("heartbeat_timeout"))
        .when(
            message.str.contains(STORE_SETUP)
            | message.str.contains(STORE_CLIENTS)
            | message.str.contains(STORE_BARRIER)
        )
        .then(pl.lit("store_timeout"))
    )


def _noise() -> pl.Expr:
    message = pl.col("message")
    return (
        message.str.contains(EXCEPTION_RAISED)
        | message.str.contains(CPP_FRAME)
        | _contains_any(FLIGHT_RECORDER_NOISE)
        | _has(SOCKET_WAIT_POLL)
        | _has(WATCHDOG_DIED)
    )


def _thrown() -> pl.Expr:
    """The `<type>: <message>` the watchdog died of (a struct of nulls for other lines, and
    for the timeouts and NCCL errors other events and families report)."""
    message = pl.col("message")
    reason = message.str.slice(message.str.find(WATCHDOG_DIED, literal=True) + len(WATCHDOG_DIED))
    own = _has(WATCHDOG_DIED) & ~reason.str.starts_with(NCCL_ERROR)
    return pl.when(own).then(reason).otherwise(pl.lit(None, pl.String)).str.extract_groups(THROWN)


def _stack_timeouts(rows: pl.DataFrame) -> pl.DataFrame:
    """Mark (`_from_stack`) the checkTimeout frames that stand for a timeout report the
    excerpt lacks: no report, and no other such frame, in the STACK_REACH lines before it
    from the same process (the C++ stack has no `[rankN]:` prefix: launcher prefixes tell
    processes apart)."""
    frame = pl.col("message").str.contains(CHECK_TIMEOUT_FRAME)
    if not rows.select(frame.any()).item():
        return rows.with_columns(pl.lit(False).alias("_from_stack"))
    anchor = (pl.col("event") == "collective_timeout").fill_null(False) | frame
    before = (
        pl.when(anchor).then(pl.col("line").cast(pl.Int64)).shift(1).forward_fill().over("_process")
    )
    alone = before.is_null() | (pl.col("line").cast(pl.Int64) - before > STACK_REACH)
    return (
        rows.with_columns(process_key(rows.columns).alias("_process"))
        .sort("file", "line")
        .with_columns((frame & alone & ~pl.col("_continued")).alias("_from_stack"))
        .drop("_process")
    )


def _int(pattern: str) -> pl.Expr:
    return pl.col("message").str.extract(pattern, 1).cast(pl.Int64, strict=False)


def _process_group_columns() -> list[pl.Expr]:
    """`pg` as printed-normalised ("0 (default_pg)", "1", by GUID where printed), `comm_rank`,
    and the default group's `[Rank N]` as `rank`."""
    tag = pl.col("_pg")
    pg_id = tag.struct.field("pg_id")
    pg_desc = tag.struct.field("pg_desc")
    comm_rank = pl.coalesce(
        tag.struct.field("pg_rank"), pl.col("message").str.extract(RANK_TAG, 1)
    ).cast(pl.Int32, strict=False)
    # a group is the same group on every rank by its GUID (its ID may differ between ranks);
    # a hash GUID is cut to what tells groups apart in a report
    guid = tag.struct.field("pg_guid")
    name = pl.coalesce(pl.when(guid != "").then(guid.str.slice(0, 12)), pg_id)
    pg = pl.when(pg_desc.is_not_null()).then(pl.format("{} ({})", name, pg_desc)).otherwise(name)
    default_group = pg_id.is_null() | (pg_id == "0")
    return [
        pg.alias("pg"),
        comm_rank.alias("comm_rank"),
        pl.when(default_group).then(comm_rank).alias("_group_rank"),
    ]


# A report cut in two by a console or a paste that wraps long lines: the first part opens a
# report (`... operation timeout: ` / `..., Timeo` / `... or timeout) detected`) and the next
# line, glued back on with or without the space the wrap took, completes it.
#   [rank3]:[E ProcessGroupNCCL.cpp:563] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=15037, OpType=_ALLGATHER_BASE, NumelIn=131072512, NumelOut=524290048, Timeo
#   ut(ms)=600000) ran for 600055 milliseconds before timing out.      (meta-pytorch/torchtune#1165)
#   [default2]:[E ProcessGroupNCCL.cpp:475] [Rank 2] Watchdog caught
#   collective operation timeout: WorkNCCL(SeqNum=3, OpType=ALLREDUCE, ...) ran for ...   (huggingface/nanotron#204)
OPENS_A_REPORT = (
    "collective operation timeout",
    "Exception (either an error or timeout)",
    "Watchdog caught",
)
COMPLETE_REPORT = (
    r"WorkNCCL\(.*Timeout\(ms\)=\d+\) ran for \d+ milliseconds before timing out"
    r"|detected by watchdog at work: \d+, last enqueued NCCL work: -?\d+, last completed"
)


def _unwrapped(lines: pl.DataFrame) -> pl.DataFrame:
    """Reports wrapped onto two lines joined on their first line; the second line kept only
    as recognised (`_continued`), so it is neither a report of its own nor read as progress."""
    message = pl.col("message")
    opened = lines.with_columns(
        (_contains_any(OPENS_A_REPORT) & ~message.str.contains(COMPLETE_REPORT)).alias("_open")
    )
    if not opened.get_column("_open").any():
        return lines.with_columns(pl.lit(False).alias("_continued"))
    joined = _with_next_line(opened, message, "_next")
    joined = _with_next_line(joined, pl.col("_next"), "_after_next")
    glued = pl.concat_str(message, pl.col("_next"))
    spaced = pl.concat_str(
        message.str.strip_chars_end(), pl.lit(" "), pl.col("_next").str.strip_chars_start()
    )
    # a report broken at each of its parts (bghira/SimpleTuner#3099): `... timeout:` /
    # `WorkNCCL(SeqNum=34036, OpType=ALLGATHER, ...)` / `ran for 5400073 milliseconds ...`
    # (a console that pads each wrapped row ends it with a space, and an author who breaks it
    # by hand indents the rows after the first (alan-turing-institute/autocast#381): pieces
    # joined by one space)
    three = pl.concat_str(
        message.str.strip_chars_end(),
        pl.lit(" "),
        pl.col("_next").str.strip_chars(),
        pl.lit(" "),
        pl.col("_after_next").str.strip_chars_start(),
    )
    whole = (
        pl.when(pl.col("_open") & glued.str.contains(COMPLETE_REPORT))
        .then(glued)
        .when(pl.col("_open") & spaced.str.contains(COMPLETE_REPORT))
        .then(spaced)
        .when(pl.col("_open") & three.str.contains(COMPLETE_REPORT))
        .then(three)
    )
    joined = joined.with_columns(
        whole.alias("_whole"),
        (pl.col("_open") & three.str.contains(COMPLETE_REPORT) & whole.eq_missing(three))
        .fill_null(False)
        .alias("_three"),
    )
    completed = joined.filter(pl.col("_whole").is_not_null())
    continued = (
        pl.concat(
            [
                completed.select("file", (pl.col("line") + 1).alias("line")),
                completed.filter("_three").select("file", (pl.col("line") + 2).alias("line")),
            ]
        )
        .unique()
        .with_columns(pl.lit(True).alias("_continued"))
    )
    return (
        joined.with_columns(pl.coalesce("_whole", "message").alias("message"))
        .drop("_open", "_next", "_after_next", "_whole", "_three")
        .join(continued, on=["file", "line"], how="left")
        .with_columns(pl.col("_continued").fill_null(False))
    )


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    work = pl.col("_work")
    store = pl.col("_store")
    clients = pl.col("_clients")
    barrier = pl.col("_barrier")
    found = (
        _unwrapped(lines)
        .pipe(
            _with_next_line,
            pl.col("message").str.contains(SOCKET_WAIT_TIMEOUT),
            "_next_states_timeout",
        )
        .with_columns(
            pl.when(~pl.col("_continued")).then(_event()).alias("event"),
            (_noise() | pl.col("_continued")).alias("_noise"),
        )
        .filter(pl.col("event").is_not_null() | pl.col("_noise"))
        .pipe(_stack_timeouts)
        .with_columns(
            pl.when(pl.col("_from_stack"))
            .then(pl.lit("collective_timeout"))
            .otherwise(pl.col("event"))
            .alias("event")
        )
        .with_columns(
            _thrown().alias("_thrown"),
            message.str.extract_groups(WORK_NCCL).alias("_work"),
            message.str.extract_groups(PG_TAG).alias("_pg"),
            message.str.extract_groups(STORE_SETUP).alias("_store"),
            message.str.extract_groups(STORE_CLIENTS).alias("_clients"),
            message.str.extract_groups(STORE_BARRIER).alias("_barrier"),
        )
        .with_columns(_process_group_columns())
    )
    return _without_shared_ranks(
        found.select(
            "file",
            "line",
            "event",
            pl.when(pl.col("event").is_in(["pg_shutdown", "program_exit"]))
            .then(pl.lit("info"))
            .when(pl.col("event").is_not_null())
            .then(pl.lit("error"))
            .alias("severity"),
            pl.when(pl.col("event") == "exception")
            .then(pl.col("_thrown").struct.field("type"))
            .alias("exc_type"),
            pl.when(pl.col("event") == "exception")
            .then(
                pl.col("_thrown")
                .struct.field("message")
                .str.strip_chars()
                .str.slice(0, MESSAGE_CHARS)
            )
            .alias("exc_message"),
            pl.when(pl.col("_from_stack")).then(pl.lit(FROM_STACK)).alias("extra"),
            pl.when(message.str.contains(SOCKET_WAIT_TIMEOUT) | _poll_alone())
            .then(message.str.extract(SOCKET_REMOTE, 1))
            .alias("peer"),
            pl.coalesce(
                work.struct.field("seq").cast(pl.Int64, strict=False), _int(FAILING_WORK)
            ).alias("seq"),
            work.struct.field("op").alias("op"),
            work.struct.field("shape").alias("shape"),
            work.struct.field("numel_in").cast(pl.Int64, strict=False).alias("numel_in"),
            work.struct.field("numel_out").cast(pl.Int64, strict=False).alias("numel_out"),
            pl.coalesce(
                work.struct.field("timeout_ms").cast(pl.Int64, strict=False),
                clients.struct.field("seconds").cast(pl.Int64, strict=False) * 1000,
                _barrier_timeout_ms(barrier),
                _int(SOCKET_WAIT_TIMEOUT),
                _int(ABORT_TIMED_OUT),
                (
                    message.str.extract(SCHEDULER_WATCHDOG, 1).cast(pl.Float64, strict=False) * 1000
                ).cast(pl.Int64),
            ).alias("timeout_ms"),
            _int(ELAPSED).alias("elapsed_ms"),
            _int(LAST_ENQUEUED).alias("last_enqueued"),
            _int(LAST_STARTED).alias("last_started"),
            _int(LAST_COMPLETED).alias("last_completed"),
            "pg",
            "comm_rank",
            pl.coalesce(
                pl.col("_group_rank"),
                store.struct.field("rank"),
                barrier.struct.field("rank"),
                message.str.extract(PG_DESTROYED, 1),
            )
            .cast(pl.Int32, strict=False)
            .alias("rank"),
            pl.coalesce(
                _int(DUMP_SIGNAL_FROM).cast(pl.Int32, strict=False),
                store.struct.field("root").cast(pl.Int32, strict=False),
            ).alias("peer_rank"),
            pl.coalesce(
                _int(STUCK_SECONDS),
                clients.struct.field("joined").cast(pl.Int64, strict=False),
                barrier.struct.field("count").cast(pl.Int64, strict=False),
            ).alias("value"),
            pl.coalesce(clients.struct.field("expected"), barrier.struct.field("world"))
            .cast(pl.Int32, strict=False)
            .alias("world_size"),
        )
    )


def _without_shared_ranks(events: pl.DataFrame) -> pl.DataFrame:
    """No rank on timeouts of one file that name the same rank, work and sequence number with
    different elapsed times: several processes wrote them (Alpha-VLLM/LLaMA2-Accessory#147:
    five `[Rank 2] ... WorkNCCL(SeqNum=65265, OpType=_ALLGATHER_BASE, ...) ran for 1804787
    milliseconds`, each with its own time), so the number is each one's rank in a subgroup,
    not a process's global rank."""
    timeout = pl.col("event") == "collective_timeout"
    times = pl.when(timeout).then(pl.col("elapsed_ms"))
    shared = (times.drop_nulls().n_unique() > 1).over("file", "rank", "seq", "op")
    shared = shared & times.is_not_null()
    return events.with_columns(pl.when(shared).then(None).otherwise(pl.col("rank")).alias("rank"))


def _barrier_timeout_ms(barrier: pl.Expr) -> pl.Expr:
    """The store barrier's `timeout=0:30:00` (a Python timedelta) in milliseconds."""
    hours, minutes, seconds = (
        barrier.struct.field(name).cast(pl.Int64, strict=False)
        for name in ("hours", "minutes", "seconds")
    )
    return ((hours * 60 + minutes) * 60 + seconds) * 1000


PARSER = LineParser(
    name="watchdog",
    literals=(
        "WorkNCCL(",
        "Watchdog caught",  # a report wrapped right after its first words
        CUT_WATCHDOG_LITERAL,  # ... or cut within them
        "ast enqueued",  # "last enqueued NCCL work" and the dump signal's "Last enqueued"
        OPS_FAILED,
        PROCESS_ABORT,
        FIRST_TO_DUMP,
        BROADCASTS_DUMP,
        OBSERVED_DUMP,
        *SHUTDOWN_STEPS,
        *PROGRAM_EXIT,
        "Future for ProcessGroup abort timed out",
        *HEARTBEAT_WORDING,
        *OWN_TIMEOUT_WORDING,
        "waitForInput: ",
        WATCHDOG_DIED,
        ASYNC_CHECK,
        "is setting up NCCL communicator",
        "in store based barrier",
        "clients joined",
        "Exception raised from",
        "Process Group destroyed on rank",
        "frame #",
        *FLIGHT_RECORDER_NOISE,
    ),
    parse=parse,
    context_after=2,  # the rest of a report a wrapping console cut in two or three
)
