"""Open MPI `mpirun --tag-output` `[job,rank]<stdout>:` and `--timestamp-output` (orterun(1),
Open MPI 4.1 format "%s[%s,%s]<%s>: ")."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from logforensics.api import analyze
from tests.framing import frame

# horovod-3929-duplicate-gpu-mpirun: mpirun_output.log (horovod/horovod#3929), verbatim
HOROVOD = [
    "[1,3]<stdout>:smc-gpu-03:29881:30401 [0] NCCL INFO init.cc:903 -> 5",
    "[1,3]<stdout>:smc-gpu-03:29881:30401 [0] NCCL INFO init.cc:916 -> 5",
    "[1,2]<stdout>:",
    "[1,2]<stdout>:smc-gpu-03:29880:30398 [0] init.cc:497 NCCL WARN Duplicate GPU detected : rank 2 and rank 0 both on CUDA device 1000",  # noqa: E501
    "[1,4]<stdout>:smc-gpu-03:29882:30400 [0] init.cc:497 NCCL WARN Duplicate GPU detected : rank 4 and rank 0 both on CUDA device 1000",  # noqa: E501
    "[1,0]<stdout>:smc-gpu-03:29878:30419 [0] init.cc:497 NCCL WARN Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 1000",  # noqa: E501
    "[1,5]<stdout>:smc-gpu-03:29883:30404 [0] init.cc:497 NCCL WARN Duplicate GPU detected : rank 5 and rank 0 both on CUDA device 1000",  # noqa: E501
]


def test_the_mpi_rank_is_the_global_rank():
    rows = frame(HOROVOD, "mpirun_output.log")
    assert [row["prefix_rank"] for row in rows] == [3, 3, 2, 2, 4, 0, 5]
    assert {row["prefix_stream"] for row in rows} == {"stdout"}
    assert rows[0]["message"] == "smc-gpu-03:29881:30401 [0] NCCL INFO init.cc:903 -> 5"
    # NCCL WARN's leading blank line stays a blank message
    assert rows[2]["message"] == ""


# open-mmlab/mmpretrain#1188, verbatim: SageMaker's mpirun names the rank and the host; rank 0 on
# algo-1 downloads CIFAR, rank 9 on algo-2 cannot find it
SAGEMAKER = [
    "[1,mpirank:0,algo-1]<stdout>:Extracting data/cifar10/cifar-10-python.tar.gz to data/cifar10",
    "[1,mpirank:9,algo-2]<stdout>:Traceback (most recent call last):",
    '[1,mpirank:9,algo-2]<stdout>:  File "/opt/mmclassification/mmcls/datasets/cifar.py", line 65, in __init__',  # noqa: E501
    "[1,mpirank:9,algo-2]<stdout>:    super().__init__(",
    '[1,mpirank:9,algo-2]<stdout>:  File "/opt/mmclassification/mmcls/datasets/base_dataset.py", line 169, in full_init',  # noqa: E501
    "[1,mpirank:9,algo-2]<stdout>:    super().full_init()",
]


def test_sagemakers_tag_names_the_rank_and_its_host(tmp_path):
    rows = frame(SAGEMAKER, "log.txt")
    assert [(row["prefix_rank"], row["prefix_host"]) for row in rows] == [
        (0, "algo-1"),
        *[(9, "algo-2")] * 5,
    ]
    assert rows[1]["message"] == "Traceback (most recent call last):"
    path = tmp_path / "log.txt"
    path.write_text("\n".join(SAGEMAKER) + "\n")
    verdict = analyze(path).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [9])


@pytest.mark.parametrize(
    ("text", "stamp"),
    [
        (  # NVIDIA/nccl#957, verbatim
            "Fri Aug 11 12:31:45 2023[1,0]<stdout>:tomte401:1850301:1881341 [0] transport.cc:154 "
            "NCCL WARN Cuda failure 'invalid argument'",
            dt.datetime(2023, 8, 11, 12, 31, 45),
        ),
        (  # ctime pads a one-digit day with a space
            "Tue Aug  1 12:31:45 2023[1,0]<stdout>:tomte401:1850301:1881341 [0] transport.cc:154 "
            "NCCL WARN Cuda failure 'invalid argument'",
            dt.datetime(2023, 8, 1, 12, 31, 45),
        ),
    ],
)
def test_timestamp_output(text, stamp):
    (row,) = frame([text])
    assert (row["prefix_rank"], row["prefix_time"]) == (0, stamp)
    assert row["message"].startswith("tomte401:1850301:1881341 [0] transport.cc:154 NCCL WARN")


# horovod/horovod#2907, verbatim: horovodrun's own (gloo) launcher tags each line with the rank
HOROVODRUN_GLOO = [
    "[0]<stderr>:RuntimeError: check_rank and exit epoch=1 batch=0 start_rank=0 rank=0",
    "[0]<stderr>:Killed",
    "[1]<stderr>:terminate called after throwing an instance of 'gloo::IoException'",
    "[1]<stderr>:  what():  [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:589] Read error [127.0.0.1]:3977: Connection reset by peer",  # noqa: E501
    "[3]<stderr>:Aborted (core dumped)",
]


def test_horovodrun_tags_carry_the_rank_without_a_job_number():
    rows = frame(HOROVODRUN_GLOO, "horovodrun_stderr.log")
    assert [row["prefix_rank"] for row in rows] == [0, 0, 1, 1, 3]
    assert {row["prefix_stream"] for row in rows} == {"stderr"}
    assert rows[1]["message"] == "Killed"
    assert rows[3]["message"].startswith("  what():  [/pytorch/third_party/gloo/")


def test_a_horovod_job_whose_rank_was_killed_blames_it_not_the_peers(tmp_path):
    (tmp_path / "horovodrun_stderr.log").write_text("\n".join(HOROVODRUN_GLOO) + "\n")
    analysis = analyze(tmp_path)
    assert analysis.verdict is not None
    assert analysis.verdict.ranks == [0]


def test_a_tag_several_processes_write_under_names_a_node_not_a_rank():
    # microsoft/MeshTransformer#38 (Azure ML, one mpirun process per node launching 8 workers),
    # verbatim: NCCL's pids 993 and 994 on GPUs 3 and 4, both under `[1,0]`
    lines = [
        "2020-11-08 20:25:49 [1,0]<stdout>:az-scus-v100-2-worker-mgfopa:993:993 [3] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]",  # noqa: E501
        "2020-11-08 20:25:49 [1,0]<stdout>:az-scus-v100-2-worker-mgfopa:994:994 [4] NCCL INFO Bootstrap : Using [0]ib0:172.16.1.10<0>",  # noqa: E501
    ]
    rows = frame(lines, "70_driver_log.txt")
    assert [row.get("prefix_rank") for row in rows] == [None, None]
    assert [row["prefix_node"] for row in rows] == ["mpirun task 0", "mpirun task 0"]


def test_one_process_under_its_tag_keeps_the_tag_as_its_rank():
    lines = [HOROVOD[0], HOROVOD[1]]  # one pid (29881) under `[1,3]`
    assert [row["prefix_rank"] for row in frame(lines, "mpirun_output.log")] == [3, 3]


# intel/intel-extension-for-pytorch#810, verbatim: Intel MPI's `mpirun -n 8 -l` labels each
# line with the writer's rank; the labels repeat and fall back, so they are no line numbers
HYDRA_LABELLED = [
    "(ipex-new) bbrock@hedp030:~/src/ai/pytorch-gemm/ccl> mpirun -n 8 -l python demo.py --device xpu",
    "[0] [rank0]:[W416 22:45:40.723224165 reducer.cpp:69] Warning: measureDifference between two events is not supported on XPU backend! (function operator())",  # noqa: E501
    "[2] [rank2]:[W416 22:45:40.723223113 reducer.cpp:69] Warning: measureDifference between two events is not supported on XPU backend! (function operator())",  # noqa: E501
    "[3] [rank3]:[W416 22:45:40.723229753 reducer.cpp:69] Warning: measureDifference between two events is not supported on XPU backend! (function operator())",  # noqa: E501
    "[4] [rank4]:[W416 22:45:40.723227604 reducer.cpp:69] Warning: measureDifference between two events is not supported on XPU backend! (function operator())",  # noqa: E501
    "[5] [rank5]:[W416 22:45:40.723257697 reducer.cpp:69] Warning: measureDifference between two events is not supported on XPU backend! (function operator())",  # noqa: E501
    "[7] [rank7]:[W416 22:45:40.726658140 reducer.cpp:69] Warning: measureDifference between two events is not supported on XPU backend! (function operator())",  # noqa: E501
    "[1] [rank1]:[W416 22:45:40.730492019 reducer.cpp:69] Warning: measureDifference between two events is not supported on XPU backend! (function operator())",  # noqa: E501
    "[6] [rank6]:[W416 22:45:40.731073464 reducer.cpp:69] Warning: measureDifference between two events is not supported on XPU backend! (function operator())",  # noqa: E501
]


def test_a_hydra_rank_label_is_peeled_on_every_line_and_names_the_rank():
    rows = frame(HYDRA_LABELLED, "output.log")
    assert [row.get("prefix_rank") for row in rows] == [None, 0, 2, 3, 4, 5, 7, 1, 6]
    assert {row["framing"] for row in rows[1:]} == {"mpirun_label+torch_rank"}
    assert rows[1]["message"].startswith("[W416 22:45:40.723224165 reducer.cpp:69] Warning:")


def test_a_hydra_label_alone_is_the_rank():
    # the same lines from a PyTorch that printed no `[rankN]:` of its own
    bare = [re.sub(r"\[rank\d+\]:", "", line) for line in HYDRA_LABELLED[1:]]
    rows = frame(bare, "output.log")
    assert rows[0]["message"].startswith("[W416 22:45:40.723224165 reducer.cpp:69]")
    assert [row.get("prefix_rank") for row in rows] == [0, 2, 3, 4, 5, 7, 1, 6]


def test_a_hydra_labelled_run_under_kubectl_timestamps_keeps_its_ranks():
    stamped = [f"2025-04-16T22:45:40.{i:06d}Z {line}" for i, line in enumerate(HYDRA_LABELLED)]
    rows = frame(stamped, "output.log")
    assert [row.get("prefix_rank") for row in rows] == [None, 0, 2, 3, 4, 5, 7, 1, 6]


# deepspeedai/DeepSpeed#1834, verbatim: Open MPI tags each write, so a line written in two
# holds its own tag again where the second write began
TWO_WRITES = "[1,19]<stderr>:RuntimeError[1,19]<stderr>:: NCCL communicator was aborted on rank 19."


def test_a_line_s_own_tag_inside_it_is_taken_out():
    (row,) = frame([TWO_WRITES])
    assert (row["prefix_rank"], row["message"]) == (
        19,
        "RuntimeError: NCCL communicator was aborted on rank 19.",
    )


def test_another_process_s_tag_inside_a_line_stays():
    mixed = TWO_WRITES.replace("RuntimeError[1,19]", "RuntimeError[1,20]")
    (row,) = frame([mixed])
    assert (
        row["message"] == "RuntimeError[1,20]<stderr>:: NCCL communicator was aborted on rank 19."
    )


def test_tags_one_after_another_give_the_line_to_the_last_one():
    # horovod/horovod#1215, verbatim: rank 4's empty write, then rank 5's line
    line = "[1,4]<stderr>:[1,5]<stderr>:ERROR: Unexpected segmentation fault encountered in worker."
    (row,) = frame([line], "console.log")
    assert row["prefix_rank"] == 5
    assert row["message"] == "ERROR: Unexpected segmentation fault encountered in worker."
