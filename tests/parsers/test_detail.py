# ruff: noqa: E501 -- test data are verbatim log lines
"""TORCH_DISTRIBUTED_DEBUG=DETAIL fingerprints, verbatim from /work/shared/formats.md §6, the
field samples, public issues and torch 2.13 runs on this project's machine."""

from __future__ import annotations

import polars as pl
import pytest

from tests.builders import analyze_files, kinds, only, parsed_by

FIELDS = ("rank", "comm_rank", "seq", "op", "shape", "dtype")
PEER_FIELDS = ("peer_rank", "peer_seq", "peer_op", "peer_shape", "peer_dtype")


def detail_events(lines: list[str]) -> pl.DataFrame:
    return parsed_by("detail", lines)


MISMATCHES = [
    # speechbrain/speechbrain#2401: current form, both sides complete
    (
        "RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=485, OpType=ALLREDUCE, TensorShape=[25], TensorDtypes=Float, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))), but Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=485, OpType=BROADCAST, TensorShape=[1], TensorDtypes=Long, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))).Collectives differ in the following aspects:   Op type: ALLREDUCEvs BROADCAST  Tensor Tensor shapes: 25vs 1  Tensor Tensor dtypes: Floatvs Long",
        (1, 1, 485, "ALLREDUCE", "[25]", "Float"),
        (0, 485, "BROADCAST", "[1]", "Long"),
    ),
    # modelscope/ms-swift#9443 (behind the excepthook prefix)
    (
        "[rank1]: RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=3104, OpType=ALLREDUCE, TensorShape=[195812480], TensorDtypes=BFloat16, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))), but Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=3104, OpType=ALLREDUCE, TensorShape=[51123456], TensorDtypes=BFloat16, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))).Collectives differ in the following aspects:   Tensor Tensor shapes: 195812480vs 51123456",
        (1, 1, 3104, "ALLREDUCE", "[195812480]", "BFloat16"),
        (0, 3104, "ALLREDUCE", "[51123456]", "BFloat16"),
    ),
    # bghira/SimpleTuner#2712: a user logger in front, the other side without tensors, `101vs 0`
    (
        "[RANK 1] 2026-05-19 10:10:29,701 [ERROR] GPU circuit breaker OPEN: cuda_error - Detected mismatch between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=101, OpType=ALLGATHER, TensorShape=[1], TensorDtypes=Long, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))), but Rank 7 is running collective: CollectiveFingerPrint(SequenceNumber=0OpType=REDUCE).Collectives differ in the following aspects:   Sequence number: 101vs 0  Op type: ALLGATHERvs REDUCE  Tensor Tensor shapes: 1vs   Tensor Tensor dtypes: Longvs   Tensor Tensor devices: TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))vs  (GPU 1)",
        (1, 1, 101, "ALLGATHER", "[1]", "Long"),
        (7, 0, "REDUCE", None, None),
    ),
    # pt-148976: neither side has tensors (a barrier), the comma is missing on both
    (
        "  RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=1OpType=BARRIER), but Rank 2 is running collective: CollectiveFingerPrint(SequenceNumber=0OpType=BARRIER).Collectives di",
        (1, 1, 1, "BARRIER", None, None),
        (2, 0, "BARRIER", None, None),
    ),
    # torch 2.13 on this machine (sample_logs/detail_mismatch): a 2-D shape, a tab in the diff
    (
        "  RuntimeError: Detected mismatch between collectives on ranks. Rank 2 is running collective: CollectiveFingerPrint(SequenceNumber=37, OpType=ALLREDUCE, TensorShape=[16, 8], TensorDtypes=Float, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cpu, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))), but Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=0OpType=GATHER).Collectives differ in the following aspects: \t Sequence number: 37vs 0  Op type: ALLREDUCEvs GATHER  Tensor Tensor shapes: 16 8vs   Tensor Tensor dtypes: Floatvs   Tensor Tensor devices: TensorOptions(dtype=float (default), device=cpu, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))vs ",
        (2, 2, 37, "ALLREDUCE", "[16, 8]", "Float"),
        (1, 0, "GATHER", None, None),
    ),
    # pytorch/pytorch#100207 (~2.0: SequenceNumber added, other side without tensors)
    (
        "Detected mismatch between collectives on ranks. Rank 26 is running collective: CollectiveFingerPrint(SequenceNumber=683057617, OpType=BROADCAST, TensorShape=[1], TensorDtypes=Long, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cpu, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))), but Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=513876813OpType=BROADCAST).",
        (26, 26, 683057617, "BROADCAST", "[1]", "Long"),
        (1, 513876813, "BROADCAST", None, None),
    ),
    # Lightning-AI/pytorch-lightning#19680 (before SequenceNumber)
    (
        "RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint(OpType=ALLGATHER, TensorShape=[6], TensorDtypes=Double, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))), but Rank 0 is running collective: CollectiveFingerPrint(OpType=_ALLGATHER_BASE).",
        (1, 1, None, "ALLGATHER", "[6]", "Double"),
        (0, None, "_ALLGATHER_BASE", None, None),
    ),
    # pytorch/pytorch#79901 "Current Error Message" (1.12: the other side is an op name only;
    # the PR wraps the message after "collective:" and elides the fingerprint with "…")
    (
        "Detected mismatch between collectives on ranks. Rank 0 is running collective: CollectiveFingerPrint(OpType=ALLREDUCE, …), but Rank 1 is running collective: REDUCE.",
        (0, 0, None, "ALLREDUCE", None, None),
        (1, None, "REDUCE", None, None),
    ),
    # pytorch/pytorch#78022 (<= 1.11: one side only, "inconsistent")
    (
        "RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running inconsistent collective: CollectiveFingerPrint(OpType=BROADCAST, TensorShape=[34112], TensorDtypes=Float, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))",
        (0, 0, None, "BROADCAST", "[34112]", "Float"),
        (None, None, None, None, None),
    ),
]


