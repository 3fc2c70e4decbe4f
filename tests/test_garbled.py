"""A rank that could not use what a collective handed it (logforensics/garbled.py, reported by
rules/stage_divergence.py)."""

# ruff: noqa: E501 -- test data are verbatim log lines
from __future__ import annotations

from tests.builders import analyze_files, kinds

# huggingface/accelerate#190, verbatim (vegetable-lion's comment): rank 0 ran inference alone,
# rank 1's RNG sync received bytes of another collective
GARBLED_RNG_STATE = [
    "[rank1]: generator.set_state(rng_state)",
    "[rank1]: RuntimeError: Invalid mt19937 state",
]


def test_a_broadcast_state_that_fails_its_check_blames_the_source_not_the_receiver(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": GARBLED_RNG_STATE})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("stage_divergence", [0])
    assert verdict.finding.details["receivers"] == [1]
    assert verdict.finding.confidence == "low"
    assert "rank_exception" not in kinds(analysis)  # the exception is the symptom
    assert verdict.headline.startswith("Rank 1 got another collective's data from rank 0")
    assert "is_main_process" in verdict.finding.fix


def test_the_source_itself_garbled_blames_nobody(tmp_path):
    lines = [line.replace("[rank1]", "[rank0]") for line in GARBLED_RNG_STATE]
    lines += [line.replace("[rank1]", "[rank2]") for line in GARBLED_RNG_STATE]
    verdict = analyze_files(tmp_path, {"console.log": lines}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("stage_divergence", [])
    assert verdict.finding.details["receivers"] == [0, 2]


# CarperAI/trlx#319, verbatim (cut): the garbled state's exception names no rank; the watchdog
# then reports ranks 2 and 3 in different collectives at one number
UNRANKED_GARBLED = [
    "RuntimeError: Invalid mt19937 state",
    "terminate called after throwing an instance of 'std::runtime_error'",
    "  what():  [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=696, OpType=BROADCAST, Timeout(ms)=1800000) ran for 1802763 milliseconds before timing out.",
    "terminate called after throwing an instance of 'std::runtime_error'",
    "  what():  [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=696, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802485 milliseconds before timing out.",
]


def test_a_garbled_state_no_line_ties_to_a_rank_is_still_the_desync_s_symptom(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": UNRANKED_GARBLED})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("stage_divergence", [0])
    assert "rank_exception" not in kinds(analysis)
    assert verdict.headline.startswith("A rank got another collective's data from rank 0")
