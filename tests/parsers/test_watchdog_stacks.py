"""faulthandler's watchdog stacks in a rank's output (parsers/watchdog_stacks.py)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.builders import only, parsed_by

# a run here (tests/data/launchers/torchrun/watchdog_stacks): rank 1's and rank 2's dumps
CONSOLE = (
    Path(__file__).parents[1]
    / "data"
    / "launchers"
    / "torchrun"
    / "watchdog_stacks"
    / "console.log"
)


def test_a_dump_is_one_snapshot_of_its_writer_with_where_it_stood():
    lines = CONSOLE.read_text().splitlines()
    snapshots = parsed_by("watchdog_stacks", lines).filter(event="stack_snapshot")
    assert snapshots.height == 3
    frames = snapshots.get_column("frame").to_list()
    outside = only(snapshots.filter(frame=next(f for f in frames if "load_batch" in f)))
    said = json.loads(outside["extra"])
    assert outside["frame"].endswith("watchdog_worker.py:19 in load_batch")
    assert said["collective"] == "" and said["snapshot"] == "faulthandler"
    waiting = [json.loads(row["extra"]) for row in snapshots.iter_rows(named=True)]
    waiting = [said for said in waiting if said["collective"]]
    assert len(waiting) == 2
    assert {said["collective"] for said in waiting} == {"all_reduce"}
    assert {said["own_frame"].rsplit("/", 1)[-1] for said in waiting} == {
        "watchdog_worker.py:29 in main"
    }


def test_a_crash_dump_is_not_a_watchdog_snapshot():
    # cpython's fatal-error dump (yifan123/flow_grpo#161): no `Timeout` line, the traceback
    # parser's
    crash = [
        "Fatal Python error: Aborted",
        "",
        "Thread 0x00007fa0f51fd640 (most recent call first):",
        '  File "/opt/conda/envs/python3.10.13/lib/python3.10/threading.py", line 324 in wait',
    ]
    assert parsed_by("watchdog_stacks", crash).filter(event="stack_snapshot").is_empty()
