# ruff: noqa: E501 -- test data are verbatim log lines
"""Google Cloud's reports of replicas that exited with an error (parsers/cloud_replica.py)."""

from __future__ import annotations

import json

from tests.builders import analyze_files, parsed_by

# GoogleCloudPlatform/vertex-ai-samples#1504, verbatim (a notebook test's Cloud Build step,
# the replica's traceback flattened into the message and cut by the paste)
VERTEX = [
    ": RuntimeError: Training failed with:",
    "Step #4: code: 3",
    'Step #4: message: "The replica workerpool1-1 exited with a non-zero status of 1. Termination reason: Error. \\nTraceback (most recent call last):\\n  [...]\\n  File \\"/root/.local/lib/python3.7/site-packages/transformers/models/auto/auto_factory.py\\", line 465, in from_pretrained\\n    pretrained_model',
]

# tensorflow/models#5845's title, verbatim: AI Platform naming several replicas on one line
SEVERAL = "The replica ps 0 exited with a non-zero status of 1. Termination reason: Error. The replica ps 1 exited with a non-zero status of 1. Termination reason: Error. The replica ps 2 exited with a non-zero"

# GoogleCloudPlatform/vertex-ai-samples#1898, verbatim: a replica whose container never started
START_ERROR = 'message: "The replica workerpool0-0 exited with a non-zero status of 128. Termination reason: StartError. \\n Termination log message: failed to create containerd task: fa'


def test_a_replica_s_exit_is_a_failed_worker_of_that_machine():
    (failed,) = parsed_by("cloud_replica", VERTEX).to_dicts()
    assert (failed["event"], failed["host"], failed["exitcode"]) == (
        "worker_failed",
        "workerpool1-1",
        1,
    )
    assert failed["rank"] is None  # a replica is a machine: it may run several ranks
    assert json.loads(failed["extra"])["termination_reason"] == "Error"


def test_every_replica_a_line_names_and_the_start_error():
    several = parsed_by("cloud_replica", [SEVERAL])
    # (the third report is cut before its code: not read)
    assert several.get_column("host").to_list() == ["ps 0", "ps 1"]
    (start,) = parsed_by("cloud_replica", [START_ERROR]).to_dicts()
    assert start["exitcode"] == 128
    assert json.loads(start["extra"])["termination_reason"] == "StartError"


def test_the_replica_is_the_verdict_where_nothing_else_failed(tmp_path):
    analysis = analyze_files(tmp_path, {"cloudbuild_step4.log": VERTEX})
    verdict = analysis.verdict
    assert verdict.finding.kind == "rank_exception" and verdict.ranks == []
    assert verdict.headline == "Replica workerpool1-1 exited with status 1"
    assert "Cloud Logging" in verdict.finding.fix
