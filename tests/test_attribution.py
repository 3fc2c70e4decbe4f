from __future__ import annotations

import pytest

from logforensics.attribution import PathRank, rank_from_path
from tests.builders import analyze_files, marks


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("rank3.log", PathRank(rank=3)),
        ("logs/rank_3.txt", PathRank(rank=3)),
        ("rank-3/out.log", PathRank(rank=3)),
        ("worker-3.log", PathRank(rank=3)),
        ("20240101120000_rank12.log", PathRank(rank=12)),
        ("mpi/1234/rank.0007/stdout", PathRank(rank=7)),
        (
            "torchrun/abc_x1/attempt_0/2/stdout.log",
            PathRank(local_rank=2, node="torchrun/abc_x1/attempt_0"),
        ),
        ("local_rank3.log", PathRank()),
        ("train.log", PathRank()),
        ("frank3.log", PathRank()),
    ],
)
def test_rank_from_path(name, expected):
    assert rank_from_path(name) == expected


def test_a_file_whose_marks_name_one_rank_belongs_to_it(tmp_path):
    analysis = analyze_files(
        tmp_path,
        {"a/stdout.log": marks(5, [0]) + ["some unrecognised line"], "b/stdout.log": marks(6, [0])},
    )
    stats = {row["file"]: row for row in analysis.job.file_stats.iter_rows(named=True)}
    assert (stats["a/stdout.log"]["rank"], stats["a/stdout.log"]["rank_from"]) == (5, "content")


def test_no_rank_is_invented(tmp_path):
    analysis = analyze_files(
        tmp_path, {"train.log": ["{'rank_x': 1, 'device': 0}", "loader sizes: [3, 3]"]}
    )
    sizes = analysis.job.events
    assert sizes.height == 1
    assert sizes.item(0, "rank") is None and sizes.item(0, "rank_from") is None


def test_single_node_torchrun_tree_local_rank_is_global(tmp_path):
    files = {
        f"run_ab/attempt_0/{local}/stdout.log": [
            f"{{'rank': {local}, 'local_rank': {local}, 'device': {local}, 'world_size': 2}}",
            "hello",
        ]
        for local in (0, 1)
    }
    files["run_ab/attempt_0/1/stderr.log"] = ["Traceback (most recent call last):"]
    analysis = analyze_files(tmp_path, files)
    stats = {row["file"]: row for row in analysis.job.file_stats.iter_rows(named=True)}
    assert (
        stats["run_ab/attempt_0/1/stderr.log"]["rank"],
        stats["run_ab/attempt_0/1/stderr.log"]["rank_from"],
    ) == (1, "path_local")


def test_two_node_trees_keep_local_ranks_only(tmp_path):
    files = {
        f"node{node}/run_ab/attempt_0/0/stderr.log": ["Traceback (most recent call last):"]
        for node in (0, 1)
    }
    analysis = analyze_files(tmp_path, files)
    assert analysis.job.file_stats.get_column("rank").null_count() == 2
