"""Order the findings in the run and choose the one that explains the others.

The verdict is the earliest root-cause finding: ordered by position in the run (start-up
before any step, then stage-mark position; findings that cannot be placed come last), then by
printed time, ties going to the more specific rule. Root-cause findings at the verdict's
position on the same ranks are explained by it and become context; those after it are taken as
its consequences and become symptoms. Timeouts and aborts are always symptoms: when nothing
else names a cause, the most telling of them stands in as the verdict, with its confidence
lowered and said.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import polars as pl

from logforensics.findings import SEVERITY_ORDER, Finding
from logforensics.job import Job
from logforensics.registry import rules
from logforensics.text import rank_list

UNPLACED = float("inf")
NO_TIME = datetime.max


@dataclass(frozen=True, slots=True)
class Verdict:
    finding: Finding
    reason: str

    @property
    def ranks(self) -> list[int]:
        """The ranks to blame: a finding's culprits when it names them apart from its ranks."""
        return self.finding.culprit_ranks or self.finding.ranks


def _order(finding: Finding) -> float:
    return UNPLACED if finding.order is None else finding.order


def _specificity(kind: str) -> int:
    return next((rule.specificity for rule in rules() if rule.kind == kind), 0)


def _run_order(finding: Finding) -> tuple[object, ...]:
    # Printed times order only what stage marks cannot place; at one placed point the more
    # specific explanation wins whatever its time.
    unplaced = finding.order is None
    return (
        _order(finding),
        (finding.timestamp or NO_TIME) if unplaced else NO_TIME,
        -_specificity(finding.kind),
        -SEVERITY_ORDER[finding.severity],
        finding.kind,
        finding.ranks,
    )


def sort_findings(findings: list[Finding]) -> list[Finding]:
    """Root causes first, then symptoms, then context; each in run order."""
    role_rank = {"root_cause": 0, "symptom": 1, "context": 2}
    return sorted(findings, key=lambda f: (role_rank[f.role], *_run_order(f)))


def choose_verdict(findings: list[Finding], job: Job | None = None) -> Verdict | None:
    """Pick the verdict and rewrite the other findings' roles and notes (see module doc)."""
    candidates = sorted((f for f in findings if f.role == "root_cause"), key=_run_order)
    if not candidates:
        return _stand_in(findings)
    chosen = candidates[0]
    related: list[Finding] = []
    for other in candidates[1:]:
        shares_ranks = bool(set(other.ranks) & set(chosen.ranks))
        if _order(other) == _order(chosen) and shares_ranks:
            other.role = "context"
            other.note = f"Explained by the verdict ({chosen.kind}) at the same point of the run."
        elif other.order is None and shares_ranks:
            other.role = "context"
            other.note = (
                f"On the same {'rank' if len(chosen.ranks) == 1 else 'ranks'} as the verdict; "
                "the logs do not place it in the run, so it may be why the verdict happened."
            )
            related.append(other)
        elif _order(other) == _order(chosen):
            other.note = "At the same point of the run as the verdict, on other ranks."
        elif other.order is None:
            other.note = (
                "Not placed in the run and on other ranks than the verdict: possibly a "
                "separate failure, which the logs cannot order against the verdict."
            )
        elif shares_ranks:
            other.role = "context"
            other.note = (
                f"Comes after the verdict ({chosen.kind}) and names the same "
                f"{'rank' if len(chosen.ranks) == 1 else 'ranks'}: it confirms it."
            )
        else:
            other.role = "symptom"
            other.note = f"Comes after the verdict ({chosen.kind}); most likely a consequence."
    for symptom in findings:
        if symptom.role == "symptom" and symptom.kind == "collective_timeout":
            symptom.note = _timeout_note(symptom, chosen, job)
    chosen.note = "Verdict."
    reason = _reason(chosen, candidates, related) + _torchrun_disagrees(job, chosen)
    return Verdict(chosen, reason)


