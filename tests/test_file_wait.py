"""Ranks that gave up waiting for a file another rank makes (logforensics/file_wait.py,
reported by rules/stage_divergence.py)."""

from __future__ import annotations

from tests.builders import analyze_files, kinds

# allenai/OLMo#829, verbatim: rank 3 polled for the checkpoint directory fs-local rank 0 makes
OLMO_WAIT = [
    "TimeoutError: Waiting for checkpoint model directory timed out",
    "[2025-04-15 15:39:43] CRITICAL [olmo.util:168, rank=3] Uncaught TimeoutError: Waiting for checkpoint model directory timed out",
]


def test_a_rank_that_gave_up_polling_for_a_directory_points_at_its_maker(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": OLMO_WAIT})
    verdict = analysis.verdict
    assert verdict is not None  # a failure, never "no failure found"
    assert (verdict.finding.kind, verdict.ranks) == ("stage_divergence", [0])
    assert verdict.finding.details["other_ranks"] == [3]
    assert verdict.finding.confidence == "low"
    assert verdict.headline == "Rank 3 gave up waiting for a file rank 0 makes"
    assert "dist.barrier()" in verdict.finding.fix


def test_a_wait_for_a_collective_s_data_is_no_file_wait(tmp_path):
    # built from the gloo timeout format of ../shared/formats.md: a wait inside a collective,
    # read by the timeout rules
    lines = [
        "[rank1]: RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 1800000ms for recv operation to complete",
    ]
    analysis = analyze_files(tmp_path, {"train.log": lines})
    assert not [f for f in analysis.findings if f.details.get("departure") == "file_wait"]
    assert "stage_divergence" not in kinds(analysis)
