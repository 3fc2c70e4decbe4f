from __future__ import annotations

from tests.builders import analyze_files, finding, kinds, marks


def test_print_of_sizes_names_the_short_rank_and_the_step_it_never_reached(tmp_path):
    files = {f"rank{r}.log": marks(r, range(12)) for r in range(3)}
    files["rank0.log"] = ["loader sizes: [12, 12, 12, 11]"] + files["rank0.log"]
    files["rank3.log"] = marks(3, range(11))
    analysis = analyze_files(tmp_path, files)
    mismatch = finding(analysis, "loader_size_mismatch")
    assert (mismatch.ranks, mismatch.step) == ([3], 11)
    assert mismatch.evidence[0].text == "loader sizes: [12, 12, 12, 11]"
    assert "drop_last=True" in mismatch.fix
    # it explains the rank that went quiet at the same point: it is the verdict
    assert analysis.verdict.finding is mismatch
    assert finding(analysis, "stage_divergence").role == "context"


def test_per_rank_length_prints(tmp_path):
    files = {f"rank{r}.log": [f"rank={r} loader_len={100 if r != 1 else 99}"] for r in range(4)}
    mismatch = finding(analyze_files(tmp_path, files), "loader_size_mismatch")
    assert mismatch.ranks == [1]


def test_steps_per_epoch_when_nothing_is_printed(tmp_path):
    files = {
        f"rank{r}.log": [line + " epoch=0" for line in marks(r, range(5 if r != 2 else 4))]
        for r in range(3)
    }
    mismatch = finding(analyze_files(tmp_path, files), "loader_size_mismatch")
    assert mismatch.ranks == [2] and mismatch.confidence == "medium"


def test_equal_sizes_are_fine(tmp_path):
    files = {
        "rank0.log": ["loader sizes: [5, 5]"] + marks(0, range(5)),
        "rank1.log": marks(1, range(5)),
    }
    assert "loader_size_mismatch" not in kinds(analyze_files(tmp_path, files))
