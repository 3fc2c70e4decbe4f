"""Ranks that said they skipped a step the others did not (logforensics/skipped_alone.py,
reported by rules/stage_divergence.py). The log is a real torchrun run here."""

from __future__ import annotations

from pathlib import Path

from tests.builders import analyze, analyze_files

SKIPPED = Path(__file__).parent / "data" / "launchers" / "torchrun" / "skipped_alone"


def test_the_rank_that_said_it_skipped_alone_before_the_failure_is_the_cause():
    analysis = analyze(SKIPPED)
    skipped = analysis.verdict.finding
    assert (skipped.kind, skipped.ranks, skipped.step) == ("stage_divergence", [1], 3)
    assert skipped.details["departure"] == "skipped_alone"
    assert "`rank 1 step 3: loss is nan, skipping`" in skipped.summary
    assert "ReduceOp.MAX" in skipped.fix
    assert analysis.verdict.headline.startswith(
        "Rank 1 alone said it skipped a batch or step at step 3"
    )
    # gloo's abort on the mismatched sizes is what followed
    assert any(
        f.kind == "collective_mismatch" and f.part == "consequence" for f in analysis.findings
    )


def _lines() -> list[str]:
    return (SKIPPED / "console.log").read_text().splitlines()


def test_a_skip_every_rank_said_singles_out_none(tmp_path):
    lines = _lines()
    at = next(i for i, line in enumerate(lines) if "skipping" in line)
    lines[at + 1 : at + 1] = [f"rank {r} step 3: loss is nan, skipping" for r in (0, 2)]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    assert not [f for f in analysis.findings if f.details.get("departure") == "skipped_alone"]


def test_a_skip_in_a_job_that_did_not_fail_is_no_finding(tmp_path):
    lines = _lines()
    at = next(i for i, line in enumerate(lines) if "skipping" in line)
    analysis = analyze_files(tmp_path, {"console.log": lines[: at + 1]})
    assert analysis.verdict is None
