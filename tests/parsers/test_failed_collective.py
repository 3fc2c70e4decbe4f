"""The Flight Recorder's Python stack of a failed collective (parsers/failed_collective.py)."""

from __future__ import annotations

from tests.builders import analyze_files, only, parsed_by

# pytorch/torchtitan#3338, verbatim (the paste keeps frames #3-#13 of one rank's stack; another
# rank's download of a data shard had timed out)
FRAMES = [
    "#3 __call__ from /home/zeus/miniconda3/envs/cloudspace/lib/python3.12/site-packages/torch/_ops.py:1275",
    "#4 all_reduce from /home/zeus/miniconda3/envs/cloudspace/lib/python3.12/site-packages/torch/distributed/_functional_collectives.py:179",
    "#5 _dist_reduce from /teamspace/studios/this_studio/torchtitan/torchtitan/distributed/utils.py:72",
    "#6 dist_sum from /teamspace/studios/this_studio/torchtitan/torchtitan/distributed/utils.py:91",
    "#7 train_step from /teamspace/studios/this_studio/torchtitan/torchtitan/trainer.py:720",
    "#8 train from /teamspace/studios/this_studio/torchtitan/torchtitan/trainer.py:831",
    "#12 _run_code from <frozen runpy>:88",
]
PROGRESS = "[titan] 2026-05-13 00:52:16,792 - root - INFO - step: 2690  loss:  3.76196  grad_norm:  0.2823  memory: 59.24GiB(74.81%)  tps: 2,059  tflops: 119.27  mfu: 12.06%"


def test_a_stack_of_frames_through_a_collective_is_that_collective_failing():
    failed = only(parsed_by("failed_collective", FRAMES).filter(event="collective_timeout"))
    assert (failed["line"], failed["end_line"], failed["op"]) == (2, 7, "all_reduce")
    assert failed["frame"].endswith("torchtitan/distributed/utils.py:72 in _dist_reduce")


def test_the_verdict_names_the_collective_where_nothing_else_failed(tmp_path):
    verdict = analyze_files(tmp_path, {"console.log": [PROGRESS, *FRAMES]}).verdict
    assert verdict.finding.kind == "collective_timeout"
    assert "all_reduce" in verdict.headline


def test_frames_through_no_collective_are_no_failure(tmp_path):
    # the same shape of stack, in the data loader: printed for a reason the frames do not say
    frames = [
        "#0 read from /usr/lib/python3.12/socket.py:720",
        "#1 _next_data from /opt/venv/lib/python3.12/site-packages/torch/utils/data/dataloader.py:757",
    ]
    assert parsed_by("failed_collective", frames).filter(event="collective_timeout").is_empty()
    assert analyze_files(tmp_path, {"console.log": [PROGRESS, *frames]}).verdict is None
