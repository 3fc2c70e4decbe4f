# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""Ray's own reports that a node or a worker process of the cluster died, as the driver
prints them. A node whose raylet stopped answering (ray-project/ray#22349, a GCP worker node
shut down under Ray Train; ray-project/ray#15128):

    2022-02-15 16:53:52,096	WARNING worker.py:1462 -- The node with node id: 8f205b12643d25d8c1ce57c45527a6c912f3479765096718ad2bf0d3 and ip: 10.128.0.103 has been marked dead because the detector has missed too many heartbeats from it. This can happen when a raylet crashes unexpectedly or has lagging heartbeats.

is a `node_lost` event with the node's address as `host`. A worker process that died without
an error of its own, in the raylet's words (ray-project/ray#31828):

    2023-01-17 17:21:35,472	WARNING worker.py:1829 -- A worker died or was killed while executing a task by an unexpected system error. To troubleshoot the problem, check the logs for the dead worker. RayTask ID: ffff... Worker ID: 0c62... Node ID: 3830... Worker IP address: 100.97.252.234 Worker port: 10016 Worker PID: 1942 Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of file. There are some potential root causes. (1) The process is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop --force is called. (3) The worker is crashed unexpectedly due to SIGSEGV or other unexpected errors.

or in an actor's (ray-project/ray#22349, the actor's fields on the lines below, indented by a
tab; hkust-nlp/simpleRL-reason#25 and Unakar/Logic-RL#18 for the exit type's sentence):

    (BackendExecutor pid=5126, ip=10.128.0.32) 2022-02-15 16:53:52,097	ERROR utils.py:42 -- The actor died unexpectedly before finishing this task.
    (BackendExecutor pid=5126, ip=10.128.0.32) 	class_name: BaseWorkerMixin
    (BackendExecutor pid=5126, ip=10.128.0.32) 	pid: 5137
    (BackendExecutor pid=5126, ip=10.128.0.32) 	ip: 10.128.0.103
    The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of file. ...

is a `worker_died` event with the dead process's `pid` and `host` (so that it belongs to the
rank that process ran, where the logs tie one to it, or that a verl actor's name gives), Ray's
exit type and detail in
`exc_message`. The fields' lines are recognised. Ray's exit type `NODE_OUT_OF_MEMORY` (its
memory monitor's kill) is a `host_oom` event instead.

Ray Train's word on which of its workers that was, right after (ray-project/ray#47461, a
release test's console; the worker's index in Ray Train is its global rank):

    (TorchTrainer pid=89392) Worker 0 has failed.

is a `train_worker_failed` event with the worker's rank as `value` (the line is the trainer's,
not the worker's: it belongs to no rank).
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

NODE_DEAD = (
    r"The node with node id: \w+ and (?:ip|address): (?P<ip>[0-9A-Fa-f.:]+?)"
    r"(?: and node name: \S+)? has been marked dead"
)
SYSTEM_ERROR = "A worker died or was killed while executing a task by an unexpected system error"
ACTOR_DIED = "The actor died unexpectedly before finishing this task"
ACTOR_DEAD = "The actor is dead because its worker process has died"
WORKER_CRASHED = "The worker died unexpectedly while executing this task"
WORKER_FIELDS = (
    r"Worker IP address: (?P<ip>[0-9A-Fa-f.:]+) .*?Worker PID: (?P<pid>\d+)"
    r"|Worker PID: (?P<pid_only>\d+)"
)
EXIT = r"Worker exit type: (?P<type>[A-Z_]+)(?: Worker exit detail: (?P<detail>.*?\.)(?: |$))?"
# the actor's fields, a tab in, on the lines after ACTOR_DIED
ACTOR_FIELD = r"^\s+(?P<key>class_name|actor_id|pid|name|namespace|ip): (?P<value>\S+)\s*$"
OUT_OF_MEMORY = "NODE_OUT_OF_MEMORY"
# verl names each worker actor `<prefix><class>_<placement group>:<rank in it>`; in the first
# placement group that is the worker's rank (ypwang61/One-Shot-RLVR#14: `name:
# 5xLRFRWorkerDict_0:5`, the sixth of eight GRPO workers on one node, killed for memory)
ACTOR_NAME_RANK = r"WorkerDict_0:(\d+)$"
CONTEXT = 8  # the actor's fields and the exit type's sentence after its death
TRAIN_WORKER_FAILED = r"\bWorker (\d+) has failed\."


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    found = (
        lines.sort("file", "line")
        .with_columns(
            message.str.extract(NODE_DEAD, 1).alias("_node"),
            message.str.contains(
                f"{SYSTEM_ERROR}|{ACTOR_DIED}|{ACTOR_DEAD}|{WORKER_CRASHED}"
            ).alias("_death"),
            message.str.contains(ACTOR_DEAD, literal=True).alias("_exit_sentence"),
            message.str.extract_groups(ACTOR_FIELD).alias("_field"),
            message.str.extract_groups(WORKER_FIELDS).alias("_worker"),
            message.str.extract_groups(EXIT).alias("_exit"),
        )
        .with_columns(_continues_a_report().alias("_continues"))
        .with_columns(
            # a report runs from a death's line over the fields and exit sentence below it; an
            # excerpt cut inside one opens at its fields
            ((pl.col("_death") & ~pl.col("_continues")) | _opens_at_fields())
            .cum_sum()
            .over("file")
            .alias("_report"),
        )
    )
    key = pl.col("_field").struct.field("key")
    in_report = pl.col("_report") > 0
    reports = (
        found.filter(pl.col("_death") | (key.is_not_null() & in_report))
        .group_by("file", "_report", maintain_order=True)
        .agg(
            pl.col("line").filter(pl.col("_death")).first().alias("line"),
            pl.coalesce(
                pl.col("_worker").struct.field("pid"), pl.col("_worker").struct.field("pid_only")
            )
            .drop_nulls()
            .first()
            .alias("_pid"),
            pl.col("_worker").struct.field("ip").drop_nulls().first().alias("_ip"),
            pl.col("_field").struct.field("value").filter(key == "pid").first().alias("_actor_pid"),
            pl.col("_field").struct.field("value").filter(key == "ip").first().alias("_actor_ip"),
            pl.col("_field")
            .struct.field("value")
            .filter(key == "name")
            .first()
            .str.extract(ACTOR_NAME_RANK, 1)
            .cast(pl.Int32, strict=False)
            .alias("_actor_rank"),
            pl.col("_exit").struct.field("type").drop_nulls().first().alias("_type"),
            pl.col("_exit").struct.field("detail").drop_nulls().first().alias("_detail"),
        )
        .filter(pl.col("line").is_not_null())
    )
    exit_type = pl.col("_type")
    deaths = reports.select(
        "file",
        "line",
        pl.when(exit_type == OUT_OF_MEMORY)
        .then(pl.lit("host_oom"))
        .otherwise(pl.lit("worker_died"))
        .alias("event"),
        pl.lit("error").alias("severity"),
        pl.coalesce("_pid", "_actor_pid").cast(pl.Int64, strict=False).alias("pid"),
        pl.coalesce("_ip", "_actor_ip").alias("host"),
        pl.col("_actor_rank").alias("rank"),
        pl.when(exit_type.is_not_null())
        .then(pl.concat_str(exit_type, pl.lit(": "), pl.col("_detail").fill_null("")))
        .alias("exc_message"),
    )
    nodes = found.filter(pl.col("_node").is_not_null()).select(
        "file",
        "line",
        pl.lit("node_lost").alias("event"),
        pl.lit("error").alias("severity"),
        pl.col("_node").alias("host"),
    )
    # the fields and an exit sentence that continues a report: recognised, no event of their own
    told = found.filter(
        (key.is_not_null() & in_report) | (pl.col("_death") & pl.col("_continues"))
    ).select("file", "line", pl.lit(None, pl.String).alias("event"))
    failed_workers = (
        lines.with_columns(message.str.extract(TRAIN_WORKER_FAILED, 1).alias("_worker_rank"))
        .filter(pl.col("_worker_rank").is_not_null())
        .select(
            "file",
            "line",
            pl.lit("train_worker_failed").alias("event"),
            pl.lit("error").alias("severity"),
            pl.col("_worker_rank").cast(pl.Int64, strict=False).alias("value"),
        )
    )
    recognised = pl.concat([deaths, nodes, failed_workers], how="diagonal_relaxed")
    told = told.join(recognised.select("file", "line"), on=["file", "line"], how="anti")
    return pl.concat([recognised, told], how="diagonal_relaxed")


def _opens_at_fields() -> pl.Expr:
    """An actor's field before any death in the file, with no field on the line before it: a
    report whose first line the excerpt left out (verl-project/verl#3987: the fields and the
    exit sentence, the `ActorDiedError` line above them cut). Fields after a death are its."""
    field = pl.col("_field").struct.field("key").is_not_null()
    no_death_yet = pl.col("_death").cast(pl.Int32).cum_sum().over("file") == 0
    before = field.shift(1).over("file").fill_null(False)
    next_line = pl.col("line").shift(1).over("file") == pl.col("line") - 1
    return (field & no_death_yet & ~(before & next_line.fill_null(False))).fill_null(False)


def _continues_a_report() -> pl.Expr:
    """The exit type's sentence right after an actor's death and its fields: the same death."""
    after_fields = pl.col("_field").struct.field("key").shift(1).over("file").is_not_null()
    after_death = pl.col("_death").shift(1).over("file").fill_null(False)
    next_line = pl.col("line").shift(1).over("file") == pl.col("line") - 1
    return (pl.col("_exit_sentence") & (after_fields | after_death) & next_line).fill_null(False)


PARSER = LineParser(
    name="ray_core",
    literals=(
        "has been marked dead because the detector has missed",
        SYSTEM_ERROR,
        ACTOR_DIED,
        ACTOR_DEAD,
        WORKER_CRASHED,
        " has failed.",
        # an actor's fields, where an excerpt starts inside its report
        "actor_id: ",
    ),
    parse=parse,
    context_after=CONTEXT,
)
