# ruff: noqa: E501 -- test data are verbatim log lines
"""FSDP's forward-order check across ranks (parsers/fsdp_order.py)."""

from __future__ import annotations

from tests.builders import analyze_files, kinds, only, parsed_by

# mosaicml/diffusion#44, verbatim: a 16-node run resumed from its checkpoint
RESUMED = [
    '  File "/opt/conda/lib/python3.9/site-packages/torch/distributed/fsdp/_exec_order_utils.py", line 243, in _check_order',
    "RuntimeError: Forward order differs across ranks: rank 0 is all-gathering 1 parameters while rank 4 is all-gathering -2142209024 parameters",
]
# meta-llama/llama-cookbook#78's title, verbatim (2 A100s; gone with NCCL_P2P_DISABLE=1)
TWO_RANKS = "RuntimeError: Forward order differs across ranks: rank 0 is all-gathering 0 parameters while rank 1 is all-gathering 1 parameters"
# meta-pytorch/torchtune#513, verbatim: the later iterations' warning, no failure
ORDER_CHANGED = [
    "/data/home/gchauhan/miniconda3/envs/ptn/lib/python3.11/site-packages/torch/distributed/fsdp/_exec_order_utils.py:298: UserWarning: Forward order differs from that of the first iteration on rank 3. Collectives are unchecked and may give incorrect results or hang.",
    "Expected to not all-gather any more parameters in the forward but trying to all-gather parameters for [['layers.7.attn.v_proj.lora_b.weight']]",
    "  warnings.warn(",
]


def test_the_check_names_the_first_pair_of_ranks_that_differ():
    found = only(parsed_by("fsdp_order", RESUMED).filter(event="fsdp_order_mismatch"))
    assert found["values"] == [0, 4]
    assert found["names"] == ["1 parameters", "-2142209024 parameters"]


def test_the_rank_past_those_that_agreed_with_rank_0_left_the_path(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": RESUMED})
    verdict = analysis.verdict
    assert verdict.finding.kind == "collective_mismatch" and verdict.ranks == [4]
    assert verdict.headline == "Rank 4 all-gathered other parameters than the others (FSDP)"
    assert "ranks 1-3 agreed with rank 0" in verdict.finding.summary
    assert "rank_exception" not in kinds(analysis)  # the check's error, no rank's own


def test_rank_0_against_rank_1_blames_neither(tmp_path):
    verdict = analyze_files(tmp_path, {"console.log": [TWO_RANKS]}).verdict
    assert verdict.finding.kind == "collective_mismatch" and verdict.ranks == []
    assert set(verdict.finding.ranks) == {0, 1}
    assert "does not say which of the two" in verdict.finding.summary


def test_an_order_that_changed_after_the_first_iteration_is_no_mismatch(tmp_path):
    assert parsed_by("fsdp_order", ORDER_CHANGED).filter(event="fsdp_order_mismatch").is_empty()
    assert "collective_mismatch" not in kinds(analyze_files(tmp_path, {"run.log": ORDER_CHANGED}))


def test_a_pair_past_any_rank_a_job_has_is_not_read_as_one(tmp_path):
    # the check's words with a rank no job has (hostile or garbled input)
    line = TWO_RANKS.replace("rank 1 is", "rank 9999999 is")
    analysis = analyze_files(tmp_path, {"console.log": [line]})
    assert "collective_mismatch" not in kinds(analysis)
