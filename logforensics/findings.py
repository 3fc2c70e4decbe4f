"""What rules return: a finding, with the evidence lines behind it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

import polars as pl

Severity = Literal["error", "warning", "info"]
Role = Literal["root_cause", "symptom", "context"]
SEVERITY_ORDER: dict[str, int] = {"info": 0, "warning": 1, "error": 2}
EVIDENCE_CAP = 20


@dataclass(frozen=True, slots=True)
class Evidence:
    file: str
    line: int
    text: str
    rank: int | None = None


@dataclass(slots=True)
class Finding:
    """One diagnosis. `order` places it in the run (smaller is earlier; None: no position)."""

    kind: str
    severity: Severity
    role: Role
    summary: str
    fix: str
    ranks: list[int] = field(default_factory=list)
    step: int | None = None
    stage: str | None = None
    epoch: int | None = None
    op: str | None = None
    seq: int | None = None
    evidence: list[Evidence] = field(default_factory=list)
    evidence_total: int = 0
    confidence: Literal["high", "medium", "low"] = "high"
    order: float | None = None
    timestamp: datetime | None = None  # earliest printed time of its evidence, if any
    culprit_ranks: list[int] = field(default_factory=list)  # ranks to blame, when not `ranks`
    note: str = ""  # why it got its role (filled by the verdict step)
    details: dict[str, object] = field(default_factory=dict)

    @property
    def anchor(self) -> str:
        ranks = "-".join(str(rank) for rank in self.ranks[:4]) or "all"
        step = f"-s{self.step}" if self.step is not None else ""
        return f"{self.kind}-r{ranks}{step}"


def evidence_from(rows: pl.DataFrame, cap: int = EVIDENCE_CAP) -> tuple[list[Evidence], int]:
    """Evidence lines from event rows (`file, line, text, rank`), capped; and how many in all."""
    unique = rows.unique(subset=["file", "line"], keep="first", maintain_order=True)
    kept = [
        Evidence(row["file"], int(row["line"]), row["text"], row["rank"])
        for row in unique.head(cap).iter_rows(named=True)
    ]
    return kept, unique.height
