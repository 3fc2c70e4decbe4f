"""How a process ended, as the shell that started it reports it: bash prints the signal's name
when a child it waits for dies of one, alone on the line or after the script's line number:

    [0]<stderr>:Killed
    [1]<stderr>:Terminated
    [3]<stderr>:Aborted (core dumped)
    ./run.sh: line 12: 48213 Segmentation fault      (core dumped) python train.py

(horovod/horovod#2907 quotes the first three under horovodrun's rank tags.) `Killed` is SIGKILL
from outside the process (most often the Linux OOM killer), `Terminated` the SIGTERM a launcher
sends the survivors; the others are the process's own crash. Each is a `fatal_signal` event,
as a faulthandler or c10 signal report is.

DeepSpeed's launcher, having killed the other workers, reports the return code of the worker
that ended first (deepspeedai/DeepSpeedExamples#626):

    [2023-07-10 04:26:35,999] [ERROR] [launch.py:324:sigkill_handler] ['/global/D1/homes/sushant/sushanta/venv/bin/python3.10', '-u', 'trainCLM.py', '--local_rank=1', '--deepspeed', '/home/sushant/D1/sushanta/try/nepaligpt/clm/config/deepspeed_config.json'] exits with return code = -11

a `worker_failed` event with that exit code (a negative one is the signal that ended it; none,
with `code_cut` in `extra`, where a paste cut the line before it) and no rank: the command it prints is the last one the launcher spawned, left over from its spawning
loop (deepspeed/launcher/launch.py, `sigkill_handler` logs `cmd`), whichever worker ended.
Where that last command is `--local_rank=0`, the launcher spawned one worker on its node, and
that worker is the one that ended: its `local_rank` is 0 (databrickslabs/dolly#166, one GPU,
`exits with return code = -9`).

Text Generation Inference's launcher reports a shard (or its weight download) that a signal
ended, by number, in the shard's span (huggingface/text-generation-inference#1627, #446)::

    2024-03-06T17:53:31.052444Z ERROR shard-manager: text_generation_launcher: Shard process was signaled to shutdown with signal 4 rank=0
    Error: Download process was signaled to shutdown with signal 7

a `fatal_signal` event; `framing` gives the shard's rank from the span field.

PyTorch's multi-process test harness (`MultiProcessTestCase`, which gives process i rank i)
reports its processes that exited with an error code, older and newer wording (pytorch/pytorch
#38395; a comment in intel/torch-xpu-ops quoting a run):

    RuntimeError: Processes 1 exited with error code 10
    RuntimeError: Process 2 exited with error code 10 and exception:

a `worker_failed` event per process named, with its rank, an error whatever the code (the
harness's own 10 means the test raised). So is the process's own last word, the end of the
record it logs with the traceback it caught (pytorch/pytorch#113620, a CI run's `[rank1]:`
lines):

    [rank1]:[2023-11-14 06:36:20,890] torch.testing._internal.common_distributed: [ERROR]  exiting process 1 with exit code: 10

HPE Cray PALS's `mpiexec` (ALCF's Polaris and Aurora) reports each rank that ended badly, by
global rank, after the host it ran on (argonne-lcf/conda_install_scripts' Polaris smoke test;
argonne-lcf/alcf-nccl-tests; saforem2/mmm's Aurora notes):

    x3200c0s13b0n0.hsn.cm.sirius.alcf.anl.gov: rank 0 died from signal 11 and dumped core
    x3200c0s13b0n0.hsn.cm.sirius.alcf.anl.gov: rank 3 died from signal 15
    x4512c5s2b0n0: rank 6 exited with code 1

a `worker_failed` event of that rank and host, a signal as its negative exit code.

The kernel's own report of an OOM kill, pasted from `dmesg` (mm/oom_kill.c: "%s: Killed process
%d (%s) total-vm:%lukB, ..." after `Out of memory` or `Memory cgroup out of memory`), is a
`host_oom` event with the killed pid, which the logs' pid map turns into a rank; its first line
(`python invoked oom-killer: gfp_mask=...`) is one with no pid. So is the Rust
runtime's abort of a process whose host allocation failed (`memory allocation of 2097152 bytes
failed`), with no pid.
"""  # noqa: E501 -- verbatim lines

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser
from parsers.mpirun import SIGNAL_NAMES
from parsers.traceback import FATAL_SIGNALS

