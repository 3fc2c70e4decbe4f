"""The reasoner: one causal model over the rules' facts, and the verdict it leads to.

Rules report facts, each playing one part in the story of a hang (`Finding.part`):

- an **explanation** says why a rank left the common path: uneven data, an exception (raised
  or swallowed), OOM, unused parameters, an NCCL or transport error, a duplicate device;
- a **departure** says who left it and where: a stage divergence, the odd op at a sequence
  number, a rank absent from a collective the others entered;
- a **consequence** is what followed: timeouts, lost peers, aborts, cascades, teardown;
- **context** is none of these: the last common stage, ranks without logs, mixed versions.

The reasoner links them into chains, explanation -> departure -> consequences, and picks the
verdict: the explanation attached to the earliest departure, else that departure, else an
explanation alone, else a stand-in consequence with its confidence lowered and said. The
principles it follows are numbered where they apply (the diagnosis issue lists them):

1. a low-confidence finding never outranks a high-confidence one that explains the same
   ranks at the same point;
2. an exception, OOM or reducer error on rank R at or just before the point where other ranks
   went quiet explains the quiet ranks; they are its consequence;
3. uneven data explains a divergence at the epoch end (and retells it as an extra batch);
4. an abort that proves a mismatch (gloo's size check) is a consequence, not a departure;
8. a swallowed exception where the rank departed is the verdict;
10. hang dumps (Flight Recorder entries, py-spy stacks) are a second witness, not a second
    story: a dump that singles out the verdict's ranks confirms it (it joins the chain and
    the confidence goes up); one that singles out other ranks is shown beside it, said, and
    the confidence goes down.

Principles 5-7 and 9 live in the rules that establish the facts (collective_timeout,
stage_divergence, nccl_error, rank_exception and the traceback parser).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal

import polars as pl

from logforensics.findings import CONFIDENCE_ORDER, SEVERITY_ORDER, Finding
from logforensics.headline import logged_reason
from logforensics.job import Job
from logforensics.registry import diagnosis, rule_of
from logforensics.stopped_workers import ROOT_CAUSE
from logforensics.text import capitalized, duration, rank_list

NO_TIME = datetime.max
# How an explanation is tied to a departure: on the departing ranks themselves, on a rank the
# quiet ranks were waiting for (principle 2), or by a job-wide cause such as uneven data.
Link = Literal["same_rank", "waiting", "job"]
LINK_PREFERENCE: dict[str, int] = {"same_rank": 0, "waiting": 1, "job": 2}
# A departure and its explanation are "at the same point" within this many steps.
NEAR_STEPS = 1


@dataclass(frozen=True, slots=True)
class Verdict:
    finding: Finding
    reason: str
    chain: tuple[Finding, ...] = ()  # explanation, departure, then consequences, in order
    independent: tuple[Finding, ...] = ()  # other causes the logs cannot tie to the verdict

    @property
    def ranks(self) -> list[int]:
        """The ranks to blame (none when the logs cannot tell which side departed)."""
        return self.finding.blamed

    @property
    def headline(self) -> str:
        """The verdict in one line of plain words (`logforensics.headline`)."""
        from logforensics.headline import verdict_headline

        return verdict_headline(self)


@dataclass(slots=True)
class Chain:
    explanation: Finding | None = None
    departure: Finding | None = None
    # Departures that are ranks waiting on the explanation's rank (principle 2), and other
    # departures the same explanation accounts for.
    explained: list[tuple[Finding, Link]] = field(default_factory=list)
    link: Link | None = None  # how `explanation` is tied to `departure`

    @property
    def head(self) -> Finding:
        head = self.explanation or self.departure
        assert head is not None  # a chain always holds one of the two
        return head

    @property
    def point(self) -> float | None:
        """Where in the run the chain starts: its departure's position, else the earliest of
        what it holds."""
        if self.departure is not None and self.departure.order is not None:
            return self.departure.order
        orders = [f.order for f in self.members() if f.order is not None]
        return min(orders) if orders else None

    def members(self) -> list[Finding]:
        found = [f for f in (self.explanation, self.departure) if f is not None]
        return found + [departure for departure, _ in self.explained]

    def involved(self) -> set[int]:
        return set().union(*(_involved(member) for member in self.members()))

    def qualifies(self, job_failed: bool, ranks_seen: set[int]) -> bool:
        """A chain can be the verdict when something failed: a departure, an explanation of
        error severity, or an exception a rank caught and logged while the job then failed
        (a warning that carries an exception on a healthy run is none, nor one that every
        rank logged alike)."""
        if self.departure is not None or self.explained or self.head.severity == "error":
            return True
        blamed = set(self.head.blamed)
        caught = bool(self.head.details.get("swallowed"))
        return job_failed and caught and bool(blamed) and not ranks_seen <= blamed


def reason(findings: list[Finding], job: Job | None = None) -> Verdict | None:
    """Link the findings into chains, choose the verdict and set every finding's role and
    note. Returns None when nothing failed."""
    explanations = [f for f in findings if f.part == "explanation"]
    departures = [f for f in findings if f.part == "departure"]
    consequences = [f for f in findings if f.part == "consequence"]
    chains = _chains(explanations, departures)
    job_failed = any(f.severity == "error" for f in consequences)
    ranks_seen = set(job.ranks_seen) if job is not None else set()
    qualified = {id(c) for c in chains if c.qualifies(job_failed, ranks_seen)}
    candidates = sorted((c for c in chains if id(c) in qualified), key=_chain_key)
    for chain in chains:
        if id(chain) not in qualified:
            _set(chain.head, "context", "Logged by a rank that did not leave the others' path.")
    if not candidates:
        return _stand_in(consequences, job)
    chosen, outranked = _choose(candidates)
    verdict = _tell(chosen)
    trail = _place_chain(chosen, verdict)
    others = [c for c in candidates if c is not chosen]
    witnesses = _witnesses(others, verdict)
    independent = _place_others(
        [c for c in others if c not in witnesses], chosen, verdict, outranked
    )
    trail += witnesses.confirming
    symptoms = _place_consequences(consequences, verdict, job)
    reason_text = (
        _reason(chosen, candidates, outranked, independent, alone=len(findings) == 1)
        + witnesses.words()
        + _torchrun_disagrees(job, verdict)
    )
    return Verdict(verdict, reason_text, tuple(trail + symptoms), tuple(independent))


def sort_findings(findings: list[Finding], verdict: Verdict | None = None) -> list[Finding]:
    """The verdict's chain first, in order; then other root causes, symptoms and context,
    each in run order."""
    chain_position = {id(f): index for index, f in enumerate(verdict.chain)} if verdict else {}
    role_rank = {"root_cause": 0, "symptom": 1, "context": 2}

    def key(finding: Finding) -> tuple[object, ...]:
        position = chain_position.get(id(finding))
        if position is not None:
            return (0, position)
        return (1, role_rank[finding.role], *_run_order(finding))

    return sorted(findings, key=key)


# --- linking ------------------------------------------------------------------------------


def _chains(explanations: list[Finding], departures: list[Finding]) -> list[Chain]:
    """One chain per explanation that explains something or stands alone, one per departure
    nothing explains."""
    by_explanation: dict[int, Chain] = {id(e): Chain(explanation=e) for e in explanations}
    unexplained: list[Chain] = []
    for departure in sorted(departures, key=_run_order):
        found = _explanation_for(departure, explanations)
        if found is None:
            unexplained.append(Chain(departure=departure))
            continue
        explanation, link = found
        chain = by_explanation[id(explanation)]
        if chain.departure is None and link != "waiting":
            chain.departure, chain.link = departure, link
        else:
            chain.explained.append((departure, link))
    return list(by_explanation.values()) + unexplained


def _explanation_for(
    departure: Finding, explanations: list[Finding]
) -> tuple[Finding, Link] | None:
    """The explanation that accounts for `departure`: on its own ranks first, then on a rank
    the quiet ranks waited for, then a job-wide cause; the more specific and surer first."""
    links = [(e, link) for e in explanations if (link := _link(e, departure)) is not None]
    if not links:
        return None
    return min(
        links,
        key=lambda pair: (
            LINK_PREFERENCE[pair[1]],
            -_specificity(pair[0].kind),
            -CONFIDENCE_ORDER[pair[0].confidence],
            *_run_order(pair[0]),
        ),
    )


def _link(explanation: Finding, departure: Finding) -> Link | None:
    if explanation.scope == "job":
        # a job-wide failure that came after the departure is none of its cause (ms-swift#10183:
        # NCCL's socket errors as the ranks went down, a second after DETAIL's mismatch)
        if _later(explanation, departure):
            return None
        # principle 3: uneven data explains a departure where the short ranks run out
        if explanation.step is None or departure.step is None:
            return "job"
        return "job" if departure.step >= explanation.step - NEAR_STEPS else None
    blamed = set(explanation.blamed)
    departing = set(departure.blamed or departure.ranks)
    if blamed & departing:
        return "same_rank" if _fits(explanation, departure) else None
    # principle 2: the others went quiet where rank R failed; they were waiting for R
    quiet = departure.details.get("departure") == "stopped"
    waited_for = set(_other_side(departure))
    if quiet and blamed and _near(explanation, departure):
        if explanation.order is not None or blamed <= waited_for:
            return "waiting"
    return None


def _later(explanation: Finding, departure: Finding) -> bool:
    """Whether the logs' clocks put the explanation after the departure."""
    if explanation.timestamp is None or departure.timestamp is None:
        return False
    return explanation.timestamp > departure.timestamp