@pytest.mark.parametrize(("line", "own", "peer"), MISMATCHES)
def test_collective_mismatch_keeps_both_fingerprints(line, own, peer):
    row = only(detail_events([line]))
    assert (row["event"], row["severity"], row["family"]) == (
        "collective_mismatch",
        "error",
        "detail",
    )
    assert tuple(row[key] for key in FIELDS) == own
    assert tuple(row[key] for key in PEER_FIELDS) == peer


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # torch 2.13 on this machine (TORCH_CPP_LOG_LEVEL=INFO, DETAIL)
        (
            "[rank3]:[I1130 15:15:01.588855496 ProcessGroupWrapper.cpp:710] [Rank 3] Running collective: CollectiveFingerPrint(SequenceNumber=37, OpType=ALLREDUCE, TensorShape=[16, 8], TensorDtypes=Float, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cpu, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt)))",
            (3, 3, 37, "ALLREDUCE", "[16, 8]", "Float"),
        ),
        (
            "[rank3]:[I1130 15:15:00.060926621 ProcessGroupWrapper.cpp:710] [Rank 3] Running collective: CollectiveFingerPrint(SequenceNumber=0, OpType=ALLGATHER, TensorShape=[1], TensorDtypes=Long, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cpu, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt)))",
            (3, 3, 0, "ALLGATHER", "[1]", "Long"),
        ),
    ],
)
def test_collective_run(line, expected):
    row = only(detail_events([line]))
    assert (row["event"], row["severity"]) == ("collective_run", "info")
    assert tuple(row[key] for key in FIELDS) == expected


def test_monitored_barrier_error_names_the_collective():
    # The wrapper's message (ProcessGroupWrapper.cpp `runCollectiveChecks`, formats.md §6) around
    # the barrier fingerprint of pt-148976; torch 2.13 no longer reaches this path, so no run of
    # ours printed it.
    line = "RuntimeError: ProcessGroupWrapper: Monitored Barrier encountered error running collective: CollectiveFingerPrint(SequenceNumber=1OpType=BARRIER). Error: "
    row = only(detail_events([line]))
    assert (row["event"], row["severity"], row["seq"], row["op"]) == (
        "monitored_barrier_error",
        "error",
        1,
        "BARRIER",
    )


