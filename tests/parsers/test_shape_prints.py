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


def test_a_shape_print_that_names_no_collective_is_a_size_with_no_rank_compared(tmp_path):
    lines = [
        "Rank 0 batch: torch.Size([7, 3, 224, 224])",
        "Rank 1 batch: torch.Size([8, 3, 224, 224])",
    ]
    found = parsed_by("shape_prints", lines)
    assert set(found.get_column("event").to_list()) == {"shape_print"}
    assert found.get_column("peer_rank").is_null().all() and found.get_column("op").is_null().all()
    analysis = analyze_files(tmp_path, {"console.log": lines})
    assert not [f for f in analysis.findings if f.kind == "collective_mismatch"]


# modelscope/ms-swift#2117, verbatim: a contrastive loss all-gathers each rank's logits into
# buffers shaped like its own; the four ranks' sequences were 906, 966, 902 and 902 long
GATHERED_LOGITS = [
    "Train:   0%|          | 0/8300 [00:00<?, ?it/s]WARNING:transformers_modules.InternVL2-4B.modeling_phi3:`use_cache=True` is incompatible with gradient checkpointing. Setting `use_cache=False`...",
    "gathered_logits shape: torch.Size([4, 906, 32020])",
    "gathered_pos shape: torch.Size([4])",
    "gathered_logits shape: torch.Size([4, 966, 32020])",
    "gathered_pos shape: torch.Size([4])",
    "dynamic ViT batch size: 2, images per sample: 2.0, dynamic token length: 902",
    "gathered_logits shape: torch.Size([4, 902, 32020])",
    "gathered_pos shape: torch.Size([4])",
    "gathered_logits shape: torch.Size([4, 902, 32020])",
    "gathered_pos shape: torch.Size([4])",
    "[E ProcessGroupNCCL.cpp:475] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4, OpType=ALLGATHER, NumelIn=30931320, NumelOut=123725280, Timeout(ms)=1800000) ran for 1800304 milliseconds before timing out.",
]


def test_a_timed_out_gather_the_size_of_one_of_several_printed_sizes_is_a_size_mismatch(
    tmp_path,
):
    verdict = analyze_files(tmp_path, {"log.txt": GATHERED_LOGITS}).verdict
    assert verdict.finding.kind == "collective_mismatch" and verdict.finding.blames_nobody
    assert verdict.headline.startswith(
        "The processes passed tensors of different shapes to ALLGATHER"
    )
    assert "[4, 966, 32020]" in verdict.finding.summary
    assert "[4, 906, 32020], [4, 902, 32020]" in verdict.finding.summary
    assert "pad" in verdict.finding.fix


def test_printed_sizes_the_timed_out_collective_does_not_match_say_nothing(tmp_path):
    lines = [line.replace("NumelOut=123725280", "NumelOut=123725281") for line in GATHERED_LOGITS]
    lines = [line.replace("NumelIn=30931320", "NumelIn=30931321") for line in lines]
    analysis = analyze_files(tmp_path, {"log.txt": lines})
    assert not [f for f in analysis.findings if f.kind == "collective_mismatch"]
