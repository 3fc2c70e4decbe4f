# ruff: noqa: E501 -- test data are verbatim log lines
from __future__ import annotations

from pathlib import Path

from logforensics.api import analyze
from logforensics.i18n import translate
from tests.builders import analyze_files, finding, kinds
from tests.rules.test_duplicate_device import init_line
from tests.rules.test_nccl_error import NCCL_DATA
from tests.test_i18n import english_runs

THREADS = Path(__file__).resolve().parents[1] / "data" / "threads"

# modelscope/FunASR#2006 (field sample funasr-2006), verbatim line
OOM = "[rank2]: torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 336.00 MiB. GPU 2 has a total capacity of 79.15 GiB of which 302.75 MiB is free."
TIMEOUT = "[rank5]:[E1018 10:32:44.128370633 ProcessGroupNCCL.cpp:616] [Rank 5] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=15734, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600039 milliseconds before timing out."


def test_oom_outranks_the_timeout_it_causes(tmp_path):
    analysis = analyze_files(tmp_path, {"worker-0.log": [OOM, TIMEOUT]})
    oom = finding(analysis, "oom")
    assert oom.ranks == [2] and "336 MiB" in oom.summary
    assert analysis.verdict.finding is oom
    assert finding(analysis, "collective_timeout").role == "symptom"


def test_nccl_s_own_out_of_memory_is_an_oom_of_the_rank_its_process_maps_to(tmp_path):
    # NVIDIA/nccl#1235 (verbatim), after a world init record of that process (built in the
    # shape of NVIDIA/nccl#1814's `... - Init COMPLETE` line)
    lines = [
        init_line("ng30903", 3063028, 3, 4, 3, "5d000"),
        "",
        "ng30903:3063028:3066152 [3] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'",
        "",
        "ng30903:3063028:3066152 [3] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 6291456 bytes",
        "ng30903:3063028:3066152 [3] NCCL INFO transport/p2p.cc:204 -> 1",
        "ng30903:3063028:3066152 [3] NCCL INFO transport/p2p.cc:605 -> 1",
        "ng30903:3063028:3066152 [3] NCCL INFO proxy.cc:1303 -> 1",
        "ng30903:3063028:3066152 [3] NCCL INFO proxy.cc:1377 -> 1",
    ]
    analysis = analyze_files(tmp_path, {"ng30903.log": lines})
    oom = finding(analysis, "oom")
    assert oom.ranks == [3] and oom.details["in_nccl"] is True
    assert "inside NCCL" in oom.summary and "NCCL_BUFFSIZE" in oom.fix
    assert analysis.verdict.finding is oom
    (after,) = [f for f in analysis.findings if f.kind == "nccl_error"]
    assert after.part == "consequence" and after.ranks == [3] and "oom" in after.summary


def test_the_kernels_oom_kill_of_a_ranks_pid_is_that_ranks_host_oom(tmp_path):
    # pcyin/tranX#41's dmesg line, verbatim; the rank's own print of its pid (process_ids)
    files = {
        "rank2.log": ["rank=2 pid=25315"],
        "dmesg.txt": [
            "[2059991.491542] Out of memory: Killed process 25315 (python3) total-vm:53312244"
        ],
    }
    oom = finding(analyze_files(tmp_path, files), "oom")
    assert oom.ranks == [2] and oom.details["killer"] == "kernel"
    assert oom.summary.startswith("The kernel's OOM killer ended rank 2")


# bigscience-workshop/bigscience, train/tr1-13B-base/chronicles.md ("Corrupt GPU crashes the
# training multiple times"), verbatim: the restarted job died at its first barrier on a node
# whose GPU had failed; nothing of the model was allocated yet
FAULTY_GPU_AT_START = [
    "> compiling and loading fused kernels ...",
    "Traceback (most recent call last):",
    '  File "/gpfsssd/worksf/projects/rech/six/commun/code/tr1-13B/Megatron-DeepSpeed-tr1-13B/'
    'megatron/initialize.py", line 140, in _compile_dependencies',
    "    torch.distributed.barrier()",
    '  File "/gpfswork/rech/six/commun/conda/tr1-13B/lib/python3.8/site-packages/torch/'
    'distributed/distributed_c10d.py", line 2420, in barrier',
    "    work = default_pg.barrier(opts=opts)",
    "RuntimeError: CUDA error: out of memory",
]


def test_no_memory_at_start_up_points_at_the_gpu_not_the_batch(tmp_path):
    analysis = analyze_files(tmp_path, {"main_log.txt": FAULTY_GPU_AT_START})
    oom = finding(analysis, "oom")
    assert oom.details["device"] is True and oom.confidence == "medium"
    assert "nvidia-smi" in oom.fix and "smaller" not in oom.fix
    assert [f.kind for f in analysis.findings if f.severity == "error"] == ["oom"]


# the same chronicles, verbatim: the crash before that relaunch, an uncorrectable ECC error in
# the backward pass (the node's GPU had failed; the admins took it out)
ECC_CRASH = [
    "Traceback (most recent call last):",
    '  File "/gpfswork/rech/six/commun/conda/tr1-13B/lib/python3.8/site-packages/torch/autograd/'
    '__init__.py", line 145, in backward',
    "    Variable._execution_engine.run_backward(",
    "RuntimeError: transform: failed to synchronize: cudaErrorECCUncorrectable: uncorrectable "
    "ECC error encountered",
    "terminate called after throwing an instance of 'c10::Error'",
    "  what():  CUDA error: uncorrectable ECC error encountered",
]


