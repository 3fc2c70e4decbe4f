# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring and comments
"""Gloo transport errors, as PyTorch re-raises them (pytorch/gloo:gloo/transport/tcp/pair.cc,
unbound_buffer.cc, gloo/common/logging.cc). Verbatim:

    [rank1]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting 20000ms for recv operation to complete
    RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [18.25.6.30]:28048
    RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:589] Read error [192.168.70.92]:25266: Connection reset by peer
    RuntimeError: Application timeout caused pair closure
    RuntimeError: [/opt/conda/conda-bld/pytorch_1532579245307/work/third_party/gloo/gloo/transport/tcp/buffer.cc:76] Read timeout [127.0.0.1]:32444
    what():  [enforce fail at ../third_party/gloo/gloo/transport/tcp/pair.cc:446] op.preamble.length <= op.nbytes. 1046204 vs 1040256
    RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error
    what():  [/opt/conda/conda-bld/pytorch_1544084119927/work/third_party/gloo/gloo/transport/tcp/pair.cc:724] connect [127.0.1.1]:3210: Connection refused

"Timed out waiting" means the peer is alive but never arrived; "Connection closed by peer" usually
means the peer process exited (after its own error). A timed-out rank closes all its pairs, so
its peers then see "Application timeout caused pair closure". Since pytorch/gloo#456 (2025) the
size check adds "Received data size doesn't match expected size. Is there a distributed
collective mismatch in your code?"; the two numbers are the bytes that arrived and the bytes the
receiving buffer expected.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

# ... Timed out waiting 20000ms for recv operation to complete
TRANSPORT_TIMEOUT = (
    r"Timed out waiting (?P<timeout_ms>\d+)ms for (?P<direction>recv|send) operation to complete"
)
# ... Connection closed by peer [18.25.6.30]:28048   (also IPv6: [2401:db00:eef0:1100:3560:0:1c05:25d]:8594)
PEER_CLOSED = r"Connection closed by peer (\[[^\]]+\]:\d+)"
# ... Read error [192.168.70.92]:25266: Connection reset by peer
PEER_RESET = r"Read error (\[[^\]]+\]:\d+): Connection reset by peer"
# A C++ error whose whole message is the socket's EPIPE: it wrote to a peer that had closed
# its end (pytorch/pytorch#11364, torch 1.0: `RuntimeError: Broken pipe` from
# `ProcessGroupGloo(store, rank, world_size)` after rank 0 had exited). Python's own
# `BrokenPipeError: [Errno 32] Broken pipe` (a closed stdout pipe) is not one.
BROKEN_PIPE = r"^RuntimeError: Broken pipe\s*$"
# gloo before unbound buffers (torch 0.4, NVIDIA/sentiment-discovery#43); no wait in the text:
#   RuntimeError: [/opt/conda/.../gloo/transport/tcp/buffer.cc:76] Read timeout [127.0.0.1]:32444
READ_TIMEOUT = r"\bRead timeout (\[[^\]]+\]:\d+)"
# ... op.preamble.length <= op.nbytes. 881392472 vs 881392448
SIZE_MISMATCH = r"op\.preamble\.length <= op\.nbytes\. (?P<received>\d+) vs (?P<expected>\d+)"

PAIR_CLOSED = "Application timeout caused pair closure"
SIZE_MISMATCH_WORDING = (
    "op.preamble.length <= op.nbytes",
    "Received data size doesn't match expected size",
)
CONNECT_FAILED = "Gloo connectFullMesh failed"
# A pair that could not connect to its peer at all (pytorch/pytorch#15592, a second node):
#   what():  [/opt/conda/.../gloo/transport/tcp/pair.cc:724] connect [127.0.1.1]:3210: Connection refused
CONNECT_REFUSED = (
    r"connect (\[[^\]]+\]:\d+): (?:Connection refused|No route to host|Network is unreachable"
    r"|Connection timed out)"
)

# gloo choosing its interface (gloo/transport/tcp/device.cc; aws-samples/aws-do-eks#50, #51):
#   [rank8] Warning: Unable to resolve hostname to a (local) address. Using the loopback
#   RuntimeError: [enforce fail at .../gloo/transport/tcp/device.cc:84] ifa != nullptr. Unable to find address for: ^lo
LOOPBACK_FALLBACK = "Unable to resolve hostname to a (local) address. Using the loopback"
NO_INTERFACE = r"Unable to find address for: (?P<interface>\S+)"
# ... or given neither an interface nor a host name to bind to (IAHispano/Applio#79, on Windows,
# where gloo's transport is libuv's):
#   RuntimeError: GlooDeviceFactory::makeUVDevice(): interface or hostname can't be empty
NO_HOST_NAME = "interface or hostname can't be empty"
# a failed connect's own detail line, where a paste wraps the error (aws-samples/aws-do-eks#69):
#   (rank=8, size=16, local=[127.0.0.1])
#   timed out connecting: SO_ERROR: Connection refused, remote=[127.0.0.1]:14215
PAIR_ENDS = r"\(rank=(?P<rank>\d+), size=(?P<size>\d+), local=(?P<local>\[[^\]]+\])\)"
REMOTE = r"(?:SO_ERROR: [^,]+, |^\s*)remote=(\[[^\]]+\]:\S+)"
# each rank's report once its full mesh is up (torch 2.x's ProcessGroupGloo; pytorch/gloo#462):
#   [Gloo] Rank 5 is connected to 7 peer ranks. Expected number of connected peer ranks is : 7
# a `gloo_connected` event of that rank (`value` the peers connected, `world_size` the expected
# peers and itself); fewer peers than expected is a warning
CONNECTED_PEERS = (
    r"\[Gloo\] Rank (?P<rank>\d+) is connected to (?P<connected>\d+) peer ranks\. "
    r"Expected number of connected peer ranks is : (?P<expected>\d+)"
)


def _event() -> pl.Expr:
    message = pl.col("message")
    return (
        pl.when(
            message.str.contains(CONNECT_FAILED, literal=True)
            | message.str.contains(CONNECT_REFUSED)
        )
        .then(pl.lit("connect_failed"))
        .when(message.str.contains(PAIR_ENDS) | message.str.contains(REMOTE))
        .then(pl.lit("connect_failed"))
        .when(message.str.contains(LOOPBACK_FALLBACK, literal=True))
        .then(pl.lit("loopback_fallback"))
        .when(message.str.contains(NO_INTERFACE) | message.str.contains(NO_HOST_NAME, literal=True))
        .then(pl.lit("no_interface"))
        .when(message.str.contains(TRANSPORT_TIMEOUT) | message.str.contains(READ_TIMEOUT))
        .then(pl.lit("transport_timeout"))
        .when(message.str.contains(PEER_CLOSED))
        .then(pl.lit("peer_closed"))
        .when(message.str.contains(PEER_RESET))
        .then(pl.lit("peer_reset"))
        .when(message.str.contains(BROKEN_PIPE))
        .then(pl.lit("peer_closed"))
        .when(message.str.contains(PAIR_CLOSED, literal=True))
        .then(pl.lit("pair_closed"))
        .when(message.str.contains_any(list(SIZE_MISMATCH_WORDING)))
        .then(pl.lit("size_mismatch"))
        .when(message.str.contains(CONNECTED_PEERS))
        .then(pl.lit("gloo_connected"))
    )


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    timeout = message.str.extract_groups(TRANSPORT_TIMEOUT)
    sizes = message.str.extract_groups(SIZE_MISMATCH)
    pair = message.str.extract_groups(PAIR_ENDS)
    mesh = message.str.extract_groups(CONNECTED_PEERS)
    connected = mesh.struct.field("connected").cast(pl.Int64, strict=False)
    expected = mesh.struct.field("expected").cast(pl.Int32, strict=False)
    return (
        lines.with_columns(_event().alias("event"))
        .filter(pl.col("event").is_not_null())
        .select(
            "file",
            "line",
            "event",
            pl.when(pl.col("event") == "loopback_fallback")
            .then(pl.lit("warning"))
            .when(pl.col("event") == "gloo_connected")
            .then(pl.when(connected < expected).then(pl.lit("warning")).otherwise(pl.lit("info")))
            .otherwise(pl.lit("error"))
            .alias("severity"),
            pl.coalesce(pair.struct.field("rank"), mesh.struct.field("rank"))
            .cast(pl.Int32, strict=False)
            .alias("rank"),
            pl.coalesce(pair.struct.field("size").cast(pl.Int32, strict=False), expected + 1).alias(
                "world_size"
            ),
            connected.alias("value"),
            timeout.struct.field("timeout_ms").cast(pl.Int64, strict=False).alias("timeout_ms"),
            # send or recv: the transport's direction, not a collective (never `op`)
            pl.when(timeout.struct.field("direction").is_not_null())
            .then(pl.struct(direction=timeout.struct.field("direction")).struct.json_encode())
            .alias("extra"),
            pl.coalesce(
                message.str.extract(PEER_CLOSED, 1),
                message.str.extract(PEER_RESET, 1),
                message.str.extract(READ_TIMEOUT, 1),
                message.str.extract(CONNECT_REFUSED, 1),
                message.str.extract(REMOTE, 1),
                pair.struct.field("local"),
            ).alias("peer"),
            message.str.extract(NO_INTERFACE, 1).alias("device"),
            pl.when(sizes.struct.field("received").is_not_null())
            .then(
                pl.concat_list(
                    sizes.struct.field("received").cast(pl.Int64, strict=False),
                    sizes.struct.field("expected").cast(pl.Int64, strict=False),
                )
            )
            .alias("values"),
        )
    )


PARSER = LineParser(
    name="gloo",
    literals=(
        "Timed out waiting",
        "Read timeout",
        "Connection closed by peer",
        "Connection reset by peer",
        "RuntimeError: Broken pipe",
        PAIR_CLOSED,
        *SIZE_MISMATCH_WORDING,
        CONNECT_FAILED,
        "Connection refused",
        "No route to host",
        "Network is unreachable",
        "Connection timed out",
        "remote=[",
        ", local=[",
        LOOPBACK_FALLBACK,
        "Unable to find address for: ",
        NO_HOST_NAME,
        "[Gloo] Rank ",
    ),
    parse=parse,
)