def _stand_in(findings: list[Finding]) -> Verdict | None:
    """No finding names a cause: let the most telling error symptom stand in, said plainly."""
    symptoms = sorted(
        (f for f in findings if f.role == "symptom" and f.severity == "error"),
        key=lambda f: (not f.culprit_ranks, *_run_order(f)),
    )
    if not symptoms:
        return None
    chosen = symptoms[0]
    chosen.role = "root_cause"
    if chosen.culprit_ranks:
        chosen.confidence = "medium"
        reason = (
            f"No stage marks, exception or barrier report names a cause; the sequence numbers "
            f"single out {rank_list(chosen.culprit_ranks)} as behind the others, so "
            f"{'it is' if len(chosen.culprit_ranks) == 1 else 'they are'} the most likely "
            "culprit. Confidence is medium: check what that rank was doing."
        )
    else:
        chosen.confidence = "low"
        reason = (
            "Nothing in the logs names a cause or singles out a rank: this is the failure as "
            "reported, not its cause. Confidence is low; add stage marks or "
            "TORCH_DISTRIBUTED_DEBUG=DETAIL to the next run."
        )
    chosen.note = "Verdict (stand-in: no finding names a cause)."
    return Verdict(chosen, reason)


def _timeout_note(timeout: Finding, verdict: Finding, job: Job | None) -> str:
    """Why a timeout is the verdict's symptom, and when it fired relative to it."""
    waited = timeout.details.get("timeout_ms")
    note = (
        f"A symptom: the ranks waited{f' {waited / 1000:g} s' if waited else ''} in a "
        f"collective that {rank_list(verdict.culprit_ranks or verdict.ranks)} never joined "
        f"after the verdict ({verdict.kind}"
        + (f", step {verdict.step}" if verdict.step is not None else "")
        + "). The timeout says where they gave up, not why."
    )
    if verdict.timestamp and timeout.timestamp and timeout.timestamp >= verdict.timestamp:
        seconds = (timeout.timestamp - verdict.timestamp).total_seconds()
        note += f" It fired {seconds:,.0f} s after the divergence."
    elif verdict.timestamp and waited and job is not None and job.progress is not None:
        last = job.progress.marks.get_column("timestamp").drop_nulls()
        if len(last) and last.max() >= verdict.timestamp:
            fired = last.max() + timedelta(milliseconds=waited)
            gap = (fired - verdict.timestamp).total_seconds()
            note += (
                f" The last progress any rank printed is at {last.max():%H:%M:%S}; with that "
                f"timeout it fired at about {fired:%H:%M:%S}, {gap:,.0f} s after the divergence "
                f"at {verdict.timestamp:%H:%M:%S}."
            )
            hosts = job.events.get_column("host").drop_nulls().n_unique()
            if hosts > 1:
                note += f" (The times come from {hosts} hosts, whose clocks may differ.)"
    return note


def _torchrun_disagrees(job: Job | None, chosen: Finding) -> str:
    """torchrun's "Root Cause (first observed failure)" is the first exit it noticed: when the
    watchdog aborts every rank, that choice is arbitrary. Say so when it names another rank."""
    if job is None:
        return ""
    named = job.events.filter(
        (pl.col("event") == "child_failed")
        & pl.col("extra").str.contains('"root_cause":true', literal=True)
        & pl.col("rank").is_not_null()
    )
    ranks = sorted(set(named.get_column("rank").to_list()))
    blamed = set(chosen.culprit_ranks or chosen.ranks)
    if not ranks or set(ranks) <= blamed:
        return ""
    return (
        f" torchrun's summary names {rank_list(ranks)} as the root cause: that is only the "
        "first exit it observed, not necessarily the rank whose departure caused the hang."
    )


def _reason(chosen: Finding, candidates: list[Finding], related: list[Finding]) -> str:
    if len(candidates) == 1:
        reason = (
            "It is the only finding that names a cause; the others are its symptoms or context."
        )
    else:
        if chosen.order == -1.0:
            where = "it is decided at start-up, before the first training step"
        elif chosen.step is not None:
            where = f"it happens first in the run (step {chosen.step}, stage {chosen.stage})"
        elif chosen.order is not None:
            where = "it is the earliest cause the logs place in the run"
        else:
            where = "no cause can be placed in the run and it is the earliest or most specific"
        others = len(candidates) - 1
        reason = (
            f"Chosen because {where}; the {others} other cause-like "
            f"{'findings come' if others > 1 else 'finding comes'} at the same point or later."
        )
    if related:
        kinds = ", ".join(dict.fromkeys(other.kind for other in related))
        reason += (
            f" On the same {'rank' if len(chosen.ranks) == 1 else 'ranks'}, unplaced in the "
            f"run and possibly why it happened: {kinds} (see below)."
        )
    return reason
