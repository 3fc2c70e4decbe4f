"""End to end on the shipped sample logs (real torchrun + gloo runs): each scenario's
expected.json says what a user must be told."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logforensics.api import analyze
from tests.conftest import SAMPLE_LOGS

SCENARIOS = sorted(path.parent for path in SAMPLE_LOGS.glob("*/expected.json"))


def test_there_are_samples():
    assert len(SCENARIOS) >= 4


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda path: path.name)
def test_sample_is_diagnosed_as_expected(scenario: Path):
    expected = json.loads((scenario / "expected.json").read_text())
    analysis = analyze(scenario / "logs")
    assert analysis.job.world_size is not None
    assert analysis.job.world_size.value == expected["world_size"]
    verdict = expected["verdict"]
    if verdict is None:
        assert analysis.verdict is None
    else:
        chosen = analysis.verdict.finding
        assert (chosen.kind, chosen.ranks, chosen.step) == (
            verdict["kind"],
            verdict["ranks"],
            verdict["step"],
        )
        assert chosen.evidence, "the verdict must cite lines"
        if "chain" in verdict:  # explanation -> departure -> consequences, as kinds
            chain = [finding.kind for finding in analysis.verdict.chain]
            assert chain[: len(verdict["chain"])] == verdict["chain"], chain
    for wanted in expected["findings_include"]:
        matching = [f for f in analysis.findings if f.kind == wanted["kind"]]
        assert matching, f"no {wanted['kind']} finding"
        if "ranks" in wanted:
            assert any(sorted(f.ranks) == sorted(wanted["ranks"]) for f in matching), [
                f.ranks for f in matching
            ]
    errors = [f for f in analysis.findings if f.severity == "error"]
    assert (not errors) == expected["no_error"]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda path: path.name)
def test_every_evidence_line_is_a_real_line_of_its_file(scenario: Path):
    analysis = analyze(scenario / "logs")
    for found in analysis.findings:
        for evidence in found.evidence:
            lines = (scenario / "logs" / evidence.file).read_text(errors="replace").splitlines()
            assert lines[evidence.line - 1] == evidence.text
