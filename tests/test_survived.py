# ruff: noqa: E501 -- test data are verbatim log lines
"""Errors the job went on past (logforensics/survived.py)."""

from __future__ import annotations

from tests.builders import analyze_files

# NVIDIA/nccl#844, verbatim (one process's Azure ML driver log, cut): an old NCCL's
# remote-allocator thread logs errors for a connection not meant for it, and the job trains
# on ("while I do get that message, the training keeps moving forward")
WARNINGS = [
    "696b7901f9044f23b786795c0ef7257b000000:39:298 [0] include/socket.h:423 NCCL WARN Net : Connection closed by remote peer 10.0.0.4<52638>",
    "696b7901f9044f23b786795c0ef7257b000000:39:298 [0] NCCL INFO include/socket.h:445 -> 2",
    "696b7901f9044f23b786795c0ef7257b000000:39:298 [0] NCCL INFO include/socket.h:457 -> 2",
    "696b7901f9044f23b786795c0ef7257b000000:39:298 [0] NCCL INFO bootstrap.cc:229 -> 2",
    "",
    "696b7901f9044f23b786795c0ef7257b000000:39:298 [0] bootstrap.cc:279 NCCL WARN [Rem Allocator] Allocation failed (segment 0, fd 130)",
    "",
    "696b7901f9044f23b786795c0ef7257b000000:39:298 [0] include/alloc.h:48 NCCL WARN Cuda failure 'out of memory'",
    "696b7901f9044f23b786795c0ef7257b000000:39:298 [0] NCCL INFO bootstrap.cc:231 -> 1",
]
TRAINING_ON = [
    "Train Epoch: 1 [0/246000 (0%)]\tLoss: 0.036680415272713",
    "epoch is: 1 and train loss is 0.03668041527271271",
    "Train Epoch: 1 [2700/246000 (18%)]\tLoss: 0.000002425569619",
    "epoch is: 1 and train loss is 2.4255696189356968e-06",
    "Train Epoch: 3 [5900/246000 (38%)]\tLoss: 0.000000082420129",
]


def test_nccl_errors_the_process_trained_on_past_are_no_verdict(tmp_path):
    analysis = analyze_files(tmp_path, {"driver_log.txt": WARNINGS + TRAINING_ON})
    assert analysis.verdict is None
    survived = [f for f in analysis.findings if "survived" in f.details]
    assert {f.kind for f in survived} == {"oom", "nccl_error"}
    assert all(f.severity == "warning" for f in survived)
    assert survived[0].summary.startswith("Training went on after it (driver_log.txt:10): ")


def test_the_same_errors_with_nothing_after_them_stay_the_verdict(tmp_path):
    analysis = analyze_files(tmp_path, {"driver_log.txt": WARNINGS})
    assert analysis.verdict is not None
    assert analysis.verdict.finding.kind in ("oom", "nccl_error")


def test_errors_survived_while_the_job_failed_otherwise_stay_errors(tmp_path):
    # the same lines and a watchdog timeout after them (its line from pytorch#116974's form)
    timeout = "[rank0]:[E ProcessGroupNCCL.cpp:475] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600385 milliseconds before timing out."
    analysis = analyze_files(tmp_path, {"driver_log.txt": [*WARNINGS, *TRAINING_ON, timeout]})
    assert not [f for f in analysis.findings if "survived" in f.details]
    assert analysis.verdict is not None
