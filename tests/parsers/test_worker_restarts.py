# ruff: noqa: E501 -- test data are verbatim log lines
"""The elastic agent's restart of its workers (parsers/worker_restarts.py)."""

from __future__ import annotations

import json

import pytest

from tests.builders import only, parsed_by


@pytest.mark.parametrize(
    ("line", "state"),
    [
        # a run here: torch 2.13.0+cpu, torchrun --max-restarts=1 (sample_logs/restart_recovered)
        (
            "I1204 21:34:07.192000 4677 torch/distributed/elastic/agent/server/api.py:942] [default] Worker group FAILED. 1/1 attempts left; will restart worker group",
            "FAILED",
        ),
        # torchelastic 0.2 (microsoft/frameworkcontroller, example/framework/scenario/pytorch/elastic/README.md)
        (
            "[INFO] 2020-07-31 07:15:34,785 api: [default] Worker group FAILED. 3/3 attempts left; will restart worker group",
            "FAILED",
        ),
        # the same README: a node joined, no failure
        (
            "[INFO] 2020-07-31 07:35:16,348 api: [default] Detected 1 new nodes from group_rank=1; will restart worker group",
            None,
        ),
    ],
)
def test_a_restart_of_the_workers_is_read_with_the_state_that_caused_it(line, state):
    event = only(parsed_by("worker_restarts", [line]))
    assert event["event"] == "workers_restarted"
    assert (json.loads(event["extra"])["state"] if event["extra"] else None) == state


def test_other_agent_lines_are_no_restart():
    # the same run: the agent's next lines
    lines = [
        "I1204 21:34:07.192000 4677 torch/distributed/elastic/agent/server/api.py:733] [default] Stopping worker group",
        "I1204 21:34:07.315000 4677 torch/distributed/elastic/agent/server/api.py:553]   restart_count=1",
    ]
    assert parsed_by("worker_restarts", lines).is_empty()


def test_a_restart_line_cut_before_the_state_is_still_one_after_a_failure():
    # tianweiy/CenterPoint#224, verbatim: the paste starts inside the agent's line
    event = only(parsed_by("worker_restarts", ["1/3 attempts left; will restart worker group"]))
    assert json.loads(event["extra"]) == {"state": None, "attempts_left": "1/3"}
