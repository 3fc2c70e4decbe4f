"""What rules return: a finding, with the evidence lines behind it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

import polars as pl

Severity = Literal["error", "warning", "info"]
Role = Literal["root_cause", "symptom", "context"]
# The part a fact plays in a causal story (see logforensics/reasoner.py): why a rank left the
# common path, who left it and where, what followed, or none of these.
Part = Literal["explanation", "departure", "consequence", "context"]
# Which departures an explanation can explain: those of its own ranks, or any in the job
# (uneven data or a broken environment make every rank's path part).
Scope = Literal["ranks", "job"]
Confidence = Literal["high", "medium", "low"]
SEVERITY_ORDER: dict[str, int] = {"info": 0, "warning": 1, "error": 2}
CONFIDENCE_ORDER: dict[str, int] = {"low": 0, "medium": 1, "high": 2}
ROLE_OF_PART: dict[str, Role] = {
    "explanation": "root_cause",
    "departure": "root_cause",
    "consequence": "symptom",
    "context": "context",
}
EVIDENCE_CAP = 20


@dataclass(frozen=True, slots=True)
class Evidence:
    file: str
    line: int
    text: str
    rank: int | None = None


@dataclass(slots=True)
class Finding:
    """One fact a rule established. `order` places it in the run (smaller is earlier; None:
    no position). `part` is what the rule knows of its place in the causal story; `role` is
    what the reasoner made of it (root cause, symptom or context) once all facts were in."""

    kind: str
    severity: Severity
    part: Part
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
    confidence: Confidence = "high"
    order: float | None = None
    timestamp: datetime | None = None  # earliest printed time of its evidence, if any
    culprit_ranks: list[int] = field(default_factory=list)  # ranks to blame, when not `ranks`
    blames_nobody: bool = False  # the logs cannot tell which of `ranks` left the path
    scope: Scope = "ranks"
    # How a departure this explains reads once explained (uneven data: "rank 2 ran an extra
    # batch", never "rank 2 skipped a stage").
    retells_departure: str | None = None
    details: dict[str, object] = field(default_factory=dict)
    role: Role = field(init=False)
    note: str = ""  # why it got its role (filled by the reasoner)
    id: str = ""  # unique within one analysis (filled once every rule has run)

    def __post_init__(self) -> None:
        self.role = ROLE_OF_PART[self.part]

    @property
    def blamed(self) -> list[int]:
        """The ranks this finding holds responsible (none when the logs cannot tell). A
        consequence's own ranks are its victims (the ranks that timed out or lost a peer): it
        blames only the culprits it singles out."""
        if self.blames_nobody:
            return []
        if self.part == "consequence":
            return self.culprit_ranks
        return self.culprit_ranks or self.ranks

    @property
    def anchor(self) -> str:
        ranks = "-".join(str(rank) for rank in self.ranks[:4]) or "all"
        step = f"-s{self.step}" if self.step is not None else ""
        return f"{self.kind}-r{ranks}{step}"


def assign_ids(findings: list[Finding]) -> None:
    """Give every finding a stable id unique within `findings`: its anchor, numbered on a
    collision (two NCCL errors on the same ranks)."""
    seen: dict[str, int] = {}
    for finding in findings:
        base = finding.anchor
        count = seen.get(base, 0)
        seen[base] = count + 1
        finding.id = base if count == 0 else f"{base}-{count + 1}"


def evidence_from(rows: pl.DataFrame, cap: int = EVIDENCE_CAP) -> tuple[list[Evidence], int]:
    """Evidence lines from event rows (`file, line, text, rank`), capped; and how many in all."""
    unique = rows.unique(subset=["file", "line"], keep="first", maintain_order=True)
    kept = [
        Evidence(row["file"], int(row["line"]), row["text"], row["rank"])
        for row in unique.head(cap).iter_rows(named=True)
    ]
    return kept, unique.height


# What an exception that reports a wait for other ranks giving up says (`Socket Timeout`,
# `Timed out waiting ...`).
WAITED = r"(?i)timed? ?out|timeout"


def exception_said(row: dict[str, object]) -> str:
    """One exception event's `Type: message`, or its type alone when it printed no message."""
    return (
        f"{row['exc_type']}: {row['exc_message']}" if row["exc_message"] else str(row["exc_type"])
    )


# fe80::20d:3aff:fef7:74b3%enP7906s1 (an interface scope after `%`), ::1, 2001:db8::2
IPV6_ADDRESS = r"[0-9a-fA-F]{0,4}(?::[0-9a-fA-F]{0,4}){2,7}(?:%[\w.-]+)?"


def differences_masked(text: pl.Expr) -> pl.Expr:
    """A line's or an error's text with what differs between processes masked (numbers,
    pointers, network addresses: each host connects to its own peer), to tell the same words
    from different ones."""
    return (
        text.str.replace_all(IPV6_ADDRESS, "A")
        .str.replace_all(r"0x[0-9a-fA-F]+", "X")
        .str.replace_all(r"\d+", "N")
    )


def exception_text() -> pl.Expr:
    """What an exception event says, `Type: message` (either part empty when not printed)."""
    return pl.concat_str(
        [pl.col("exc_type").fill_null(""), pl.col("exc_message").fill_null("")], separator=": "
    )
