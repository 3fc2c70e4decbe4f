"""`journalctl` piped into the tool: `-o short` (the default, syslog-like) and `-o short-iso`
prefixes `<time> <host> <identifier>[<pid>]: ` (systemd journalctl(1), OUTPUT OPTIONS)."""

from __future__ import annotations

import datetime as dt

from tests.framing import frame


def test_short_and_short_iso_prefixes_give_host_and_pid():
    rows = frame(
        [
            "-- Logs begin at Mon 2026-11-30 15:00:00 UTC, end at Mon 2026-11-30 15:30:00 UTC. --",
            "Nov 30 15:24:03 gpu-node1 python3[5130]: [rank2]: Traceback (most recent call last):",
            "2026-11-30T15:24:03+0000 gpu-node1 torchrun[5107]: [default1]:rank=3 step=5 stage=x",
        ],
        "journal.txt",
    )
    header, short, iso = rows
    assert header["message"].startswith("-- Logs begin at") and "prefix_host" not in header
    assert (short["prefix_host"], short["prefix_pid"], short["prefix_rank"]) == (
        "gpu-node1",
        5130,
        2,
    )
    assert short["message"] == "Traceback (most recent call last):"
    assert "prefix_time" not in short  # the short format has no year
    assert (iso["prefix_pid"], iso["prefix_local_rank"]) == (5107, 1)
    assert iso["prefix_time"] == dt.datetime(2026, 11, 30, 15, 24, 3)
    assert iso["message"] == "rank=3 step=5 stage=x"
