"""The store and rendezvous endpoint a process could not reach while the job was starting: c10d's
socket errors,

    [W socket.cpp:601] [c10d] The client socket has failed to connect to [elastic-example-imagenet-worker-0.default.svc.cluster.local]:43461 (errno: 113 - No route to host).

(kubeflow/trainer#2041), with the endpoint and the system's reason (`No route to host`,
`Connection refused`, `Address already in use`, a timeout). Each is a `store_unreachable`
event; the `missing_rank` rule reads them with the exceptions that fail `init_process_group`
the same way. torchrun's rendezvous result (`global_ranks=[1]`, `global_world_sizes=[2]`,
`master_addr=...`, printed by the agent of each node) states the world size; its other fields
and the agent's lines around it are recognised.

Each node's agent names the rendezvous it joins: the run id torchrun made up when `--rdzv-id`
was empty, and the dynamic rendezvous handler's words about it (ymcui/Chinese-LLaMA-Alpaca-2
#274, two nodes' consoles, verbatim):

    WARNING:torch.distributed.launcher.api:config has no run_id, generated a random run_id: 304504801270300669882724678499925037384
    WARNING:torch.distributed.elastic.rendezvous.dynamic_rendezvous:The node '38049eef641b_3140_0' has failed to shutdown the rendezvous '304504801270300669882724678499925037384' due to an error of type RendezvousConnectionError.

Each is a `rendezvous_run` event, `extra` holding the run id (and whether torchrun generated
it); the node's host and agent pid come from its name (`<host>_<pid>_<n>`).
"""  # noqa: E501 -- verbatim lines

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

