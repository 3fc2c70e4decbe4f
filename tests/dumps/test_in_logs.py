# ruff: noqa: E501 -- test data are verbatim log lines
"""Stacks printed into the logs (logforensics/dumps/in_logs.py, parsers/traceback.py's
`thread_stack`)."""

from __future__ import annotations

import polars as pl

from tests.builders import analyze_files

# determined-ai/determined#4245, verbatim (two excerpts of one trial's log, each line behind
# Determined's `[time] trial [rank=N] || ` prefix): the stacks Determined printed of both ranks
# while the trial hung, each in the sampler's `__iter__`
DETERMINED = [
    "[2022-05-31T14:29:14.159047Z] dc5b74e6 [rank=0] || ",
    "[2022-05-31T14:29:14.159049Z] dc5b74e6 [rank=0] || Thread 0x00007f34546e3240 (most recent call first):",
    '[2022-05-31T14:29:14.159151Z] dc5b74e6 [rank=0] ||   File "/opt/conda/lib/python3.8/site-packages/model_hub/mmdetection/_data.py", line 82 in __iter__',
    '[2022-05-31T14:29:14.159258Z] dc5b74e6 [rank=0] ||   File "/opt/conda/lib/python3.8/site-packages/torch/utils/data/sampler.py", line 229 in __iter__',
    '[2022-05-31T14:29:14.159399Z] dc5b74e6 [rank=0] ||   File "/run/determined/pythonuserbase/lib/python3.8/site-packages/determined/pytorch/samplers.py", line 42 in __iter__',
    '[2022-05-31T14:29:14.159527Z] dc5b74e6 [rank=0] ||   File "/run/determined/pythonuserbase/lib/python3.8/site-packages/determined/pytorch/samplers.py", line 116 in __iter__',
    '[2022-05-31T14:29:14.159637Z] dc5b74e6 [rank=0] ||   File "/opt/conda/lib/python3.8/site-packages/torch/utils/data/dataloader.py", line 512 in _next_index',
    '[2022-05-31T14:29:14.159754Z] dc5b74e6 [rank=0] ||   File "/opt/conda/lib/python3.8/site-packages/torch/utils/data/dataloader.py", line 1209 in _try_put_index',
    '[2022-05-31T14:29:14.159865Z] dc5b74e6 [rank=0] ||   File "/opt/conda/lib/python3.8/site-packages/torch/utils/data/dataloader.py", line 975 in _reset',
    '[2022-05-31T14:31:14.153460Z] dc5b74e6 [rank=1] ||   File "/opt/conda/lib/python3.8/threading.py", line 890 in _bootstrap',
    "[2022-05-31T14:31:14.153462Z] dc5b74e6 [rank=1] || ",
    "[2022-05-31T14:31:14.153463Z] dc5b74e6 [rank=1] || Thread 0x00007f2210724240 (most recent call first):",
    '[2022-05-31T14:31:14.153603Z] dc5b74e6 [rank=1] ||   File "/opt/conda/lib/python3.8/site-packages/torch/_tensor.py", line 648 in __iter__',
    '[2022-05-31T14:31:14.153677Z] dc5b74e6 [rank=1] ||   File "/opt/conda/lib/python3.8/site-packages/model_hub/mmdetection/_data.py", line 82 in __iter__',
    '[2022-05-31T14:31:14.153793Z] dc5b74e6 [rank=1] ||   File "/opt/conda/lib/python3.8/site-packages/torch/utils/data/sampler.py", line 229 in __iter__',
    '[2022-05-31T14:31:14.153945Z] dc5b74e6 [rank=1] ||   File "/run/determined/pythonuserbase/lib/python3.8/site-packages/determined/pytorch/samplers.py", line 42 in __iter__',
    '[2022-05-31T14:31:14.154087Z] dc5b74e6 [rank=1] ||   File "/run/determined/pythonuserbase/lib/python3.8/site-packages/determined/pytorch/samplers.py", line 116 in __iter__',
    '[2022-05-31T14:31:14.154205Z] dc5b74e6 [rank=1] ||   File "/opt/conda/lib/python3.8/site-packages/torch/utils/data/dataloader.py", line 512 in _next_index',
]


def test_stacks_printed_in_a_log_are_each_rank_s_by_its_prefix(tmp_path):
    analysis = analyze_files(tmp_path, {"trial_logs.txt": DETERMINED})
    stacks = analysis.job.dumps.stacks
    assert sorted(stacks.get_column("rank").unique().to_list()) == [0, 1]
    innermost = stacks.filter(pl.col("depth") == 0).sort("rank")
    assert innermost.get_column("source").to_list() == [
        "model_hub/mmdetection/_data.py",
        "torch/_tensor.py",
    ]
    assert set(stacks.get_column("tool")) == {"faulthandler"}
    # both ranks stood in the same place, outside any collective: the finding says so
    (alike,) = [f for f in analysis.findings if f.kind == "stuck_location"]
    assert alike.ranks == [0, 1]
    assert "model_hub/mmdetection/_data.py:82" in alike.summary
    assert analysis.unrecognised_lines == 0


def test_a_rank_dumped_twice_in_its_log_stands_where_its_last_dump_says(tmp_path):
    earlier = [
        "[2022-05-31T14:19:14.159047Z] dc5b74e6 [rank=0] || Thread 0x00007f34546e3240 (most recent call first):",
        '[2022-05-31T14:19:14.159151Z] dc5b74e6 [rank=0] ||   File "/opt/conda/lib/python3.8/site-packages/torch/distributed/distributed_c10d.py", line 2501 in all_reduce',
        "[2022-05-31T14:19:14.159152Z] dc5b74e6 [rank=0] || some other line of the trial",
    ]
    analysis = analyze_files(tmp_path, {"trial_logs.txt": [*earlier, *DETERMINED]})
    rank0 = analysis.job.dumps.stacks.filter((pl.col("rank") == 0) & (pl.col("depth") == 0))
    assert rank0.get_column("function").to_list() == ["__iter__"]


def test_a_thread_dump_under_a_fatal_error_is_no_live_stack(tmp_path):
    # yifan123/flow_grpo#161's shape: faulthandler's dump of a dying process
    lines = [
        "Fatal Python error: Aborted",
        "",
        "Thread 0x00007fa0f51fd640 (most recent call first):",
        '  File "/opt/conda/envs/python3.10.13/lib/python3.10/threading.py", line 324 in wait',
    ]
    analysis = analyze_files(tmp_path, {"rank0.log": lines})
    assert analysis.job.dumps.stacks.is_empty()


def test_a_dump_under_faulthandler_s_watchdog_line_is_read_once_as_its_snapshot(tmp_path):
    # parsers/watchdog_stacks.py's run here (torchrun --tee 3, gloo): its `stack_snapshot`
    # places the rank; the dump is not read a second time as a live stack
    lines = [
        "[default1]:Timeout (0:00:08)!",
        "[default1]:Thread 0x00007fe3a7820b80 (most recent call first):",
        '[default1]:  File "/tmp/runs21/fh_hang.py", line 10 in load_batch',
        '[default1]:  File "/tmp/runs21/fh_hang.py", line 18 in main',
        '[default1]:  File "/tmp/runs21/fh_hang.py", line 25 in <module>',
    ]
    analysis = analyze_files(tmp_path, {"launcher.log": lines})
    events = analysis.job.events.get_column("event").to_list()
    assert "stack_snapshot" in events and "thread_stack" not in events
    assert analysis.job.dumps.stacks.is_empty()
