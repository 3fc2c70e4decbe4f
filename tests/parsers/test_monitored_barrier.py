# ruff: noqa: E501 -- test data are verbatim log lines
"""monitored_barrier failures, verbatim from /work/shared/formats.md §7, the field samples,
public issues and torch 2.13 runs on this project's machine."""

from __future__ import annotations

import polars as pl
import pytest

from tests.builders import only, parsed_by


def barrier_events(lines: list[str]) -> pl.DataFrame:
    return parsed_by("monitored_barrier", lines)


@pytest.mark.parametrize(
    ("line", "failed", "timeout_ms", "reporter"),
    [
        # PyTorch docs "Debugging torch.distributed applications" (wait_all_ranks=False)
        ("RuntimeError: Rank 1 failed to pass monitoredBarrier in 2000 ms", [1], 2000, None),
        # llamafactory-6000 (DETAIL wrapper, absurd timeout as configured)
        (
            "[rank0]: RuntimeError: [Rank 0]: Ranks 6 failed to pass monitoredBarrier in 180000000000 ms",
            [6],
            180000000000,
            0,
        ),
        # NVIDIA/nccl#849 (wait_all_ranks=True, several laggards)
        (
            "RuntimeError: [Rank 0]: Ranks 4, 5, 6, 7 failed to pass monitoredBarrier in 2000000 ms",
            [4, 5, 6, 7],
            2000000,
            0,
        ),
        # torch 2.13 on this machine: the per-rank LOG(ERROR) and the final summary line
        (
            "[rank0]:[E1130 15:15:17.904302817 ProcessGroupGloo.cpp:2901] [Rank 0]: Rank 3 failed to pass monitoredBarrier in 10000 ms",
            [3],
            10000,
            0,
        ),
        (
            "[rank0]:[E1130 15:15:17.904334645 ProcessGroupGloo.cpp:67] [Rank 0]: Ranks 3 failed to pass monitoredBarrier in 10000 ms",
            [3],
            10000,
            0,
        ),
        # ... and as quoted in torchrun's ChildFailedError summary (no prefix there)
        (
            "  RuntimeError: [Rank 0]: Ranks 3 failed to pass monitoredBarrier in 10000 ms",
            [3],
            10000,
            0,
        ),
    ],
)
def test_barrier_failed_names_the_laggards(line, failed, timeout_ms, reporter):
    row = only(barrier_events([line]))
    assert (row["event"], row["severity"], row["family"]) == (
        "barrier_failed",
        "error",
        "monitored_barrier",
    )
    assert (row["values"], row["timeout_ms"], row["rank"]) == (failed, timeout_ms, reporter)


@pytest.mark.parametrize(
    ("line", "rank"),
    [
        # torch 2.13 on this machine (sample_logs/monitored_barrier_laggard)
        (
            "[rank2]:[E1130 15:15:17.890564266 ProcessGroupGloo.cpp:67] Rank 2 successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.",
            2,
        ),
        (
            "  RuntimeError: Rank 1 successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.",
            1,
        ),
    ],
)
def test_barrier_peer_error_points_at_rank_0(line, rank):
    row = only(barrier_events([line]))
    assert (row["event"], row["severity"]) == ("barrier_peer_error", "warning")
    assert (row["rank"], row["peer_rank"]) == (rank, 0)


def test_original_exception_lines_are_left_to_gloo():
    # PyTorch docs example: the barrier line, then gloo's own error
    lines = [
        "RuntimeError: Rank 1 failed to pass monitoredBarrier in 2000 ms",
        " Original exception:",
        "[gloo/transport/tcp/pair.cc:598] Connection closed by peer [2401:db00:eef0:1100:3560:0:1c05:25d]:8594",
    ]
    assert barrier_events(lines).get_column("line").to_list() == [1]
