"""The event pipeline's own work: times read from the lines."""

from __future__ import annotations

import datetime as dt

import polars as pl
from hypothesis import given
from hypothesis import strategies as st

from logforensics import registry
from logforensics.events import _literals_present
from tests.builders import parse


def test_glog_lines_take_the_year_of_their_files_dated_lines():
    events = parse(
        [
            "2026-11-30 15:04:31,251 INFO rank=0 step=5 stage=before_backward",
            "[rank0]:[E1130 15:05:01.426415540 ProcessGroupNCCL.cpp:629] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600081 milliseconds before timing out.",
        ]
    )
    timeout = events.filter(events["event"] == "collective_timeout")
    assert timeout.item(0, "timestamp") == dt.datetime(2026, 11, 30, 15, 5, 1, 426415)


def test_glog_lines_alone_get_no_invented_year():
    line = "[rank0]:[E1130 15:05:01.426415540 ProcessGroupNCCL.cpp:629] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600081 milliseconds before timing out."
    assert parse([line]).item(0, "timestamp") is None


ROUTED_LITERALS = sorted(
    {
        literal
        for parser in registry.parsers()
        if not (parser.residual or parser.progress)
        for literal in parser.literals
    }
)


@given(
    st.lists(
        st.lists(
            st.one_of(st.sampled_from(ROUTED_LITERALS), st.text(max_size=6)),
            max_size=5,
        ).map("".join),
        max_size=8,
    )
)
def test_the_literals_found_in_one_scan_are_every_one_a_line_holds(lines: list[str]) -> None:
    # a family's literal inside another's ('Error:' in 'ncclSystemError:') or overlapping it
    # must still route that family its line
    found = _literals_present(pl.Series(lines, dtype=pl.String), ROUTED_LITERALS)
    assert found == {literal for literal in ROUTED_LITERALS if any(literal in x for x in lines)}


def test_a_line_holding_a_literal_inside_another_families_reaches_both() -> None:
    # PyTorch's wrapper of an NCCL error, verbatim from ../shared/formats.md section 3.3: nccl
    # reads 'ncclSystemError:', the traceback family the 'Error:' inside it
    events = parse(
        [
            "Traceback (most recent call last):",
            "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
            "ProcessGroupNCCL.cpp:1333, unhandled system error (run with NCCL_DEBUG=INFO for "
            "details), NCCL version 2.18.1",
            "ncclSystemError: System call (e.g. socket, malloc) or external library call failed "
            "or device error. ",
        ]
    )
    assert {"nccl", "traceback"} <= set(events.get_column("family").to_list())


def test_events_of_one_line_past_the_first_few_carry_only_its_head():
    # hostile text in Horovod's stall shape: one line naming 150 ops of 50 missing ranks makes
    # 7,500 events; each must not carry the whole 10 kB line (memory grows with its square)
    ops = " ".join(
        f"allreduce.w{i} [missing ranks: {', '.join(str(rank) for rank in range(50))}],"
        for i in range(150)
    )
    events = parse(["Stalled ranks:", ops]).filter(pl.col("line") == 2)
    assert events.height == 150 * 50
    lengths = events.get_column("text").str.len_chars()
    assert lengths.head(4).to_list() == [len(ops)] * 4
    assert lengths.slice(4).max() <= 256
