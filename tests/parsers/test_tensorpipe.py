# ruff: noqa: E501 -- test data are verbatim log lines
"""torch.distributed.rpc's TensorPipe agent reporting a failed pipe, on verbatim lines."""

from __future__ import annotations

import polars as pl

from tests.builders import parsed_by

# pytorch/pytorch#104568, verbatim: the doc's RPC example on two hosts over InfiniBand
ACCEPTING = "[W tensorpipe_agent.cpp:530] RPC agent for worker0 encountered error when accepting incoming pipe: eof (this error originated at tensorpipe/transport/ibv/connection_impl.cc:302)"
RETRIES_RAN_OUT = "[W tensorpipe_agent.cpp:940] RPC agent for worker1 encountered error when reading incoming response from worker0: transport retry counter exceeded (this error originated at tensorpipe/transport/ibv/connection_impl.cc:478)"
# pytorch/tensorpipe#201, verbatim: the first rpc_sync from rank 0 to the other host
REFUSED = "[W tensorpipe_agent.cpp:641] RPC agent for Test0 encountered error when sending outgoing request #0 to Test1: ECONNREFUSED: connection refused"


def test_each_report_names_the_peer_the_error_and_its_origin():
    rows = parsed_by("tensorpipe", [ACCEPTING, RETRIES_RAN_OUT, REFUSED]).sort("line").to_dicts()
    assert [row["event"] for row in rows] == [
        "peer_closed",
        "rpc_transport_error",
        "rpc_connect_failed",
    ]
    assert [row["peer"] for row in rows] == [None, "worker0", "Test1"]
    assert rows[1]["exc_message"] == "transport retry counter exceeded"
    assert rows[1]["frame"] == "tensorpipe/transport/ibv/connection_impl.cc:478"
    assert rows[2]["exc_message"] == "ECONNREFUSED: connection refused"


def test_other_lines_with_the_words_are_not_reports():
    line = "the dataloader encountered error when reading shard 3: skipped"
    assert parsed_by("tensorpipe", [line]).filter(pl.col("event").is_not_null()).is_empty()