def test_no_memory_at_start_up_beside_a_gpu_hardware_fault_is_that_fault_s_symptom(tmp_path):
    files = {"first_crash.txt": ECC_CRASH, "second_crash_same_node.txt": FAULTY_GPU_AT_START}
    analysis = analyze_files(tmp_path, files)
    oom = finding(analysis, "oom")
    assert oom.severity == "warning" and oom.role == "context"
    assert "GPU hardware failing" in oom.summary
    verdict = analysis.verdict
    assert verdict.finding.kind == "rank_exception"
    assert verdict.headline == "A process died of a GPU hardware fault (RuntimeError)"
    assert "dmesg -T | grep -i xid" in verdict.finding.fix


def test_a_caught_oom_followed_only_by_the_hang_s_interruption_is_the_cause(tmp_path):
    # facebookresearch/fairseq#708: fairseq catches the OOM and skips the batch on one worker,
    # the job hangs and the user's Ctrl-C prints the launcher's traceback. The OOM lines are
    # fairseq#869's and the traceback fairseq#708's, verbatim
    from tests.rules.test_rank_exception import CUT_TRACEBACK

    lines = [
        "| WARNING: ran out of memory with exception: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.93 GiB total capacity; 7.20 GiB already allocated; 17.56 MiB free; 46.25 MiB cached);",
        " Skipping batch",
        *CUT_TRACEBACK,
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    oom = finding(analysis, "oom")
    assert analysis.verdict.finding is oom
    assert oom.severity == "error" and oom.part == "departure" and oom.confidence == "medium"
    assert "Nothing in the logs shows the run going on after it." in oom.summary
    assert "Nothing in the logs says why it departed" not in analysis.verdict.reason


def test_a_caught_oom_the_run_went_on_from_is_no_cause(tmp_path):
    # the same OOM, then the rank's next stage marks before the interruption: it went on
    from tests.rules.test_rank_exception import CUT_TRACEBACK

    lines = [
        "rank=0 step=1 stage=forward",
        "| WARNING: ran out of memory with exception: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.93 GiB total capacity; 7.20 GiB already allocated; 17.56 MiB free; 46.25 MiB cached);",
        "rank=0 step=2 stage=forward",
        *CUT_TRACEBACK,
    ]
    analysis = analyze_files(tmp_path, {"rank0.log": lines})
    assert finding(analysis, "oom").severity == "warning"


# hiyouga/LlamaFactory#8836, verbatim (the excerpt ends before torchrun's failure summary):
# every rank loading gpt-oss-120b, then the agent stopping the workers after one died
LOADING_THEN_STOPPED = [
    "Loading checkpoint shards:  47%|██████████████████████████████████████████████████████████████████████████████▍                                                                                         | 7/15 [03:24<03:59, 29.97s/it]W0806 20:07:54.546301 148486 /mnt/dolphinfs/hdd_pool/docker/user/hadoop-friday-llm/ssy/condaEnv/verl/lib/python3.10/site-packages/torch/distributed/elastic/multiprocessing/api.py:897] Sending process 148593 closing signal SIGTERM",
    "W0806 20:07:54.552742 148486 /mnt/dolphinfs/hdd_pool/docker/user/hadoop-friday-llm/ssy/condaEnv/verl/lib/python3.10/site-packages/torch/distributed/elastic/multiprocessing/api.py:897] Sending process 148594 closing signal SIGTERM",
    "W0806 20:07:54.553863 148486 /mnt/dolphinfs/hdd_pool/docker/user/hadoop-friday-llm/ssy/condaEnv/verl/lib/python3.10/site-packages/torch/distributed/elastic/multiprocessing/api.py:897] Sending process 148595 closing signal SIGTERM",
    "W0806 20:07:54.555203 148486 /mnt/dolphinfs/hdd_pool/docker/user/hadoop-friday-llm/ssy/condaEnv/verl/lib/python3.10/site-packages/torch/distributed/elastic/multiprocessing/api.py:897] Sending process 148596 closing signal SIGTERM",
]


def test_a_worker_that_vanished_while_loading_is_most_likely_host_memory(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": LOADING_THEN_STOPPED})
    oom = analysis.verdict.finding
    assert (oom.kind, oom.ranks, oom.confidence) == ("oom", [], "low")
    assert oom.details["loading"] == "Loading checkpoint shards"
    assert "dmesg" in oom.fix
    assert analysis.verdict.headline.startswith("A worker died without a word while loading")


def test_workers_stopped_after_training_bars_are_not_a_loading_death(tmp_path):
    # the same lines behind a training bar (constructed): nothing says memory
    lines = [
        LOADING_THEN_STOPPED[0].replace("Loading checkpoint shards", "Training"),
        *LOADING_THEN_STOPPED[1:],
    ]
    assert "oom" not in kinds(analyze_files(tmp_path, {"console.log": lines}))


# facebookresearch/fairseq#2867, verbatim: one process of an `mp.spawn` job on one node logs a
# CUDA OOM naming its GPU, and no line names its rank
GPU1_OOM = [
    "2020-11-06 22:55:35 | WARNING | fairseq.trainer | OOM: Ran out of memory with exception: CUDA out of memory. Tried to allocate 28.00 MiB (GPU 1; 10.92 GiB total capacity; 10.13 GiB already allocated; 13.38 MiB free; 10.33 GiB reserved in total by PyTorch)",
    "2020-11-06 22:55:35 | WARNING | fairseq.trainer | attempting to recover from OOM in forward/backward pass",
]


def test_an_unranked_oom_on_one_node_is_the_rank_numbered_as_its_gpu(tmp_path):
    oom = finding(analyze_files(tmp_path, {"train.log": GPU1_OOM}), "oom")
    assert (oom.ranks, oom.confidence) == ([1], "medium")
    assert oom.summary.startswith("Rank 1 (on GPU 1) ran out of GPU memory")
    assert "the process on GPU 1 is rank 1" in oom.summary


def test_the_rank_that_printed_the_gpu_as_its_device_is_the_one(tmp_path):
    # the device prints map GPU 1 to rank 3 (CUDA_VISIBLE_DEVICES reordered): not rank 1
    prints = [
        "{'rank': 3, 'local_rank': 3, 'device': 1, 'world_size': 4}",
        "{'rank': 1, 'local_rank': 1, 'device': 3, 'world_size': 4}",
    ]
    oom = finding(analyze_files(tmp_path, {"train.log": prints + GPU1_OOM}), "oom")
    assert oom.ranks == [3]
    assert "rank 3 printed GPU 1 as its device" in oom.summary


def test_a_gpu_index_names_no_rank_on_several_nodes_or_beside_other_device_prints(tmp_path):
    # pdsh-style host prefixes (DeepSpeed's multi-node runner): two nodes each have a GPU 1
    on_two_nodes = {"train.log": [f"{host}: {GPU1_OOM[0]}" for host in ("node1", "node2")]}
    # the ranks' device prints name no GPU 1: it is not the convention's
    no_print_of_gpu1 = {
        "rank0.log": ["{'rank': 0, 'local_rank': 0, 'device': 2, 'world_size': 2}"],
        "rank1.log": ["{'rank': 1, 'local_rank': 1, 'device': 3, 'world_size': 2}"],
        "console.log": GPU1_OOM,
    }
    # one host's launcher reports local ranks 0 and 1 of a world of 16: one node of several,
    # whose GPU 1 is not rank 1 (the single-node test rank_exception's local ranks use too)
    one_node_of_several = {
        "train.log": [
            "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 1 (pid: 812917) of binary: /usr/bin/python",
            "WORLD_SIZE=16",
            *GPU1_OOM,
        ]
    }
    for files in (on_two_nodes, no_print_of_gpu1, one_node_of_several):
        oom = finding(analyze_files(tmp_path / str(len(files)), files), "oom")
        assert oom.ranks == [] and oom.summary.startswith("The process on GPU 1 "), files


def test_nccl_s_out_of_memory_is_the_rank_its_proxy_names(tmp_path):
    # NVIDIA/nccl#962, verbatim: one process's `Cuda failure 'out of memory'`, then its proxy's
    # `[Proxy Service 93] Failed to execute operation Setup from rank 93`: the process is rank 93
    analysis = analyze(NCCL_DATA / "nccl-962-proxy-oom-rank-93")
    oom = finding(analysis, "oom")
    assert oom.ranks == [93] and "Rank 93 ran out of GPU memory inside NCCL" in oom.summary
    assert analysis.verdict.finding is oom and analysis.verdict.ranks == [93]


# deepspeedai/DeepSpeed#3827, verbatim (pdsh's host prefix; two processes' output interleaved
# on the third line): PyTorch's NCCL error quoting NCCL's failed allocation as its last error
CALLOC_AS_LAST_ERROR = [
    '192.168.1.51:   File "/opt/anaconda3/lib/python3.10/site-packages/deepspeed/runtime/zero/stage3.py", line 1078, in reduce_independent_p_g_buckets_and_remove_grads',
    "192.168.1.51:     work = group.alltoall_base(",
    "192.168.1.51: RuntimeError    : self.__reduce_and_partition_ipg_grads()NCCL error in: /opt/conda/conda-bld/pytorch_1670525541990/work/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, internal error, NCCL version 2.14.3",
    "192.168.1.51: ncclInternalError: Internal check failed.",
    "192.168.1.51: Last error:",
    "192.168.1.51: Failed to CUDA calloc async 1920 bytes",
    "192.168.1.51: ",
    "192.168.1.51: RuntimeError: NCCL error in: /opt/conda/conda-bld/pytorch_1670525541990/work/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, internal error, NCCL version 2.14.3",
]


def test_nccl_s_failed_allocation_quoted_as_the_last_error_is_out_of_gpu_memory(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": CALLOC_AS_LAST_ERROR})
    oom = finding(analysis, "oom")
    assert analysis.verdict.finding is oom and oom.details["in_nccl"] is True
    assert oom.summary.startswith(
        "A process on host 192.168.1.51 ran out of GPU memory inside NCCL"
    )
    # the same process's NCCL errors, the later one too, follow from it
    (after,) = [f for f in analysis.findings if f.kind == "nccl_error"]
    assert after.part == "consequence" and "see the oom finding" in after.summary


# NVIDIA/TensorRT-LLM#1670, verbatim (the paste's blank lines kept): one process (host
# VM-0-16-ubuntu, pid 392) retrying, each time NCCL's failed allocation and then its failed
# stream handle
ONE_PROCESS_RETRYING = [
    "VM-0-16-ubuntu:392:494 [2] enqueue.cc:43 NCCL WARN Cuda failure 'out of memory'",
    "",
    "VM-0-16-ubuntu:392:494 [2] enqueue.cc:54 NCCL WARN Cuda failure 'invalid resource handle'",
    "",
] * 3


def test_the_out_of_memory_process_s_own_later_nccl_errors_are_no_other_process_s(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": ONE_PROCESS_RETRYING})
    assert analysis.verdict.finding.kind == "oom"
    assert "other processes" not in analysis.verdict.headline
    assert "failed in NCCL after it" not in analysis.verdict.headline
    (after,) = [f for f in analysis.findings if f.kind == "nccl_error"]
    assert after.summary.startswith("The same process then failed in NCCL (3 error line(s))")


def test_a_last_error_other_than_an_allocation_is_no_oom(tmp_path):
    lines = [
        line.replace("Failed to CUDA calloc async 1920 bytes", "Cuda failure 'invalid argument'")
        for line in CALLOC_AS_LAST_ERROR
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    assert "oom" not in kinds(analysis)
    assert analysis.verdict.finding.kind == "nccl_error"


# deepspeedai/DeepSpeedExamples#321, verbatim: 8 ranks under DeepSpeed's launcher; the Rust
# runtime's abort on a failed host allocation (two processes' words interleaved on one line),
# then the launcher kills the rest
RUST_ALLOCATION_FAILED = [
    "[2023-04-16 21:36:09,031] [INFO] [launch.py:229:main] WORLD INFO DICT: {'localhost': [0, 1, 2, 3, 4, 5, 6, 7]}",
    "[2023-04-16 21:36:09,031] [INFO] [launch.py:235:main] nnodes=1, num_local_procs=8, node_rank=0",
    "[2023-04-16 21:36:09,031] [INFO] [launch.py:246:main] global_rank_mapping=defaultdict(<class 'list'>, {'localhost': [0, 1, 2, 3, 4, 5, 6, 7]})",
    "[2023-04-16 21:36:09,031] [INFO] [launch.py:247:main] dist_world_size=8",
    "[2023-04-16 21:36:09,031] [INFO] [launch.py:249:main] Setting CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
    "[2023-04-16 21:36:16,042] [INFO] [comm.py:586:init_distributed] Initializing TorchBackend in DeepSpeed with backend nccl",
    "memory allocation of memory allocation of 20971522097152 bytes failed",
    " bytes failed",
    "memory allocation of 2097152 bytes failed",
    "[2023-04-16 21:54:13,235] [INFO] [launch.py:428:sigkill_handler] Killing subprocess 62215",
    "[2023-04-16 21:54:16,017] [INFO] [launch.py:428:sigkill_handler] Killing subprocess 62216",
    "[2023-04-16 21:54:16,029] [INFO] [launch.py:428:sigkill_handler] Killing subprocess 62217",
    "[2023-04-16 21:54:18,477] [INFO] [launch.py:428:sigkill_handler] Killing subprocess 62218",
    "[2023-04-16 21:54:21,046] [INFO] [launch.py:428:sigkill_handler] Killing subprocess 62219",
]


def test_a_failed_host_allocation_s_abort_is_the_host_out_of_memory(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": RUST_ALLOCATION_FAILED})
    oom = finding(analysis, "oom")
    assert analysis.verdict.finding is oom
    assert oom.details["killer"] == "allocation" and oom.details["host_memory"] is True
    assert oom.summary.startswith("A host allocation failed on the node")
    assert analysis.verdict.headline.endswith("ran out of host memory (a failed allocation)")
    # the interleaved line is read too
    assert [e.line for e in oom.evidence if "bytes failed" in e.text] == [7, 9]


# wenet-e2e/wenet#989, verbatim: rank 0's own lines, its host memory (`RSS MEM USE`) climbing;
# the reporter saw the system kill it after the last one
MEMORY_CLIMB = [
    "2022-03-23 23:57:28,855 DEBUG TRAIN Batch 0/185100 loss 4.577072 loss_att 4.222489 loss_ctc 5.404430 lr 0.00065741 rank 0 RSS MEM USE: 5.11G",
    "2022-03-23 23:57:43,632 DEBUG TRAIN Batch 0/185200 loss 5.362794 loss_att 4.925412 loss_ctc 6.383353 lr 0.00065721 rank 0 RSS MEM USE: 5.11G",
    "2022-03-23 23:57:57,979 DEBUG TRAIN Batch 0/185300 loss 7.436929 loss_att 6.969763 loss_ctc 8.526984 lr 0.00065704 rank 0 RSS MEM USE: 5.11G",
    "2022-03-23 23:58:12,914 DEBUG TRAIN Batch 0/185400 loss 9.745964 loss_att 7.788527 loss_ctc 14.313314 lr 0.00065687 rank 0 RSS MEM USE: 46.51G",
    "2022-03-23 23:58:27,353 DEBUG TRAIN Batch 0/185500 loss 7.055099 loss_att 5.558590 loss_ctc 10.546951 lr 0.00065670 rank 0 RSS MEM USE: 105.61G",
    "2022-03-23 23:58:41,824 DEBUG TRAIN Batch 0/185600 loss 21.082787 loss_att 17.530172 loss_ctc 29.372223 lr 0.00065650 rank 0 RSS MEM USE: 161.09G",
    "2022-03-23 23:58:56,216 DEBUG TRAIN Batch 0/185700 loss 4.324765 loss_att 3.620107 loss_ctc 5.968966 lr 0.00065633 rank 0 RSS MEM USE: 212.04G",
]


def test_host_memory_a_rank_reports_climbing_until_its_log_ends_is_a_likely_oom(tmp_path):
    verdict = analyze_files(tmp_path, {"output.log": MEMORY_CLIMB}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("oom", [0])
    assert verdict.finding.confidence == "low"
    assert "from 5.11 GB to 212.04 GB in 87 s" in verdict.finding.summary
    assert verdict.headline.startswith("Rank 0 most likely ran out of host memory")


def test_host_memory_that_stays_level_says_nothing(tmp_path):
    level = [line.rsplit(" RSS", 1)[0] + " RSS MEM USE: 5.11G" for line in MEMORY_CLIMB]
    assert analyze_files(tmp_path, {"output.log": level}).verdict is None


def test_a_climb_the_rank_went_on_from_is_no_kill(tmp_path):
    went_on = [*MEMORY_CLIMB, MEMORY_CLIMB[0].replace("185100", "185800").split(" RSS")[0]]
    assert analyze_files(tmp_path, {"output.log": went_on}).verdict is None


# horovod/horovod#2053, verbatim (the start of the paste and its last line): horovodrun -np 4
# in the Horovod image, every rank's Open MPI signal handler reports a bus error at once; the
# fix was the DataLoader's workers (PR #2067)
HOROVOD_BUS_ERRORS = [
    "[1,3]<stderr>:[b44a5a6092b3:00121] *** Process received signal ***",
    "[1,3]<stderr>:[b44a5a6092b3:00121] Signal: Bus error (7)",
    "[1,3]<stderr>:[b44a5a6092b3:00121] Signal code: Non-existant physical address (2)",
    "[1,3]<stderr>:[b44a5a6092b3:00121] Failing at address: 0x7fe0f613e000",
    "[1,0]<stderr>:[b44a5a6092b3:00118] *** Process received signal ***",
    "[1,0]<stderr>:[b44a5a6092b3:00118] Signal: Bus error (7)",
    "[1,0]<stderr>:[b44a5a6092b3:00118] Signal code: Non-existant physical address (2)",
    "[1,0]<stderr>:[b44a5a6092b3:00118] Failing at address: 0x7fbb0a06b000",
    "[1,1]<stderr>:[b44a5a6092b3:00119] *** Process received signal ***",
    "[1,1]<stderr>:[b44a5a6092b3:00119] Signal: Bus error (7)",
    "[1,1]<stderr>:[b44a5a6092b3:00119] Signal code: Non-existant physical address (2)",
    "[1,1]<stderr>:[b44a5a6092b3:00119] Failing at address: 0x7fcdf5ce3000",
    "[1,2]<stderr>:[b44a5a6092b3:00120] *** Process received signal ***",
    "[1,2]<stderr>:[b44a5a6092b3:00120] Signal: Bus error (7)",
    "[1,2]<stderr>:[b44a5a6092b3:00120] Signal code: Non-existant physical address (2)",
    "[1,2]<stderr>:[b44a5a6092b3:00120] Failing at address: 0x7fadbf6a0000",
    "mpirun noticed that process rank 2 with PID 0 on node b44a5a6092b3 exited on signal 7 (Bus error).",
]


def test_every_rank_dying_of_a_bus_error_at_once_is_shared_memory_running_out(tmp_path):
    analysis = analyze_files(tmp_path, {"horovodrun.log": HOROVOD_BUS_ERRORS})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("oom", [])
    assert verdict.finding.ranks == [0, 1, 2, 3]
    assert "node's shared memory (/dev/shm) ran out" in verdict.finding.summary
    assert "--shm-size" in verdict.finding.fix


def test_a_bus_error_of_a_process_no_line_ties_to_a_rank_is_shared_memory_too(tmp_path):
    # NVIDIA/nvidia-resiliency-ext#6, verbatim (cut): UCX's banners of the fault-tolerance DDP
    # test's two workers, no backtrace; `--ipc host` fixed it
    lines = [
        "[dgxa100:1034 :0:1034] Caught signal 7 (Bus error: nonexistent physical address)",
        "[dgxa100:1035 :0:1035] Caught signal 7 (Bus error: nonexistent physical address)",
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("oom", [])
    # a bus error alone says no more than most likely
    assert verdict.headline.startswith(
        "The job died of a bus error: most likely out of shared memory (/dev/shm)"
    )
    assert "pid 1034" in verdict.finding.summary and "--shm-size" in verdict.finding.fix


def test_a_worker_s_own_report_of_its_bus_error_is_the_cause_in_either_order(tmp_path):
    # WZMIAOMIAO/deep-learning-for-image-processing#240: the rank's `DataLoader worker ...
    # exited unexpectedly` reached the file before the worker's bus error; stamped by the
    # container runtime (kubectl --timestamps), the rank's exception is also the earlier
    lines = (THREADS / "wzmiaomiao240_worker_bus_error.log").read_text().splitlines()
    stamped = [
        f"2024-05-08T08:00:{at:02d}.261530427Z {line}" if line else line
        for at, line in enumerate(lines)
    ]
    for name, shown in (("plain", lines), ("stamped", stamped)):
        verdict = analyze_files(tmp_path / name, {"train.log": shown}).verdict
        assert verdict.finding.kind == "oom", name
        assert verdict.headline == (
            "The job died of a bus error: most likely out of shared memory (/dev/shm)"
        )


def test_a_one_node_launch_command_keeps_local_ranks_global(tmp_path):
    # hpcaitech/ColossalAI#3172: `torchrun --standalone --nproc_per_node=2` states a world of
    # 2 on one node, so torchrun's `local_rank: 0` killed with -9 is rank 0
    lines = (THREADS / "colossalai3172_standalone_killed.log").read_text().splitlines()
    analysis = analyze_files(tmp_path, {"train.log": lines})
    assert analysis.job.world_size.value == 2 and analysis.job.one_node()
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("oom", [0])


# gnosia93/training-on-eks, appendix/a1-karpenter-message.md, verbatim: rank 3's traceback of
# a CUDA OOM in a pod's log (frames between cut here)
RANK3_OOM_TRACEBACK = [
    "[rank3]: Traceback (most recent call last):",
    '[rank3]:   File "/workspace/code/samples/deepspeed/llama-3-8b.py", line 156, in <module>',
    "[rank3]:     main()",
    '[rank3]:   File "/usr/local/lib/python3.12/site-packages/torch/nn/modules/module.py", line 1355, in convert',
    "[rank3]:     return t.to(",
    "[rank3]:            ^^^^^",
    "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 112.00 MiB. GPU 0 has a total capacity of 39.49 GiB of which 119.38 MiB is free. Including non-PyTorch memory, this process has 8.38 GiB memory in use. Of the allocated memory 7.96 GiB is allocated by PyTorch, and 7.73 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
]


def test_an_oom_a_collector_stamped_line_by_line_is_still_the_cause_not_its_traceback(tmp_path):
    # `kubectl logs --timestamps` stamps the exception line after its traceback's first line:
    # the OOM happened when the traceback began, and stays the verdict over the bare raise
    stamped = [
        f"2025-01-01T11:10:{at:02d}.826000000Z {line}"
        for at, line in enumerate(RANK3_OOM_TRACEBACK)
    ]
    for lines in (RANK3_OOM_TRACEBACK, stamped):
        verdict = analyze_files(tmp_path / str(len(lines[0])), {"rank3.log": lines}).verdict
        assert (verdict.finding.kind, verdict.ranks) == ("oom", [3])


def test_unranked_ooms_naming_two_gpus_of_one_node_are_the_ranks_on_them(tmp_path):
    # sheldonlll/FinetuneDataFiles' LMFlow bug report: two DeepSpeed workers on one machine,
    # each out of memory on its own GPU (`GPU 1` first, then `GPU 0`), no rank prefix
    console = (THREADS / "lmflow_two_gpus_oom.log").read_text().splitlines()
    verdict = analyze_files(tmp_path, {"train.log": console}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("oom", [0, 1])
    assert "(on GPUs 0, 1)" in verdict.finding.summary


# ZijunSong/verl-agent2, verl/workers/actor/dp_actor_modified_v1.py @5621cf8 (its docstring
# holds the console), verbatim lines: rank 1's watchdog takes its process down after its
# timeout, then the driver reports the actor (`WorkerDict_0:1`, pid 3490362) dead
VERL_ABORTED_THEN_DIED = [
    "\x1b[36m(WorkerDict pid=3490362)\x1b[0m [rank1]:[E1118 20:32:23.955028747 ProcessGroupNCCL.cpp:629] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2635, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800024 milliseconds before timing out.",
    "\x1b[36m(WorkerDict pid=3490362)\x1b[0m [rank1]:[E1118 20:32:23.957372583 ProcessGroupNCCL.cpp:2168] [PG ID 0 PG GUID 0(default_pg) Rank 1]  failure detected by watchdog at work sequence id: 2635 PG status: last enqueued work: 2635, last completed work: 2634",
    "\x1b[36m(WorkerDict pid=3490362)\x1b[0m [rank1]:[E1118 20:32:23.957466207 ProcessGroupNCCL.cpp:667] Stack trace of the failed collective not found, potentially because FlightRecorder is disabled. You can enable it by setting TORCH_NCCL_TRACE_BUFFER_SIZE to a non-zero value.",
    "\x1b[36m(WorkerDict pid=3490362)\x1b[0m [rank1]:[E1118 20:32:23.957487695 ProcessGroupNCCL.cpp:681] [Rank 1] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
    "\x1b[36m(WorkerDict pid=3490362)\x1b[0m [rank1]:[E1118 20:32:23.957506340 ProcessGroupNCCL.cpp:695] [Rank 1] To avoid data inconsistency, we are taking the entire process down.",
    "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
    "\tclass_name: create_colocated_worker_cls.<locals>.WorkerDict",
    "\tactor_id: f1a990bd69473060e1fe19a201000000",
    "\tpid: 3490362",
    "\tname: Ax01RTWorkerDict_0:1",
    "\tnamespace: 33f02d44-619d-41b3-8a5a-51da5e92158f",
    "\tip: 172.18.132.17",
    "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of file. There are some potential root causes. (1) The process is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop --force is called. (3) The worker is crashed unexpectedly due to SIGSEGV or other unexpected errors.",
]


def test_a_worker_whose_own_watchdog_took_it_down_did_not_die_for_memory(tmp_path):
    analysis = analyze_files(tmp_path, {"ray_console.log": VERL_ABORTED_THEN_DIED})
    assert "oom" not in kinds(analysis)
    assert analysis.verdict.finding.kind == "collective_timeout"
    # the same death with no line of the process going down is a death from outside
    alone = analyze_files(tmp_path / "alone", {"ray_console.log": VERL_ABORTED_THEN_DIED[5:]})
    assert (alone.verdict.finding.kind, alone.verdict.ranks) == ("oom", [1])


# johnson7788/RLDecisionAgent, docs/Error.md section 14 (at 3201ede), verbatim: verl's rollout
# worker starting vLLM beside the training model
KV_CACHE = [
    '  File "/usr/local/lib/python3.10/dist-packages/vllm/v1/core/kv_cache_utils.py", line 699, in get_kv_cache_config',
    "    check_enough_kv_cache_memory(vllm_config, kv_cache_spec, available_memory)",
    '  File "/usr/local/lib/python3.10/dist-packages/vllm/v1/core/kv_cache_utils.py", line 527, in check_enough_kv_cache_memory',
    '    raise ValueError("No available memory for the cache blocks. "',
    "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.",
]


def test_vllm_finding_no_memory_for_its_kv_cache_is_the_gpu_out_of_memory(tmp_path):
    analysis = analyze_files(
        tmp_path, {"console.log": ["Traceback (most recent call last):", *KV_CACHE]}
    )
    assert kinds(analysis) == ["oom"]
    assert "`gpu_memory_utilization`" in analysis.verdict.finding.fix


# johnson7788/RLDecisionAgent, docs/Error.md section 15 (at 3201ede), verbatim: a verl run's
# final validation, then Ray's word on a worker a SIGTERM ended as the job shut down
TERMINATED_AT_THE_END = [
    "(TaskRunner pid=267532) (\"Final validation metrics: {'val-aux/char_count/reward/mean@1': \"",
    "(raylet) A worker died or was killed while executing a task by an unexpected system error. To troubleshoot the problem, check the logs for the dead worker. RayTask ID: ffffffffffffffffc90bbe1574830f10a33b147c01000000 Worker ID: f7ea96b1e8e804f578390a97c97d6bf28b5bc9fed13f0ef433e444c7 Node ID: cc69c4cc97291a2847bc91bcfbd1f19c419b6e6fbe86aad345f2f665 Worker IP address: 192.168.100.8 Worker port: 41497 Worker PID: 269812 Worker exit type: SYSTEM_ERROR Worker exit detail: Worker exits unexpectedly by a signal. SystemExit is raised (sys.exit is called). Exit code: 1. The process receives a SIGTERM.",
]


def test_a_ray_worker_a_sigterm_ended_was_asked_to_stop_not_killed_for_memory(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": TERMINATED_AT_THE_END})
    assert "oom" not in kinds(analysis)
    sigkill = [TERMINATED_AT_THE_END[0], TERMINATED_AT_THE_END[1].replace("SIGTERM", "SIGKILL")]
    assert "oom" in kinds(analyze_files(tmp_path / "killed", {"console.log": sigkill}))


HOST_MEMORY = Path(__file__).parents[1] / "data" / "launchers" / "host_memory" / "console.log"


def test_the_os_refusing_a_rank_memory_is_the_host_running_out(tmp_path):
    # modelscope/FunASR#1716, verbatim: the one line the reporter posted
    lines = ["[rank2]: OSError: [Errno 12] Cannot allocate memory"]
    verdict = analyze_files(tmp_path, {"console.log": lines}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("oom", [2])
    assert verdict.finding.details["host_memory"] is True
    assert "[Errno 12] Cannot allocate memory" in verdict.finding.summary


def test_python_s_memory_error_on_one_rank_is_the_host_running_out(tmp_path):
    # a run here (tests/data/launchers/host_memory): rank 1's `MemoryError`, rank 0's barrier
    # losing its peer, torchrun's report of rank 1
    lines = HOST_MEMORY.read_text(encoding="utf-8").splitlines()
    verdict = analyze_files(tmp_path, {"console.log": lines}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("oom", [1])
    assert verdict.finding.summary.startswith("The host refused rank 1 memory on the node")
    assert "`MemoryError`" in verdict.finding.summary


def test_a_ray_worker_whose_actor_failed_to_start_was_not_killed_for_memory(tmp_path):
    # zhiyuanhubj/logic-rl-formula's grpo.log: the actors fail to import (flash-attn built for
    # another torch), then Ray reports the worker's unexpected exit: that exit is the failure's
    lines = (THREADS / "logicrl_grpo_actor_import_failed.log").read_text(encoding="utf-8")
    analysis = analyze_files(tmp_path, {"grpo.log": lines.splitlines()})
    assert "oom" not in kinds(analysis)
    failed = analysis.verdict.finding
    assert failed.kind == "rank_exception" and "failed to import on the worker" in failed.summary


# rhymes-ai/Aria#24, verbatim: a vLLM worker logs its OOM's traceback (its handler hands the
# error to the driver); nothing says it skipped anything
VLLM_WORKER_OOM = [
    "(VllmWorkerProcess pid=2421) ERROR 10-14 12:32:47 multiproc_worker_utils.py:233] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.88 GiB. GPU 3 has a total capacity of 21.96 GiB of which 1.29 GiB is free. Including non-PyTorch memory, this process has 0 bytes memory in use. Of the allocated memory 19.02 GiB is allocated by PyTorch, and 1.32 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
    "(VllmWorkerProcess pid=2421) ERROR 10-14 12:32:47 multiproc_worker_utils.py:233] ",
    "(VllmWorkerProcess pid=2421) ERROR 10-14 12:32:47 multiproc_worker_utils.py:233] The above exception was the direct cause of the following exception:",
    "(VllmWorkerProcess pid=2421) ERROR 10-14 12:32:47 multiproc_worker_utils.py:233] ",
    "(VllmWorkerProcess pid=2421) ERROR 10-14 12:32:47 multiproc_worker_utils.py:233] Traceback (most recent call last):",
    '(VllmWorkerProcess pid=2421) ERROR 10-14 12:32:47 multiproc_worker_utils.py:233]   File "/home/user/miniconda/lib/python3.11/site-packages/vllm/executor/multiproc_worker_utils.py", line 226, in _run_worker_process',
]


def test_a_logged_oom_is_caught_but_no_skip_is_claimed_without_a_word_of_one(tmp_path):
    verdict = analyze_files(tmp_path, {"server.log": VLLM_WORKER_OOM}).verdict
    oom = verdict.finding
    assert (oom.kind, verdict.ranks) == ("oom", [3])
    assert verdict.headline == "Rank 3 ran out of GPU memory"
    assert "caught and logged (no line says what the rank did next)" in oom.summary
    assert "skipped the batch" not in oom.summary and "decide the skip" not in oom.fix
    assert english_runs(translate(oom.summary, "zh")) == []


# huggingface/optimum-habana#368, verbatim (the end of rank 5's traceback, an 8-card Gaudi LoRA
# run): Gaudi's allocator failing, its own rank in the message
GAUDI_WORKSPACE = [
    "Traceback (most recent call last):",
    '  File "/usr/local/lib/python3.10/dist-packages/habana_frameworks/torch/core/step_closure.py", line 60, in mark_step',
    "    htcore._mark_step(device_str)",
    "RuntimeError: [Rank:5] FATAL ERROR :: MODULE:PT_SYNHELPER workspace Allocation of size ::9618705792 failed!",
]
# huggingface/optimum-habana#2214, verbatim: the device memory form, under PyTorch's own tag
GAUDI_DEVICE_MEMORY = "[rank7]: RuntimeError: [Rank:7] FATAL ERROR :: MODULE:PT_DEVMEM Allocation failed for size::2123366400 (2025)MB"


def test_gaudi_s_failed_allocations_are_the_rank_s_device_memory_running_out(tmp_path):
    verdict = analyze_files(tmp_path, {"train.log": GAUDI_WORKSPACE}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("oom", [5])
    assert verdict.headline == "Rank 5 ran out of device memory"
    lines = ["Traceback (most recent call last):", GAUDI_DEVICE_MEMORY]
    verdict = analyze_files(tmp_path / "devmem", {"train.log": lines}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("oom", [7])


# PeterGriffinJin/Search-R1#134, verbatim (the crash's first lines and the raylet's last
# line): a verl WorkerDict's vLLM crashed on SIGFPE (a cuBLAS bug on H20), then Ray saw
# another worker die
CRASH_THEN_WORKER_DIED = [
    "(WorkerDict pid=358504) Fatal Python error: Floating point exception",
    "(WorkerDict pid=358504) ",
    "(WorkerDict pid=358504) Stack (most recent call first):",
    '(WorkerDict pid=358504)   File "/data/miniconda3/envs/searchr1/lib/python3.9/site-packages/vllm/model_executor/layers/vocab_parallel_embedding.py", line 40 in apply',
    "(raylet) A worker died or was killed while executing a task by an unexpected system error. To troubleshoot the problem, check the logs for the dead worker. RayTask ID: ffffffffffffffff96b1ed6d787c5aa7a11b6f5a01000000 Worker ID: f8e229fdd0a41fb207aae704def053d65d56a4d76f1f8774d32a72d3 Node ID: 6e55cafe876cecf20d0c8aee86d05b60f2f14883e9b85f67afa59ddb Worker IP address: 29.163.243.24 Worker port: 40267 Worker PID: 358920 Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of file. There are some potential root causes. (1) The process is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop --force is called. (3) The worker is crashed unexpectedly due to SIGSEGV or other unexpected errors.",
]


def test_a_worker_ray_saw_die_after_another_process_crashed_is_the_crash_s(tmp_path):
    verdict = analyze_files(tmp_path, {"train.log": CRASH_THEN_WORKER_DIED}).verdict
    assert verdict.finding.kind == "rank_exception"
    assert "SIGFPE" in verdict.finding.summary
    # the raylet's word alone is the worker killed, most likely for memory
    alone = analyze_files(tmp_path / "alone", {"train.log": CRASH_THEN_WORKER_DIED[-1:]})
    assert alone.verdict.finding.kind == "oom"


# HarderThenHarder/transformers_tasks#27, verbatim: a kernel library's CUDA call that ran out of
# memory, in a traceback no line ties to a rank, then torchrun's agent (Rich's console format)
# naming the worker that failed
KERNEL_CALL_OOM = [
    "RuntimeError: :0: cudaFuncSetAttribute(kernel_entry, cudaFuncAttributeMaxDynamicSharedMemorySize, integer_cast<int32_t>(launch_configs[0].smemSizeInBytes)): out of memory",
    "/data1/software/anaconda3/envs/llm_env/lib/python3.8/site-packages/torch/autograd/__init__.py:200: UserWarning: Grad strides do not match bucket view strides. This may indicate grad was not created according to the gradient layout contract, or that the param's strides changed since DDP was constructed.  This is not an error, but may impair performance.",
    "[16:26:30] WARNING  Sending process 17571 closing signal SIGTERM                                                                                                                                                                                          ",
    "[16:26:31] ERROR    failed (exitcode: 1) local_rank: 1 (pid: 17572) of binary: /data1/software/anaconda3/envs/llm_env/bin/python ",
]


def test_a_cuda_call_out_of_memory_is_the_gpu_s_and_the_failed_worker_s(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": KERNEL_CALL_OOM})
    oom = analysis.verdict.finding
    assert (oom.kind, oom.ranks, oom.details["memory"]) == ("oom", [1], "GPU memory")
    assert "torchrun's agent lists rank 1 alone as failed (exit code 1)" in oom.summary
    assert oom.confidence == "medium"
    assert {e.line for e in oom.evidence} == {1, 4}
    # the out-of-memory exception is not told again as an exception of its own
    assert "rank_exception" not in kinds(analysis)
    assert english_runs(translate(oom.summary, "zh")) == []


# vllm-project/vllm#1846, verbatim (a tensor-parallel engine's first collective timing out on
# both Ray workers): the raylet reports worker 1080651 dead just before that worker's own
# watchdog timeout reaches the console, the paste cut before its abort
WATCHDOG_THEN_WORKER_DIED = (
    (THREADS / "vllm_1846_ray_workers_watchdog.log").read_text().splitlines()
)


def test_a_worker_whose_own_watchdog_timed_out_was_not_killed_for_memory(tmp_path):
    analysis = analyze_files(tmp_path, {"vllm_test.log": WATCHDOG_THEN_WORKER_DIED})
    assert analysis.verdict.finding.kind == "collective_timeout"
    assert "oom" not in kinds(analysis)
    # the same console under kubectl's --prefix (its pod is then the worker's host)
    pod = [f"[pod/trainer-worker-0/pytorch] {line}" for line in WATCHDOG_THEN_WORKER_DIED]
    prefixed = analyze_files(tmp_path / "pod", {"vllm_test.log": pod})
    assert prefixed.verdict.finding.kind == "collective_timeout"
    assert "oom" not in kinds(prefixed)
