# ruff: noqa: E501 -- test data are verbatim log lines
"""The loss terms each rank logged (parsers/loss_keys.py), and the ranks whose terms differ
(rules/collective_mismatch.py), verbatim from the public threads named at each."""

from __future__ import annotations

from tests.builders import analyze_files, kinds, parsed_by

# open-mmlab/mmdetection#9291, verbatim: Cascade R-CNN on 2 GPUs, rank 1's forward produced
# only the RPN's losses
LOSS_TERMS_DIFFER = [
    "AssertionError: loss log variables are different across GPUs!",
    "rank 1 len(log_vars): 3 keys: loss_rpn_cls,loss_rpn_bbox,s0.loss_bbox",
    "",
    "AssertionError: loss log variables are different across GPUs!",
    "rank 0 len(log_vars): 11 keys: loss_rpn_cls,loss_rpn_bbox,s0.loss_cls,s0.acc,s0.loss_bbox,s1.loss_cls,s1.acc,s1.loss_bbox,s2.loss_cls,s2.acc,s2.loss_bbox",
]


def test_each_rank_s_loss_terms_are_an_event_of_that_rank():
    found = parsed_by("loss_keys", LOSS_TERMS_DIFFER).sort("line")
    assert found.get_column("rank").to_list() == [1, 0]
    assert found.get_column("value").to_list() == [3, 11]
    assert found.row(0, named=True)["names"] == ["loss_rpn_cls", "loss_rpn_bbox", "s0.loss_bbox"]


def test_the_rank_whose_loss_terms_are_a_subset_took_another_path(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": LOSS_TERMS_DIFFER})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("collective_mismatch", [1])
    assert "Rank 1 logged 3 loss terms where rank 0 logged 11" in verdict.finding.summary
    assert verdict.headline == "Rank 1 computed other loss terms than the others"
    # the assertion each rank raised is how the framework reported it, not another failure
    assert "rank_exception" not in kinds(analysis)


def test_the_minority_s_terms_are_the_odd_ones(tmp_path):
    # three ranks, constructed from the thread's lines: ranks 0 and 2 agree
    rank2 = LOSS_TERMS_DIFFER[4].replace("rank 0 ", "rank 2 ")
    analysis = analyze_files(tmp_path, {"console.log": LOSS_TERMS_DIFFER + [rank2]})
    assert analysis.verdict.ranks == [1]
