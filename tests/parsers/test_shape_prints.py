# ruff: noqa: E501 -- test data are verbatim log lines
"""The ranks' own prints of the shape they pass to a collective (parsers/shape_prints.py), and
the rank whose shape differs (rules/collective_mismatch.py)."""

from __future__ import annotations

from tests.builders import analyze_files, parsed_by

# NVIDIA/nccl#1417, verbatim (posted inside a code block, as comments): eight ranks print the
# tensor they pass to all_reduce; rank 0's is smaller, and the job hung
BEFORE_ALLREDUCE = [
    "    # rank 0 shape is 409600, rank != 0 shape is 32768000 will hang",
    "        # Rank 7 tensor before allreduce: torch.Size([32768000]) 1.0",
    "        # Rank 6 tensor before allreduce: torch.Size([32768000]) 1.0",
    "        # Rank 4 tensor before allreduce: torch.Size([32768000]) 1.0",
    "        # Rank 0 tensor before allreduce: torch.Size([409600]) 1.0",
    "        # Rank 5 tensor before allreduce: torch.Size([32768000]) 1.0",
    "        # Rank 3 tensor before allreduce: torch.Size([32768000]) 1.0",
    "        # Rank 2 tensor before allreduce: torch.Size([32768000]) 1.0",
    "        # Rank 1 tensor before allreduce: torch.Size([32768000]) 1.0",
    "        # Rank 0 tensor after allreduce: torch.Size([409600]) 8.0 8.0 8.0 8.0",
]


def test_each_rank_s_print_is_the_shape_it_passes_to_the_collective():
    found = parsed_by("shape_prints", BEFORE_ALLREDUCE).sort("line")
    assert found.get_column("peer_rank").to_list() == [7, 6, 4, 0, 5, 3, 2, 1, 0]
    assert found.get_column("shape").to_list()[:4] == ["[32768000]"] * 3 + ["[409600]"]
    assert set(found.get_column("op").to_list()) == {"allreduce"}
    # the print after the collective is another place than the one before it
    before, after = found.head(8), found.tail(1)
    assert before.get_column("value").n_unique() == 1
    assert after.item(0, "value") != before.item(0, "value")


def test_the_rank_whose_printed_shape_is_the_minority_s_is_the_odd_one_out(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": BEFORE_ALLREDUCE})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("collective_mismatch", [0])
    assert verdict.headline == "Rank 0 passed a tensor of another shape to allreduce"
    assert "ranks 1-7: [32768000]; rank 0: [409600]" in verdict.finding.summary


def test_ranks_printing_one_shape_are_no_finding(tmp_path):
    same = [line.replace("409600", "32768000") for line in BEFORE_ALLREDUCE]
    analysis = analyze_files(tmp_path, {"console.log": same})
    assert not [f for f in analysis.findings if f.kind == "collective_mismatch"]


def test_a_shape_print_that_names_no_collective_is_not_read():
    lines = [
        "Rank 0 batch: torch.Size([7, 3, 224, 224])",
        "Rank 1 batch: torch.Size([8, 3, 224, 224])",
    ]
    assert parsed_by("shape_prints", lines).is_empty()
