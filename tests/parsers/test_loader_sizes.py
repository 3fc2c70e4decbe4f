from __future__ import annotations

from tests.builders import only, parse, parsed_by


def test_all_ranks_print_gives_one_length_per_rank():
    events = parse(["2026-11-30 15:01:40,001 INFO loader sizes: [125, 125, 124, 125]"], "rank0.log")
    row = events.row(0, named=True)
    assert row["event"] == "loader_sizes"
    assert row["values"] == [125, 125, 124, 125]
    # Printed by rank 0 (its file) about every rank: the list itself names no rank.
    assert (row["rank"], row["rank_from"]) == (0, "path")


def test_per_rank_length_print():
    row = parse(["rank=3 loader_len=124"]).row(0, named=True)
    assert (row["event"], row["rank"], row["value"]) == ("loader_len", 3, 124)


def test_empty_list_and_prose_are_not_sizes():
    events = parse(["the loader sizes: unknown", "loader sizes: []"])
    assert events.filter(events["values"].list.len() > 0).is_empty()


def test_a_count_said_in_words_is_a_loader_length():
    # ltgoslo/gpt-bert#4, verbatim (one of the eight processes' lines)
    line = "The dataset is: <dataset.CausalDataset object at 0x14f5593b1f10> and the number of steps are: 506"
    row = only(parsed_by("loader_sizes", [line]))
    assert (row["event"], row["value"], row["names"]) == ("loader_len", 506, ["number of steps"])
