# ruff: noqa: E501 -- test data are verbatim log lines
"""MindSpore's launcher, msrun (parsers/msrun.py)."""

from __future__ import annotations

from tests.builders import analyze_files, parsed_by

# candle-org/MindAct#1983 (DeepSeek-R1-Distill-Qwen-32B inference, msrun with four workers on
# 910A), verbatim: a worker exited with an exception, msrun stopped the others, then named the
# node its scheduler had lost
MSRUN_NODE_3 = [
    "[WARNING] ME(162078:281473590168608,MainProcess):2025-03-10-09:40:12.444.000 [mindspore/parallel/cluster/process_entity/_api.py:318] There's worker exits with exception, kill all other workers.",
    "[ERROR] ME(162078:281473590168608,MainProcess):2025-03-10-09:40:38.720.000 [mindspore/parallel/cluster/process_entity/_api.py:331] Scheduler process 162146 exit with exception.",
    "[WARNING] ME(162078:281473590168608,MainProcess):2025-03-10-09:40:38.721.000 [mindspore/parallel/cluster/process_entity/_api.py:334] Analyzing exception log...",
    "[ERROR] ME(162078:281473590168608,MainProcess):2025-03-10-09:40:38.722.000 [mindspore/parallel/cluster/process_entity/_api.py:431] Time out nodes are ['3']",
]


def test_the_nodes_msrun_names_are_the_ones_its_scheduler_lost():
    lost = parsed_by("msrun", MSRUN_NODE_3).filter(event="node_timed_out")
    assert lost.get_column("peer").to_list() == ["3"]
    assert lost.get_column("line").to_list() == [4]


def test_the_lost_node_is_the_rank_that_went_silent_first(tmp_path):
    analysis = analyze_files(tmp_path, {"msrun.log": MSRUN_NODE_3})
    verdict = analysis.verdict
    assert verdict.ranks == [3]
    assert verdict.headline == "Rank 3 went silent first: MindSpore's scheduler lost its heartbeat"
    assert "worker_<rank>.log" in verdict.finding.fix
    # the launcher's lines are no rank's own
    assert not analysis.job.ranks_seen


def test_an_empty_list_of_lost_nodes_names_no_one():
    lines = [MSRUN_NODE_3[3].replace("['3']", "[]")]
    assert parsed_by("msrun", lines).filter(event="node_timed_out").is_empty()


def test_a_worker_that_ended_with_an_exception_alone_is_a_failure_of_no_named_worker(tmp_path):
    verdict = analyze_files(tmp_path, {"msrun.log": MSRUN_NODE_3[:1]}).verdict
    assert verdict.finding.kind == "rank_exception" and verdict.ranks == []
    assert verdict.headline == (
        "A worker ended with an error and the launcher stopped the others; its report names "
        "no worker"
    )
