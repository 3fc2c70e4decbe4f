# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring and comments
"""The elastic agent restarting its workers: the lines before it in the same console belong
to an attempt that is over. Verbatim (torch/distributed/elastic/agent/server/api.py):

    I1204 21:34:07.192000 4677 torch/distributed/elastic/agent/server/api.py:942] [default] Worker group FAILED. 1/1 attempts left; will restart worker group
    [INFO] 2020-07-31 07:15:34,785 api: [default] Worker group FAILED. 3/3 attempts left; will restart worker group
    [INFO] 2020-07-31 07:35:16,348 api: [default] Detected 1 new nodes from group_rank=1; will restart worker group

(a run here with `torchrun --max-restarts=1`, sample_logs/restart_recovered/; torchelastic
0.2's example in microsoft/frameworkcontroller's elastic README, scaling down and up). Each is
a `workers_restarted` event (info); `extra` holds the group's state when a failure caused it
(`{"state": "FAILED"}`, or `UNHEALTHY`) and the attempts left, and none when new nodes joined.
A line cut before the state still counts its attempts, which only a failure spends
(tianweiy/CenterPoint#224 quotes `1/3 attempts left; will restart worker group`).
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

RESTART = r"will restart worker group"
# Worker group FAILED. 1/1 attempts left    (DLRover words it `Worker group FAILED, is failure node: ...`)
STATE = r"Worker group ([A-Z]+)[.,]"
ATTEMPTS_LEFT = r"(\d+/\d+) attempts left"


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    found = lines.filter(message.str.contains(RESTART, literal=True))
    state = message.str.extract(STATE, 1)
    left = message.str.extract(ATTEMPTS_LEFT, 1)
    after_failure = pl.struct(state=state, attempts_left=left).struct.json_encode()
    return found.select(
        "file",
        "line",
        pl.lit("workers_restarted").alias("event"),
        pl.lit("info").alias("severity"),
        pl.when(state.is_not_null() | left.is_not_null()).then(after_failure).alias("extra"),
    )


PARSER = LineParser(name="worker_restarts", literals=(RESTART,), parse=parse)
