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


@pytest.mark.parametrize(
    "scenario", ["skip_backward_hang", "two_node_slurm", "swallowed_exception", "detail_mismatch"]
)
def test_reading_large_files_block_by_block_gives_the_same_report(scenario, monkeypatch):
    from logforensics import chunks

    logs = SAMPLE_LOGS / scenario / "logs"
    whole = build_report(api.analyze(logs), "logs")
    # every file over 4 KiB is read in ~2 KiB blocks: tracebacks and summaries cross blocks
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 2048)
    blocks = build_report(api.analyze(logs), "logs")
    assert blocks == whole


def test_one_large_file_alone(tmp_path, monkeypatch):
    from logforensics import chunks

    monkeypatch.setattr(chunks, "CHUNK_BYTES", 1024)
    lines = [
        f"rank={r} step={s} stage={st}" for s in range(40) for r in range(2) for st in ("a", "b")
    ]
    (tmp_path / "slurm-1.out").write_text("\n".join(lines) + "\n")
    analysis = api.analyze(tmp_path)
    assert analysis.lines == len(lines) == analysis.recognised_lines
    assert analysis.job.progress.ranks == (0, 1)
