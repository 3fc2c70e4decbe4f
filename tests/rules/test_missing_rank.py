from __future__ import annotations

from tests.builders import analyze_files, finding, kinds, marks


def mapping(rank: int) -> str:
    return f"{{'rank': {rank}, 'local_rank': {rank}, 'device': {rank}, 'world_size': 4}}"


def test_ranks_without_any_log_are_listed(tmp_path):
    files = {f"rank{r}.log": [mapping(r)] + marks(r, range(3)) for r in (0, 1)}
    missing = finding(analyze_files(tmp_path, files), "missing_rank")
    assert missing.ranks == [2, 3]
    assert missing.severity == "warning" and missing.role == "context"


def test_a_log_that_just_ends_is_a_vanished_process(tmp_path):
    files = {f"rank{r}.log": [mapping(r)] + marks(r, range(6)) for r in range(3)}
    files["rank3.log"] = [mapping(3)] + marks(3, range(6), stop_after=(2, "before_backward"))
    analysis = analyze_files(tmp_path, files)
    vanished = finding(analysis, "missing_rank")
    assert vanished.ranks == [3] and vanished.role == "root_cause"
    assert analysis.verdict.finding is vanished


def test_all_ranks_present(tmp_path):
    files = {f"rank{r}.log": [mapping(r)] + marks(r, range(2)) for r in range(4)}
    assert "missing_rank" not in kinds(analyze_files(tmp_path, files))
