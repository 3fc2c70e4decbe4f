from __future__ import annotations

import pytest

from tests.builders import parsed_by


# sample_logs/uneven_epoch_lines (faults_train.py) and ddp_train.py / collectives_train.py
# (sample_logs/uneven_loader_hang, swallowed_exception): real runs here, verbatim.
@pytest.mark.parametrize(
    ("line", "event", "rank", "epoch"),
    [
        ("rank=2 epoch=0 start", "epoch_start", 2, 0),
        ("rank=0 epoch=0 end", "epoch_end", 0, 0),
        (
            "2026-11-30 15:05:12,101 INFO rank=3 epoch=0 finished local loop, entering epoch-end barrier",
            "epoch_end",
            3,
            0,
        ),
        ("rank=1 epoch=0 finished local loop, entering epoch-end sync", "epoch_end", 1, 0),
    ],
)
def test_epoch_boundaries(line, event, rank, epoch):
    rows = parsed_by("epoch_marks", [line])
    assert rows.select("event", "rank", "epoch").row(0) == (event, rank, epoch)


def test_stage_marks_with_an_epoch_are_no_boundary():
    assert parsed_by("epoch_marks", ["rank=1 step=3 stage=after_step loss=0.1 epoch=0"]).is_empty()
