"""A log collector's date before what the job wrote (NVIDIA/nccl#1610): peeled where a prefix
or line the analyzer knows follows it, kept where it is the job's own logging format."""

from __future__ import annotations

import datetime as dt

from tests.builders import analyze_files
from tests.framing import frame

# NVIDIA/nccl#1610, verbatim (tests/data/nccl/nccl-1610-two-threads)
COLLECTED = [
    " 2025-02-18 12:54 [rank13]:[E218 04:54:22.864467604 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=216, OpType=ALLTOALL_BASE, NumelIn=1379328, NumelOut=1572864, Timeout(ms)=600000) ran for 600045 milliseconds before timing out.",
    " 2025-02-18 12:54 ncivki7qpk7pmo1btv0h0:174:3274 [1] proxy.cc:1497 NCCL WARN [Service thread] Could not receive type from localRank 1, res=3, closed=0",
]


def test_the_collectors_date_is_peeled_and_the_rank_tag_under_it_read():
    rows = frame(COLLECTED)
    assert rows[0]["prefix_rank"] == 13
    assert rows[0]["message"].startswith("[E218 04:54:22.864467604 ProcessGroupNCCL.cpp:616]")
    assert rows[0]["prefix_time"] == dt.datetime(2025, 2, 18, 12, 54)
    assert rows[1]["message"].startswith("ncivki7qpk7pmo1btv0h0:174:3274 [1] proxy.cc:1497")


def test_a_jobs_own_dated_lines_keep_their_date():
    # sample_logs/skip_backward_hang, rank 2's stdout, verbatim
    line = "2026-11-30 15:04:31,251 WARNING rank=2 step=5 non-finite loss=nan -> skipping batch"
    (row,) = frame([line])
    assert row["message"] == line


def test_a_log_viewers_clock_alone_is_peeled_too():
    # modelscope/ms-swift#7992, verbatim: the viewer's `HH:MM:SS.mmm` in front of PyTorch's tag
    line = (
        "18:11:06.680 [rank4]:[E205 18:11:06.375750231 ProcessGroupNCCL.cpp:1870] [PG ID 12 PG "
        "GUID 99(EXPERT_MODEL_PARALLEL_GROUP) Rank 4] ProcessGroupNCCL's watchdog got stuck for "
        "480 seconds without making progress in monitoring enqueued collectives."
    )
    (row,) = frame([line])
    assert row["prefix_rank"] == 4
    assert row["message"].startswith("[E205 18:11:06.375750231 ProcessGroupNCCL.cpp:1870]")


def test_a_clock_before_the_jobs_own_words_on_a_few_lines_stays():
    # a script's own `HH:MM:SS` start where no known prefix or line follows it: not the
    # collector's (a clock on most lines of a file is a console's: tests/framing/test_console_time)
    rows = frame(["12:00:01 epoch 3 done", "loss 0.5", "loss 0.4"])
    assert rows[0]["message"] == "12:00:01 epoch 3 done"


def test_a_collectors_label_after_its_stamp_is_peeled_with_it():
    # pytorch/pytorch#128998, verbatim (host name redacted in the thread): the collector calls
    # the line an "Error"; PyTorch's own header says it is a warning
    line = (
        "2024-05-22 06:25:20.552227-04:00 Error From <host>: [W socket.cpp:436] [c10d] The server "
        "socket cannot be initialized on [::]:22010 (errno: 97 - Address family not supported by "
        "protocol)."
    )
    (row,) = frame([line])
    assert row["message"].startswith("[W socket.cpp:436] [c10d] The server socket cannot")
    assert row["prefix_time"] == dt.datetime(2024, 5, 22, 6, 25, 20, 552227)


def test_words_and_a_colon_after_a_clock_stay_when_no_known_line_follows():
    (row,) = frame(["2024-05-22 06:25:20 trainer main: epoch 3 done"])
    assert row["message"] == "2024-05-22 06:25:20 trainer main: epoch 3 done"


def test_a_stamp_with_a_colon_after_it_is_peeled_before_the_mpirun_tag():
    # NVIDIA/nccl#230, verbatim
    (row,) = frame(
        [
            "2019-06-02T16:13:44.884Z: [1,12]<stdout>:container-e275-1553839402050-12124-01-000057:815:864 [0] transport/net_ib.cu:80 NCCL WARN NET/IB : Got async event : local catastrophic error"
        ]
    )
    assert row["prefix_rank"] == 12
    assert row["message"].startswith("container-e275-1553839402050-12124-01-000057:815:864 [0]")


# NVIDIA/nccl#2380, verbatim (its first lines): Open MPI's signal handler reporting a crashed
# nccl-tests process, under a Kubernetes console's date
STAMPED_SIGNAL_REPORT = [
    "2026-08-31 12:27:50 [k8s-slave03:00956] *** Process received signal ***",
    "2026-08-31 12:27:50 [k8s-slave03:00956] Signal: Segmentation fault (11)",
    "2026-08-31 12:27:50 [k8s-slave03:00956] Signal code:  (-6)",
    "2026-08-31 12:27:50 [k8s-slave03:00956] Failing at address: 0x3bc",
    "2026-08-31 12:27:50 [k8s-slave03:00956] [ 0] /usr/lib/x86_64-linux-gnu/libc.so.6(+0x45330)[0x7d1d0c3eb330]",
]


def test_open_mpi_s_crash_report_under_a_date_is_read(tmp_path):
    rows = frame(STAMPED_SIGNAL_REPORT)
    assert rows[1]["message"] == "[k8s-slave03:00956] Signal: Segmentation fault (11)"
    verdict = analyze_files(tmp_path, {"console.log": STAMPED_SIGNAL_REPORT}).verdict
    assert verdict.finding.kind == "rank_exception"
    assert "SIGSEGV (host k8s-slave03, pid 956)" in verdict.finding.summary


def test_a_platforms_stamp_zone_and_pod_before_an_mpi_tag_are_peeled():
    # polyaxon/polyaxon#657, verbatim: Polyaxon's `<time> UTC <pod> -- ` before mpirun's tag
    line = "2020-01-15 22:42:07 UTC master.0 -- [1,1]<stdout>:plx-somenumberid-worker-0:28:36 [0] NCCL INFO include/net.h:24 -> 2"
    (row,) = frame([line])
    assert row["prefix_rank"] == 1
    assert row["message"] == "plx-somenumberid-worker-0:28:36 [0] NCCL INFO include/net.h:24 -> 2"