def _fits(explanation: Finding, departure: Finding) -> bool:
    """Whether an explanation on the departing rank can be why it departed there."""
    swallowed = bool(explanation.details.get("swallowed"))
    left_quietly = departure.details.get("departure") in (None, "stopped")
    if explanation.order is None:
        # unplaced: a caught exception explains any departure of its rank (principle 8); an
        # exception the rank died of explains it going quiet, not a skip it survived
        return swallowed or left_quietly or explanation.kind != "rank_exception"
    return _near(explanation, departure)


def _near(explanation: Finding, departure: Finding) -> bool:
    if explanation.order is None:
        return True
    if explanation.step is not None and departure.step is not None:
        return abs(explanation.step - departure.step) <= NEAR_STEPS
    if departure.order is None:
        return True
    return explanation.order <= departure.order + 1


def _other_side(departure: Finding) -> list[int]:
    """The ranks that did not depart with it (a stage divergence names them)."""
    others = departure.details.get("other_ranks")
    return [int(rank) for rank in others] if isinstance(others, list) else []


def _involved(finding: Finding) -> set[int]:
    return set(finding.ranks) | set(finding.culprit_ranks) | set(_other_side(finding))


# --- choosing -----------------------------------------------------------------------------


def _chain_key(chain: Chain) -> tuple[object, ...]:
    point = chain.point
    head = chain.head
    return (
        point is None,
        point if point is not None else 0.0,
        (head.timestamp or NO_TIME) if point is None else NO_TIME,
        -_specificity(head.kind),
        -SEVERITY_ORDER[head.severity],
        _printed_at(head),
        head.kind,
        head.ranks,
    )


