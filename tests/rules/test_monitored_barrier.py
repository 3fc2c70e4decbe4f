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


# pytorch/pytorch#76198, verbatim (rank 1's log only): a Kubernetes pod died; gloo's fixed text
# on a rank whose exchange with the coordinator failed names rank 0 whether or not it failed
WAITING_ONLY = [
    "[E ProcessGroupGloo.cpp:136] Rank 1 successfully reached monitoredBarrier, but received "
    "errors while waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.",
    "RuntimeError: Rank 1 successfully reached monitoredBarrier, but received errors while "
    "waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.",
    " Original exception:",
]


def test_without_the_coordinators_log_nobody_is_blamed(tmp_path):
    analysis = analyze_files(tmp_path, {"rank1.log": WAITING_ONLY})
    barrier = finding(analysis, "monitored_barrier")
    assert barrier.blamed == [] and barrier.confidence == "low"
    assert analysis.verdict.headline == (
        "Rank 1 got errors from the monitored barrier's coordinator (rank 0); the logs do not "
        "say which rank failed"
    )


def test_the_coordinators_own_silent_log_makes_it_the_one(tmp_path):
    files = {"rank1.log": WAITING_ONLY, "rank0.log": ["rank=0 step=4 stage=before_forward"]}
    barrier = finding(analyze_files(tmp_path, files), "monitored_barrier")
    assert barrier.blamed == [0] and barrier.confidence == "high"
