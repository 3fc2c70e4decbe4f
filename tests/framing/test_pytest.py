# ruff: noqa: E501 -- test data are verbatim log lines
"""pytest's failure report: `E` and padding before each line of the exception it caught."""

from __future__ import annotations

from tests.builders import analyze_files
from tests.framing import frame

# hpcaitech/Titans' committed `log` (a pytest run of its distributed tests), verbatim: spawn's
# ProcessRaisedException carrying process 3's traceback, each line behind pytest's `E` marker
SPAWNED_TEST_FAILURE = [
    ">       raise ProcessRaisedException(msg, error_index, failed_process.pid)",
    "E       torch.multiprocessing.spawn.ProcessRaisedException: ",
    "E       ",
    "E       -- Process 3 terminated with the following error:",
    "E       Traceback (most recent call last):",
    'E         File "/home/lcwbx/.conda/envs/example3.8/lib/python3.8/site-packages/torch/multiprocessing/spawn.py", line 69, in _wrap',
    "E           fn(i, *args)",
    'E         File "/home/lcwbx/Titans/tests/test_layer/test_mlp/test_detr_mlp.py", line 37, in run_dist',
    "E           run_detr_mlp(data, HIDDEN_SIZE)",
    'E         File "/home/lcwbx/Titans/tests/test_layer/test_mlp/test_detr_mlp.py", line 20, in run_detr_mlp',
    "E           model = DetrMLP(input_dim=hidden_size, hidden_size=4*hidden_size, output_dim=hidden_size, num_layers=1).cuda()",
    "E       NameError: name 'DetrMLP' is not defined",
    "",
    "../.conda/envs/example3.8/lib/python3.8/site-packages/torch/multiprocessing/spawn.py:160: ProcessRaisedException",
]


def test_the_marker_and_its_padding_are_peeled_keeping_the_tracebacks_indentation():
    rows = frame(SPAWNED_TEST_FAILURE)
    assert rows[3]["message"] == "-- Process 3 terminated with the following error:"
    assert rows[5]["message"].startswith('  File "/home/lcwbx/')
    assert rows[6]["message"] == "    fn(i, *args)"
    assert rows[3]["framing"] == "pytest"


def test_a_word_that_starts_with_e_is_no_marker():
    lines = ["Epoch 3: loss 0.1", "E0822 07:52:35.123 12 c10d.cpp:10] boom", "E  two spaces"]
    rows = frame(lines)
    assert [row["message"] for row in rows] == lines
    assert [row.get("framing") for row in rows] == [None, None, None]


def test_the_spawned_process_that_failed_a_test_is_blamed(tmp_path):
    verdict = analyze_files(tmp_path, {"pytest.log": SPAWNED_TEST_FAILURE}).verdict
    assert verdict.finding.kind == "rank_exception" and verdict.finding.ranks == [3]
    assert verdict.headline == "Rank 3 died of a NameError"


def test_the_marker_is_read_inside_a_launchers_label(tmp_path):
    # the same failure as `srun --label pytest ...` would write it from task 0
    labelled = [f"0: {line}" for line in SPAWNED_TEST_FAILURE]
    rows = frame(labelled)
    assert rows[3]["message"] == "-- Process 3 terminated with the following error:"
    assert rows[3]["framing"] == "srun+pytest"
