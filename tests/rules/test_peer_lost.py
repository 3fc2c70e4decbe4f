"""A broken connection to a peer, and what is not one."""

from __future__ import annotations

from tests.builders import analyze_files, finding, kinds


def test_a_pair_closed_by_the_ranks_own_timeout_is_no_lost_peer(tmp_path):
    # sql-machine-learning/elasticdl#1895, verbatim: worker 1 timed out while worker 0 was alive
    lines = [
        "ERROR:root:[/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:84] Timed out waiting 60000ms for recv operation to complete",
        "ERROR:root:Application timeout caused pair closure",
    ]
    analysis = analyze_files(tmp_path, {"worker1.log": lines})
    assert "peer_lost" not in kinds(analysis)
    assert finding(analysis, "collective_timeout").ranks == [1]