# bash's strsignal() words for the signals a training process dies of
SHELL_SIGNALS = {"Killed": "SIGKILL", "Terminated": "SIGTERM", **FATAL_SIGNALS}
# the words alone on the line, or bash's job report: `<script>: line <n>: <pid> <words> <cmd>`
SHELL_DEATH = (
    r"^\s*(?:\S.*?: line \d+: +(?P<pid>\d+) +)?"
    r"(?P<what>" + "|".join(SHELL_SIGNALS) + r")(?: +\(core dumped\))?(?: {2,}\S.*)?\s*$"
)

LAUNCHER_SIGNALLED = r"(?:Shard|Download) process was signaled to shutdown with signal (\d+)"

KERNEL_OOM_KILL = r"(?:Out of memory|Memory cgroup out of memory): Killed process (\d+) \("
# the first line of the kernel's report (mm/oom_kill.c, `dump_header`): the process whose
# allocation made it run, not the one it killed (NVIDIA/DALI#585, a paste cut before the kill:
#   [2612362.231458] python invoked oom-killer: gfp_mask=0x14000c0(GFP_KERNEL), nodemask=(null), ...
KERNEL_OOM_INVOKED = r"\S invoked oom-killer: gfp_mask="
# Rust's runtime aborting a process whose host allocation failed (tokenizers and other Rust
# extensions; std's `handle_alloc_error`), two processes' words interleaved on one line in
# deepspeedai/DeepSpeedExamples#321:
#   memory allocation of 2097152 bytes failed
#   memory allocation of memory allocation of 20971522097152 bytes failed
RUST_ALLOCATION_FAILED = r"memory allocation of (?:memory allocation of )?(\d+) bytes failed"
FAILED_HOST_ALLOCATION = "a failed host allocation"  # the event's `exc_message`, for the oom rule


# the harness's RuntimeError, not any tool's words about a process (another's number may be a pid)
HARNESS_EXIT = r"RuntimeError: Process(?:es)? (\d+(?:[ ,]+\d+)*) exited with error code (-?\d+)"
# its older word on the first process it saw exit with an error, before stopping the others
# (pytorch/pytorch#61670, a CI run of 2021:
#   Process 2 terminated with exit code 10, terminating remaining processes.)
HARNESS_FIRST_EXIT = (
    r"\bProcess (\d+) terminated with exit code (-?\d+), terminating remaining processes"
)

# the child's own report as it exits (torch/testing/_internal/common_distributed.py)
HARNESS_CHILD_EXIT = r"\bexiting process (\d+) with exit code: (-?\d+)"

# Composer's launcher on the first worker it sees end with an error, by global rank; it then
# stops the others (mosaicml/composer, composer/cli/launcher.py `_monitor_processes`;
# mosaicml/llm-foundry#258: `ERROR:composer.cli.launcher:Rank 2 crashed with exit code -7.`;
# releases of 2022 end it without the period, mosaicml/composer#1165: `... exit code -6`)
COMPOSER_CRASH = r"\bRank (?P<rank>\d{1,7}) crashed with exit code (?P<code>-?\d+)(?:\.|\s*$)"

# PaddlePaddle's launcher on the trainers it saw end with an error, by rank, after it stopped
# the rest (paddle/distributed/utils/launch_utils.py; PaddlePaddle/PaddleDetection#5202:
#   ERROR 2022-02-12 15:52:16,973 launch_utils.py:604] ABORT!!! Out of all 4 trainers, the
#   trainer process with rank=[3] was aborted. Please check its log.
# ); it says no exit code, only that each listed trainer's was not 0 (`aborted` in `extra`)
PADDLE_ABORT = (
    r"ABORT!!! Out of all (?P<world>\d+) trainers, the trainer process with "
    r"rank=\[(?P<ranks>[\d, ]+)\] was aborted"
)
ABORTED = '{"aborted":true}'

# Lightning's watch over the workers its main process started (`_ChildProcessObserver` in
# lightning/fabric/strategies/launchers/subprocess_script.py): the first child it sees end
# with a non-zero code, under that child's local rank (`rank_prefixed_message(..., rank=i + 1)`,
# the main process being local rank 0); it then stops the others (torchmd/torchmd-net#324):
#   [rank: 1] Child process with PID 224779 terminated with code 1. Forcefully terminating all
#   other processes to avoid zombies :zombie:
# (a page that wrapped the line keeps its first half: vividf/autoware-ml's notes on a
# StreamPETR run, `INFO: [rank: 1] Child process with PID 9487 terminated with code -9.`)
LIGHTNING_CHILD = "Child process with PID "
LIGHTNING_CHILD_EXIT = (
    rf"(?:\[rank: (?P<rank>\d+)\] )?{LIGHTNING_CHILD}(?P<pid>\d+) terminated with code "
    r"(?P<code>-?\d+)\.(?: Forcefully terminating|\s*$)"
)

