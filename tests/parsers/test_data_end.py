"""Lines that say a rank's data ran out (parsers/data_end.py)."""

from __future__ import annotations

from tests.builders import parsed_by


def test_an_icefall_end_of_dataloader_line_names_its_rank_and_world():
    # lifeiteng/vall-e#86, verbatim
    line = "2023-04-13 16:00:05,621 INFO [trainer.py:650] (5/8) Reaches end of dataloader."
    row = parsed_by("data_end", [line]).row(0, named=True)
    assert (row["event"], row["rank"], row["world_size"]) == ("data_end", 5, 8)


def test_a_rank_beyond_the_world_it_states_is_no_rank():
    # vall-e#86's line with the header's numbers swapped (constructed): log text, not a rank
    line = "2023-04-13 16:00:05,621 INFO [trainer.py:650] (8/5) Reaches end of dataloader."
    row = parsed_by("data_end", [line]).row(0, named=True)
    assert (row["rank"], row["world_size"]) == (None, None)


def test_other_ends_are_not_the_end_of_the_data():
    lines = [
        # open-mmlab/mmdetection#11096, verbatim
        "Loading and preparing results...",
        # Lightning's finish line (pytorch-lightning#14428)
        "`Trainer.fit` stopped: `max_epochs=1` reached.",
        "reached the end of the warmup schedule",  # constructed: not data
    ]
    assert parsed_by("data_end", lines).is_empty()
