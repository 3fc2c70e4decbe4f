"""A process group whose first collective never completed on any rank
(logforensics/never_completed.py)."""

from __future__ import annotations

from pathlib import Path

from tests.builders import analyze_files, kinds

THREADS = Path(__file__).resolve().parent / "data" / "threads"
OLORA = (THREADS / "olora_first_broadcast_p2p.log").read_text(encoding="utf-8").splitlines()


def test_every_rank_stuck_in_the_first_collective_is_the_transport(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": OLORA})
    verdict = analysis.verdict
    # the lines show timeouts, and no NCCL error: the kind is the timeout's, the reading the
    # transport's
    assert verdict is not None and verdict.finding.kind == "collective_timeout"
    assert verdict.finding.details.get("never_completed") is True
    assert "nccl_error" not in kinds(analysis)
    # every rank joined it: none is blamed, and the fix is the transport's
    assert verdict.ranks == [] and (verdict.finding.op, verdict.finding.seq) == ("BROADCAST", 1)
    assert "NCCL_P2P_DISABLE=1" in verdict.finding.fix
    assert "the first collective of process group 1" in verdict.finding.summary
    assert "every rank in the logs joined it" in verdict.finding.summary
    # the watchdog's abort repeating its own timeout is no failure of another process
    assert "rank_exception" not in kinds(analysis)


def test_a_rank_outside_the_collective_may_be_the_one_that_stayed_away(tmp_path):
    # a third rank's log (made up for this test): it did not time out with the others
    files = {"console.log": OLORA, "rank2.log": ["rank=2 step=0 stage=before_forward"]}
    analysis = analyze_files(tmp_path, files)
    assert analysis.job.ranks_seen == (0, 1, 2)
    assert not [f for f in analysis.findings if f.details.get("never_completed")]


def test_a_collective_after_others_had_completed_is_not_the_first(tmp_path):
    # the same report for a later collective (sequence numbers changed for this test)
    lines = [
        line.replace("SeqNum=1,", "SeqNum=9,")
        .replace("sequence id: 1 ", "sequence id: 9 ")
        .replace("last completed work: -1", "last completed work: 8")
        for line in OLORA
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    assert not [f for f in analysis.findings if f.details.get("never_completed")]
    assert analysis.verdict is not None and analysis.verdict.finding.kind == "collective_timeout"


def test_a_rank_taken_down_by_sigabrt_with_the_others_was_in_the_collective_too(tmp_path):
    lines = (THREADS / "picotron6_first_allreduce_sigabrt.log").read_text().splitlines()
    analysis = analyze_files(tmp_path, {"console.log": lines})
    verdict = analysis.verdict
    assert verdict is not None and verdict.finding.details.get("never_completed") is True
    assert verdict.ranks == [] and "rank 0 died of SIGABRT with them" in verdict.finding.summary
    # torchrun's "first observed failure" is its own watchdog's abort, not a departure
    assert "rank_exception" not in kinds(analysis)