LIGHTNING_REPORT = '{"reported_by":"lightning"}'

PALS_REPORT = (
    r"^(?:(?P<host>[A-Za-z][\w.-]*): )?rank (?P<rank>\d{1,7}) (?:died from signal "
    r"(?P<signal>\d{1,2})(?: and dumped core)?|exited with code (?P<code>-?\d+))\s*$"
)

# vLLM's multiprocessing executor on a worker process it saw die, the worker named by its rank
# (`VllmWorker-{rank}`); the exit code follows in later releases (OpenPipe/ART#201;
# vllm-project/vllm-ascend PR 7742's run):
#   ERROR 07-04 17:35:16 [multiproc_executor.py:140] Worker proc VllmWorker-1 died
#   unexpectedly, shutting down executor.
#   ... Worker proc VllmWorker-14 died unexpectedly (exit code: None), shutting down executor.
# a `worker_failed` of that rank, written by the engine's process, not the worker's
# (`reported` in `extra`: the engine's own lines beside it are not rank 1's; intel/llm-scaler
# #154, the engine core's traceback right after); with no code said, `died` too
VLLM_WORKER_DIED = (
    r"\bWorker proc VllmWorker-(?P<rank>\d{1,7}) died unexpectedly"
    r"(?: \(exit code: (?:(?P<code>-?\d+)|None)\))?, shutting down executor"
)
REPORTED = '"reported":true'
DIED = '{"died":true,' + REPORTED + "}"

# kubectl's word on a command it ran in a pod (`kubectl exec`, the MPI operator's way of
# starting ranks): the command's exit code, a shell's 128+N for a signal (kubeflow/mpi-operator
# #444, under horovodrun's rank tag: `[3]<stderr>:command terminated with exit code 137`)
KUBECTL_EXEC_EXIT = r"^command terminated with exit code (\d+)\s*$"

DEEPSPEED_EXIT = r"\] exits with return code = (-?\d+)\s*$"
# the spawned command's first local rank (`'--local_rank=0'`, `--local-rank=0` in newer releases)
DEEPSPEED_LOCAL_RANK = r"'--local[_-]rank=(\d+)'"
# the same report cut before its code by a paste: the launcher writes it at ERROR level only
# when a worker ended with a non-zero code (deepspeedai/DeepSpeed#2946)
DEEPSPEED_EXIT_REPORT = r"\[ERROR\] \[launch\.py:\d+:sigkill_handler\] \["


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    parts = [
        _shell_deaths(lines),
        _kernel_oom_kills(lines),
        _allocation_failures(lines),
        _deepspeed_exits(lines),
        _launcher_signalled(lines),
        _harness_exits(lines),
        _composer_crashes(lines),
        _pals_reports(lines),
        _lightning_child_exits(lines),
        _kubectl_exec_exits(lines),
        _paddle_aborts(lines),
        _vllm_worker_deaths(lines),
    ]
    return pl.concat(parts, how="diagonal_relaxed")


def _paddle_aborts(lines: pl.DataFrame) -> pl.DataFrame:
    said = pl.col("message").str.extract_groups(PADDLE_ABORT).struct
    found = lines.filter(said.field("ranks").is_not_null())
    if found.is_empty():
        return found.select("file", "line")
    return (
        found.select(
            "file",
            "line",
            said.field("ranks").str.extract_all(r"\d+").alias("rank"),
            said.field("world").cast(pl.Int32, strict=False).alias("world_size"),
        )
        .explode("rank")
        .select(
            "file",
            "line",
            pl.lit("worker_failed").alias("event"),
            pl.lit("error").alias("severity"),
            pl.col("rank").cast(pl.Int32, strict=False),
            "world_size",
            pl.lit(ABORTED).alias("extra"),
        )
    )


def _vllm_worker_deaths(lines: pl.DataFrame) -> pl.DataFrame:
    said = pl.col("message").str.extract_groups(VLLM_WORKER_DIED).struct
    code = said.field("code").cast(pl.Int32, strict=False)
    return lines.filter(said.field("rank").is_not_null()).select(
        "file",
        "line",
        pl.lit("worker_failed").alias("event"),
        pl.lit("error").alias("severity"),
        said.field("rank").cast(pl.Int32, strict=False).alias("rank"),
        code.alias("exitcode"),
        pl.when(code.is_null())
        .then(pl.lit(DIED))
        .otherwise(pl.lit("{" + REPORTED + "}"))
        .alias("extra"),
    )


