"""Megatron-LM's iteration and validation prints read as progress from their first line."""

from __future__ import annotations

from tests.builders import analyze_files, parse

# bigscience-workshop/bigscience, train/tr11-176B-ml/chronicles.md, verbatim (local rank 7's
# last training and validation lines before a silent hang)
ITERATION = (
    "[default7]: iteration    45000/  115311 | consumed samples:     76002224 | consumed "
    "tokens: 155652554752 | elapsed time per iteration (s): 111.00 | learning rate: "
    "4.298E-05 | global batch size:  2048 |"
)
VALIDATION = (
    "[default7]:valid loss at iteration 45000 | lm loss value: 2.327091E+00 | lm loss PPL: "
    "1.024808E+01 |"
)


def test_iteration_and_validation_lines_are_progress():
    found = parse([ITERATION, VALIDATION]).filter(event="stage").sort("line")
    assert found.select("stage", "step", "family").rows() == [
        ("iteration", 45000, "progress"),
        ("validation", 45000, "progress"),
    ]


def test_ranks_printing_them_are_aligned_like_stage_marks(tmp_path):
    # ranks 0 and 1 print iterations 1-3; rank 1 never prints iteration 3
    def line(rank: int, step: int) -> str:
        return f"[rank{rank}]: iteration {step:8d}/{100:8d} | consumed samples: {step * 8} |"

    files = {
        "rank0.log": [line(0, step) for step in (1, 2, 3)],
        "rank1.log": [line(1, step) for step in (1, 2)],
    }
    analysis = analyze_files(tmp_path, files)
    assert analysis.job.progress is not None
    assert analysis.job.progress.last_key().sort("rank").get_column("rank").to_list() == [0, 1]
    common = [f for f in analysis.findings if f.kind == "last_common_stage"]
    assert common and common[0].step == 2 and common[0].details["ranks_further"] == [0]
