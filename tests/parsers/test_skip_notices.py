"""A rank's own word that it skipped a batch or step (parsers/skip_notices.py)."""

from __future__ import annotations

from tests.builders import only, parsed_by


def test_a_skip_notice_keeps_the_rank_and_step_it_states():
    # a run here (tests/data/launchers/torchrun/skipped_alone), and sample_logs/swallowed_warning
    notices = parsed_by(
        "skip_notices",
        [
            "rank 1 step 3: loss is nan, skipping",
            "2026-12-01 17:31:01,258 WARNING rank=2 step=5 non-finite loss=nan -> skipping batch",
        ],
    ).filter(event="skip_notice")
    assert notices.select("rank", "step").rows() == [(1, 3), (2, 5)]


def test_the_loss_scalers_skips_every_rank_takes_are_not_notices():
    # DeepSpeed's fp16 loss scaler (printed by rank 0 for every rank) and apex's
    scaler = [
        "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to "
        "32768",
        "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0",
    ]
    assert parsed_by("skip_notices", scaler).filter(event="skip_notice").is_empty()


def test_skipping_words_without_a_batch_or_step_are_no_notice():
    assert parsed_by("skip_notices", ["Skipping download: file exists"]).is_empty()
    notice = only(parsed_by("skip_notices", ["Skipping batch 17 on rank 3: empty"]))
    assert (notice["rank"], notice["step"]) == (3, None)
