# ruff: noqa: E501 -- test data are verbatim log lines
"""NVIDIA's resiliency extension's Flight Recorder attribution report (parsers/fr_attribution.py)
and the departure the flight_recorder rule reads from it when the dumps are not uploaded."""

from __future__ import annotations

from tests.builders import analyze_files, parsed_by

# NVIDIA/nvidia-resiliency-ext, tests/attribution/unit/reference_outputs/gpu_error_1st_reference.txt
# (at 3d95713), verbatim: a 16-rank Megatron MoE job whose ranks 12 and 14 were given a GPU error
GPU_ERROR_REPORT = [
    "INFO:__main__:['tests/attribution/unit/fr_traces/gpu_error_1st']",
    "INFO:__main__:",
    "Successfully processed 16 files.",
    "INFO:__main__:Using scheduling order: {'EXPERT_': 0, 'MODEL_': 0, 'TENSOR_': 0, 'PIPELINE_': 0, 'TENSOR_AND_CONTEXT_': 1, 'DATA_PARALLEL': 3, 'TENSOR_AND_DATA_PARALLEL_': 3, 'INTRA_DISTRIBUTED': 4, 'default_pg': 5}",
    "INFO:__main__:PGID   | Process Group Desc        | Op Type    | Size                             | Dtype    | {missing_or_completed} Ranks",
    "INFO:__main__:74     | EXPERT_MODEL_PARALLEL_GROUP | nccl:all_to_all | 4096x5120                             | BFloat16 | 12,14",
    "INFO:__main__:42     | TENSOR_MODEL_PARALLEL_GROUP | nccl:_all_gather_base | 4096x1x5120                             | BFloat16 | 14",
    "INFO:__main__:",
    "",
    "=== Collective Operations Analysis ===",
    "",
    "",
    "Found group types: EXPERT_MODEL_PARALLEL_GROUP, EXPERT_TENSOR_AND_MODEL_PARALLEL_GROUP, PIPELINE_MODEL_PARALLEL_GROUP, TENSOR_AND_CONTEXT_PARALLEL_GROUP, TENSOR_AND_DATA_PARALLEL_GROUP_WITH_CP, TENSOR_MODEL_PARALLEL_GROUP",
    "",
    "=== EXPERT_MODEL_PARALLEL_GROUP Collectives ===",
    "",
    "  Process Group                        PG Desc              Op Type            Size      Dtype         Total NRanks                         Identified Ranks                            Missing Ranks",
    "-----------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------",
    "             74    EXPERT_MODEL_PARALLEL_GROUP      nccl:all_to_all       4096x5120   BFloat16          4                              12,13,14,15                                    12,14",
    "  Operation type distribution:",
    "    Send/Receive pairs (src->dst):",
    "    Other operations:",
    "      nccl:all_to_all: 6",
    "",
    "",
    "=== EXPERT_TENSOR_AND_MODEL_PARALLEL_GROUP Collectives ===",
    "",
    "  Process Group                        PG Desc              Op Type            Size      Dtype         Total NRanks                         Identified Ranks                            Missing Ranks",
    "-----------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------",
    "             94 EXPERT_TENSOR_AND_MODEL_PARALLEL_GROUP nccl:_all_gather_base              16       Long          4                              12,13,14,15                                    12,14",
    "  Operation type distribution:",
    "    Send/Receive pairs (src->dst):",
    "    Other operations:",
    "      nccl:_all_gather_base: 3",
    "",
    "",
    "=== PIPELINE_MODEL_PARALLEL_GROUP Collectives ===",
    "",
    "  Process Group                        PG Desc              Op Type            Size      Dtype         Total NRanks                         Identified Ranks                            Missing Ranks",
    "-----------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------",
    "",
    "=== TENSOR_AND_CONTEXT_PARALLEL_GROUP Collectives ===",
    "",
    "  Process Group                        PG Desc              Op Type            Size      Dtype         Total NRanks                         Identified Ranks                            Missing Ranks",
    "-----------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------",
    "             69 TENSOR_AND_CONTEXT_PARALLEL_GROUP      nccl:all_reduce              16       Long          2                                    12,13                                       12",
    "  Operation type distribution:",
    "    Send/Receive pairs (src->dst):",
    "    Other operations:",
    "      nccl:all_reduce: 1",
    "",
    "             70 TENSOR_AND_CONTEXT_PARALLEL_GROUP      nccl:all_reduce              16       Long          2                                    14,15                                       14",
    "  Operation type distribution:",
    "    Send/Receive pairs (src->dst):",
    "    Other operations:",
    "      nccl:all_reduce: 2",
    "",
    "",
    "=== TENSOR_AND_DATA_PARALLEL_GROUP_WITH_CP Collectives ===",
    "",
    "  Process Group                        PG Desc              Op Type            Size      Dtype         Total NRanks                         Identified Ranks                            Missing Ranks",
    "-----------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------",
    "             58 TENSOR_AND_DATA_PARALLEL_GROUP_WITH_CP      nccl:all_reduce             120      Float          4                              12,13,14,15                                    12,14",
    "  Operation type distribution:",
    "    Send/Receive pairs (src->dst):",
    "    Other operations:",
    "      nccl:all_reduce: 3",
    "",
    "",
    "=== TENSOR_MODEL_PARALLEL_GROUP Collectives ===",
    "",
    "  Process Group                        PG Desc              Op Type            Size      Dtype         Total NRanks                         Identified Ranks                            Missing Ranks",
    "-----------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------",
    "             41    TENSOR_MODEL_PARALLEL_GROUP nccl:_all_gather_base     4096x1x5120   BFloat16          2                                    12,13                                       12",
    "  Operation type distribution:",
    "    Send/Receive pairs (src->dst):",
    "    Other operations:",
    "      nccl:_all_gather_base: 4",
    "      nccl:_reduce_scatter_base: 3",
    "      nccl:broadcast: 2",
    "",
    "             42    TENSOR_MODEL_PARALLEL_GROUP nccl:_all_gather_base     4096x1x5120   BFloat16          2                                    14,15                                       14",
    "  Operation type distribution:",
    "    Send/Receive pairs (src->dst):",
    "    Other operations:",
    "      nccl:_all_gather_base: 8",
    "      nccl:_reduce_scatter_base: 4",
    "      nccl:broadcast: 4",
    "",
]
# lock_gil_2nd_reference.txt (at a5861bc), the rows of its first and second expert groups: rank
# 10 missing from one, rank 15 from the other
TWO_GROUPS = [
    "=== EXPERT_MODEL_PARALLEL_GROUP Collectives ===",
    "",
    "  Process Group                        PG Desc              Op Type            Size      Dtype         Total NRanks                         Identified Ranks                            Missing Ranks",
    "-----------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------",
    "             73    EXPERT_MODEL_PARALLEL_GROUP      nccl:all_to_all       4096x5120   BFloat16          3                                   8,9,11                                       10",
    "  Operation type distribution:",
    "    Send/Receive pairs (src->dst):",
    "    Other operations:",
    "      nccl:all_to_all: 18",
    "",
    "             74    EXPERT_MODEL_PARALLEL_GROUP      nccl:all_to_all       4096x5120   BFloat16          3                                 12,13,14                                       15",
]


