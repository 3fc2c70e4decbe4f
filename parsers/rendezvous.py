"""The store and rendezvous endpoint a process could not reach while the job was starting: c10d's
socket errors,

    [W socket.cpp:601] [c10d] The client socket has failed to connect to [elastic-example-imagenet-worker-0.default.svc.cluster.local]:43461 (errno: 113 - No route to host).

(kubeflow/trainer#2041), with the endpoint and the system's reason (`No route to host`,
`Connection refused`, `Address already in use`, a timeout). Each is a `store_unreachable`
event; the `missing_rank` rule reads them with the exceptions that fail `init_process_group`
the same way. torchrun's rendezvous result (`global_ranks=[1]`, `global_world_sizes=[2]`,
`master_addr=...`, printed by the agent of each node) states the world size; its other fields
and the agent's lines around it are recognised.
"""  # noqa: E501 -- verbatim lines

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

SOCKET_FAILURE = (
    r"\[c10d\] The (?P<side>client|server) socket (?:has )?(?P<what>failed to connect to|failed "
    r"to bind to|failed to listen on|timed out after \d+ms while trying to connect to|has timed "
    r"out)[^\[(]*(?P<endpoint>\[[^\]]*\]:\d+|\([^)]*\))?"
)
REASON = r"\(errno: (\d+) - ([^)]+)\)"
# torchrun's agent: `  global_world_sizes=[2]` in its `Rendezvous complete for workers` block
WORLD_SIZES = r"^\s+global_world_sizes=\[(\d+)"
# the block's other fields and the agent's lines around it (pytorch/torchx#492, verbatim):
#   INFO:torch.distributed.elastic.agent.server.api:[] Rendezvous complete for workers. Result:
#     restart_count=0
#     master_addr=tristanr-arch2
#   INFO:torch.distributed.elastic.agent.server.api:[] Starting worker group
#   INFO:torch.distributed.elastic.multiprocessing:Setting worker0 reply file to: /tmp/...
RESULT_FIELD = (
    r"^\s+(?:restart_count|master_addr|master_port|group_rank|group_world_size|local_ranks"
    r"|role_ranks|global_ranks|role_world_sizes|global_world_sizes)=\S*\s*$"
)
AGENT_LINE = (
    r"Rendezvous complete for workers\. Result:|\] Starting worker group"
    r"|Setting worker\d+ reply file to: "
)


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    failure = message.str.extract_groups(SOCKET_FAILURE)
    failures = (
        lines.with_columns(failure.alias("_failure"))
        .filter(pl.col("_failure").struct.field("side").is_not_null())
        .select(
            "file",
            "line",
            pl.lit("store_unreachable").alias("event"),
            pl.lit("error").alias("severity"),
            pl.col("_failure").struct.field("endpoint").alias("peer"),
            pl.col("_failure").struct.field("what").alias("exc_message"),
            message.str.extract(REASON, 2).alias("error_code"),
            message.str.extract(REASON, 1).cast(pl.Int64, strict=False).alias("value"),
        )
    )
    sizes = (
        lines.with_columns(message.str.extract(WORLD_SIZES, 1).cast(pl.Int32, strict=False))
        .filter(pl.col("message").is_not_null())
        .select(
            "file",
            "line",
            pl.lit("world_size").alias("event"),
            pl.lit("info").alias("severity"),
            pl.col("message").alias("world_size"),
        )
        .filter(pl.col("world_size") > 0)
    )
    agent = lines.filter(
        message.str.contains(RESULT_FIELD) & ~message.str.contains(WORLD_SIZES)
        | message.str.contains(AGENT_LINE)
    ).select("file", "line", pl.lit(None, dtype=pl.String).alias("event"))
    return pl.concat([failures, sizes, agent], how="diagonal_relaxed")


PARSER = LineParser(
    name="rendezvous",
    literals=(
        "[c10d] The ",
        "global_world_sizes=",
        "restart_count=",
        "master_addr=",
        "master_port=",
        "group_rank=",
        "group_world_size=",
        "local_ranks=",
        "role_ranks=",
        "global_ranks=",
        "role_world_sizes=",
        "Rendezvous complete for workers",
        "Starting worker group",
        " reply file to: ",
    ),
    parse=parse,
)