def _kubectl_exec_exits(lines: pl.DataFrame) -> pl.DataFrame:
    code = pl.col("message").str.extract(KUBECTL_EXEC_EXIT, 1).cast(pl.Int32, strict=False)
    return _worker_exits(lines, code)


def _pals_reports(lines: pl.DataFrame) -> pl.DataFrame:
    said = pl.col("message").str.extract_groups(PALS_REPORT)
    signal = said.struct.field("signal").cast(pl.Int32, strict=False)
    code = pl.coalesce(-signal, said.struct.field("code").cast(pl.Int32, strict=False))
    return _worker_exits(
        lines.with_columns(said.alias("_pals")),
        code,
        pl.col("_pals").struct.field("rank").cast(pl.Int32, strict=False).alias("rank"),
        pl.col("_pals").struct.field("host").alias("host"),
    )


def _worker_exits(lines: pl.DataFrame, code: pl.Expr, *named: pl.Expr) -> pl.DataFrame:
    """`worker_failed` for the lines where `code` (the exit code a line reports) is not 0, with
    the `named` columns (its rank, its host) the line states."""
    return (
        lines.with_columns(code.alias("exitcode"))
        .filter(pl.col("exitcode").is_not_null() & (pl.col("exitcode") != 0))
        .select(
            "file",
            "line",
            pl.lit("worker_failed").alias("event"),
            pl.lit("error").alias("severity"),
            "exitcode",
            *named,
        )
    )