def _choose(candidates: list[Chain]) -> tuple[Chain, Chain | None]:
    """The earliest chain, unless it is a guess that a surer chain about the same ranks at
    the same point outranks (principle 1). Returns the choice and the guess it replaced."""
    first = candidates[0]
    if _confidence(first) > CONFIDENCE_ORDER["low"]:
        return first, None
    for other in candidates[1:]:
        surer = _confidence(other) > _confidence(first)
        if surer and other.involved() & first.involved() and _same_point(first, other):
            return other, first
    return first, None


def _confidence(chain: Chain) -> int:
    head = chain.head
    guess = head.blames_nobody and chain.explanation is None
    return CONFIDENCE_ORDER["low"] if guess else CONFIDENCE_ORDER[head.confidence]


def _same_point(first: Chain, other: Chain) -> bool:
    steps = [c.head.step for c in (first, other)]
    if None not in steps:
        return abs(steps[0] - steps[1]) <= NEAR_STEPS  # type: ignore[operator]
    return first.point is None or other.point is None or first.point == other.point


# --- second witnesses: the hang dumps ------------------------------------------------------

# Finding.details["source"] of the rules that read hang dumps, as a sentence names them
DUMP_SOURCES = {
    "flight recorder": "the Flight Recorder",
    "py-spy": "the py-spy stacks",
    "faulthandler": "the faulthandler stacks",
    "gdb": "the gdb stacks",
}


