"""A rank that could not use what a collective handed it (logforensics/garbled.py, reported by
rules/stage_divergence.py)."""

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
