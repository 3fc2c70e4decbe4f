"""The worker torchrun did not stop: the failed one, found by its pid.

When a worker fails, torchrun's agent stops the others of its node (`Sending process 86503
closing signal SIGTERM`, one line per worker). The agent started its workers one after the
other in local-rank order, so their pids are most often consecutive: where the stopped pids
run without a break but for one missing pid inside the run, that pid is the worker that
failed, and its distance from the lowest pid is its local rank (QwenLM/Qwen#852: 86503, 86504,
86506, 86507, 86508 stopped, 86505 failed with an allocation error that names no rank;
tatsu-lab/stanford_alpaca#183: 53038, 53039, 53041 stopped, local rank 2 killed). A guess from
the launcher's bookkeeping: said as one, with medium confidence, and only where one node's
agent speaks (a local rank is a global one only then).

torchrun's failure summary says it outright when it lists one failed worker alone, with an
exit code (`rank : 0 (local_rank: 0)`, `exitcode : 1 (pid: 240)`, no other failures): a
traceback no line ties to a rank is then that worker's (huggingface/accelerate#3524: the
agent's relay of rank 0's `Cannot re-initialize CUDA in forked subprocess`, its opening record
cut from the paste).
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from logforensics.job import Job
from parsers.process_exit import LIGHTNING_REPORT
from parsers.slurm import MAX_TASKS

# a launcher's reports of a worker that exited: torchrun's summary entry, its agent's
# `failed (exitcode: 1) local_rank: 0`, DeepSpeed's `exits with return code`
EXIT_REPORTS = ("child_failed", "worker_failed")


# Signals that end a process by its own fault or from outside (a SIGTERM or a SIGINT is a stop)
FATAL = {
    4: "SIGILL",
    6: "SIGABRT",
    7: "SIGBUS",
    8: "SIGFPE",
    9: "SIGKILL",
    11: "SIGSEGV",
}
# a shell's (and a container runtime's) exit status of a process a signal ended: 128 + N; an
# exit status is one byte, so `sys.exit(-N)` leaves 256 - N
SHELL_SIGNALED = 128
BYTE = 256


def exit_signal() -> pl.Expr:
    """The fatal signal a reported `exitcode` stands for, null for none: negative as the
    launchers report a signal, 128 + N as a shell or a container reports it (`137`), or 256 - N
    as a Python wrapper passes its child's on with `sys.exit(returncode)` (`247`: DeepSpeed's
    launcher over Determined's wrapper, determined-ai/determined's cifar10_cpu_offloading
    example; a run here, tests/data/launchers/torchrun/wrapped_kill; dlrover reads 247 as an
    OOM kill, intelligent-machine-learning/dlrover#225)."""
    code = pl.col("exitcode").cast(pl.Int64)
    number = (
        pl.when(code < 0)
        .then(-code)
        .when(code.is_between(SHELL_SIGNALED + 1, SHELL_SIGNALED + 31))
        .then(code - SHELL_SIGNALED)
        .when(code.is_between(BYTE - 31, BYTE - 2))
        .then(BYTE - code)
    )
    return number.replace_strict(FATAL, default=None, return_dtype=pl.String)


def child_failed_error() -> pl.Expr:
    """torchrun's ChildFailedError, raised by the launcher: its word that a worker failed, no
    failure of its own."""
    return pl.col("exc_type").str.ends_with("ChildFailedError").fill_null(False)


@dataclass(frozen=True, slots=True)
class UnstoppedWorker:
    rank: int  # its local rank, global on the single node the logs show
    pid: int
    stopped: pl.DataFrame  # the agent's stop lines (file, line, text, rank)

    def said(self) -> str:
        pids = self.stopped.get_column("pid")
        return (
            f"pid {self.pid}: torchrun stopped pids {pids.min()}-{pids.max()} but this one, "
            "so it is the worker that failed"
        )

    def why(self) -> str:
        return f"the worker torchrun did not stop is rank {self.rank} ({self.said()})"