def test_prefix_rank_and_content_rank_agree_on_the_reporter():
    line = "[rank1]: RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=3104, OpType=ALLREDUCE, TensorShape=[195812480], TensorDtypes=BFloat16, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))), but Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=3104, OpType=ALLREDUCE, TensorShape=[51123456], TensorDtypes=BFloat16, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda, layout=Strided (default), requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))).Collectives differ in the following aspects:   Tensor Tensor shapes: 195812480vs 51123456"
    row = only(detail_events([line]))
    assert (row["rank"], row["rank_from"], row["peer_rank"]) == (1, "prefix", 0)


# huggingface/transformers#20366, verbatim: torch 1.11 prints the fingerprint a field per line
FINGERPRINT_BELOW = [
    "Detected mismatch between collectives on ranks. Rank 1 is running inconsistent collective:",
    "CollectiveFingerPrint(",
    "    OpType=ALLGATHER,",
    "    TensorShape=[1, 279, 44, 72],",
    "    TensorDtypes=Float,",
    "    TensorDeviceTypes=TensorOptions(",
    "        dtype=float (default),",
    "        device=cuda,",
]


def test_a_fingerprint_printed_under_the_sentence_is_read():
    mismatch = only(parsed_by("detail", FINGERPRINT_BELOW))
    assert mismatch["event"] == "collective_mismatch"
    assert (mismatch["rank"], mismatch["op"]) == (1, "ALLGATHER")
    assert (mismatch["shape"], mismatch["dtype"]) == ("[1, 279, 44, 72]", "Float")


def test_the_next_sentence_is_not_taken_for_a_fingerprint():
    lines = [FINGERPRINT_BELOW[0], "", "Traceback (most recent call last):"]
    mismatch = only(parsed_by("detail", lines))
    assert (mismatch["rank"], mismatch["op"]) == (1, None)


# sgl-project/sglang#13227, verbatim (the paste's own `...`, and the space after `ranks.`): an
# SGLang server's report with each side on a line of its own
SENTENCE_PER_LINE = [
    "RuntimeError: Detected mismatch between collectives on ranks. ",
    "Rank 7 is running collective: CollectiveFingerPrint(SequenceNumber=18, OpType=BROADCAST, ...)",
    "but Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=30, OpType=BROADCAST, ...)",
]


def test_a_report_with_a_line_per_side_is_read_whole():
    mismatch = only(parsed_by("detail", SENTENCE_PER_LINE))
    assert (mismatch["line"], mismatch["rank"], mismatch["seq"], mismatch["op"]) == (
        1,
        7,
        18,
        "BROADCAST",
    )
    assert (mismatch["peer_rank"], mismatch["peer_seq"], mismatch["peer_op"]) == (
        0,
        30,
        "BROADCAST",
    )


# PyTorch's distributed docs, "Debugging torch.distributed applications", TORCH_DISTRIBUTED_DEBUG
# (docs/source/distributed.md at 0015d6b5), verbatim: DETAIL's shape check on a 2-rank job
SHAPE_CHECK = [
    "work = default_pg.allreduce([tensor], opts)",
    "RuntimeError: Error when verifying shape tensors for collective ALLREDUCE on rank 0. This likely indicates that input shapes into the collective are mismatched across ranks. Got shapes:  10",
    "[ torch.LongTensor{1} ]",
]


def test_detail_s_shape_check_is_the_ranks_passing_different_shapes_to_one_collective(tmp_path):
    failed = only(parsed_by("detail", SHAPE_CHECK).filter(event="shape_check_failed"))
    assert (failed["rank"], failed["op"]) == (0, "ALLREDUCE")
    analysis = analyze_files(tmp_path, {"console.log": SHAPE_CHECK})
    assert kinds(analysis) == ["collective_mismatch"]
    mismatch = analysis.verdict.finding
    assert mismatch.blamed == [] and "different shapes to ALLREDUCE" in mismatch.summary
    assert analysis.verdict.headline == "The ranks passed tensors of different shapes to ALLREDUCE"
