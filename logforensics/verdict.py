"""Order the findings in the run and choose the one that explains the others.

The verdict is the earliest root-cause finding: ordered by position in the run (start-up
before any step, then stage-mark position), ties going to the more specific rule. Root-cause
findings at the verdict's position on the same ranks are explained by it and become context;
those after it are taken as its consequences and become symptoms.
"""

from __future__ import annotations

from dataclasses import dataclass

from logforensics.findings import SEVERITY_ORDER, Finding
from logforensics.registry import rules

UNPLACED = float("inf")


@dataclass(frozen=True, slots=True)
class Verdict:
    finding: Finding
    reason: str


def _order(finding: Finding) -> float:
    return UNPLACED if finding.order is None else finding.order


def _specificity(kind: str) -> int:
    return next((rule.specificity for rule in rules() if rule.kind == kind), 0)


def sort_findings(findings: list[Finding]) -> list[Finding]:
    """Root causes first, then symptoms, then context; each in run order."""
    role_rank = {"root_cause": 0, "symptom": 1, "context": 2}
    return sorted(
        findings,
        key=lambda f: (
            role_rank[f.role],
            _order(f),
            -_specificity(f.kind),
            -SEVERITY_ORDER[f.severity],
            f.kind,
            f.ranks,
        ),
    )


def choose_verdict(findings: list[Finding]) -> Verdict | None:
    """Pick the verdict and rewrite the other root-cause findings' roles (see module doc)."""
    candidates = sorted(
        (f for f in findings if f.role == "root_cause"),
        key=lambda f: (_order(f), -_specificity(f.kind), -SEVERITY_ORDER[f.severity], f.ranks),
    )
    if not candidates:
        return None
    chosen = candidates[0]
    for other in candidates[1:]:
        same_point = _order(other) == _order(chosen)
        if same_point and set(other.ranks) & set(chosen.ranks):
            other.role = "context"
            other.note = f"Explained by the verdict ({chosen.kind}) at the same point of the run."
        elif same_point:
            other.note = "At the same point of the run as the verdict, on other ranks."
        else:
            other.role = "symptom"
            other.note = f"Comes after the verdict ({chosen.kind}); most likely a consequence."
    chosen.note = "Verdict."
    return Verdict(chosen, _reason(chosen, candidates))


def _reason(chosen: Finding, candidates: list[Finding]) -> str:
    if len(candidates) == 1:
        return "It is the only finding that names a cause; everything else is context."
    if chosen.order == -1.0:
        where = "it is decided at start-up, before the first training step"
    elif chosen.step is not None:
        where = f"it happens first in the run (step {chosen.step}, stage {chosen.stage})"
    else:
        where = "it is the earliest cause the logs place"
    return (
        f"Chosen because {where}; the {len(candidates) - 1} other cause-like "
        f"finding{'s' if len(candidates) > 2 else ''} come at the same point or later."
    )
