"""Ranks whose connection to a peer broke (gloo `Connection closed by peer`, `Read error ...
Connection reset by peer`).

Almost always a symptom: the peer process exited after its own error (or was killed), and
every rank still talking to it sees the connection drop. The peer that went first is where
to look, not the ranks that report it. gloo's `Application timeout caused pair closure` is not
one: the rank closed its own side after its own timeout (the peer may be alive and busy), so
it is the timeout's echo and no report about the peer.
"""

from __future__ import annotations

import polars as pl

from logforensics.findings import Finding, evidence_from
from logforensics.job import Job
from logforensics.placement import earliest_time
from logforensics.registry import Rule
from logforensics.text import rank_list

LOST = ("peer_closed", "peer_reset")
FIX = (
    "Look for the rank that exited first (an exception, an abort such as gloo's size check, "
    "an OOM kill): its own log explains the failure; these ranks only saw it go."
)


def check(job: Job) -> list[Finding]:
    lost = job.events.filter(pl.col("event").is_in(LOST))
    if lost.is_empty():
        return []
    reporters = sorted(lost.get_column("rank").drop_nulls().unique().to_list())
    peers = sorted(lost.get_column("peer").drop_nulls().unique().to_list())
    who = rank_list(reporters).capitalize() if reporters else "Some rank"
    summary = (
        f"{who} lost the connection to a peer"
        + (f" ({', '.join(peers[:4])})" if peers else "")
        + ": the peer process exited or was killed; this is a consequence, not a cause."
    )
    evidence, total = evidence_from(
        lost.sort("file", "line")
        .unique(subset=["rank"], keep="first", maintain_order=True)
        .select("file", "line", "text", "rank")
    )
    return [
        Finding(
            kind="peer_lost",
            severity="error",
            part="consequence",
            summary=summary,
            fix=FIX,
            ranks=reporters,
            evidence=evidence,
            evidence_total=total,
            timestamp=earliest_time(lost),
            details={"peers": peers},
        )
    ]


RULE = Rule(kind="peer_lost", check=check)
