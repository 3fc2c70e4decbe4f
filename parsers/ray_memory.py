# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""Ray's memory monitor killing workers when a node runs short of memory, as the raylet reports
it to the driver (hiyouga/EasyR1#185, a verl-style RL trainer on Ray):

    (raylet) [2025-04-02 15:02:00,117 E 135782 135782] (raylet) node_manager.cc:3069: 1 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: 351e406b196f66bb45eaad02a3b8b4725babfa8cc12949432f7ad7d8, IP: 10.95.143.76) over the last time period.
    (raylet) Refer to the documentation on how to address the out of memory issue: https://docs.ray.io/en/latest/ray-core/scheduling/ray-oom-prevention.html. ...

A `host_oom` event of that node (`host` is its IP), the number killed in `value`: the host ran
out of memory, whatever the training processes printed as they lost the worker. The advice
line after it is recognised.
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
    advice = lines.filter(message.str.contains(ADVICE, literal=True)).select(
        "file", "line", pl.lit(None, pl.String).alias("event")
    )
    return pl.concat([kills, advice], how="diagonal_relaxed")


PARSER = LineParser(name="ray_memory", literals=(KILLED_WORDS, ADVICE), parse=parse)