@dataclass(frozen=True, slots=True)
class ListedFailure:
    rank: int
    pid: int | None
    code: int
    stopped: pl.DataFrame  # the summary's entry (file, line, text, rank)
    reporter: str = "summary"  # or its agent's line, or srun's

    def why(self) -> str:
        if self.reporter == "srun":
            return (
                f"srun reports task {self.rank} alone exited with an error (exit code "
                f"{self.code}), the others stopped after it"
            )
        if self.reporter == "lightning":
            return (
                f"Lightning's launcher reports its worker of rank {self.rank} alone ended with an "
                f"error (exit code {self.code}) and stopped the others"
            )
        listed = f"rank {self.rank} alone as failed (exit code {self.code})"
        return f"torchrun's {self.reporter} lists {listed}"


def no_line_ties(failed: UnstoppedWorker | ListedFailure) -> str:
    """The sentence a finding adds where no line ties its error to a rank and the launcher's
    word on `failed` does."""
    return f" No line ties the error to a rank, but {failed.why()}."


def listed_failure(job: Job) -> ListedFailure | None:
    """The one worker torchrun's summary lists as failed with an exit code, where it lists no
    other (and the logs hold no other launcher's report)."""
    listed = job.events.filter(
        (pl.col("event") == "child_failed") & (pl.col("exitcode").fill_null(0) > 0)
    )
    failed = job.events.filter(pl.col("event").is_in(EXIT_REPORTS))
    if listed.is_empty() or failed.get_column("rank").n_unique() != 1:
        return None
    rank = listed.item(0, "rank")
    if rank is None:
        return None
    pid = listed.item(0, "pid") if "pid" in listed.columns else None
    return ListedFailure(int(rank), pid, int(listed.item(0, "exitcode")), listed.head(1))


def listed_failures(job: Job) -> pl.DataFrame:
    """Every worker torchrun's summary lists as failed with an error exit code, its first
    observed failure first (file, line, text, rank, exitcode, pid): empty when any entry names
    no rank."""
    listed = job.events.filter(
        (pl.col("event") == "child_failed") & (pl.col("exitcode").fill_null(0) > 0)
    )
    if listed.is_empty() or listed.get_column("rank").null_count():
        return listed.clear()
    return listed.unique("rank", keep="first", maintain_order=True).sort(
        ROOT_CAUSE, descending=True, maintain_order=True
    )


# the summary's `Root Cause (first observed failure)` entry
ROOT_CAUSE = pl.col("extra").str.contains('"root_cause":true', literal=True).fill_null(False)


def first_observed_failure(job: Job) -> int | None:
    """The rank whose exit torchrun noticed first: its summary's `Root Cause (first observed
    failure)`, else the one worker its agent reports failed on a job of one node (it then
    stopped the others, still running)."""
    seen = first_observed_report(job)
    return None if seen is None else seen[0]


def first_observed_report(job: Job) -> tuple[int, pl.DataFrame] | None:
    """That rank with the launcher's line that says so (see `first_observed_failure`)."""
    root_cause = listed_failures(job).filter(ROOT_CAUSE)
    if not root_cause.is_empty():
        return int(root_cause.item(0, "rank")), root_cause.head(1)
    # (a signal's exit too: the worker it ended is still the one the agent saw fail,
    # ROCm/ROCm#5259: `failed (exitcode: -6) local_rank: 0` after the GPU's hang)
    failed = _the_agent_s_one_report(job, signals=True)
    return None if failed is None else (failed.rank, failed.stopped)