@dataclass(slots=True)
class Witnesses:
    """The dump findings beside the verdict: those that single out its ranks, and the
    others."""

    confirming: list[Finding] = field(default_factory=list)
    contradicting: list[Finding] = field(default_factory=list)
    chains: list[Chain] = field(default_factory=list)

    def __contains__(self, chain: Chain) -> bool:
        return any(chain is mine for mine in self.chains)

    def words(self) -> str:
        """What the dumps add to the verdict's reason."""
        said = ""
        if self.confirming:
            ranks = sorted({rank for finding in self.confirming for rank in finding.blamed})
            said += f" The hang dumps agree: {_single_out(self.confirming)} {rank_list(ranks)} too."
        for finding in self.contradicting:
            said += (
                f" {capitalized(_single_out([finding]))} {rank_list(finding.blamed)} instead "
                f"({diagnosis(finding)}): the logs tell where a rank first left the common path, a "
                "dump only where each rank stood when it was taken; read both."
            )
        return said


def _witnesses(others: list[Chain], verdict: Finding) -> Witnesses:
    """The dump-only chains beside the verdict, sorted by whether they blame its ranks, with
    their roles set and the verdict's confidence moved accordingly (principle 10)."""
    found = Witnesses()
    blamed = set(verdict.blamed)
    for chain in others:
        head = chain.head
        if chain.explanation is not None or _source(head) is None or not head.blamed:
            continue
        found.chains.append(chain)
        if set(head.blamed) & blamed:
            found.confirming.append(head)
            _set(
                head,
                "context",
                f"A second witness: {_single_out([head])} {rank_list(head.blamed)}, as the "
                f"verdict ({diagnosis(verdict)}) does.",
            )
        else:
            found.contradicting.append(head)
            _set(
                head,
                "context",
                f"{capitalized(_single_out([head]))} {rank_list(head.blamed)}, the verdict "
                f"({diagnosis(verdict)}) {rank_list(verdict.blamed) if blamed else 'no rank'}: "
                "read both.",
            )
    if found.confirming and not found.contradicting:
        verdict.confidence = "high"
    elif found.contradicting and verdict.confidence == "high":
        verdict.confidence = "medium"
    return found


def _source(finding: Finding) -> str | None:
    source = finding.details.get("source")
    return source if isinstance(source, str) and source in DUMP_SOURCES else None


def _single_out(findings: list[Finding]) -> str:
    """`the Flight Recorder singles out`, `the Flight Recorder and the py-spy stacks single
    out`."""
    names = list(dict.fromkeys(DUMP_SOURCES[_source(f) or "py-spy"] for f in findings))
    plural = len(names) > 1 or names[0].endswith("stacks")
    return " and ".join(names) + (" single out" if plural else " singles out")


# --- telling ------------------------------------------------------------------------------


def _tell(chain: Chain) -> Finding:
    """The verdict finding, with what the chain adds to it: the step it happened at and, for
    an explanation, where its rank left the others' path."""
    verdict = chain.head
    departure = chain.departure
    if verdict.severity != "error":
        # a caught, logged exception that the logs tie to the failure
        verdict.severity = "error"
        if departure is None and verdict.confidence == "high":
            verdict.confidence = "medium"  # no departure shows where it cost the rank
    if chain.explanation is None or departure is None:
        return verdict
    between_steps = (
        chain.link == "same_rank"
        and verdict.step is not None
        and departure.step is not None
        and departure.step > verdict.step
    )
    if verdict.step is None or between_steps:
        # the departure says where the rank left the path: an exception printed between two
        # steps is placed after the earlier one's last mark, but it cost the rank the next
        verdict.step, verdict.stage = departure.step, departure.stage
        verdict.epoch = departure.epoch
    if verdict.order is None:
        verdict.order = departure.order
    if verdict.retells_departure:
        departure.summary = verdict.retells_departure
        departure.fix = verdict.fix
    elif chain.link == "same_rank":
        verdict.summary += f" It left the others' path there: {_lower_first(departure.summary)}"
    if (
        chain.link == "same_rank"
        and CONFIDENCE_ORDER[departure.confidence] > CONFIDENCE_ORDER[verdict.confidence]
    ):
        verdict.confidence = departure.confidence  # the departure confirms where it happened
    return verdict


