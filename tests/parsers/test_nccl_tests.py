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