def agent_reported_failure(job: Job) -> ListedFailure | None:
    """Without a summary, the one worker torchrun's agent reports failed (`failed (exitcode: 1)
    local_rank: 0`), or Lightning's launcher (`[rank: 1] Child process with PID 224779
    terminated with code 1.`), on a job of one node, where a local rank is the global one: whose a
    traceback no line ties to a rank is (huawei-noah/Efficient-Computing#90: gloo's refusal
    of `device_ids`, then the agent's line, and nothing else, on one machine). The exit alone
    blames no one: nothing shows it failed first."""
    return _the_agent_s_one_report(job, signals=False)


def _the_agent_s_one_report(job: Job, *, signals: bool) -> ListedFailure | None:
    """The one worker a launcher reports failed on a job of one node, with an error code (or a
    signal's negative one, where `signals`)."""
    failed = job.events.filter(pl.col("event").is_in(EXIT_REPORTS))
    if failed.height != 1 or failed.item(0, "event") != "worker_failed" or not job.one_node():
        return None
    local_rank, code = failed.item(0, "local_rank"), failed.item(0, "exitcode")
    if local_rank is None or code is None or code == 0 or (code < 0 and not signals):
        return None
    pid = failed.item(0, "pid") if "pid" in failed.columns else None
    reporter = "lightning" if by_lightning(failed) else "agent"
    return ListedFailure(int(local_rank), pid, int(code), failed, reporter=reporter)


def by_lightning(reports: pl.DataFrame) -> bool:
    """Whether a launcher's reports of exited workers are all Lightning's."""
    said = reports.get_column("extra") if "extra" in reports.columns else None
    return said is not None and bool(said.eq_missing(LIGHTNING_REPORT).all())


def srun_reported_failure(job: Job) -> ListedFailure | None:
    """The one task srun reports exited with an error (`srun: error: nid008637: task 3: Exited
    with exit code 1`), where srun ran the job's processes themselves (its reports name several
    tasks on that task's node, so a task is a process and its id the rank) and no other launcher
    reports an exit: whose a traceback no line ties to a rank is (JHPark9090/Quantum-Hydra-Mamba's
    notes: a `FileExistsError` unprefixed, then `tasks 0-2: Terminated` after task 3's exit)."""
    exits = job.events.filter(pl.col("event") == "task_exit")
    if exits.is_empty() or not job.events.filter(pl.col("event").is_in(EXIT_REPORTS)).is_empty():
        return None
    failed = exits.filter(pl.col("exitcode").fill_null(0) > 0)
    if failed.height != 1:
        return None
    tasks = failed.item(0, "values")
    if tasks is None or len(tasks) != 1:
        return None
    tasks_on_its_node = _srun_tasks_by_host(job).filter(
        pl.col("host").eq_missing(failed.item(0, "host"))
    )
    if tasks_on_its_node.is_empty() or tasks_on_its_node.item(0, "tasks") < 2:
        return None  # one task per node: srun ran a launcher there, not the ranks
    return ListedFailure(int(tasks[0]), None, int(failed.item(0, "exitcode")), failed, "srun")


def _srun_tasks_by_host(job: Job) -> pl.DataFrame:
    """How many distinct tasks srun's reports name on each host (`host, tasks`): two or more on
    one host, and srun ran the job's processes there itself, not a launcher per node."""
    return (
        job.events.filter(pl.col("event") == "task_exit")
        .select("host", pl.col("values").alias("_task"))
        .explode("_task")
        .drop_nulls("_task")
        .group_by("host")
        .agg(pl.col("_task").n_unique().alias("tasks"))
    )


def above_a_cancellation(reports: pl.DataFrame, cancellations: pl.DataFrame) -> pl.DataFrame:
    """`reports` of srun's without those below the first of SLURM's `cancellations` in the same
    log: srun's word on its tasks after the step was cancelled is the cancellation's teardown
    (facebookincubator/submitit#1708: `*** JOB 608 ON SERVER_NAME CANCELLED AT
    2022-08-12T02:06:12 DUE TO JOB REQUEUE ***`, then `srun: error: SERVER_NAME: tasks 2-3:
    Exited with exit code 1`)."""
    first = cancellations.group_by("file").agg(pl.col("line").min().alias("_cancelled_at"))
    return (
        reports.join(first, on="file", how="left")
        .filter(pl.col("_cancelled_at").is_null() | (pl.col("line") < pl.col("_cancelled_at")))
        .drop("_cancelled_at")
    )


