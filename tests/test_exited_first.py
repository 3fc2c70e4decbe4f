# ruff: noqa: E501 -- test data are verbatim log lines
"""Ranks whose program exited while the others went on into a collective they then timed out
in (logforensics/exited_first.py, reported by rules/stage_divergence.py)."""

from __future__ import annotations

from logforensics.i18n import translate
from tests.builders import analyze_files, finding
from tests.test_i18n import english_runs

# NVIDIA/nccl#1504, verbatim (the last lines of the console): PiPPy's Llama example on four
# GPUs; rank 0, the first pipeline stage, exited at 04:13:02, rank 1 timed out in its first
# send/recv 30 minutes later
STAGE_EXITED = [
    "[rank0]:[W1106 04:13:02.107228334 ProcessGroupNCCL.cpp:1250] Warning: WARNING: process group has NOT been destroyed before we destruct ProcessGroupNCCL. On normal program exit, the application should call destroy_process_group to ensure that any pending NCCL operations have finished in this process. In rare cases this process can exit before this point and block the progress of another member of the process group. This constraint has always been present,  but this warning has only been added since PyTorch 2.4 (function operator())",
    "678c7278cb2d:26023:27095 [0] NCCL INFO [Service thread] Connection closed by localRank 0",
    "678c7278cb2d:26023:27115 [0] NCCL INFO comm 0x1aacdee0 rank 0 nranks 4 cudaDev 0 busId 1000 - Abort COMPLETE",
    "[rank1]:[E1106 04:43:01.018941581 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=COALESCED, NumelIn=18446744073709551615, NumelOut=18446744073709551615, Timeout(ms)=1800000) ran for 1800039 milliseconds before timing out.",
]


def test_a_rank_whose_program_exited_before_the_others_timed_out_left_the_job(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": STAGE_EXITED})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("stage_divergence", [0])
    assert verdict.finding.details == {"departure": "left", "other_ranks": [1]}
    assert verdict.headline.startswith("Rank 0 left the job early, with no error; rank 1 waited")
    assert finding(analysis, "collective_timeout").role == "symptom"
    for text in (verdict.finding.summary, verdict.finding.fix):
        assert english_runs(translate(text, "zh")) == []


def test_an_exit_after_the_others_timed_out_is_no_departure(tmp_path):
    exit_warning, timeout = STAGE_EXITED[0], STAGE_EXITED[3]
    analysis = analyze_files(tmp_path, {"console.log": [timeout, exit_warning]})
    assert all(f.details.get("departure") != "left" for f in analysis.findings)


def test_a_rank_that_timed_out_itself_did_not_leave(tmp_path):
    mine = STAGE_EXITED[3].replace("[rank1]", "[rank0]").replace("[Rank 1]", "[Rank 0]")
    analysis = analyze_files(tmp_path, {"console.log": [*STAGE_EXITED, mine]})
    assert all(f.details.get("departure") != "left" for f in analysis.findings)
