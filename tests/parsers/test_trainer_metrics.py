# ruff: noqa: E501 -- test data are verbatim log lines
"""The Hugging Face Trainer's metrics dicts (parsers/trainer_metrics.py)."""

from __future__ import annotations

import pytest

from tests.builders import analyze_files

# hiyouga/LlamaFactory#8261 and axolotl-ai-cloud/axolotl#592, verbatim
METRICS = [
    "{'loss': 3.5534, 'grad_norm': 1.4142135381698608, 'learning_rate': 2.0454545454545457e-06, 'epoch': 0.01}",
    "{'loss': 0.0, 'grad_norm': 1.4142135381698608, 'learning_rate': 4.3181818181818185e-06, 'epoch': 0.01}",
    "{'loss': 1.0132, 'learning_rate': 0.00013912063134160092, 'epoch': 0.94}",
    "{'loss': 0.9668, 'learning_rate': 0.00013889515219842166, 'epoch': 0.94}",
]


def test_a_log_of_metrics_dicts_is_a_training_log_with_no_failure(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": METRICS})  # not refused as a non-log
    assert (analysis.recognised_lines, analysis.unrecognised_lines) == (4, 0)
    assert analysis.verdict is None


@pytest.mark.parametrize(
    "line",
    [
        "config = {'lr': 0.1, 'batch': 8}",  # a dict inside a sentence, no epoch
        "{'loss': nan}",  # made up for this test: no epoch, so no trainer's dict
    ],
)
def test_other_dicts_are_not_metrics(tmp_path, line):
    analysis = analyze_files(tmp_path, {"train.log": [*METRICS, line]})
    assert analysis.unrecognised_lines == 1