def srun_error_exits(job: Job) -> pl.DataFrame:
    """srun's reports of tasks that exited with an error code (`srun: error: nid008637: tasks
    2-3: Exited with exit code 1`), one row per task, its `rank` the task id where srun ran the
    job's processes itself (it reports several tasks on one node), else none: a task is then
    a node's launcher. Reports below SLURM's cancellation of the step are its teardown
    (`above_a_cancellation`)."""
    exits = job.events.filter(
        (pl.col("event") == "task_exit") & (pl.col("exitcode").fill_null(0) > 0)
    )
    if exits.is_empty():
        return exits
    exits = above_a_cancellation(exits, job.events.filter(pl.col("event") == "step_cancelled"))
    tasks_by_host = _srun_tasks_by_host(job)
    ran_ranks = not tasks_by_host.is_empty() and tasks_by_host.get_column("tasks").max() > 1
    # (each task's row keeps its own id, not a copy of the report's whole list; a row is the
    # whole event, so no more of them than a list holds tasks: the reports before that many)
    listed = pl.col("values").list.len().fill_null(0)
    exits = exits.filter(listed.cum_sum() - listed < MAX_TASKS)
    per_task = (
        exits.with_columns(
            pl.col("values").alias("_task"), pl.lit(None, dtype=pl.List(pl.Int64)).alias("values")
        )
        .explode("_task")
        .head(MAX_TASKS)
    )
    task_rank = pl.col("_task").cast(pl.Int32, strict=False)
    return per_task.with_columns(
        (task_rank if ran_ranks else pl.lit(None, dtype=pl.Int32)).alias("rank"),
        pl.concat_list(pl.col("_task").cast(pl.Int64)).alias("values"),
    ).drop("_task")


def one_reported_failure(job: Job) -> ListedFailure | None:
    """The one worker a launcher reports failed: torchrun's summary, else its agent's line on
    one node, else srun's task exit (see each)."""
    return listed_failure(job) or agent_reported_failure(job) or srun_reported_failure(job)


def agent_stops(job: Job) -> pl.DataFrame:
    """The agent's lines stopping a worker (`Sending process 86503 closing signal SIGTERM`)."""
    return job.events.filter((pl.col("event") == "worker_sigterm") & pl.col("pid").is_not_null())


def unstopped_worker(job: Job) -> UnstoppedWorker | None:
    """The one worker the agent's stops leave out, where the logs show one node's agent."""
    stops = agent_stops(job)
    if stops.is_empty() or stops.get_column("file").n_unique() > 1:
        return None
    if job.events.get_column("host").drop_nulls().n_unique() > 1:
        return None
    pids = stops.get_column("pid").unique().sort()
    low, high = int(pids.min()), int(pids.max())
    if len(pids) < 2 or high - low != len(pids):
        return None  # not one run of pids with exactly one missing inside it
    missing = sorted(set(range(low, high + 1)) - set(pids.to_list()))
    # the agent's own word of the failed worker's pid outranks the gap: the lowest pid stopped
    # is then no local rank 0 (shihao1895/MemoryVLA#20: 73-76 and 78 stopped, 71 failed)
    named = job.events.filter(pl.col("event").is_in(EXIT_REPORTS)).get_column("pid")
    if (named.drop_nulls() != missing[0]).any():
        return None
    local_rank = missing[0] - low
    world = job.world_size
    if world is not None and world.value != len(pids) + 1:
        return None  # more ranks than this node's workers: its local ranks are not global
    return UnstoppedWorker(local_rank, missing[0], stops.sort("file", "line"))
