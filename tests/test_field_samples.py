"""Real logs from public bug reports (copied from the team's shared field samples, each with
its source.md): the findings must include every kind and rank the case's truth.json names, and
the healthy controls (ctrl-*) must get no error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logforensics.api import analyze

CASES = sorted(
    path.parent for path in (Path(__file__).parent / "data" / "field_samples").glob("*/truth.json")
)


def test_cases_are_present():
    assert len(CASES) >= 17


@pytest.mark.parametrize("case", CASES, ids=lambda path: path.name)
def test_field_sample(case: Path):
    truth = json.loads((case / "truth.json").read_text())
    analysis = analyze(case)
    found = [(f.kind, set(f.ranks) | set(f.culprit_ranks)) for f in analysis.findings]
    if case.name.startswith("ctrl-"):
        errors = [f.summary for f in analysis.findings if f.severity == "error"]
        assert not errors, errors
    if truth.get("root_cause_rank") is not None:
        assert analysis.verdict is not None
        assert truth["root_cause_rank"] in analysis.verdict.ranks
    for wanted in truth["findings"]:
        kinds = [ranks for kind, ranks in found if kind == wanted["kind"]]
        assert kinds, f"no {wanted['kind']} finding; found {found}"
        assert any(set(wanted["ranks"]) <= ranks for ranks in kinds), (
            f"{wanted['kind']} should name ranks {wanted['ranks']}; found {kinds}"
        )