def _deepspeed_exits(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    code = message.str.extract(DEEPSPEED_EXIT, 1).cast(pl.Int32, strict=False)
    cut = code.is_null() & message.str.contains(DEEPSPEED_EXIT_REPORT)
    return (
        lines.with_columns(code.alias("exitcode"), cut.alias("_cut"))
        .filter(pl.col("exitcode").is_not_null() | pl.col("_cut"))
        .select(
            "file",
            "line",
            pl.lit("worker_failed").alias("event"),
            pl.lit("error").alias("severity"),
            "exitcode",
            # the last worker spawned being local rank 0, it was the only one
            pl.when(message.str.extract(DEEPSPEED_LOCAL_RANK, 1) == "0")
            .then(pl.lit(0, dtype=pl.Int32))
            .alias("local_rank"),
            pl.when("_cut").then(pl.lit('{"code_cut":true}')).alias("extra"),
        )
    )


def _composer_crashes(lines: pl.DataFrame) -> pl.DataFrame:
    said = pl.col("message").str.extract_groups(COMPOSER_CRASH)
    return lines.filter(pl.col("message").str.contains(COMPOSER_CRASH)).select(
        "file",
        "line",
        pl.lit("worker_failed").alias("event"),
        pl.lit("error").alias("severity"),
        said.struct.field("code").cast(pl.Int32, strict=False).alias("exitcode"),
        said.struct.field("rank").cast(pl.Int32, strict=False).alias("rank"),
        # it reports only the first crash it sees, then stops the rest
        pl.lit('{"first_to_exit":true}').alias("extra"),
    )


def _lightning_child_exits(lines: pl.DataFrame) -> pl.DataFrame:
    said = pl.col("message").str.extract_groups(LIGHTNING_CHILD_EXIT)
    return lines.filter(pl.col("message").str.contains(LIGHTNING_CHILD_EXIT)).select(
        "file",
        "line",
        pl.lit("worker_failed").alias("event"),
        pl.lit("error").alias("severity"),
        said.struct.field("code").cast(pl.Int32, strict=False).alias("exitcode"),
        said.struct.field("pid").cast(pl.Int64, strict=False).alias("pid"),
        # the prefix is the child's place among the main process's workers, not the rank of
        # the process that wrote the line (the main one)
        pl.coalesce(pl.col("prefix_rank"), said.struct.field("rank"))
        .cast(pl.Int32, strict=False)
        .alias("local_rank"),
        pl.lit(LIGHTNING_REPORT).alias("extra"),
    )


def _harness_exits(lines: pl.DataFrame) -> pl.DataFrame:
    # the parent's report (groups 1, 2), the child's own (3, 4) or the older first exit (5, 6)
    said = pl.col("message").str.extract_groups(
        f"{HARNESS_EXIT}|{HARNESS_CHILD_EXIT}|{HARNESS_FIRST_EXIT}"
    )
    ranks = pl.coalesce(*(said.struct.field(group) for group in ("1", "3", "5")))
    code = pl.coalesce(*(said.struct.field(group) for group in ("2", "4", "6")))
    return (
        lines.with_columns(ranks.alias("_ranks"), code.alias("_code"))
        .filter(pl.col("_ranks").is_not_null())
        .select(
            "file",
            "line",
            pl.lit("worker_failed").alias("event"),
            pl.lit("error").alias("severity"),
            pl.col("_code").cast(pl.Int32, strict=False).alias("exitcode"),
            # the parent's word about a child (not the rank of the console's other lines), and
            # an error whatever the code (the harness's own 10: the test raised); the older
            # word names the first process it saw fail, then stops the others
            pl.when(said.struct.field("5").is_not_null())
            .then(pl.lit('{"spawned":true,"error_exit":true,"first_to_exit":true}'))
            .otherwise(pl.lit('{"spawned":true,"error_exit":true}'))
            .alias("extra"),
            pl.col("_ranks")
            .str.extract_all(r"\d+")
            .list.eval(pl.element().cast(pl.Int32, strict=False))
            .alias("rank"),
        )
        .explode("rank")
    )


def _launcher_signalled(lines: pl.DataFrame) -> pl.DataFrame:
    number = pl.col("message").str.extract(LAUNCHER_SIGNALLED, 1)
    name = number.replace_strict(SIGNAL_NAMES, default=None, return_dtype=pl.String)
    return (
        lines.with_columns(name.alias("signal"), ("signal " + number).alias("exc_message"))
        .filter(pl.col("signal").is_not_null())
        .select(
            "file",
            "line",
            pl.lit("fatal_signal").alias("event"),
            pl.lit("error").alias("severity"),
            "exc_message",
            "signal",
        )
    )


def _kernel_oom_kills(lines: pl.DataFrame) -> pl.DataFrame:
    pid = pl.col("message").str.extract(KERNEL_OOM_KILL, 1).cast(pl.Int64, strict=False)
    invoked = pl.col("message").str.contains(KERNEL_OOM_INVOKED)
    return (
        lines.with_columns(pid.alias("pid"))
        .filter(pl.col("pid").is_not_null() | invoked)
        .select(
            "file",
            "line",
            pl.lit("host_oom").alias("event"),
            pl.lit("error").alias("severity"),
            pl.lit("the kernel's OOM killer").alias("exc_message"),
            pl.lit("SIGKILL").alias("signal"),
            "pid",
        )
    )


def _allocation_failures(lines: pl.DataFrame) -> pl.DataFrame:
    said = pl.col("message").str.contains(RUST_ALLOCATION_FAILED)
    return lines.filter(said).select(
        "file",
        "line",
        pl.lit("host_oom").alias("event"),
        pl.lit("error").alias("severity"),
        pl.lit(FAILED_HOST_ALLOCATION).alias("exc_message"),
        pl.lit("SIGABRT").alias("signal"),
    )


def _shell_deaths(lines: pl.DataFrame) -> pl.DataFrame:
    found = pl.col("message").str.extract_groups(SHELL_DEATH)
    deaths = lines.with_columns(found.alias("_death")).filter(
        pl.col("_death").struct.field("what").is_not_null()
    )
    what = pl.col("_death").struct.field("what")
    return deaths.select(
        "file",
        "line",
        pl.lit("fatal_signal").alias("event"),
        pl.when(what == "Terminated")
        .then(pl.lit("warning"))
        .otherwise(pl.lit("error"))
        .alias("severity"),
        what.alias("exc_message"),
        what.replace_strict(SHELL_SIGNALS, default=None, return_dtype=pl.String).alias("signal"),
        pl.col("_death").struct.field("pid").cast(pl.Int64, strict=False).alias("pid"),
    )


PARSER = LineParser(
    name="process_exit",
    literals=(
        *SHELL_SIGNALS,
        "Killed process",
        " invoked oom-killer: ",
        "exits with return code",
        ":sigkill_handler] [",
        " bytes failed",
        "process was signaled to shutdown",
        " exited with error code ",
        "exiting process ",
        ", terminating remaining processes",
        " crashed with exit code ",
        " died from signal ",
        "command terminated with exit code ",
        " exited with code ",
        LIGHTNING_CHILD,
        "ABORT!!! Out of all ",
        "died unexpectedly",
    ),
    parse=parse,
)
