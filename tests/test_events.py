"""The event pipeline's own work: times read from the lines."""

from __future__ import annotations

import datetime as dt

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
