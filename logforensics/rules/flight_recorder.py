"""Flight Recorder dumps aligned rank against rank: the first collective the ranks disagree on.

Per process group, each rank's collectives are lined up by their sequence number
(`collective_seq_id`). A ring buffer that overflowed has lost its oldest entries: the
comparison starts at the first number every rank still holds. At each number the ranks
should have issued the same op with the same sizes and dtypes. The first number where a
minority differs is the departure: when the minority's history from there on is the
majority's shifted by one to three, it skipped that many collectives; otherwise it issued a
different one. A rank whose history stops before the others' last number never joined the
rest. `pg_status` says how far each rank completed: the earliest is named first. The numbers
that differ after the first are its consequences (one finding of their own).

PyTorch's `fr_trace` compares ranks pairwise in file order, so the rank it calls the culprit
depends on which dump it read first; here the majority at each number decides.
"""

from __future__ import annotations

import polars as pl

from logforensics.findings import Confidence, Evidence, Finding, evidence_from
from logforensics.job import Job
from logforensics.placement import earliest_time
from logforensics.registry import Rule
from logforensics.text import rank_list, rank_ranges

FIX = (
    "Every rank must issue the same collectives in the same order with the same shapes. Look "
    "at the code path that issues {collective} on {who}: a `continue` or early `return` "
    "on some ranks, a data-dependent branch, a metric or barrier only some ranks reach."
)
MAJORITY = (
    " The majority of ranks at each number decides which side departed; PyTorch's fr_trace "
    "compares the dumps pairwise in the order it reads them, so the rank it names depends on "
    "file order."
)
PAIRWISE = (
    " It compares the dumps pairwise in the order it reads them: its culprits are the ranks "
    "that differed from the first one it read, which may be the one that departed."
)
SHIFTS = (1, 2, 3)  # skips of this many collectives are recognised as skips
EVIDENCE_CAP = 8


def check(job: Job) -> list[Finding]:
    entries = job.dumps.flight.filter(~pl.col("is_p2p") & pl.col("seq").is_not_null())
    if entries.get_column("rank").n_unique() < 2:
        return _from_analysis(job)
    findings = []
    for (pg,), group in entries.group_by("pg", maintain_order=True):
        findings.extend(_disagreements(job, str(pg), group))
    return findings


def _from_analysis(job: Job) -> list[Finding]:
    """Without the dumps, PyTorch's analyzer's own report of them (parsers/fr_trace_text.py):
    the ranks missing from a collective every other rank joined."""
    events = job.events
    if "event" not in events.columns:
        return []
    reports = events.filter(pl.col("event") == "fr_missing").sort("file", "line")
    if reports.is_empty():
        return []
    first = reports.row(0, named=True)
    if str(first.get("error_code") or "").endswith("_MISMATCH"):
        return [_mismatch_in_analysis(reports, first)]
    missing = sorted(set(first["values"] or []) | _missing_from_other_groups(reports, first["pg"]))
    seq, op = first["seq"], first["op"]
    number = f" #{seq}" if seq is not None else ""
    what = f" ({op})" if op else ""
    who = rank_list(missing) if missing else "a rank"
    summary = _sentence(
        f"The Flight Recorder's analysis found {who} missing from collective{number}{what}, "
        "which the other ranks joined: it never issued it."
    )
    return [
        _analysis_finding(
            reports,
            summary,
            who,
            missing,
            confidence="high" if missing else "low",
            details={"stopped": missing},
        )
    ]


def _analysis_finding(
    reports: pl.DataFrame,
    summary: str,
    who: str,
    ranks: list[int],
    confidence: Confidence,
    details: dict[str, object],
) -> Finding:
    """A departure the analyzer's first report (`reports`' first row) tells, its lines the
    evidence."""
    first = reports.row(0, named=True)
    seq, op = first["seq"], first["op"]
    evidence, total = evidence_from(reports.select("file", "line", "text", "rank"))
    return Finding(
        kind="fr_mismatch",
        severity="error",
        part="departure",
        summary=summary,
        fix=FIX.format(collective=_collective(seq, op), who=who),
        ranks=ranks,
        op=op,
        seq=seq,
        evidence=evidence,
        evidence_total=total,
        confidence=confidence,
        timestamp=earliest_time(reports),
        details={"source": "flight recorder analysis", **details},
    )


