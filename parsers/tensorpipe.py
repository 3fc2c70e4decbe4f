# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring and comments
"""torch.distributed.rpc's TensorPipe agent reporting a failed pipe to another worker.

The agent names itself and the worker it talks to by their RPC names (`worker0`, `Test1`,
chosen by the job, no rank), what it was doing, and the transport's error, with the place in
TensorPipe it came from (pytorch/pytorch#104568, pytorch/tensorpipe#201, verbatim):

    [W tensorpipe_agent.cpp:530] RPC agent for worker0 encountered error when accepting incoming pipe: eof (this error originated at tensorpipe/transport/ibv/connection_impl.cc:302)
    [W tensorpipe_agent.cpp:726] RPC agent for worker0 encountered error when reading incoming request from worker1: eof (this error originated at tensorpipe/transport/ibv/connection_impl.cc:302)
    [W tensorpipe_agent.cpp:940] RPC agent for worker1 encountered error when reading incoming response from worker0: transport retry counter exceeded (this error originated at tensorpipe/transport/ibv/connection_impl.cc:478)
    [W tensorpipe_agent.cpp:641] RPC agent for Test0 encountered error when sending outgoing request #0 to Test1: ECONNREFUSED: connection refused

Events: a connection the peer ended (`eof`, `pipe closed`, a reset) is `peer_closed`, as gloo's
is; a connection that never formed (refused, unreachable, timed out connecting) is
`rpc_connect_failed`; any other failure of the transport (an InfiniBand queue pair whose retries
ran out: nothing acknowledged its sends) is `rpc_transport_error`. `peer` is the other worker's
RPC name (null when accepting an incoming pipe), `exc_message` the error, `frame` the place in
TensorPipe it arose.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

AGENT_ERROR = (
    r"RPC agent for (?P<agent>\S+) encountered error when (?P<doing>.+?)"
    r"(?: (?:from|to) (?P<peer>[^\s:]+))?: (?P<error>.+?)"
    r"(?: \(this error originated at (?P<origin>[^)\s]+)\)?)?\s*$"
)
# the other end went away: it closed its side or reset the connection
PEER_CLOSED = (
    r"(?i)^(?:eof|pipe closed|connection closed|ECONNRESET|EPIPE|connection reset|broken pipe)"
)
NEVER_CONNECTED = r"(?i)^(?:ECONNREFUSED|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|connection refused)"


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    report = pl.col("message").str.extract_groups(AGENT_ERROR)
    error = report.struct.field("error")
    return (
        lines.with_columns(report.alias("_report"))
        .filter(pl.col("_report").struct.field("agent").is_not_null())
        .select(
            "file",
            "line",
            pl.when(error.str.contains(PEER_CLOSED))
            .then(pl.lit("peer_closed"))
            .when(error.str.contains(NEVER_CONNECTED))
            .then(pl.lit("rpc_connect_failed"))
            .otherwise(pl.lit("rpc_transport_error"))
            .alias("event"),
            pl.lit("error").alias("severity"),
            report.struct.field("peer").alias("peer"),
            error.alias("exc_message"),
            report.struct.field("origin").alias("frame"),
        )
    )


PARSER = LineParser(name="tensorpipe", literals=("encountered error when",), parse=parse)
