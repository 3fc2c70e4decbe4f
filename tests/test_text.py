from __future__ import annotations

import pytest

from logforensics.text import rank_list, rank_ranges


@pytest.mark.parametrize(
    ("ranks", "words"),
    [
        ([], "no rank"),
        ([3], "rank 3"),
        ([1, 0], "ranks 0 and 1"),
        ([0, 1, 3], "ranks 0, 1 and 3"),
        (range(512), "ranks 0-511"),
        ([0, 1, 2, 5, 9, 10, 11, 12], "ranks 0-2, 5 and 9-12"),
        (range(0, 40, 2), "ranks 0, 2, 4, 6, 8, 10, 12 and 14 (+12 more)"),
    ],
)
def test_rank_list(ranks, words):
    assert rank_list(ranks) == words


def test_rank_ranges_for_a_table_cell():
    assert rank_ranges([*range(298), 299, 300, *range(302, 517)]) == "0-297, 299, 300, 302-516"
    assert rank_ranges(range(0, 100, 2), limit=3) == "0, 2, 4, … (+47 more)"