# how the analyzer's error types say the culprits differ (`MatchState` in PyTorch's
# flight_recorder components)
DIFFERENCES = {
    "SIZE_OR_SYNTAX_MISMATCH": "with other sizes",
    "COLLECTIVE_TYPE_MISMATCH": "as another collective",
    "COLLECTIVE_DTYPE_MISMATCH": "with another dtype",
    "COLLECTIVE_STATE_MISMATCH": "in another state",
}


def _mismatch_in_analysis(reports: pl.DataFrame, first: dict) -> Finding:
    """The analyzer's culprits of a collective every rank joined but some called differently
    (pytorch/pytorch#140563: ranks 22 and 110 in all_reduce #39 with input sizes [[262144]]
    where the others had [[1025]]): the ranks disagreed on the call itself. It compares the
    dumps pairwise in file order, so its culprits are the ranks that differed from the first it
    read, not necessarily the ones that departed."""
    culprits = sorted(set(first["values"] or []))
    seq, op = first["seq"], first["op"]
    number = f" #{seq}" if seq is not None else ""
    what = f" ({op})" if op else ""
    how = DIFFERENCES.get(str(first["error_code"]), "differently")
    said = f": {first['exc_message']}" if first["exc_message"] else ""
    who = rank_list(culprits) if culprits else "some ranks"
    summary = _sentence(
        f"The Flight Recorder's analysis found {who} calling collective{number}{what} {how} "
        f"than the ranks it compared them with{said}."
    )
    return _analysis_finding(
        reports,
        summary + PAIRWISE,
        who,
        culprits,
        confidence="medium",
        details={"mismatch": str(first["error_code"]), "differs": how},
    )


def _collective(seq: int | None, op: str | None) -> str:
    """The collective a fix points at: by its number, else by its op."""
    if seq is not None:
        return f"collective #{seq}"
    return f"`{op}`" if op else "that collective"


def _missing_from_other_groups(reports: pl.DataFrame, pg: str | None) -> set[int]:
    """The ranks an analysis that compares every process group found missing from the others
    than the first report's (nvidia-resiliency-ext's attribution: rank 10 missing from PG 73,
    rank 15 from PG 74, two stopped ranks in two expert groups); none where the reports name
    no group (PyTorch's analyzer: its later reports of one group follow from the first)."""
    if pg is None:
        return set()
    others = reports.filter(pl.col("pg").is_not_null() & (pl.col("pg") != pg))
    return set(others.get_column("values").explode().drop_nulls().to_list())


def _disagreements(job: Job, pg: str, entries: pl.DataFrame) -> list[Finding]:
    """The first number of the group where the ranks disagree, and the later ones."""
    signature = pl.concat_str(
        "op", "input_sizes", "input_dtypes", separator="|", ignore_nulls=True
    ).alias("signature")
    keyed = entries.with_columns(signature)
    ranks = sorted(keyed.get_column("rank").unique().to_list())
    majority = (
        keyed.group_by("seq", "signature")
        .agg(pl.len().alias("votes"))
        .sort("seq", "votes", "signature", descending=[False, True, False])
        .group_by("seq", maintain_order=True)
        .first()
    )
    history = {
        rank: dict(rows.select("seq", "signature").iter_rows())
        for (rank,), rows in keyed.sort("rank").group_by("rank", maintain_order=True)
    }
    expected = dict(majority.select("seq", "signature").iter_rows())
    last_seq = max(expected)
    first_held = max(min(history[rank]) for rank in ranks)  # older entries were overwritten
    differing = []
    for seq in sorted(n for n in expected if n >= first_held):
        odd = [r for r in ranks if seq in history[r] and history[r][seq] != expected[seq]]
        absent = [r for r in ranks if seq not in history[r] and max(history[r]) < seq <= last_seq]
        if odd and len(odd) * 2 < len(ranks):
            differing.append((seq, odd, "odd"))
        elif absent and len(absent) * 2 < len(ranks):
            differing.append((seq, absent, "absent"))
    if not differing:
        return []
    seq, who, how = differing[0]
    if how == "odd":
        first = _mismatch(job, pg, keyed, seq, who, history, expected)
    elif seq == min(max(history[r]) for r in who) + 1:
        first = _never_joined(job, pg, keyed, seq, who, expected)
    else:
        return []
    if first_held > min(expected):
        first.summary += (
            f" Some ranks' buffers had overwritten their oldest entries: compared from "
            f"#{first_held}, the first number every rank still holds."
        )
    return [first, *_later(keyed, pg, first, differing[1:])]


