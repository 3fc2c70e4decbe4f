# ruff: noqa: E501 -- test data are verbatim log lines
"""nccl-tests' own checks (parsers/nccl_tests.py)."""

from __future__ import annotations

import polars as pl

from tests.builders import analyze_files, parse, parsed_by

# NVIDIA/nccl#348, verbatim (mpirun --tag-output, 16 ranks on two hosts whose second node's
# processes asked for devices 8-15), the first and last of rank 8-15's eight lines
DEVICE_ORDINAL = [
    "[1,13]<stdout>:192.168.0.138: Test CUDA failure common.cu:732 'invalid device ordinal'",
    "[1,9]<stdout>:192.168.0.138: Test CUDA failure common.cu:732 'invalid device ordinal'",
]
# NVIDIA/nccl-tests#287, verbatim: the NCCL check, then its callers' relay lines
NCCL_CHECK = [
    "GENOA-06: Test NCCL failure common.cu:392 'unhandled cuda error (run with NCCL_DEBUG=INFO for details) / '",
    " .. GENOA-06 pid 4766: Test failure common.cu:590",
    " .. GENOA-06 pid 4766: Test failure all_reduce.cu:90",
]


def test_a_failed_cuda_call_is_the_process_s_exception():
    rows = parsed_by("nccl_tests", DEVICE_ORDINAL).sort("line")
    assert rows.get_column("event").to_list() == ["exception", "exception"]
    assert rows.get_column("rank").to_list() == [13, 9]
    first = rows.row(0, named=True)
    assert (first["exc_type"], first["host"]) == ("CUDA failure", "192.168.0.138")
    assert first["exc_message"] == "invalid device ordinal (common.cu:732)"


def test_a_failed_nccl_call_is_an_nccl_error_and_its_relays_are_read():
    events = parse(NCCL_CHECK)
    error = events.filter(pl.col("event") == "nccl_error").row(0, named=True)
    assert (error["error_code"], error["host"]) == ("unhandled cuda error", "GENOA-06")
    assert events.filter(pl.col("family") == "nccl_tests").height == 1  # relays: no events


def test_every_process_of_a_node_that_failed_alike_is_the_verdict(tmp_path):
    lines = [
        f"[1,{rank}]<stdout>:192.168.0.138: Test CUDA failure common.cu:732 'invalid device ordinal'"
        for rank in (13, 15, 14, 11, 12, 8, 10, 9)
    ]  # the eight lines in the order the thread shows them
    analysis = analyze_files(tmp_path, {"mpirun.log": lines})
    assert analysis.verdict.finding.kind == "rank_exception"
    assert analysis.verdict.finding.ranks == list(range(8, 16))
    assert "invalid device ordinal" in analysis.verdict.finding.summary


# Azure/azurehpc-health-checks#142, verbatim: a healthy all_reduce_perf run on one 8-GPU VM
HEALTHY_RUN = [
    "# nThread 1 nGpus 8 minBytes 17179869184 maxBytes 17179869184 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0",
    "#",
    "# Using devices",
    *(
        f"#  Rank  {r} Group  0 Pid   5026 on         vm device  {r} [0x00] NVIDIA H200"
        for r in range(8)
    ),
    "#",
    " 17179869184    4294967296     float     sum      -1    62639  274.27  479.97      0    62601  274.44  480.26      0",
    "# Out of bounds values : 0 OK",
    "# Avg bus bandwidth    : 480.11",
]
# NVIDIA/nccl-tests#219, verbatim: two nodes, one process driving two GPUs on each
TWO_NODES = [
    "#  Rank  0 Group  0 Pid 3740409 on fengyun416 device  0 [0x01] NVIDIA RTX A6000",
    "#  Rank  1 Group  0 Pid 3740409 on fengyun416 device  1 [0x07] NVIDIA RTX A6000",
    "#  Rank  2 Group  0 Pid 3164639 on    fengyun device  0 [0x01] NVIDIA RTX A6000",
    "#  Rank  3 Group  0 Pid 3164639 on    fengyun device  1 [0x05] NVIDIA RTX A6000",
]


def test_the_rank_table_ties_each_rank_to_its_process_and_device():
    rows = parsed_by("nccl_tests", TWO_NODES).sort("line")
    assert rows.get_column("comm_rank").to_list() == [0, 1, 2, 3]
    assert set(rows.get_column("nranks").to_list()) == {4}
    assert rows.row(2, named=True)["host"] == "fengyun"
    assert (rows.row(3, named=True)["pid"], rows.row(3, named=True)["cuda_dev"]) == (3164639, 1)


def test_a_validated_run_is_a_finished_run_with_no_failure(tmp_path):
    analysis = analyze_files(tmp_path, {"all_reduce_perf.log": HEALTHY_RUN})
    assert analysis.verdict is None
    assert sorted(analysis.job.ranks_seen) == list(range(8))
    finished = analysis.job.events.filter(pl.col("event") == "run_finished")
    assert finished.height == 1


def test_wrong_results_are_a_failure():
    # the summary's other word: nccl-tests prints `# Out of bounds values : %d %s` with OK or
    # FAILED after the count (its src/common.cu); no public paste of a FAILED run was found
    (row,) = parsed_by("nccl_tests", ["# Out of bounds values : 12 FAILED"]).iter_rows(named=True)
    assert (row["event"], row["error_code"]) == ("nccl_error", "wrong results")


def test_wrong_results_are_said_as_corrupted_data_not_a_failed_call(tmp_path):
    lines = [*HEALTHY_RUN[3:5], "# Out of bounds values : 12 FAILED"]
    verdict = analyze_files(tmp_path, {"all_reduce_perf.log": lines}).verdict
    assert verdict.headline == "The collective's results came out wrong (nccl-tests' check)"
    assert "corrupted on its way" in verdict.finding.summary
    assert "ECC,ROW_REMAPPER" in verdict.finding.fix
