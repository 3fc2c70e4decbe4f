from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_LOGS = ROOT / "sample_logs"


@pytest.fixture
def sample_logs() -> Path:
    return SAMPLE_LOGS
