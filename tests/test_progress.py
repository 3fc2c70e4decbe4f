"""Progress from stage marks: the same departures however the loop numbers its steps."""

from __future__ import annotations

import pytest

from tests.builders import analyze_files, marks


@pytest.mark.parametrize(
    "steps",
    [
        range(8),  # steps counted 0, 1, 2, ...: places looked up in a table
        range(0, 8_000_000_000, 1_000_000_000),  # global sample counts: places sorted instead
    ],
    ids=["counted", "sparse"],
)
def test_a_skip_is_found_whatever_the_step_numbers(tmp_path, steps):
    steps = list(steps)
    skipped_at = steps[5]
    files = {f"rank{r}.log": marks(r, steps) for r in (0, 1, 3)}
    files["rank2.log"] = marks(2, steps, skip={skipped_at: ("after_backward", "after_step")})
    progress = analyze_files(tmp_path, files).job.progress
    assert progress is not None
    [departure] = progress.departures
    assert (departure.rank, departure.kind) == (2, "skipped")
    assert departure.expected["step"] == skipped_at
    assert departure.missed_stages == ("after_backward", "after_step")
    # keys are dense and follow the loop: 8 steps of 4 stages
    assert progress.keys.height == 32
    assert progress.keys.get_column("key").to_list() == list(range(32))
    assert progress.keys.get_column("step").is_sorted()


def test_a_rank_that_goes_back_a_pass_is_a_repeat_not_a_skip(tmp_path):
    files = {f"rank{r}.log": marks(r, range(4)) + marks(r, range(4)) for r in (0, 1, 2)}
    files["rank3.log"] = marks(3, range(4)) + marks(3, range(2)) + marks(3, range(4))
    progress = analyze_files(tmp_path, files).job.progress
    assert progress is not None
    [departure] = progress.departures
    assert departure.rank == 3
    assert departure.kind == "repeated"
    assert departure.expected["occ"] == 1 and departure.expected["step"] == 2
