"""How the verdict is chosen and explained, on the real samples."""

from __future__ import annotations

from logforensics.api import analyze
from tests.conftest import SAMPLE_LOGS


def test_torchruns_arbitrary_root_cause_is_not_trusted_over_the_evidence():
    analysis = analyze(SAMPLE_LOGS / "skip_backward_hang" / "logs")
    # torchrun's summary (launcher.log) names rank 1; the stage marks show rank 2 skipped
    assert analysis.verdict.ranks == [2]
    assert "torchrun's summary names rank 1 as the root cause" in analysis.verdict.reason


def test_no_torchrun_remark_when_it_agrees_or_is_absent():
    analysis = analyze(SAMPLE_LOGS / "duplicate_device" / "logs")
    assert "torchrun" not in analysis.verdict.reason
