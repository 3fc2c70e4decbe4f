from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_LOGS = ROOT / "sample_logs"


@pytest.fixture
def sample_logs() -> Path:
    return SAMPLE_LOGS


@pytest.fixture(autouse=True)
def no_rule_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every analysis a test runs fails if one of the registered rules raised: a user would see
    `internal error` on stderr even when the verdict the test checks is right. (A rule a test
    plants to fail on purpose is not registered.)"""
    from logforensics import api
    from logforensics.registry import rules

    registered = {rule.kind for rule in rules()}
    run_rules = api._run_rules

    def checked(job):
        findings, errors = run_rules(job)
        failed = [error for error in errors if error.split()[1] in registered]
        assert not failed, failed[0]
        return findings, errors

    monkeypatch.setattr(api, "_run_rules", checked)
