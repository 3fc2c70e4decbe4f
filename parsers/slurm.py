"""What SLURM says about the tasks of a job step when they die or the step ends:

    slurmstepd: error: Detected 1 oom_kill event in StepId=440575.0. Some of the step tasks have been OOM Killed.
    srun: error: nid001277: tasks 1-3: Out Of Memory
    srun: Terminating StepId=440575.0
    slurmstepd: error: *** STEP 440575.0 ON nid001277 CANCELLED AT 2023-12-05T07:16:01 ***

(chrisknewman/tusas#149; `Detected 1 oom-kill event(s) in StepId=37205392.0. Some of your
processes may have been killed by the cgroup out-of-memory handler.` and `srun: error: node107:
task 0: Out Of Memory` in brain-score/vision#950; `srun: error: SH-IDC1-10-140-24-95: task 0:
Exited with exit code 1` in huggingface/accelerate#2960.)

A node that failed under the step (huggingface/m4-logs, tr_141's node failure) is a
`node_failure` event with its host:

    srun: error: Node failure on jean-zay-iam37
    slurmstepd: error: *** STEP 1943824.0 ON jean-zay-iam17 CANCELLED AT 2023-03-06T03:17:51 DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***

`Out Of Memory` and the oom-kill report are the cgroup's OOM killer ending tasks for host
memory: a `host_oom` event (the `oom` rule), with the srun task ids in `values`. Other task
exits (`task_exit`) and the step's cancellation (`step_cancelled`, with the reason SLURM gives:
`DUE TO TIME LIMIT`) are kept as facts of how the step ended.
"""  # noqa: E501 -- verbatim lines

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

SRUN_TASKS = r"srun: error: (?P<host>[^:\s]+): tasks? (?P<tasks>[\d,\- ]+): (?P<what>.+?)\s*$"
# (slurmstepd's own prefix, or the time stamp of its log file: `[2025-10-16T08:52:15.650] error:
# Detected 3 oom_kill events in StepId=269582.0`)
OOM_KILL = r"(?:slurmstepd(?:-\S+)?:|\]) error: Detected (?P<count>\d+) oom[-_]kill event"
CANCELLED = (
    r"\*\*\* (?:STEP|JOB) (?P<id>\S+) ON (?P<host>\S+) CANCELLED AT (?P<time>\S+)"
    r"(?: DUE TO (?P<why>[A-Z][A-Z ]*?))?(?:, SEE SLURMCTLD LOG FOR DETAILS)? \*\*\*"
)
NODE_FAILURE = r"srun: error: Node failure on (\S+)"
# reasons SLURM gives for a step it cancelled (`... CANCELLED AT <time> DUE TO <reason> ***`),
# as `exc_message` holds them; none given: `scancel` by a user, an administrator or a workflow
DUE_TO_TIME_LIMIT = "TIME LIMIT"
DUE_TO_PREEMPTION = "PREEMPTION"
DUE_TO_NODE_FAILURE = "NODE FAILURE"
DUE_TO_REQUEUE = "JOB REQUEUE"
OUT_OF_MEMORY = "Out Of Memory"
# srun ending the step: recognised, no event
TERMINATING = r"srun: Terminating StepId=|srun: Job step aborted: Waiting up to \d+ seconds"


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    tasks = message.str.extract_groups(SRUN_TASKS)
    cancelled = message.str.extract_groups(CANCELLED)
    found = lines.with_columns(
        tasks.alias("_tasks"),
        cancelled.alias("_cancelled"),
        message.str.contains(OOM_KILL).alias("_oom_kill"),
        message.str.extract(NODE_FAILURE, 1).alias("_failed_node"),
    )
    what = pl.col("_tasks").struct.field("what")
    event = (
        pl.when(pl.col("_oom_kill") | (what == OUT_OF_MEMORY))
        .then(pl.lit("host_oom"))
        .when(what.is_not_null())
        .then(pl.lit("task_exit"))
        .when(pl.col("_failed_node").is_not_null())
        .then(pl.lit("node_failure"))
        .when(pl.col("_cancelled").struct.field("id").is_not_null())
        .then(pl.lit("step_cancelled"))
    )
    found = found.with_columns(event.alias("event")).filter(
        pl.col("event").is_not_null() | message.str.contains(TERMINATING)
    )
    return _with_task_ids(found).select(
        "file",
        "line",
        "event",
        pl.when(pl.col("event") == "step_cancelled")
        .then(pl.lit("warning"))
        .otherwise(pl.lit("error"))
        .alias("severity"),
        pl.coalesce(
            pl.col("_tasks").struct.field("host"),
            "_failed_node",
            pl.col("_cancelled").struct.field("host"),
        ).alias("host"),
        pl.coalesce(what, pl.col("_cancelled").struct.field("why")).alias("exc_message"),
        what.str.extract(r"exit code (\d+)", 1).cast(pl.Int32, strict=False).alias("exitcode"),
        "values",
    )


# A task list is log text: a list makes at most this many ids, its ranges sharing them alike
# (`tasks 0-999999999` must not allocate a billion numbers, nor a thousand such ranges a
# million each), and only a file's first reports have their lists made: srun writes one per
# group of tasks that ended alike, never thousands.
MAX_TASKS = 4096
MAX_REPORTS = 256


def _with_task_ids(found: pl.DataFrame) -> pl.DataFrame:
    """`found` with `values`, each report's task ids: `1-3` -> [1, 2, 3]; `0,2-4` -> [0, 2, 3,
    4] (srun's task list). Made a range per row, not as a list of lists (polars' flattening of
    those costs hundreds of times the ids' own memory)."""
    tasks = pl.col("_tasks").struct.field("tasks").str.replace_all(" ", "")
    indexed = found.with_row_index("_report")
    reports = indexed.filter(
        tasks.is_not_null() & (tasks.is_not_null().cum_sum().over("file") <= MAX_REPORTS)
    )
    parts = (
        reports.select("_report", tasks.str.split(",").list.head(MAX_TASKS).alias("_part"))
        .with_columns((MAX_TASKS // pl.col("_part").list.len().clip(1)).alias("_share"))
        .explode("_part")
    )
    first = pl.col("_part").str.extract(r"^(\d+)", 1).cast(pl.Int64, strict=False)
    last = pl.coalesce(
        pl.col("_part").str.extract(r"-(\d+)$", 1).cast(pl.Int64, strict=False), first
    )
    end = pl.min_horizontal(last, first + pl.col("_share") - 1) + 1
    ids = (
        parts.select("_report", pl.int_ranges(first, end).alias("values"))
        .explode("values")
        .group_by("_report", maintain_order=True)
        .agg(pl.col("values").drop_nulls().head(MAX_TASKS))
    )
    return indexed.join(ids, on="_report", how="left", maintain_order="left").drop("_report")


PARSER = LineParser(
    name="slurm",
    literals=("srun: ", "oom_kill event", "oom-kill event", " CANCELLED AT "),
    parse=parse,
)