def _place_chain(chain: Chain, verdict: Finding) -> list[Finding]:
    """Roles and notes of the verdict's own chain; returns it in order."""
    _set(verdict, "root_cause", "Verdict.")
    trail = [verdict]
    if chain.departure is not None and chain.departure is not verdict:
        _set(
            chain.departure,
            "context",
            f"Where the verdict's {_ranks_word(verdict)} left the others' path; the verdict "
            f"({diagnosis(verdict)}) says why.",
        )
        trail.append(chain.departure)
    for departure, link in chain.explained:
        if link == "waiting":
            _set(
                departure,
                "symptom",
                f"{rank_list(departure.ranks).capitalize()} went quiet waiting for "
                f"{rank_list(verdict.blamed)}, which failed at that point (the verdict): a "
                "consequence, not a departure of its own.",
            )
        else:
            _set(departure, "context", f"Also explained by the verdict ({diagnosis(verdict)}).")
        trail.append(departure)
    return trail


def _place_others(
    others: list[Chain], chosen: Chain, verdict: Finding, outranked: Chain | None
) -> list[Finding]:
    """Roles of the chains that are not the verdict's; returns the independent causes."""
    independent: list[Finding] = []
    involved = chosen.involved() | set(verdict.blamed)
    point = chosen.point
    for chain in others:
        head = chain.head
        for member in chain.members():
            if member is not head:
                _set(member, "context", f"Explained by {diagnosis(head)} (see it).")
        shares = bool(chain.involved() & involved)
        placed = chain.point is not None and point is not None
        if chain is outranked:
            _set(
                head,
                "context",
                f"A guess at the same point, outranked by the verdict ({diagnosis(verdict)}), "
                "which is surer and concerns the same ranks.",
            )
        elif shares and placed and chain.point >= point:  # type: ignore[operator]
            _set(
                head,
                "context",
                f"At or after the verdict ({diagnosis(verdict)}) and about the same "
                f"{_ranks_word(verdict)}: it confirms it.",
            )
        elif shares:
            _set(
                head,
                "context",
                f"On the same {_ranks_word(verdict)} as the verdict; the logs do not order it "
                "against the verdict, so it may be why the verdict happened.",
            )
        elif placed and chain.point > point:  # type: ignore[operator]
            _set(
                head,
                "symptom",
                f"Comes after the verdict ({diagnosis(verdict)}) on other ranks; most likely a "
                "consequence.",
            )
        elif not placed and _later(head, verdict):
            _set(
                head,
                "symptom",
                f"Comes after the verdict ({diagnosis(verdict)}) by the logs' clocks, on other "
                "ranks; most likely a consequence.",
            )
        else:
            _set(
                head,
                "root_cause",
                "On other ranks than the verdict, and the logs cannot order it before or after "
                "it: possibly a separate failure."
                if not placed
                else "At the same point of the run as the verdict, on other ranks.",
            )
            independent.append(head)
    return independent


def _place_consequences(
    consequences: list[Finding], verdict: Finding, job: Job | None
) -> list[Finding]:
    """Every consequence becomes a symptom of the verdict, in run order."""
    placed = sorted(consequences, key=_run_order)
    for symptom in placed:
        if symptom.kind == "collective_timeout":
            note = _timeout_note(symptom, verdict, job)
        else:
            note = f"A consequence of the verdict ({diagnosis(verdict)})."
        if symptom.blamed and verdict.blamed and not set(symptom.blamed) & set(verdict.blamed):
            note += (
                f" It singles out {rank_list(symptom.blamed)}, not the verdict's "
                f"{rank_list(verdict.blamed)}: read both."
            )
        _set(symptom, "symptom", note)
    return placed