def _mismatch(
    job: Job,
    pg: str,
    entries: pl.DataFrame,
    seq: int,
    odd: list[int],
    history: dict[int, dict[int, str]],
    expected: dict[int, str],
) -> Finding:
    skipped = {rank: _skipped(history[rank], expected, seq) for rank in odd}
    theirs = _said(expected[seq])
    others = [rank for rank in history if rank not in odd]
    their_place = _issued_at(entries, seq, others, "issued at ")
    my_place = _issued_at(entries, seq, odd, "issued at ")
    if all(skipped.values()):
        count = max(skipped.values())
        what = (
            f"skipped collective #{seq} ({theirs}{_by_others(their_place)})"
            if count == 1
            else f"skipped {count} collectives from #{seq} ({theirs} first"
            f"{_by_others(their_place)})"
        )
        summary = (
            f"{_who(odd)} {what} in process group {pg}: {_their(odd)} #{seq}"
            f"{_bracketed(my_place)} is the others' #{seq + count}, so from there on every "
            "collective met a different one."
        )
    else:
        mine = _said(history[odd[0]][seq])
        summary = (
            f"{_who(odd)} issued {mine} as collective #{seq}{_bracketed(my_place)} in process "
            f"group {pg}, where the others issued {theirs}{_bracketed(their_place)}."
        )
    summary = _sentence(summary + _completed_words(job, pg) + MAJORITY)
    return Finding(
        kind="fr_mismatch",
        severity="error",
        part="departure",
        summary=summary,
        fix=FIX.format(collective=_collective(seq, None), who=rank_list(odd)),
        ranks=odd,
        op=expected[seq].split("|", 1)[0],
        seq=seq,
        evidence=_evidence(entries, seq, odd, others),
        evidence_total=len(odd) + 1,
        confidence="high",
        details={
            "source": "flight recorder",
            "process_group": pg,
            "skipped": {str(rank): count for rank, count in skipped.items() if count},
            "other_ranks": others,
            # the line of the job's code to read: the call it skipped, or the call it made
            "code_line": (their_place if all(skipped.values()) else my_place).removeprefix(
                "issued at "
            )
            or None,
        },
    )


def _never_joined(
    job: Job,
    pg: str,
    entries: pl.DataFrame,
    seq: int,
    absent: list[int],
    expected: dict[int, str],
) -> Finding:
    others = sorted(set(entries.get_column("rank").unique().to_list()) - set(absent))
    summary = _sentence(
        f"{_who(absent)} never issued collective #{seq} ({_said(expected[seq])}) in process "
        f"group {pg}: {_their(absent)} history stops at #{seq - 1} while "
        f"{rank_list(others)} went on." + _completed_words(job, pg) + MAJORITY
    )
    return Finding(
        kind="fr_mismatch",
        severity="error",
        part="departure",
        summary=summary,
        fix=FIX.format(collective=_collective(seq, None), who=rank_list(absent)),
        ranks=absent,
        op=expected[seq].split("|", 1)[0],
        seq=seq,
        evidence=_evidence(entries, seq, [], others) + _evidence(entries, seq - 1, absent, []),
        evidence_total=len(absent) + 1,
        confidence="medium",
        details={
            "source": "flight recorder",
            "process_group": pg,
            "stopped": absent,
            "code_line": _issued_at(entries, seq, others, "") or None,
        },
    )


def _later(
    entries: pl.DataFrame, pg: str, first: Finding, later: list[tuple[int, list[int], str]]
) -> list[Finding]:
    """The numbers that differ after the first: what followed from it, one finding."""
    if not later:
        return []
    numbers = [seq for seq, _, _ in later]
    ranks = sorted({rank for _, who, _ in later for rank in who})
    shown = numbers[:EVIDENCE_CAP]
    evidence = [
        line
        for seq in shown[:3]
        for line in _evidence(entries, seq, [r for s, who, _ in later if s == seq for r in who], [])
    ]
    return [
        Finding(
            kind="fr_mismatch",
            severity="warning",
            part="consequence",
            summary=(
                f"After #{first.seq}, {len(numbers)} more collective number"
                f"{'s' if len(numbers) != 1 else ''} of process group {pg} "
                f"differ{'s' if len(numbers) == 1 else ''} on "
                f"{rank_list(ranks)} (#{', #'.join(map(str, shown))}"
                f"{', ...' if len(numbers) > len(shown) else ''}): once one rank is off by a "
                "collective, every later one meets a different partner."
            ),
            fix="",
            ranks=ranks,
            seq=numbers[0],
            evidence=evidence,
            evidence_total=len(numbers),
            confidence="high",
            details={"source": "flight recorder", "process_group": pg, "numbers": numbers},
        )
    ]


