from __future__ import annotations

from tests.builders import analyze_files, finding, kinds, marks


def test_rank_that_continues_past_backward_is_the_verdict(tmp_path):
    files = {f"rank{r}.log": marks(r, range(10)) for r in (0, 1, 3)}
    files["rank2.log"] = marks(2, range(10), skip={5: ("after_backward", "after_step")})
    analysis = analyze_files(tmp_path, files)
    divergence = finding(analysis, "stage_divergence")
    assert (divergence.ranks, divergence.step, divergence.stage) == ([2], 5, "after_backward")
    assert divergence.details["missed_stages"] == ["after_backward", "after_step"]
    assert analysis.verdict.finding is divergence
    # the evidence shows the rank's last mark before the skip and what it did instead
    cited = {(e.file, e.text.split(" INFO ")[-1]) for e in divergence.evidence}
    assert ("rank2.log", "rank=2 step=5 stage=before_backward") in cited
    assert ("rank2.log", "rank=2 step=6 stage=before_forward") in cited


def test_rank_that_goes_quiet_is_named(tmp_path):
    files = {f"rank{r}.log": marks(r, range(8)) for r in range(3)}
    files["rank3.log"] = marks(3, range(8), stop_after=(4, "before_backward")) + [
        "RuntimeError: something the rank printed after its last mark"
    ]
    analysis = analyze_files(tmp_path, files)
    divergence = finding(analysis, "stage_divergence")
    assert (divergence.ranks, divergence.step, divergence.stage) == ([3], 4, "after_backward")
    assert divergence.details["departure"] == "stopped"
    assert any("something the rank printed" in e.text for e in divergence.evidence)


def test_stage_order_is_learned_not_assumed(tmp_path):
    own = ("load", "fwd", "bwd", "opt")
    files = {f"rank{r}.log": marks(r, range(6), stages=own) for r in (0, 1)}
    files["rank2.log"] = marks(2, range(6), stages=own, skip={3: ("bwd", "opt")})
    analysis = analyze_files(tmp_path, files)
    assert analysis.job.progress.stage_order == own
    divergence = finding(analysis, "stage_divergence")
    assert (divergence.ranks, divergence.step, divergence.stage) == ([2], 3, "bwd")


def test_repeated_step_is_a_departure(tmp_path):
    files = {f"rank{r}.log": marks(r, range(6)) for r in (0, 1, 2)}
    files["rank3.log"] = marks(3, [0, 1, 2, 2, 3, 4, 5])
    divergence = finding(analyze_files(tmp_path, files), "stage_divergence")
    assert divergence.ranks == [3] and divergence.details["departure"] == "repeated"


def test_agreeing_ranks_give_no_divergence(tmp_path):
    files = {f"rank{r}.log": marks(r, range(6)) for r in range(4)}
    analysis = analyze_files(tmp_path, files)
    assert "stage_divergence" not in kinds(analysis)
    assert analysis.verdict is None


def test_per_epoch_step_counters_are_not_mistaken_for_repeats(tmp_path):
    files = {
        f"rank{r}.log": [
            line + f" epoch={epoch}" for epoch in (0, 1) for line in marks(r, range(4))
        ]
        for r in range(3)
    }
    assert "stage_divergence" not in kinds(analyze_files(tmp_path, files))


def test_marks_copied_into_a_launcher_console_are_not_counted_twice(tmp_path):
    files = {f"rank{r}.log": marks(r, range(5)) for r in range(2)}
    files["launcher.log"] = [
        f"[default{r}]:{line}" for r in range(2) for line in marks(r, range(5))
    ]
    assert "stage_divergence" not in kinds(analyze_files(tmp_path, files))