def _stand_in(consequences: list[Finding], job: Job | None) -> Verdict | None:
    """No finding names a cause: let the most telling error consequence stand in, said
    plainly."""
    symptoms = sorted(
        (f for f in consequences if f.severity == "error"),
        key=lambda f: (not f.blamed or f.blames_nobody, *_run_order(f)),
    )
    if not symptoms:
        for finding in consequences:
            _set(finding, "symptom", "")
        return None
    chosen = symptoms[0]
    if chosen.culprit_ranks and not chosen.blames_nobody:
        chosen.confidence = str(chosen.details.get("suspect_confidence") or "medium")
        source = str(chosen.details.get("culprits_from", "the sequence numbers"))
        plural = source.startswith("the ranks") or source.endswith("numbers")
        reason = (
            f"No stage marks, exception or barrier report names a cause; "
            f"{source} {'single' if plural else 'singles'} out "
            f"{rank_list(chosen.culprit_ranks)}, so "
            f"{'it is' if len(chosen.culprit_ranks) == 1 else 'they are'} the most likely "
            f"culprit. Confidence is {chosen.confidence}: check what that rank was doing."
        )
    elif chosen.details.get("from_outside"):
        # the scheduler's or a signal's word that it ended the run is a cause, of the run's
        # end: what a stand-in cannot say is whether the run was still making progress
        chosen.confidence = "low"
        reason = (
            "The run was ended from outside, and nothing in the logs failed before it. "
            "Confidence is low: whether it was still making progress until then is not in "
            "these logs; stage marks in the next run would show it."
        )
    else:
        chosen.confidence = "low"
        reason = (
            "Nothing in the logs names a cause or singles out a rank: this is the failure as "
            "reported, not its cause. Confidence is low; add stage marks or "
            "TORCH_DISTRIBUTED_DEBUG=DETAIL to the next run."
        )
    _set(chosen, "root_cause", "Verdict (stand-in: no finding names a cause).")
    rest = _place_consequences([f for f in consequences if f is not chosen], chosen, job)
    return Verdict(chosen, reason + _torchrun_disagrees(job, chosen), tuple([chosen, *rest]), ())


# Departures that carry their own why, by kind or by the departure's name: a caught OOM (the
# rank skipped its batch because of it), the main process's first-only work.
SAYS_WHY = ("oom", "rank_exception", "main_first", "busy", "alone_in_work")
# Departures into a rank's own work that outlasted the others' wait (busy_rank.py, main_first.py)
BUSY_DEPARTURES = ("busy", "main_first")


def _reason(
    chosen: Chain,
    candidates: list[Chain],
    outranked: Chain | None,
    independent: list[Finding],
    alone: bool = False,
) -> str:
    """Why the chosen chain is the verdict; `alone` when it is the only finding there is."""
    head = chosen.head
    departure = chosen.departure
    if chosen.explanation is not None and departure is not None:
        where = f" at step {departure.step}" if departure.step is not None else ""
        reason = (
            f"It explains the earliest departure from the common path ({diagnosis(departure)}"
            f"{where}): that is why {rank_list(head.blamed or departure.blamed)} left it."
        )
    elif chosen.explanation is not None and any(link == "waiting" for _, link in chosen.explained):
        quiet = sorted({r for d, link in chosen.explained if link == "waiting" for r in d.ranks})
        reason = (
            f"{rank_list(quiet).capitalize()} went quiet at the point where "
            f"{rank_list(head.blamed)} failed: they were waiting for it."
        )
    elif chosen.explanation is not None:
        reason = _earliest_words(head, len(candidates), "cause", alone)
    else:
        reason = _earliest_words(head, len(candidates), "departure from the common path", alone)
        if head.kind not in SAYS_WHY and head.details.get("departure") not in SAYS_WHY:
            # (unless the rank's own line as it left says it, as the headline reads it:
            # `non-finite loss=nan -> skipping batch`, sample_logs/skip_backward_hang)
            said = logged_reason(head)
            reason += (
                f" Its own log says why it departed:{said}."
                if said
                else " Nothing in the logs says why it departed."
            )
    if outranked is not None:
        reason += (
            f" A guess at the same point ({diagnosis(outranked.head)}) is outranked by this surer "
            "finding about the same ranks."
        )
    if independent:
        kinds = ", ".join(dict.fromkeys(diagnosis(f) for f in independent))
        reason += f" Possibly separate failures the logs cannot order against it: {kinds}."
    return reason


def _earliest_words(head: Finding, candidates: int, what: str, alone: bool = False) -> str:
    if candidates == 1:
        where = "in the logs and dumps" if _source(head) else "in the logs"
        if alone:
            return f"It is the only finding {where}."
        return f"It is the only {what} {where}; the other findings follow from it."
    if head.order == -1.0:
        where = "it is decided at start-up, before the first training step"
    elif head.step is not None:
        stage = f", stage {head.stage}" if head.stage else ""
        where = f"it comes first in the run (step {head.step}{stage})"
    elif head.order is not None:
        where = "it is the earliest the logs place in the run"
    else:
        where = "nothing can be placed in the run and it is the earliest or most specific"
    return f"It is the {what} chosen because {where}."


