# ruff: noqa: E501 -- test data are verbatim log lines
"""Ranks that never issued the collective the others timed out in (logforensics/never_issued.py,
reported by rules/stage_divergence.py)."""

from __future__ import annotations

from tests.builders import analyze_files, finding
from tests.rules.test_collective_timeout import NEVER_ISSUED

# deveshpat/Ouroboros, kaggle-utils.ipynb (at 4dd9488), the failing cell's output, verbatim
# (three of its lines): rank 1 timed out in ALLREDUCE #58725 while rank 0's own record stops at #58724 (it ran
# validation, the author's note the next day says)
RANK_ZERO_ELSEWHERE = [
    "[rank1]:[E417 17:14:43.399819004 ProcessGroupNCCL.cpp:688] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=58725, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=3600000) ran for 3600001 milliseconds before timing out.",
    "[rank1]:[E417 17:14:43.412850617 ProcessGroupNCCL.cpp:2277] [PG ID 0 PG GUID 0(default_pg) Rank 1]  failure detected by watchdog at work sequence id: 58725 PG status: last enqueued work: 58725, last completed work: 58724",
    "[rank0]:[E417 17:14:43.474434548 ProcessGroupNCCL.cpp:1890] [PG ID 0 PG GUID 0(default_pg) Rank 0] Received a dump signal due to a collective timeout from  rank 1 and we will try our best to dump the debug info. Last enqueued NCCL work: 58724, last completed NCCL work: 58724.This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in the communications library (e.g. NCCL), etc. ",
]


def test_a_rank_whose_own_record_stops_below_the_others_collective_departed(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": RANK_ZERO_ELSEWHERE})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("stage_divergence", [0])
    assert verdict.finding.details["departure"] == "never_issued"
    assert (verdict.finding.op, verdict.finding.seq) == ("ALLREDUCE", 58725)
    assert verdict.headline.startswith("Rank 0 never issued ALLREDUCE #58725; rank 1 waited")
    assert "stops at work #58724" in verdict.finding.summary
    assert "all_reduce(MAX)" in verdict.finding.fix
    assert finding(analysis, "collective_timeout").role == "symptom"


def test_the_others_last_completed_work_names_the_collective_where_no_report_does(tmp_path):
    # TorchInferno's server: only dump-signal lines, ranks 0-6 completed #59957 and enqueued on
    verdict = analyze_files(tmp_path, {"server.log": NEVER_ISSUED}).verdict
    assert (verdict.finding.kind, verdict.ranks, verdict.finding.seq) == (
        "stage_divergence",
        [7],
        59958,
    )


def test_a_rank_that_enqueued_the_collective_is_no_departure(tmp_path):
    lines = [
        line.replace("Last enqueued NCCL work: 58724", "Last enqueued NCCL work: 58725")
        for line in RANK_ZERO_ELSEWHERE
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    assert all(f.details.get("departure") != "never_issued" for f in analysis.findings)


# vllm-project/vllm-omni#2928 (a 14-hour serving test that hung), verbatim: rank 1's watchdog
# timed out in ALLREDUCE #5524 of PG 11; its dump signal is tagged with PG 0, where both ranks'
# records stand level at #233659 with nothing pending
OTHER_GROUP_TIMED_OUT = [
    "[rank1]:[E418 01:32:50.907313453 ProcessGroupNCCL.cpp:1890] [PG ID 0 PG GUID 0(default_pg) Rank 1] Received a dump signal due to a collective timeout from this local rank and we will try our best to dump the debug info. Last enqueued NCCL work: 233659, last completed NCCL work: 233659.This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in the communications library (e.g. NCCL), etc.",
    "[rank0]:[E418 01:32:50.907342463 ProcessGroupNCCL.cpp:1890] [PG ID 0 PG GUID 0(default_pg) Rank 0] Received a dump signal due to a collective timeout from  rank 1 and we will try our best to dump the debug info. Last enqueued NCCL work: 233659, last completed NCCL work: 233659.This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in the communications library (e.g. NCCL), etc.",
    "  what():  [PG ID 11 PG GUID 47 Rank 1] Process group watchdog thread terminated with exception: [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5524, OpType=ALLREDUCE, NumelIn=6, NumelOut=6, Timeout(ms)=600000) ran for 600066 milliseconds before timing out.",
]


def test_a_group_with_nothing_pending_names_no_collective_never_issued(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": OTHER_GROUP_TIMED_OUT})
    verdict = analysis.verdict
    assert all(f.details.get("departure") != "never_issued" for f in analysis.findings)
    assert (verdict.finding.kind, verdict.finding.seq, verdict.ranks) == (
        "collective_timeout",
        5524,
        [],
    )


# PrimeIntellect-ai/prime-rl#3186, verbatim (each rank's file as the PR comment shows them):
# rank 13 timed out in ALLTOALL_BASE #1438 of an expert group named by a hash GUID; rank 0's
# record is of the default group, where its work stands at #1261
EXPERT_GROUP_RANK0 = [
    "[rank0]:[E804 23:05:54.816499929 ProcessGroupNCCL.cpp:1849] [PG ID 0 PG GUID 0(default_pg) Rank 0] Observed flight recorder dump signal from another rank via TCPStore.",
    "[rank0]:[E804 23:05:54.817424543 ProcessGroupNCCL.cpp:1914] [PG ID 0 PG GUID 0(default_pg) Rank 0] Received a dump signal due to a collective timeout from  rank 13 and we will try our best to dump the debug info. Last enqueued NCCL work: 1261, last completed NCCL work: 1259.This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in the communications library (e.g. NCCL), etc. ",
]
EXPERT_GROUP_RANK13 = [
    "[rank13]:[E804 23:05:54.516665906 ProcessGroupNCCL.cpp:689] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1438, OpType=ALLTOALL_BASE, NumelIn=195004416, NumelOut=195004416, Timeout(ms)=600000) ran for 600093 milliseconds before timing out.",
    "[rank13]:[E804 23:05:54.517045067 ProcessGroupNCCL.cpp:2303] [PG ID 3 PG GUID d03ba143833c6bf31b072ffdb22f1745957fcbfb Rank 1]  failure detected by watchdog at work sequence id: 1438 PG status: last enqueued work: 1441, last completed work: 1437",
]


def test_a_group_named_by_a_hash_is_not_the_default_group(tmp_path):
    files = {"rank0.log": EXPERT_GROUP_RANK0, "rank13.log": EXPERT_GROUP_RANK13}
    analysis = analyze_files(tmp_path, files)
    assert all(f.details.get("departure") != "never_issued" for f in analysis.findings)
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.finding.seq) == ("collective_timeout", 1438)