def _issued_at(entries: pl.DataFrame, seq: int, ranks: list[int], words: str) -> str:
    """`issued at train (train.py:88)`: where the job's code issued collective `seq` on most
    of `ranks` (empty when the dump recorded no Python stacks)."""
    frames = (
        entries.filter((pl.col("seq") == seq) & pl.col("rank").is_in(ranks))
        .get_column("user_frame")
        .drop_nulls()
    )
    if frames.is_empty():
        return ""
    return words + str(frames.mode().sort().item(0))


def _by_others(words: str) -> str:
    return f", {words.replace('issued at', 'issued by the others at')}" if words else ""


def _bracketed(words: str) -> str:
    return f" ({words})" if words else ""


def _skipped(mine: dict[int, str], expected: dict[int, str], seq: int) -> int:
    """How many collectives a rank skipped at `seq`: its history from `seq` on is the
    majority's shifted by that many (0: not a skip)."""
    numbers = [n for n in sorted(mine) if n >= seq]
    for shift in SHIFTS:
        pairs = [(mine[n], expected.get(n + shift)) for n in numbers]
        compared = [(a, b) for a, b in pairs if b is not None]
        if compared and all(a == b for a, b in compared):
            return shift
    return 0


def _completed_words(job: Job, pg: str) -> str:
    status = job.dumps.flight_status.filter(
        (pl.col("pg") == pg) & pl.col("last_completed").is_not_null()
    )
    if status.get_column("rank").n_unique() < 2:
        return ""
    lowest = status.get_column("last_completed").min()
    earliest = sorted(status.filter(pl.col("last_completed") == lowest).get_column("rank"))
    if len(earliest) == status.height:
        return ""
    return (
        f" {_who(earliest).capitalize()} completed the fewest collectives (up to #{lowest}), "
        f"so {'its' if len(earliest) == 1 else 'their'} history stops earliest."
    )


def _evidence(entries: pl.DataFrame, seq: int, odd: list[int], others: list[int]) -> list[Evidence]:
    """The entry at `seq` of each odd rank, then one other rank's."""
    chosen = odd[:EVIDENCE_CAP] + others[:1]
    rows = entries.filter((pl.col("seq") == seq) & pl.col("rank").is_in(chosen)).sort("rank")
    order = {rank: index for index, rank in enumerate(chosen)}
    lines = sorted(rows.iter_rows(named=True), key=lambda row: order[row["rank"]])
    return [
        Evidence(
            row["file"],
            int(row["index"]) + 1,
            f"entries[{row['index']}]: #{row['seq']} {row['backend'] or ''}:{row['op']} "
            f"sizes {row['input_sizes']} "
            f"dtypes {row['input_dtypes']} state {row['state']}"
            + (" (not completed)" if not row["retired"] else "")
            + (f" at {row['user_frame']}" if row["user_frame"] else ""),
            row["rank"],
        )
        for row in lines
    ]


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _said(signature: str) -> str:
    op, _, rest = signature.partition("|")
    sizes, _, dtypes = rest.partition("|")
    if sizes in ("", "[]"):
        return op
    return f"{op} of {sizes} {dtypes if dtypes != '[]' else ''}".strip()


def _who(ranks: list[int]) -> str:
    return f"rank {ranks[0]}" if len(ranks) == 1 else f"ranks {rank_ranges(ranks)}"


def _their(ranks: list[int]) -> str:
    return "its" if len(ranks) == 1 else "their"


def _diagnosis(finding: Finding) -> str:
    """A rank that skipped, replaced or never issued a collective the others did left the
    common path; the numbers that differ after it are collectives mismatched."""
    if finding.details.get("mismatch"):  # the same collective called differently
        return "collective_mismatch"
    return "stage_divergence" if finding.part == "departure" else "collective_mismatch"


RULE = Rule(kind="fr_mismatch", check=check, specificity=30, diagnosis=_diagnosis)