def _timeout_note(timeout: Finding, verdict: Finding, job: Job | None) -> str:
    """Why a timeout is the verdict's symptom, and when it fired relative to it."""
    waited = timeout.details.get("timeout_ms")
    wait_words = f" {duration(waited / 1000)}" if isinstance(waited, int | float) else ""
    blamed = verdict.blamed
    who = rank_list(blamed) if blamed else "the departing rank"
    if verdict.details.get("departure") in BUSY_DEPARTURES:
        return (
            f"A symptom: the ranks waited{wait_words} in a collective that {who} had not yet "
            "joined, still busy with work of its own (the verdict). The timeout says where "
            "they gave up; the verdict says why."
        )
    if timeout.details.get("phase") == "rendezvous":
        return f"A consequence of the verdict ({diagnosis(verdict)}): set-up never completed."
    note = (
        f"A symptom: the ranks waited{wait_words} in a collective that {who} never joined "
        f"after the verdict ({diagnosis(verdict)}"
        + (f", step {verdict.step}" if verdict.step is not None else "")
        + "). The timeout says where they gave up, not why."
    )
    if verdict.timestamp and timeout.timestamp and timeout.timestamp >= verdict.timestamp:
        seconds = (timeout.timestamp - verdict.timestamp).total_seconds()
        note += f" It fired {duration(seconds)} after the divergence."
    elif verdict.timestamp and isinstance(waited, int) and job is not None and job.progress:
        last = job.progress.last_marks.get_column("timestamp").drop_nulls()
        if len(last) and last.max() >= verdict.timestamp:
            fired = last.max() + timedelta(milliseconds=waited)
            gap = (fired - verdict.timestamp).total_seconds()
            note += (
                f" The last progress any rank printed is at {last.max():%H:%M:%S}; with that "
                f"timeout it fired at about {fired:%H:%M:%S}, {duration(gap)} after the "
                f"divergence at {verdict.timestamp:%H:%M:%S}."
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
        (pl.col("event") == "child_failed") & ROOT_CAUSE & pl.col("rank").is_not_null()
    )
    ranks = sorted(set(named.get_column("rank").to_list()))
    blamed = set(chosen.blamed)
    if not ranks or not blamed or set(ranks) <= blamed:
        return ""
    return (
        f" torchrun's summary names {rank_list(ranks)} as the root cause: that is only the "
        "first exit it observed, not necessarily the rank whose departure caused the hang."
    )


# --- small helpers ------------------------------------------------------------------------


def _set(finding: Finding, role: str, note: str) -> None:
    finding.role = role  # type: ignore[assignment]
    finding.note = note


def _ranks_word(finding: Finding) -> str:
    return "rank" if len(finding.blamed or finding.ranks) == 1 else "ranks"


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def _specificity(kind: str) -> int:
    rule = rule_of(kind)
    return rule.specificity if rule is not None else 0


def _run_order(finding: Finding) -> tuple[object, ...]:
    # Printed times order only what stage marks cannot place; at one placed point the more
    # specific explanation wins whatever its time.
    unplaced = finding.order is None
    return (
        unplaced,
        finding.order if finding.order is not None else 0.0,
        (finding.timestamp or NO_TIME) if unplaced else NO_TIME,
        -_specificity(finding.kind),
        -SEVERITY_ORDER[finding.severity],
        finding.kind,
        finding.ranks,
    )


def _printed_at(finding: Finding) -> tuple[str, int]:
    """Where its first line is: of two causes nothing else orders, one console printed the
    one that happened first first (optimum-habana#1426: rank 6's graph-compile failure, then
    rank 2's inside the all-gather it left). Files apart have no order; their names only keep
    the choice stable. (Symptoms keep their kind's order: a launcher's summary lists its
    failures by rank, not by time.)"""
    if not finding.evidence:
        return ("\uffff", 0)
    first = min(finding.evidence, key=lambda evidence: (evidence.file, evidence.line))
    return (first.file, first.line)
