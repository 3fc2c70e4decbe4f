# ruff: noqa: E501 -- test data are verbatim log lines
"""Megatron Core's rerun state machine rejecting a rank's result (parsers/numeric_checks.py)."""

from __future__ import annotations

from logforensics.i18n import translate_headline
from tests.builders import analyze_files, only, parsed_by

# NVIDIA/Megatron-LM#5026, verbatim: a CI run's error block, the machine's record of rank 3
REJECTED = "ERROR:megatron.core.rerun_state_machine:Unexpected result nan on rank 3 at iteration #3 invocation #2 (message='found NaN in local grad norm for bucket #0 in backward pass before data-parallel communication collective')"
# tests/framing/test_torchx.py's NeMo-Run console (NVIDIA-NeMo/Speech#14348), verbatim: the
# exception an older machine raised with the same words
RAISED = "RuntimeError: Rank 2, node dcfai-xe9680-01, device 2, iteration -1: Unexpected result nan (message='found NaN in local grad norm for bucket #0 in backward pass before data-parallel communication collective')"


def test_the_machine_s_record_is_the_named_rank_s_exception():
    record = only(parsed_by("numeric_checks", [REJECTED]))
    assert (record["event"], record["rank"], record["exc_type"]) == (
        "exception",
        3,
        "Unexpected result",
    )
    assert record["exc_message"] == (
        "nan at iteration 3: found NaN in local grad norm for bucket #0 in backward pass "
        "before data-parallel communication collective"
    )


def test_a_file_whose_traceback_raised_the_same_words_is_left_to_it():
    assert parsed_by("numeric_checks", [REJECTED, RAISED]).is_empty()


def test_the_record_alone_names_the_rank_whose_numbers_diverged(tmp_path):
    verdict = analyze_files(tmp_path, {"console.log": [REJECTED]}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [3])
    assert verdict.headline == "Rank 3's training numbers diverged (Unexpected result)"
    assert (
        translate_headline(verdict.headline, "zh")
        == "rank 3 的训练数值发散了（`Unexpected result`）"
    )