SOCKET_FAILURE = (
    r"\[c10d\] The (?P<side>client|server) socket (?:has )?(?P<what>failed to connect to|failed "
    r"to bind to|failed to listen on|timed out after \d+ms while trying to connect to|has timed "
    r"out)[^\[(]*(?P<endpoint>\[[^\]]*\]:\d+|\([^)]*\))?"
)
# torch 1.x's client giving up on its connection to the store, raised where the rendezvous
# backend creates it (pytorch/pytorch#69197: every node's agent, `_create_tcp_store` in
# `c10d_rendezvous_backend.py`): `RuntimeError: connect() timed out. Original timeout was
# 60000 ms.`
CONNECT_TIMED_OUT = r"(?:^|: )(connect\(\) timed out)\. Original timeout was \d+ ms"
# ... or could not look up the store's host name at all (pytorch/pytorch#74824, verbatim):
#   [W socket.cpp:601] [c10d] The IPv6 network addresses of (ece-a58489.austin.utexas.edu, 44685) cannot be retrieved (gai error: -2 - Name or service not known).  # noqa: E501
# (verl-project/verl#2550: an IPv6 address still in its brackets, `([2605:340:...:1540], 59699)`)
UNRESOLVED = (
    r"\[c10d\] The (?:IPv[46] )?network addresses of \((?P<host>.+), (?P<port>\d+)\) cannot be "
    r"retrieved \(gai error: -?\d+ - (?P<reason>[^)]*?)\s*\)"
)
UNRESOLVED_WHAT = "could not resolve the address of"
# the system's reason, Linux's `(errno: 113 - No route to host)` or Windows' `(system error:
# 10049 - <the message in the system's language>)` (hiyouga/LlamaFactory#7127)
REASON = r"\((?:errno|system error): (\d+) - ([^)]+)\)"
# A client's connection to the store that the store's side closed: torch's TCPStore client,
# reading a reply, got end-of-file (kubeflow/website#4186, a Kubeflow TrainJob's node-1 pod,
# verbatim, its C++ frames flattened onto the line by the page):
#   [W822 03:54:49.636977195 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=15, addr=[wcde03d70a73-node-0-1.wcde03d70a73.kubeflow-user-example-com.svc.cluster.local]:60560, remote=[wcde03d70a73-node-0-0.wcde03d70a73.kubeflow-user-example-com.svc.cluster.local]:29500): failed to recv, got 0 bytes Exception raised from recvBytes at ...  # noqa: E501
# ... or reset it (sgl-project/sglang#20859, verbatim):
#   [rank12]:[W318 10:00:41.915284135 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=135, addr=[sglang-0-1.sglang.default.svc.transwarp.local]:48750, remote=[sglang-0.default.pod.transwarp.local]:20000): Connection reset by peer  # noqa: E501
STORE_DROPPED = (
    r"\[c10d\] \w+ failed on SocketImpl\([^)]*?remote=(?P<endpoint>\[[^\]]*\]:\d+)\): "
    r"(?P<what>failed to recv, got 0 bytes|Connection reset by peer|Broken pipe)"
)
# the watchdog finding the store gone when it looks for another rank's dump signal (PyTorch
# 2.4+; the same thread, verbatim):
#   [rank8]:[W318 10:00:41.929037914 ProcessGroupNCCL.cpp:1771] [PG ID 0 PG GUID 0 Rank 8] Failed to check the "should dump" flag on TCPStore, (maybe TCPStore server has shut down too early), with error: Connection reset by peer  # noqa: E501
DUMP_FLAG_UNREAD = r"Failed to check the \"should dump\" flag on TCPStore, .*with error: (.+)$"
# a client's connection to the store made (pytorch/pytorch#81704, TORCH_CPP_LOG_LEVEL=INFO):
#   [I socket.cpp:725] [c10d] The client socket has connected to [10-1-0-200.pytorch-simple-master-0.kubeflow.svc.cluster.local]:23456 on [pytorch-simple-worker-0]:38250.  # noqa: E501
CONNECTED = r"\[c10d\] The client socket has connected to (\[[^\]]*\]:\d+)"
# torchrun's agent: `  global_world_sizes=[2]` in its `Rendezvous complete for workers` block
WORLD_SIZES = r"^\s+global_world_sizes=\[(\d+)"
# ... and its node's first local and global rank, two lines apart (`  local_ranks=[0, 1, 2, 3]`,
# `  global_ranks=[4, 5, 6, 7]`): the node's rank offset
LOCAL_RANKS = r"^\s+local_ranks=\[(\d+)"
GLOBAL_RANKS = r"^\s+global_ranks=\[(\d+)"
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
# torchrun's own id for a launch given none (torch.distributed.launcher.api)
GENERATED_RUN_ID = r"config has no run_id, generated a random run_id: (\S+)"
# the dynamic rendezvous handler naming the node and the rendezvous: `The node '<host>_<pid>_<n>'
# attempted to join the next round of the rendezvous '<run id>'.`, `... has joined round 0 of the
# rendezvous ...`, `... has failed to shutdown the rendezvous ... due to an error of type ...`
RENDEZVOUS_NODE = (
    r"The node '(?P<node>[^']+)' (?P<did>[^']{1,80}?) the rendezvous '(?P<run>[^']+)'"
    r"(?: due to an error of type (?P<error>\w+))?"
)
NODE_NAME = r"^(?P<host>.+)_(?P<pid>\d+)_\d+$"
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
    timed_out = lines.filter(message.str.contains(CONNECT_TIMED_OUT)).select(
        "file",
        "line",
        pl.lit("store_unreachable").alias("event"),
        pl.lit("error").alias("severity"),
        message.str.extract(CONNECT_TIMED_OUT, 1).alias("exc_message"),
    )
    unresolved = lines.with_columns(message.str.extract_groups(UNRESOLVED).alias("_lookup")).filter(
        pl.col("_lookup").struct.field("host").is_not_null()
    )
    unresolved = unresolved.select(
        "file",
        "line",
        pl.lit("store_unreachable").alias("event"),
        pl.lit("error").alias("severity"),
        # as printed: the brackets of an IPv6 address given as a host are the fault there
        pl.format(
            "({}, {})",
            pl.col("_lookup").struct.field("host"),
            pl.col("_lookup").struct.field("port"),
        ).alias("peer"),
        pl.lit(UNRESOLVED_WHAT).alias("exc_message"),
        pl.col("_lookup").struct.field("reason").alias("error_code"),
    )
    unread = message.str.extract(DUMP_FLAG_UNREAD, 1).str.strip_chars()
    dropped = (
        lines.with_columns(message.str.extract_groups(STORE_DROPPED).alias("_dropped"))
        .filter(pl.col("_dropped").struct.field("endpoint").is_not_null() | unread.is_not_null())
        .select(
            "file",
            "line",
            pl.lit("store_dropped").alias("event"),
            pl.lit("warning").alias("severity"),
            pl.col("_dropped").struct.field("endpoint").alias("peer"),
            pl.coalesce(pl.col("_dropped").struct.field("what"), unread).alias("exc_message"),
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
        message.str.contains(RESULT_FIELD)
        & ~message.str.contains(WORLD_SIZES)
        & ~message.str.contains(GLOBAL_RANKS)
        | message.str.contains(AGENT_LINE)
    ).select("file", "line", pl.lit(None, dtype=pl.String).alias("event"))
    connected = lines.with_columns(message.str.extract(CONNECTED, 1).alias("peer")).filter(
        pl.col("peer").is_not_null()
    )
    connected = connected.select(
        "file",
        "line",
        pl.lit("store_connected").alias("event"),
        pl.lit("info").alias("severity"),
        "peer",
    )
    return pl.concat(
        [
            failures,
            timed_out,
            unresolved,
            dropped,
            sizes,
            _node_ranks(lines),
            connected,
            agent,
            _run_ids(lines),
        ],
        how="diagonal_relaxed",
    )


def _run_ids(lines: pl.DataFrame) -> pl.DataFrame:
    """A `rendezvous_run` event for each line naming the rendezvous a node's agent joins."""
    message = pl.col("message")
    generated = message.str.extract(GENERATED_RUN_ID, 1)
    node = message.str.extract_groups(RENDEZVOUS_NODE)
    named = lines.with_columns(generated.alias("_generated"), node.alias("_node")).filter(
        pl.col("_generated").is_not_null() | pl.col("_node").struct.field("run").is_not_null()
    )
    if named.is_empty():
        return named.select("file", "line")
    name = pl.col("_node").struct.field("node").str.extract_groups(NODE_NAME)
    error = pl.col("_node").struct.field("error")
    return named.select(
        "file",
        "line",
        pl.lit("rendezvous_run").alias("event"),
        pl.when(error.is_not_null())
        .then(pl.lit("warning"))
        .otherwise(pl.lit("info"))
        .alias("severity"),
        name.struct.field("host").alias("host"),
        name.struct.field("pid").cast(pl.Int64, strict=False).alias("pid"),
        error.alias("exc_type"),
        pl.struct(
            pl.coalesce("_generated", pl.col("_node").struct.field("run")).alias("run_id"),
            pl.col("_generated").is_not_null().alias("generated"),
        )
        .struct.json_encode()
        .alias("extra"),
    )


def _node_ranks(lines: pl.DataFrame) -> pl.DataFrame:
    """A `node_ranks` event at each `global_ranks=` line, its `value` the first global rank
    less the first local rank the block stated before it: the node's rank offset, which
    attribution adds to the local ranks of the node's other lines."""
    message = pl.col("message")
    local = message.str.extract(LOCAL_RANKS, 1).cast(pl.Int64, strict=False)
    first = message.str.extract(GLOBAL_RANKS, 1).cast(pl.Int64, strict=False)
    return (
        lines.with_columns(
            (first - local.forward_fill().over("file")).alias("value"), first.alias("_first")
        )
        .filter(pl.col("_first").is_not_null() & (pl.col("value") >= 0))
        .select(
            "file",
            "line",
            pl.lit("node_ranks").alias("event"),
            pl.lit("info").alias("severity"),
            "value",
        )
    )


PARSER = LineParser(
    name="rendezvous",
    literals=(
        "[c10d] The ",
        "connect() timed out. Original timeout was ",
        " failed on SocketImpl(",
        '"should dump" flag on TCPStore',
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
        "generated a random run_id: ",
        " the rendezvous '",
    ),
    parse=parse,
)
