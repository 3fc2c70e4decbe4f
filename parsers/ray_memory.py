# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""Ray's memory monitor killing workers when a node runs short of memory, as the raylet reports
it to the driver (hiyouga/EasyR1#185, a verl-style RL trainer on Ray):

    (raylet) [2025-04-02 15:02:00,117 E 135782 135782] (raylet) node_manager.cc:3069: 1 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: 351e406b196f66bb45eaad02a3b8b4725babfa8cc12949432f7ad7d8, IP: 10.95.143.76) over the last time period.
    (raylet) Refer to the documentation on how to address the out of memory issue: https://docs.ray.io/en/latest/ray-core/scheduling/ray-oom-prevention.html. ...

A `host_oom` event of that node (`host` is its IP), the number killed in `value`: the host ran
out of memory, whatever the training processes printed as they lost the worker. The advice
line after it is recognised.

The caller's side of one such kill, under Ray's `ray.exceptions.OutOfMemoryError: Task was
killed due to the node running low on memory.` (957944173/GAP's launcher log, verl on Ray):

    Memory on the node (IP: 10.29.128.7, ID: 38fa2a92ea532d8f01c076ded57079b07bd160d36c7ef5b2b9241f33) where the task (actor ID: f5a0d2adb7b8ec8fd0d857c001000000, name=TaskRunner.__init__, pid=1466649, memory used=1.42GB) was running was 121.35GB / 125.53GB (0.966714), which exceeds the memory usage threshold of 0.95. ...

is a `host_oom` event of that node and that task's process (`pid`), one killed.

The exception's words alone, where a caller logged them rather than raised them
(OpenRLHF/OpenRLHF#936: `ERROR - An error occurred during score calculation: Task was killed
due to the node running low on memory.`), are a `host_oom` event too, its node unsaid; the
exception line itself is the traceback parser's.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

# The report's words are enough: a terminal or a paste may wrap the line anywhere, leaving
# the count and the node on lines of their own (vllm-project/vllm#1160: `2 Workers (tasks /`
# then ` actors) killed due to memory pressure (OOM), ...` at 116 columns)
KILLED_WORDS = "killed due to memory pressure (OOM)"
COUNT = r"(\d+) Workers \(tasks / actors\) killed"
NODE_IP = r"at node \(ID: \w+, IP: ([\w.:-]+)\)"
ADVICE = "Refer to the documentation on how to address the out of memory issue"
TASK_KILLED = "Memory on the node ("
# (an older Ray names the node by its ID alone: `Memory on the node ( ID: 37f3bd...) where the
# task (actor ID: ..., name=RewardModelRayActor.__init__, pid=5315, ...)`, OpenRLHF/OpenRLHF#171)
TASK_NODE = r"^Memory on the node \((?:IP: ([\w.:-]+),)? *ID: \w+\) where the task \("
TASK_PID = r"\bwhere the task \([^)]*?\bpid=(\d+)"
TASK_WORDS = "Task was killed due to the node running low on memory"
RAISED = "OutOfMemoryError"  # `ray.exceptions.OutOfMemoryError: Task was killed ...`
MONITOR = "Ray's memory monitor"  # the event's `exc_message`, for the oom rule's words


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    count = message.str.extract(COUNT, 1).cast(pl.Int64, strict=False)
    kills = lines.filter(
        message.str.contains(KILLED_WORDS, literal=True) & (count.is_null() | (count > 0))
    ).select(
        "file",
        "line",
        pl.lit("host_oom").alias("event"),
        pl.lit("error").alias("severity"),
        message.str.extract(NODE_IP, 1).alias("host"),
        count.alias("value"),
        pl.lit(MONITOR).alias("exc_message"),
    )
    task = lines.filter(message.str.contains(TASK_NODE)).select(
        "file",
        "line",
        pl.lit("host_oom").alias("event"),
        pl.lit("error").alias("severity"),
        message.str.extract(TASK_NODE, 1).alias("host"),
        message.str.extract(TASK_PID, 1).cast(pl.Int64, strict=False).alias("pid"),
        pl.lit(1, pl.Int64).alias("value"),
        pl.lit(MONITOR).alias("exc_message"),
    )
    logged = lines.filter(
        message.str.contains(TASK_WORDS, literal=True) & ~message.str.contains(RAISED, literal=True)
    ).select(
        "file",
        "line",
        pl.lit("host_oom").alias("event"),
        pl.lit("error").alias("severity"),
        pl.lit(1, pl.Int64).alias("value"),
        pl.lit(MONITOR).alias("exc_message"),
    )
    advice = lines.filter(message.str.contains(ADVICE, literal=True)).select(
        "file", "line", pl.lit(None, pl.String).alias("event")
    )
    return pl.concat([kills, task, logged, advice], how="diagonal_relaxed")


PARSER = LineParser(
    name="ray_memory", literals=(KILLED_WORDS, ADVICE, TASK_KILLED, TASK_WORDS), parse=parse
)
