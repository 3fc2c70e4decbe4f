from __future__ import annotations

from tests.builders import analyze_files, finding

# hiyouga/LlamaFactory#6000 and the gloo wording on the other ranks (formats.md §7)
REPORT = (
    "[rank0]: RuntimeError: [Rank 0]: Ranks 6 failed to pass monitoredBarrier in 180000000000 ms"
)
PEER = (
    "[rank3]: RuntimeError: Rank 3 successfully reached monitoredBarrier, but received errors "
    "while waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank."
)


def test_rank_zero_names_the_laggard(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": [PEER, REPORT]})
    barrier = finding(analysis, "monitored_barrier")
    assert barrier.ranks == [6] and barrier.role == "root_cause"
    assert barrier.details["ranks_that_arrived"] == [3]
    assert analysis.verdict.finding is barrier


def test_several_laggards(tmp_path):
    line = "RuntimeError: [Rank 0]: Ranks 1, 2 failed to pass monitoredBarrier in 120000 ms"
    assert finding(analyze_files(tmp_path, {"a.log": [line]}), "monitored_barrier").ranks == [1, 2]
