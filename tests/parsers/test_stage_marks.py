from __future__ import annotations

import datetime as dt

import pytest

from tests.builders import marks_of, parse


@pytest.mark.parametrize(
    ("line", "rank", "step", "stage", "epoch"),
    [
        ("rank=1 step=37 stage=before_backward", 1, 37, "before_backward", None),
        ("2026-11-29 10:00:01,234 INFO rank=1 step=37 stage=after_step", 1, 37, "after_step", None),
        ("2026-11-30T15:01:02Z rank=3 step=0 stage=fwd", 3, 0, "fwd", None),
        ("rank=1 step=37 stage=before_backward loss=0.1234 epoch=2", 1, 37, "before_backward", 2),
        (
            "[trainer] epoch=0 rank=12 lr=1e-4 step=9 stage=optimizer.step",
            12,
            9,
            "optimizer.step",
            0,
        ),
        ("[rank5]: rank=5 step=3 stage=before_forward", 5, 3, "before_forward", None),
    ],
)
def test_reads_a_mark_wherever_it_stands(line, rank, step, stage, epoch):
    marks = marks_of([line])
    assert marks.height == 1
    row = marks.row(0, named=True)
    assert (row["rank"], row["step"], row["stage"], row["epoch"]) == (rank, step, stage, epoch)
    assert row["line"] == 1
    # a mark is no event row: the narrow progress table holds it
    assert parse([line]).is_empty()


@pytest.mark.parametrize(
    "lead",
    [
        # what tests/robustness/test_properties.py drew when polars 2.2 began counting `find`
        # in characters while the marks were cut by bytes: the cut then split a character
        "\x80\U00010000\U00010000",
        "训练日志",  # a label in another script before the mark
        "✅ 🚀",
    ],
)
def test_reads_a_mark_after_characters_of_several_bytes(lead):
    marks = marks_of([f"{lead} rank=3 step=12 stage=before_backward"])
    row = marks.row(0, named=True)
    assert (row["rank"], row["step"], row["stage"]) == (3, 12, "before_backward")


def test_keys_must_start_a_word():
    # `local_rank=` is not `rank=`, `prestep=` is not `step=`.
    assert marks_of(["local_rank=1 prestep=3 stage=x"]).is_empty()


def test_incomplete_marks_are_not_marks():
    lines = ["rank=2 step=5 non-finite loss=nan -> skipping batch", "stage=warmup"]
    assert marks_of(lines).is_empty()


def test_the_last_mark_keeps_its_time():
    marks = marks_of(["2026-11-29 10:00:01,234 INFO rank=1 step=37 stage=before_backward"])
    assert marks.item(0, "last_time") == dt.datetime(2026, 11, 29, 10, 0, 1, 234000)


def test_prefix_rank_outranks_content():
    marks = marks_of(["[rank4]: rank=5 step=3 stage=before_forward"])
    assert (marks.item(0, "rank"), marks.item(0, "rank_from")) == (4, "prefix")
