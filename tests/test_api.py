"""The library entry point: batching must not change what a user is told."""

from __future__ import annotations

import pytest

from logforensics import api
from logforensics.report.model import build_report
from tests.conftest import SAMPLE_LOGS


@pytest.mark.parametrize("scenario", ["skip_backward_hang", "two_node_slurm", "uneven_loader_hang"])
def test_reading_file_by_file_gives_the_same_report(scenario, monkeypatch):
    logs = SAMPLE_LOGS / scenario / "logs"
    whole = build_report(api.analyze(logs), "logs")
    monkeypatch.setattr(api, "BATCH_BYTES", 1)  # every file a batch of its own
    one_by_one = build_report(api.analyze(logs), "logs")
    assert one_by_one == whole