def test_each_row_is_the_ranks_missing_from_a_group_s_collective():
    missing = parsed_by("fr_attribution", GPU_ERROR_REPORT).filter(event="fr_missing")
    rows = missing.select("pg", "op", "values").rows()
    assert rows[0] == ("74", "all_to_all", [12, 14])
    assert ("41", "_all_gather_base", [12]) in rows and ("42", "_all_gather_base", [14]) in rows
    assert len(rows) == 7  # the detailed tables' rows, not the summary's


def test_the_summary_table_whose_header_does_not_say_which_ranks_is_read_without_a_finding(
    tmp_path,
):
    summary = GPU_ERROR_REPORT[4:7]  # its header and two rows
    analysis = analyze_files(tmp_path, {"fr_attribution.txt": summary})
    assert analysis.findings == [] and analysis.unrecognised_lines == 0


def test_the_ranks_missing_from_the_groups_are_the_departure(tmp_path):
    analysis = analyze_files(tmp_path, {"fr_attribution.txt": GPU_ERROR_REPORT})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("fr_mismatch", [12, 14])
    assert verdict.headline.startswith("Ranks 12 and 14 never joined `all_to_all`")
    assert "issues `all_to_all` on ranks 12 and 14" in verdict.finding.fix
    assert analysis.unrecognised_lines <= 4  # the tool's own INFO lines before its tables


def test_ranks_missing_from_different_groups_are_all_named(tmp_path):
    analysis = analyze_files(tmp_path, {"fr_attribution.txt": TWO_GROUPS})
    assert analysis.verdict.ranks == [10, 15]
