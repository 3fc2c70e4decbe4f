# ruff: noqa: E501 -- test data are verbatim log lines
"""torch_xla's TPU pod launcher (`torch_xla.distributed.xla_dist`): its time, the worker VM's
address and index before each line the VM's processes print."""

from __future__ import annotations

from tests.builders import analyze_files
from tests.framing import frame_one

# pytorch/xla#3028 (a v3-128 pod), verbatim: worker 0's spawn parent reporting its process 0
# killed by SIGSEGV
WORKER_0 = [
    '2021-07-08 08:28:12 10.164.0.33 [0]   File "/usr/local/lib/python3.8/dist-packages/torch_xla/distributed/xla_multiprocessing.py", line 388, in spawn',
    "2021-07-08 08:28:12 10.164.0.33 [0]     return torch.multiprocessing.start_processes(",
    '2021-07-08 08:28:12 10.164.0.33 [0]   File "/usr/local/lib/python3.8/dist-packages/torch/multiprocessing/spawn.py", line 188, in start_processes',
    "2021-07-08 08:28:12 10.164.0.33 [0]     while not context.join():",
    '2021-07-08 08:28:12 10.164.0.33 [0]   File "/usr/local/lib/python3.8/dist-packages/torch/multiprocessing/spawn.py", line 130, in join',
    "2021-07-08 08:28:12 10.164.0.33 [0]     raise ProcessExitedException(",
    "2021-07-08 08:28:12 10.164.0.33 [0] torch.multiprocessing.spawn.ProcessExitedException: process 0 terminated with signal SIGSEGV",
    "client_loop: send disconnect: Broken pipe",
]


def test_the_prefix_names_a_worker_vm_and_its_address_not_a_rank():
    row = frame_one(WORKER_0[-2])
    assert (row["prefix_node"], row["prefix_node_index"]) == ("xla_dist worker 0", 0)
    assert row["prefix_host"] == "10.164.0.33" and "prefix_rank" not in row
    assert row["message"].startswith("torch.multiprocessing.spawn.ProcessExitedException: ")


def test_a_pod_s_console_is_read_through_the_prefix(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": WORKER_0})
    assert analysis.verdict.finding.kind == "rank_exception"
    assert analysis.verdict.finding.details.get("signal") == "SIGSEGV"
