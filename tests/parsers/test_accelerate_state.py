"""Hugging Face Accelerate's state as its scripts log it on every process
(parsers/accelerate_state.py)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from tests.builders import parse

THREADS = Path(__file__).parents[1] / "data" / "threads"


def test_each_process_s_state_block_is_its_rank_and_device():
    # facebookresearch/ViewDiff#24 (tests/data/threads): four processes, all on cuda:0
    lines = (THREADS / "viewdiff24_four_processes_one_gpu.log").read_text(encoding="utf-8")
    table = parse(lines.splitlines())
    mapped = table.filter(pl.col("event") == "device_map").sort("rank")
    assert mapped.select("line", "rank", "local_rank", "device", "world_size").rows() == [
        (29, 0, 0, "0", 4),
        (13, 1, 1, "0", 4),
        (21, 2, 2, "0", 4),
        (5, 3, 3, "0", 4),
    ]
    assert mapped.get_column("text").to_list() == ["Device: cuda:0"] * 4


def test_a_block_without_its_device_line_is_no_mapping():
    # the same block cut after `Process index:` (an excerpt), and a count of processes alone
    lines = ["Num processes: 4", "Process index: 3", "", "Num processes: 2"]
    assert parse(lines).filter(pl.col("event") == "device_map").is_empty()
