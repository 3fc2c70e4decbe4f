# ruff: noqa: E501 -- test data are verbatim log lines
"""A rank for a process that only NCCL's `host:pid:tid [device]` names (process_map.py)."""

from __future__ import annotations

import polars as pl

from tests.builders import analyze_files, finding

# deepspeedai/DeepSpeed#6875, verbatim: the process's WARN, then rank 4's error quoting it
QUOTED_WARN = [
    "50428e4af543:34610:36821 [4] ib_plugin.c:1673 NCCL WARN NET/IB: Got completion from peer 10.0.1.23<34696> with status=5 opcode=0 len=0 vendor err 249 (Recv) hca ibp152s0",
    "50428e4af543:34610:36821 [4] NCCL INFO transport/net.cc:1314 -> 6",
    "50428e4af543:34610:36821 [4] NCCL INFO proxy.cc:638 -> 6",
    "50428e4af543:34610:36821 [4] NCCL INFO proxy.cc:819 -> 6 [Progress Thread]",
    "[rank4]:[E1229 16:47:25.333820755 ProcessGroupNCCL.cpp:541] [Rank 4] found async exception when checking for NCCL errors: NCCL error: remote process exited or there was a network error, NCCL version 2.22.3",
    "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
    "Last error:",
    "NET/IB: Got completion from peer 10.0.1.23<34696> with status=5 opcode=0 len=0 vendor err 249 (Recv) hca ibp152s0",
]

# deepspeedai/DeepSpeed#2931, verbatim: three processes of PHLRR4036 init on their rank's
# device; the one that warns is on device 2
DEVICE_OFFSET = [
    "PHLRR4036:24142:24263 [3] NCCL INFO comm 0x5562191160f0 rank 3 nranks 16 cudaDev 3 busId 13000 - Init COMPLETE",
    "PHLRR4036:24148:24269 [6] NCCL INFO comm 0x55cede6d3870 rank 6 nranks 16 cudaDev 6 busId 8e000 - Init COMPLETE",
    "PHLRR4036:24139:24253 [0] NCCL INFO comm 0x5634028d2ec0 rank 0 nranks 16 cudaDev 0 busId 5000 - Init COMPLETE",
    "",
    "PHLRR4036:24141:24296 [2] ib_plugin.c:978 NCCL WARN NET/IB : Got completion from peer 10.226.98.98<48598> with error 12, opcode 0, len 0, vendor err 129",
    "PHLRR4036:24141:24296 [2] NCCL INFO include/net.h:35 -> 2",
    "PHLRR4036:24141:24296 [2] NCCL INFO transport/net.cc:1034 -> 2",
]


def test_the_rank_whose_error_quotes_a_process_s_warn_is_that_process(tmp_path):
    analysis = analyze_files(tmp_path, {"output.log": QUOTED_WARN})
    first = finding(analysis, "nccl_error")
    assert first.ranks == [4]
    assert first.evidence[0].line == 1  # the WARN itself, now rank 4's


def test_words_two_processes_share_name_neither(tmp_path):
    other = QUOTED_WARN[0].replace("50428e4af543:34610:36821 [4]", "50428e4af543:34611:36822 [5]")
    analysis = analyze_files(tmp_path, {"output.log": [other, *QUOTED_WARN]})
    ranks = analysis.job.events.filter(analysis.job.events["pid"].is_not_null())["rank"]
    assert ranks.is_null().all()


def test_a_process_takes_its_device_plus_the_host_s_offset(tmp_path):
    analysis = analyze_files(tmp_path, {"output.log": DEVICE_OFFSET})
    assert finding(analysis, "nccl_error").ranks == [2]


def test_no_offset_when_every_process_sees_device_0(tmp_path):
    # CUDA_VISIBLE_DEVICES one GPU per process: the device says nothing of the rank
    remapped = [
        line.replace("[3]", "[0]").replace("cudaDev 3", "cudaDev 0") for line in DEVICE_OFFSET
    ]
    remapped = [line.replace("[6]", "[0]").replace("cudaDev 6", "cudaDev 0") for line in remapped]
    remapped = [line.replace("[2]", "[0]") for line in remapped]
    analysis = analyze_files(tmp_path, {"output.log": remapped})
    assert finding(analysis, "nccl_error").ranks == []


# NVIDIA/nccl-tests#287, verbatim: one process (pid 4766) drives both GPUs, rank 0 on device
# 0 and rank 1 on device 1; the kernel launch fails on device 1
ONE_PROCESS_TWO_GPUS = [
    "GENOA-06:4766:4781 [1] NCCL INFO ncclCommInitAll comm 0x639f4c7a4290 rank 1 nranks 2 cudaDev 1 nvmlDev 1 busId 61000 commId 0x726fb0d348b9154b - Init START",
    "GENOA-06:4766:4780 [0] NCCL INFO ncclCommInitAll comm 0x639f4c724ac0 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 21000 commId 0x726fb0d348b9154b - Init START",
    "GENOA-06:4766:4780 [0] NCCL INFO ncclCommInitAll comm 0x639f4c724ac0 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 21000 commId 0x726fb0d348b9154b - Init COMPLETE",
    "GENOA-06:4766:4781 [1] NCCL INFO ncclCommInitAll comm 0x639f4c7a4290 rank 1 nranks 2 cudaDev 1 nvmlDev 1 busId 61000 commId 0x726fb0d348b9154b - Init COMPLETE",
    "GENOA-06:4766:4766 [1] enqueue.cc:1500 NCCL WARN Cuda failure 1 'invalid argument'",
]


def test_a_process_driving_several_gpus_gives_each_line_the_rank_of_its_device(tmp_path):
    analysis = analyze_files(tmp_path, {"2gpu.log": ONE_PROCESS_TWO_GPUS})
    assert finding(analysis, "nccl_error").ranks == [1]
    assert analysis.verdict.finding.ranks == [1]


# hiyouga/LlamaFactory#6849, verbatim (lines 4, 22 and 25 of a pod's log the user would save as
# `worker0.log`): rank 5's NCCL WARN, its communicator's abort naming the process rank 5, and
# rank 5's own error
POD_LOG = [
    "pt-gbcg65vy-worker-0:4288:4521 [1] misc/socket.cc:30 NCCL WARN socketProgressOpt: Call to recv from 10.119.24.53<49901> failed : Broken pipe",
    "pt-gbcg65vy-worker-0:4288:4421 [1] NCCL INFO comm 0x5649149de2c0 rank 5 nranks 8 cudaDev 1 busId a7000 - Abort COMPLETE",
    "[rank5]:[E207 19:37:09.983600771 ProcessGroupNCCL.cpp:1895] [PG ID 0 PG GUID 0(default_pg) Rank 5] Process group watchdog thread terminated with exception: NCCL error: remote process exited or there was a network error, NCCL version 2.21.5",
]


def test_a_file_whose_process_nccl_names_another_rank_is_not_the_rank_its_name_says(tmp_path):
    analysis = analyze_files(tmp_path, {"worker0.log": POD_LOG})
    warn = analysis.job.events.filter(pl.col("line") == 1)
    assert warn.get_column("rank").to_list() == [5]
    assert warn.get_column("rank_from").to_list() == ["process"]
    assert analysis.verdict.ranks == [5]
