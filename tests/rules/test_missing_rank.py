from __future__ import annotations

from pathlib import Path

import pytest

from logforensics.i18n import translate, translate_headline
from tests.builders import analyze, analyze_files, finding, kinds, marks
from tests.conftest import SAMPLE_LOGS
from tests.parsers.test_rendezvous import UNRESOLVED_BRACKETS, UNRESOLVED_NAME
from tests.rules.test_duplicate_device import init_line
from tests.test_i18n import english_runs

THREADS = Path(__file__).resolve().parent.parent / "data" / "threads"


def mapping(rank: int) -> str:
    return f"{{'rank': {rank}, 'local_rank': {rank}, 'device': {rank}, 'world_size': 4}}"


def test_ranks_without_any_log_are_listed(tmp_path):
    files = {f"rank{r}.log": [mapping(r)] + marks(r, range(3)) for r in (0, 1)}
    missing = finding(analyze_files(tmp_path, files), "missing_rank")
    assert missing.ranks == [2, 3]
    assert missing.severity == "warning" and missing.role == "context"


def test_a_log_that_just_ends_is_said_to_end_without_an_error(tmp_path):
    files = {f"rank{r}.log": [mapping(r)] + marks(r, range(6)) for r in range(3)}
    files["rank3.log"] = [mapping(3)] + marks(3, range(6), stop_after=(2, "before_backward"))
    analysis = analyze_files(tmp_path, files)
    ended = finding(analysis, "missing_rank")
    assert ended.ranks == [3] and "stopped without an error" in ended.summary
    # the departure it coincides with is the verdict; the silent end is its context
    assert analysis.verdict.finding.kind == "stage_divergence"
    assert analysis.verdict.finding.ranks == [3]
    assert ended.role == "context"


def test_all_ranks_present(tmp_path):
    files = {f"rank{r}.log": [mapping(r)] + marks(r, range(2)) for r in range(4)}
    assert "missing_rank" not in kinds(analyze_files(tmp_path, files))


# --- NCCL: the world communicator's size and its unfinished inits --------------------------


def nccl_init(host: str, rank: int, nranks: int, phase: str) -> str:
    return init_line(host, 100 + rank, rank, nranks, rank % 8, f"{rank % 8 + 1}8000", phase)


def test_the_nccl_world_size_names_ranks_without_logs(tmp_path):
    files = {f"nccl.{r}.log": [nccl_init("node-a", r, 4, "COMPLETE")] for r in (0, 1)}
    analysis = analyze_files(tmp_path, files)
    missing = finding(analysis, "missing_rank")
    assert missing.ranks == [2, 3] and missing.role == "context"
    assert missing.details == {"world_size_from": "nccl"}
    assert "nranks 4" in missing.evidence[0].text


def test_a_rank_that_never_completes_nccl_init_is_the_cause(tmp_path):
    files = {
        f"nccl.{r}.log": [nccl_init("node-a", r, 4, "START"), nccl_init("node-a", r, 4, "COMPLETE")]
        for r in range(3)
    }
    files["nccl.3.log"] = [nccl_init("node-a", 3, 4, "START")]
    analysis = analyze_files(tmp_path, files)
    stuck = finding(analysis, "missing_rank")
    assert (stuck.ranks, stuck.severity, stuck.role) == ([3], "error", "root_cause")
    assert stuck.evidence[0].file == "nccl.3.log" and stuck.order == -1.0
    assert "never printed `Init COMPLETE`" in stuck.summary
    assert analysis.verdict.finding is stuck


def test_an_init_stopped_by_its_own_nccl_error_is_context(tmp_path):
    files = {
        f"nccl.{r}.log": [nccl_init("node-a", r, 2, "START"), nccl_init("node-a", r, 2, "COMPLETE")]
        for r in range(1)
    }
    files["nccl.1.log"] = [
        nccl_init("node-a", 1, 2, "START"),
        "",
        "node-a:101:374 [1] misc/socket.cc:538 NCCL WARN Net : Connection closed by remote peer node-b<47861>",
    ]
    stuck = finding(analyze_files(tmp_path, files), "missing_rank")
    assert (stuck.ranks, stuck.severity, stuck.role) == ([1], "warning", "context")


# huggingface/transformers#11658, verbatim excerpts of one console: rank 1's NCCL lines stop
# before `Init COMPLETE`, and a broadcast raised an NCCL error no line names the rank of
HOST = "simple-layoutlm-mmml-1573-investigate-how-to-implement-d-lcbz2t"
UNOWNED_NCCL_ERROR = [
    f"{HOST}:97:176 [0] NCCL INFO Channel 00 : 0[100000] -> 1[200000] via direct shared memory",
    f"{HOST}:98:177 [1] NCCL INFO Channel 00 : 1[200000] -> 0[100000] via direct shared memory",
    f"{HOST}:98:177 [1] NCCL INFO Channel 01 : 1[200000] -> 0[100000] via direct shared memory",
    f"{HOST}:97:176 [0] NCCL INFO comm 0x7ff1ec001060 rank 0 nranks 2 cudaDev 0 busId 100000 - Init COMPLETE",
    '  File "/usr/local/lib/python3.8/dist-packages/torch/distributed/distributed_c10d.py", line 864, in broadcast',
    "    work = group.broadcast([tensor], opts)",
    "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:784, unhandled system error, NCCL version 2.7.8",
]


def test_an_init_beside_an_nccl_error_of_no_known_rank_is_context(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": UNOWNED_NCCL_ERROR})
    stuck = finding(analysis, "missing_rank")
    assert (stuck.ranks, stuck.severity, stuck.role) == ([1], "warning", "context")
    assert "may have stopped at the NCCL error" in stuck.summary
    assert analysis.verdict.finding.kind == "nccl_error"
    # without the error, the stopped init is the cause again
    quiet = analyze_files(tmp_path / "quiet", {"console.log": UNOWNED_NCCL_ERROR[:4]})
    assert quiet.verdict.finding.kind == "missing_rank" and quiet.verdict.ranks == [1]


# horovod/horovod#1122, verbatim (mpirun, 2 nodes x 3 ranks, NCCL 2.4.2): rank 3's init fails in
# shm.h; rank 0, whose ring receives from rank 3, never completes its own
RANK_3_INIT_FAILED = [
    "[1,2]<stdout>:mlc-cluster-22:7619:7637 [2] NCCL INFO Ring 00 : 2 -> 3 [send] via NET/Socket/0",
    "[1,2]<stdout>:mlc-cluster-22:7619:7637 [2] NCCL INFO Ring 00 : 2[2] -> 1[1] via direct shared memory",
    "[1,0]<stdout>:mlc-cluster-22:7617:7635 [0] NCCL INFO Ring 00 : 3 -> 0 [receive] via NET/Socket/0",
    "[1,1]<stdout>:mlc-cluster-22:7618:7632 [1] NCCL INFO Ring 00 : 1[1] -> 0[0] via direct shared memory",
    "[1,2]<stdout>:mlc-cluster-22:7619:7637 [2] NCCL INFO Trees [0] 1->2->-1/-1/-1",
    "[1,4]<stdout>:mlc-cluster-23:3071:3088 [1] NCCL INFO Trees [0] 3->4->5/-1/-1",
    "[1,5]<stdout>:mlc-cluster-23:3072:3085 [2] NCCL INFO comm 0x7f102434d0c0 rank 5 nranks 6 cudaDev 2 nvmlDev 2 - Init COMPLETE",
    "[1,1]<stdout>:mlc-cluster-22:7618:7632 [1] NCCL INFO Trees [0] 0->1->2/-1/-1",
    "[1,2]<stdout>:mlc-cluster-22:7619:7637 [2] NCCL INFO comm 0x7f875432e890 rank 2 nranks 6 cudaDev 2 nvmlDev 2 - Init COMPLETE",
    "[1,1]<stdout>:mlc-cluster-22:7618:7632 [1] NCCL INFO comm 0x7fdc783393c0 rank 1 nranks 6 cudaDev 1 nvmlDev 1 - Init COMPLETE",
    "[1,4]<stdout>:mlc-cluster-23:3071:3088 [1] NCCL INFO comm 0x7f705838a9c0 rank 4 nranks 6 cudaDev 1 nvmlDev 1 - Init COMPLETE",
    "[1,3]<stdout>:mlc-cluster-23:3070:3090 [0] NCCL INFO Ring 00 : 3 -> 0 [send] via NET/Socket/0",
    "[1,3]<stdout>:",
    "[1,3]<stdout>:mlc-cluster-23:3070:3090 [0] include/shm.h:42 NCCL WARN Cuda failure 'invalid argument'",
]


def test_an_init_stopped_beside_another_rank_s_failed_init_waits_for_it(tmp_path):
    analysis = analyze_files(tmp_path, {"mpirun.log": RANK_3_INIT_FAILED})
    assert analysis.verdict.finding.kind == "nccl_error" and analysis.verdict.ranks == [3]
    waiting = next(f for f in analysis.findings if f.kind == "missing_rank" and f.ranks == [0])
    assert (waiting.severity, waiting.role) == ("warning", "context")
    assert "waited in communicator creation for rank 3" in waiting.summary
    # without rank 3's error, its stopped init and rank 0's are the cause again
    quiet = analyze_files(tmp_path / "quiet", {"mpirun.log": RANK_3_INIT_FAILED[:12]})
    assert quiet.verdict.finding.kind == "missing_rank"


# NVIDIA/nccl#1646, verbatim (NCCL 2.25, a slow but healthy init of 8 ranks on B200s): ranks 3
# and 4 time their completed init, rank 0 completes, rank 2's one line follows the paste's `[...]`
SLOW_INIT_EXCERPT = [
    "d5618706-01:1106802:1106870 [3] NCCL INFO Init timings - ncclCommInitRankConfig: rank 3 nranks 8 total 55.01 (kernels 52.45, alloc 0.41, bootstrap 0.57, allgathers 0.08, topo 1.10, graphs 0.01, connections 0.39, rest 0.00)",
    "d5618706-01:1106803:1106872 [4] NCCL INFO Init timings - ncclCommInitRankConfig: rank 4 nranks 8 total 54.93 (kernels 52.94, alloc 0.38, bootstrap 0.03, allgathers 0.08, topo 1.10, graphs 0.01, connections 0.39, rest 0.00)",
    "d5618706-01:1106799:1106856 [0] NCCL INFO TUNER/Plugin: Could not find: libnccl-tuner.so libnccl-net.so. Using internal tuner plugin.",
    "d5618706-01:1106799:1106856 [0] NCCL INFO ncclCommInitRankConfig comm 0x5629b5ee7340 rank 0 nranks 8 cudaDev 0 nvmlDev 0 busId 18000 commId 0x2fb902677fd5202e - Init COMPLETE",
    "d5618706-01:1106799:1106856 [0] NCCL INFO Init timings - ncclCommInitRankConfig: rank 0 nranks 8 total 55.17 (kernels 52.33, alloc 0.42, bootstrap 0.84, allgathers 0.08, topo 1.10, graphs 0.01, connections 0.39, rest 0.00)",
    "d5618706-01:1106802:1107051 [3] NCCL INFO Channel 00/0 : 3[3] -> 4[4] via P2P/CUMEM",
    "d5618706-01:1106802:1107051 [3] NCCL INFO Channel 01/0 : 3[3] -> 4[4] via P2P/CUMEM",
    "[...]",
    "d5618706-01:1106801:1107058 [2] NCCL INFO Channel 31/0 : 2[2] -> 3[3] via P2P/CUMEM",
    "d5618706-01:1106805:1107055 [6] NCCL INFO Connected all rings, use ring PXN 0 GDR 1",
]


def test_an_init_timed_is_complete_and_an_init_after_an_elision_may_be(tmp_path):
    analysis = analyze_files(tmp_path, {"trace.log": SLOW_INIT_EXCERPT})
    assert analysis.verdict is None  # a healthy init: no rank stuck in it
    # without the paste's mark, rank 2's lone line is an init that never completed
    cut = [line for line in SLOW_INIT_EXCERPT if line != "[...]"]
    stuck = finding(analyze_files(tmp_path / "cut", {"trace.log": cut}), "missing_rank")
    assert stuck.ranks == [2]  # ranks 3 and 4 timed theirs: complete


def test_nothing_is_said_when_no_rank_completed_init(tmp_path):
    files = {f"nccl.{r}.log": [nccl_init("node-a", r, 2, "START")] for r in range(2)}
    assert "missing_rank" not in kinds(analyze_files(tmp_path, files))


# kubeflow/pytorch-operator#125, verbatim: the worker started before the master pod existed
MASTER_NOT_UP = [
    "Traceback (most recent call last):",
    '  File "optimizer.py", line 413, in init_distribution',
    "    torch.distributed.init_process_group(backend=backend)",
    '  File "/root/.local/lib/python3.7/site-packages/torch/distributed/distributed_c10d.py", line 354, in init_process_group',
    "    store, rank, world_size = next(rendezvous(url))",
    '  File "/root/.local/lib/python3.7/site-packages/torch/distributed/rendezvous.py", line 143, in _env_rendezvous_handler',
    "    store = TCPStore(master_addr, master_port, start_daemon)",
    "ValueError: host not found: Name or service not known",
]


def test_a_store_nobody_could_reach_is_the_cause_and_blames_no_rank(tmp_path):
    # the pod is `<job>-worker-0`: under a PyTorchJob that is rank 1, so its number is no rank
    analysis = analyze_files(tmp_path, {"optimizer-worker-0.log": MASTER_NOT_UP})
    assert "rank_exception" not in kinds(analysis)  # not the printing process's own fault
    verdict = analysis.verdict
    assert verdict.finding.kind == "missing_rank" and verdict.ranks == []
    assert verdict.finding.details["phase"] == "rendezvous"
    assert "host not found: Name or service not known" in verdict.finding.summary
    assert "MASTER_ADDR" in verdict.finding.fix


# kubeflow/trainer#2008, verbatim: the stock PyTorchJob example's worker pod dying in
# `init_process_group`, the master pod up ("my mater pod is working well")
WORKER_CONNECTION_RESET = [
    "Traceback (most recent call last):",
    '  File "/opt/pytorch-mnist/mnist.py", line 171, in <module>',
    "    main()",
    '  File "/opt/pytorch-mnist/mnist.py", line 132, in main',
    "    dist.init_process_group(backend=args.backend)",
    '  File "/opt/conda/lib/python3.6/site-packages/torch/distributed/distributed_c10d.py", line 360, in init_process_group',
    "    timeout=timeout)",
    "RuntimeError: Connection reset by peer",
]


def test_a_connection_dropped_while_the_group_formed_is_a_job_that_never_formed(tmp_path):
    analysis = analyze_files(tmp_path, {"pytorch-simple-worker-0.log": WORKER_CONNECTION_RESET})
    verdict = analysis.verdict
    assert verdict.finding.kind == "missing_rank" and verdict.ranks == []
    assert verdict.finding.details["side"] == "dropped"
    assert "lost its connection to the rendezvous store" in verdict.headline
    assert "`Connection reset by peer`" in verdict.finding.summary
    assert "rank_exception" not in kinds(analysis)


def test_a_connection_dropped_after_a_peer_failed_leaves_the_cause_to_that_peer(tmp_path):
    # the same worker's lines beside another process's own error (nharada/mosaic-streaming-
    # crash-ddp's committed log, verbatim): the peer that went away first dropped the connection
    files = {
        "pytorch-simple-master-0.log": [
            "Traceback (most recent call last):",
            '  File "/home/nharada/Software/mambaforge/envs/mosaic-streaming-crash-ddp/lib/python3.10/genericpath.py", line 50, in getsize',
            "    return os.stat(filename).st_size",
            "FileNotFoundError: [Errno 2] No such file or directory: '/tmp/streaming/ef5956/shuffle.npy'",
        ],
        "pytorch-simple-worker-0.log": WORKER_CONNECTION_RESET,
    }
    analysis = analyze_files(tmp_path, files)
    assert analysis.verdict.finding.kind == "rank_exception"
    assert not [f for f in analysis.findings if f.details.get("side") == "dropped"]


def test_a_store_that_could_not_bind_its_port_was_beaten_to_it_by_another_process(tmp_path):
    # wenet-e2e/wekws#93, verbatim: a second job on the host already held port 29400
    lines = [
        "Start training ...",
        "[W socket.cpp:401] [c10d] The server socket has failed to bind to [::]:29400 (errno: 98 - Address already in use).",
        "[W socket.cpp:401] [c10d] The server socket has failed to bind to 0.0.0.0:29400 (errno: 98 - Address already in use).",
        "[E socket.cpp:435] [c10d] The server socket has failed to listen on any local network address.",
    ]
    verdict = analyze_files(tmp_path, {"train.log": lines}).verdict
    assert verdict.finding.kind == "missing_rank" and verdict.ranks == []
    assert verdict.finding.details["side"] == "server"
    assert "another process on that host already holds it" in verdict.finding.summary
    assert "could not reach" not in verdict.finding.summary
    assert verdict.finding.fix.startswith("The port the store listens on is taken")


def test_a_store_that_could_not_listen_is_the_store_s_own_failure_its_reason_unsaid(tmp_path):
    # developer.metax-tech.com/forum/u/avaarg/430, verbatim: the forum broke torch's one-line
    # message (`... port: 29500, useIpv6: 0, code: -98, name: EADDRINUSE, ...`) onto lines of
    # their own; the listen failure alone is the server side's, not a client that could not
    # reach it
    lines = [
        "RuntimeError: The server socket has failed to listen on any local network address.",
        "port: 29500",
        "useIpv6: 0",
        "code: -98",
        "name: EADDRINUSE",
        "message: address already in use",
        "Traceback (most recent call last):",
        'File "/opt/conda/lib/python3.12/site-packages/torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py", line 79, in _create_tcp_store',
        "store = TCPStore(",
        "...",
    ]
    verdict = analyze_files(tmp_path, {"train.log": lines}).verdict
    assert verdict.finding.kind == "missing_rank" and verdict.ranks == []
    assert verdict.finding.details["side"] == "server_unsaid"
    assert verdict.headline == "A process could not open the rendezvous store's port"
    assert "could not reach" not in verdict.finding.summary
    assert english_runs(translate(verdict.finding.summary, "zh")) == []
    assert english_runs(translate_headline(verdict.headline, "zh")) == []


def test_a_retried_connect_in_a_job_that_trained_is_no_failure(tmp_path):
    # kubeflow/trainer#2041's line, in a job whose ranks went on to train
    files = {
        "rank0.log": marks(0, range(3)),
        "rank1.log": [
            "[W socket.cpp:601] [c10d] The client socket has failed to connect to [elastic-example-imagenet-worker-0.default.svc.cluster.local]:43461 (errno: 113 - No route to host).",
            *marks(1, range(3)),
        ],
    }
    analysis = analyze_files(tmp_path, files)
    assert analysis.verdict is None


# NVIDIA/NeMo#7351, verbatim: a one-node SLURM run whose client tried an address it could not
# use (a link-local IPv6 one) before the one it reached; the poster asked what the warning means
ADDRESS_TRIED_IN_TURN = (
    "[W socket.cpp:601] [c10d] The client socket has failed to connect to "
    "[ip-26-0-146-37]:22456 (errno: 22 - Invalid argument)."
)


def test_addresses_a_client_could_not_use_are_retries_not_an_unreachable_store(tmp_path):
    analysis = analyze_files(tmp_path, {"slurm.out": [ADDRESS_TRIED_IN_TURN] * 7})
    assert analysis.verdict is None


def test_an_unrouted_connect_beside_the_retries_is_still_an_unreachable_store(tmp_path):
    # kubeflow/trainer#2041's line, verbatim, after a retry: that store was not there
    unrouted = (
        "[W socket.cpp:601] [c10d] The client socket has failed to connect to "
        "[elastic-example-imagenet-worker-0.default.svc.cluster.local]:43461 "
        "(errno: 113 - No route to host)."
    )
    analysis = analyze_files(tmp_path, {"worker-1.log": [ADDRESS_TRIED_IN_TURN, unrouted]})
    verdict = analysis.verdict
    assert verdict.finding.kind == "missing_rank"
    assert "No route to host" in verdict.finding.summary


# Lightning-AI/pytorch-lightning#4389, verbatim: `srun python train.py --num-nodes 2 --gpus 4`
# without --ntasks-per-node; both nodes took ranks 0-3 of 8 and the job hung at init
SAME_RANKS_TWICE = [
    "LOCAL_RANK: 1 - CUDA_VISIBLE_DEVICES: [0,1,2,3]",
    "initializing ddp: GLOBAL_RANK: 1, MEMBER: 2/8",
    "LOCAL_RANK: 1 - CUDA_VISIBLE_DEVICES: [0,1,2,3]",
    "initializing ddp: GLOBAL_RANK: 1, MEMBER: 2/8",
    "LOCAL_RANK: 2 - CUDA_VISIBLE_DEVICES: [0,1,2,3]",
    "initializing ddp: GLOBAL_RANK: 2, MEMBER: 3/8",
    "LOCAL_RANK: 2 - CUDA_VISIBLE_DEVICES: [0,1,2,3]",
    "initializing ddp: GLOBAL_RANK: 2, MEMBER: 3/8",
    "LOCAL_RANK: 3 - CUDA_VISIBLE_DEVICES: [0,1,2,3]",
    "initializing ddp: GLOBAL_RANK: 3, MEMBER: 4/8",
    "LOCAL_RANK: 3 - CUDA_VISIBLE_DEVICES: [0,1,2,3]",
    "initializing ddp: GLOBAL_RANK: 3, MEMBER: 4/8",
    "initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/8",
    "initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/8",
]


def test_ranks_started_twice_leave_the_rest_of_the_world_unstarted(tmp_path):
    analysis = analyze_files(tmp_path, {"slurm.out": SAME_RANKS_TWICE})
    verdict = analysis.verdict
    assert verdict.finding.kind == "missing_rank"
    assert verdict.finding.details["claimed_twice"] == [0, 1, 2, 3]
    assert verdict.finding.ranks == [4, 5, 6, 7] and verdict.ranks == [4, 5, 6, 7]  # absent
    assert verdict.headline.startswith("Ranks 0-3 started twice and ranks 4-7 never")
    assert "--ntasks-per-node" in verdict.finding.fix


def test_two_workers_world_size_prints_given_one_rank_by_guess_are_no_second_start(tmp_path):
    # tianweiy/CenterPoint#224, verbatim: a torchrun console of two workers whose only ranked
    # line is rank 0's; their `WORLD_SIZE:2` prints state no rank of their own
    lines = [
        "[E ProcessGroupNCCL.cpp:566] [Rank 0] Watchdog caught collective operation timeout: "
        "WorkNCCL(OpType=ALLGATHER, Timeout(ms)=1800000) ran for 1800159 milliseconds before "
        "timing out.",
        "No Tensorflow",
        "WORLD_SIZE:2",
        "No Tensorflow",
        "WORLD_SIZE:2",
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    assert not [f for f in analysis.findings if "claimed_twice" in f.details]
    assert analysis.verdict.finding.kind == "collective_timeout"


# Lightning-AI/pytorch-lightning#8707, verbatim: an sbatch script for two nodes ran `python`
# without `srun`, so one node's four processes started and waited for ranks 4-7 (fix: srun)
ONE_NODE_OF_TWO_LAUNCHED = [
    "GPU available: True, used: True",
    "TPU available: False, using: 0 TPU cores",
    "IPU available: False, using: 0 IPUs",
    "initializing ddp: GLOBAL_RANK: 1, MEMBER: 2/8",
    "initializing ddp: GLOBAL_RANK: 2, MEMBER: 3/8",
    "initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/8",
    "initializing ddp: GLOBAL_RANK: 3, MEMBER: 4/8",
]


def test_a_log_that_ends_at_start_up_waits_for_the_ranks_that_never_started(tmp_path):
    analysis = analyze_files(tmp_path, {"output.txt": ONE_NODE_OF_TWO_LAUNCHED})
    verdict = analysis.verdict
    assert verdict.finding.kind == "missing_rank" and verdict.ranks == [4, 5, 6, 7]
    assert "claimed_twice" not in verdict.finding.details  # each rank announced once
    assert verdict.headline == "Ranks 4-7 never started: ranks 0-3 waited for them at start-up"
    assert "srun" in verdict.finding.fix
    assert verdict.finding.confidence == "medium"  # read from where the logs end


def test_a_lone_rank_stuck_at_initialisation_waits_for_the_rest(tmp_path):
    # Lightning-AI/pytorch-lightning#19606, verbatim ("training stuck at initialisation")
    lines = ["[rank: 0] Seed set to 42", "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/5"]
    verdict = analyze_files(tmp_path, {"log.txt": lines}).verdict
    assert verdict.finding.kind == "missing_rank" and verdict.ranks == [1, 2, 3, 4]


def test_ranks_that_went_on_past_start_up_do_not_wait_for_absent_ones(tmp_path):
    # the same start, then the job trained: the other node's logs are merely not uploaded
    lines = [*ONE_NODE_OF_TWO_LAUNCHED, *marks(0, range(3))]
    analysis = analyze_files(tmp_path, {"output.txt": lines})
    missing = finding(analysis, "missing_rank")
    assert missing.ranks == [4, 5, 6, 7] and missing.severity == "warning"
    assert not [f for f in analysis.findings if f.severity == "error"]


def test_a_world_that_formed_is_not_waiting_for_anyone(tmp_path):
    # Lightning-AI/lightning-flash#1182, verbatim: the store barrier completed with 6 nodes
    lines = [
        "02/21/2022 13:46:14 - INFO - torch.distributed.distributed_c10d -   Waiting in store based barrier to initialize process group for rank: 3, key: store_based_barrier_key:1 (world_size=6, worker_count=4, timeout=0:30:00)",  # noqa: E501
        "initializing distributed: GLOBAL_RANK: 5, MEMBER: 6/6",
        "02/21/2022 13:46:15 - INFO - torch.distributed.distributed_c10d -   Added key: store_based_barrier_key:1 to store for rank: 5",  # noqa: E501
        "02/21/2022 13:46:15 - INFO - torch.distributed.distributed_c10d -   Added key: store_based_barrier_key:1 to store for rank: 0",  # noqa: E501
        "02/21/2022 13:46:15 - INFO - torch.distributed.distributed_c10d -   Rank 0: Completed store-based barrier for key:store_based_barrier_key:1 with 6 nodes.",  # noqa: E501
    ]
    analysis = analyze_files(tmp_path, {"train.log": lines})
    assert not [f for f in analysis.findings if f.severity == "error"]


def test_a_log_that_ends_connected_to_the_store_is_a_group_that_never_formed(tmp_path):
    from tests.parsers.test_rendezvous import CONNECTED_TO_THE_STORE

    analysis = analyze_files(tmp_path, {"other_rank_pods.log": CONNECTED_TO_THE_STORE})
    verdict = analysis.verdict
    assert verdict.finding.kind == "missing_rank" and verdict.ranks == []
    assert verdict.headline == "The logs end at start-up: the process group never formed"
    assert "pytorch-simple-master-0" in verdict.finding.summary
    assert "sidecar" in verdict.finding.fix


def test_a_store_connection_followed_by_training_is_no_failure(tmp_path):
    from tests.parsers.test_rendezvous import CONNECTED_TO_THE_STORE

    lines = [*CONNECTED_TO_THE_STORE, *marks(1, range(3))]
    analysis = analyze_files(tmp_path, {"worker.log": lines})
    assert not [f for f in analysis.findings if f.severity == "error"]


# OpenRLHF/OpenRLHF#265, verbatim (the poster's console wrapped at 150 columns): a vLLM worker
# gave up connecting to the actor's store at a Docker bridge address while other actors loaded
# on, and an actor rank then timed out in the group's first ALLREDUCE
RAY_CONNECT_GAVE_UP = [
    "(RayWorkerVllm pid=207931, ip=10.0.1.75) [E socket.cpp:922] [c10d] The client socket has timed out after 1800s while trying to connect to (172.17.0.2",
    ", 44737).",
    "(CriticModelRayActor pid=489290) ",
    "Loading checkpoint shards: 100%|██████████| 38/38 [00:33<00:00,  1.69it/s]",
    "Loading checkpoint shards: 100%|██████████| 38/38 [00:33<00:00,  1.15it/s] [repeated 2x across cluster]",
    "(CriticModelRayActor pid=489290) Loading extension module cpu_adam... [repeated 3x across cluster]",
    "(ActorModelRayActor pid=207260, ip=10.0.1.75) [E ProcessGroupNCCL.cpp:475] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=385",
    "6, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800268 milliseconds before timing out.",
]


def test_a_connect_that_gave_up_after_its_whole_timeout_is_final_whatever_others_did(tmp_path):
    analysis = analyze_files(tmp_path, {"comment_socket_timeout.txt": RAY_CONNECT_GAVE_UP})
    verdict = analysis.verdict
    assert (
        verdict.finding.kind == "missing_rank" and verdict.finding.details["phase"] == "rendezvous"
    )
    assert verdict.headline.startswith(
        "A process could not reach the rendezvous store: a process group never formed"
    )
    # another Ray actor's `[Rank 3]` is not the rank of the worker that gave up
    assert verdict.finding.ranks == [] and verdict.finding.details["reporters"] == []


# pytorch/pytorch#116974, verbatim: the store's port was held by another job; torchrun's agent
# then completed its rendezvous and the job trained three epochs
PORT_IN_USE_THEN_TRAINED = [
    "INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous'ing worker group",
    "[W socket.cpp:426] [c10d] The server socket has failed to bind to [::]:29500 (errno: 98 - "
    "Address already in use).",
    "[W socket.cpp:426] [c10d] The server socket has failed to bind to 0.0.0.0:29500 (errno: 98 "
    "- Address already in use).",
    "[E socket.cpp:462] [c10d] The server socket has failed to listen on any local network "
    "address.",
    "INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous complete for workers. "
    "Result:",
    "  restart_count=0",
    "  global_ranks=[0, 1]",
    "  role_world_sizes=[4, 4]",
    "  global_world_sizes=[4, 4]",
    "For gpu:3. Running epoch: 2",
]


def test_a_store_failure_the_rendezvous_got_past_is_no_failed_start(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": PORT_IN_USE_THEN_TRAINED})
    assert not any(f.details.get("phase") == "rendezvous" for f in analysis.findings)


def test_a_store_failure_with_nothing_after_it_still_is(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": PORT_IN_USE_THEN_TRAINED[:4]})
    assert any(f.details.get("phase") == "rendezvous" for f in analysis.findings)


def test_no_rank_is_called_absent_when_no_line_names_any(tmp_path):
    # NVIDIA/NeMo#13996: a console with the world size and no line tied to a rank
    lines = ["All distributed processes registered. Starting with 32 processes"]
    assert "missing_rank" not in kinds(analyze_files(tmp_path, {"console.log": lines}))


# rwth-i6/i6_core#459, verbatim: two jobs on one host shared the rendezvous port, and gloo's
# full mesh could not form
MESH_FAILED = [
    "[E ProcessGroupGloo.cpp:138] Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer [134.61.201.231]:927",
    "[E ProcessGroupGloo.cpp:138] Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer [134.61.201.231]:18346",
]


def test_a_full_mesh_that_never_formed_is_a_start_up_failure_of_no_rank(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": MESH_FAILED})
    mesh = analysis.verdict.finding
    assert (mesh.kind, mesh.details["phase"], analysis.verdict.ranks) == (
        "missing_rank",
        "connect",
        [],
    )
    assert "[134.61.201.231]:927" in mesh.summary and "MASTER_PORT" in mesh.fix
    assert analysis.verdict.headline.endswith("the process group never formed")


def test_a_mesh_failure_the_job_got_past_is_no_start_up_failure(tmp_path):
    analysis = analyze_files(tmp_path, {"rank0.log": MESH_FAILED + marks(0, range(3))})
    assert not [f for f in analysis.findings if f.details.get("phase") == "connect"]


# pytorch/pytorch#15592, verbatim (the second node's console): gloo could not connect to its
# peer, whose host name resolved to a loopback address
LOOPBACK_REFUSED = [
    "terminate called after throwing an instance of 'gloo::IoException'",
    "  what():  [/opt/conda/conda-bld/pytorch_1544084119927/work/third_party/gloo/gloo/transport/tcp/pair.cc:724] connect [127.0.1.1]:3210: Connection refused",
    "Aborted (core dumped)",
]


def test_a_refused_connect_to_a_loopback_address_is_gloo_on_the_wrong_interface(tmp_path):
    analysis = analyze_files(tmp_path, {"second_node.log": LOOPBACK_REFUSED})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("nccl_error", [])
    assert "[127.0.1.1]:3210" in verdict.finding.summary
    assert "loopback address" in verdict.finding.summary
    assert "GLOO_SOCKET_IFNAME" in verdict.finding.fix
    # the group's failure is not also told as a start-up that never formed for no reason
    missing = [f for f in analysis.findings if f.kind == "missing_rank"]
    assert not any(f.details.get("phase") == "connect" for f in missing)


# hiyouga/LlamaFactory#6154, verbatim: a multi-node launch whose nodes never met at the store
# (the launcher no longer read the variables the reporter set; "solved" by setting the new ones)
STORE_WAIT_ALONE = ["torch.distributed.DistStoreError: Socket Timeout"]


def test_a_store_wait_that_timed_out_at_start_up_is_a_job_that_never_formed(tmp_path):
    verdict = analyze_files(tmp_path, {"console.log": STORE_WAIT_ALONE}).verdict
    assert verdict.finding.kind == "missing_rank" and verdict.ranks == []
    assert verdict.finding.details["side"] == "wait"
    assert "not every process joined the store" in verdict.finding.summary
    assert "`torch.distributed.DistStoreError: Socket Timeout`" in verdict.finding.summary
    assert "number of nodes" in verdict.finding.fix
    assert verdict.headline.startswith("A process timed out waiting at the rendezvous store")


# hurryingauto3/navsim-ijepa-planning-agent, summaries/SRUN_FIX_EXPLAINED.md (at f1ced82),
# verbatim, the post's line break kept: the store's host gave up on the 15 processes srun never
# started; and the same wait as torch prints it, on one line (parsers/watchdog.py)
CLIENTS_NEVER_CAME = [
    "torch.distributed.DistStoreError: Timed out after 3601 seconds waiting for clients. ",
    "1/16 clients joined.",
]
CLIENTS_ONE_LINE = [
    "torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 1/3 clients joined."
]


@pytest.mark.parametrize(
    "lines", [CLIENTS_NEVER_CAME, CLIENTS_ONE_LINE], ids=["wrapped", "one_line"]
)
def test_the_store_giving_up_on_its_clients_is_a_job_that_never_formed(tmp_path, lines):
    verdict = analyze_files(tmp_path, {"console.log": lines}).verdict
    assert verdict.finding.kind == "missing_rank" and verdict.ranks == []
    assert verdict.finding.details["side"] == "wait"
    assert verdict.headline.startswith("A process timed out waiting at the rendezvous store")


# xorbitsai/inference#2486, verbatim (the stored paste starts inside the traceback): the store
# of `init_process_group`'s rendezvous, which rank 0 hosts, waited for a 2-way tensor-parallel
# vLLM's other worker; only its host had joined
ALONE_AT_ITS_OWN_STORE = [
    "ERROR 10-25 12:21:14 worker_base.py:145]     store = _create_c10d_store(result.hostname, result.port, rank, world_size, timeout, use_libuv)",
    'ERROR 10-25 12:21:14 worker_base.py:145]   File "/home/miniconda3/envs/xinference/lib/python3.10/site-packages/torch/distributed/rendezvous.py", line 174, in _create_c10d_store',
    "ERROR 10-25 12:21:14 worker_base.py:145]     return TCPStore(",
    "ERROR 10-25 12:21:14 worker_base.py:145] torch.distributed.DistStoreError: Timed out after 601 seconds waiting for clients. 1/2 clients joined.",
]


def test_rank_0_alone_at_the_process_group_s_store_names_the_ranks_that_never_came(tmp_path):
    verdict = analyze_files(tmp_path, {"console.log": ALONE_AT_ITS_OWN_STORE}).verdict
    assert verdict.finding.kind == "missing_rank" and verdict.ranks == [1]
    assert verdict.headline == (
        "Rank 1 never reached the rendezvous store; rank 0, its host, timed out waiting for it"
    )
    assert "it alone joined, and rank 1 never reached the store" in verdict.finding.summary
    assert english_runs(translate(verdict.finding.summary, "zh")) == []
    assert english_runs(translate_headline(verdict.headline, "zh")) == []


# modelscope/ms-swift#3343, verbatim up to where the stored thread cut it (a two-node GRPO
# run; the traceback as pasted, without indentation): torchrun's own store client on one node
# waited 900 s for the other node's agent, then its traceback runs through torch's run.py
AGENT_STORE_WAIT = [
    "[W228 18:45:15.738941174 socket.cpp:462] [c10d] waitForInput: poll for socket SocketImpl(fd=11, addr=[xxxxx.com]:38674, remote=[::ffff:33.148.62.162]:23456) returned 0, likely a timeout",
    "[W228 18:45:15.741177013 socket.cpp:487] [c10d] waitForInput: socket SocketImpl(fd=11, addr=[xxxxxx.com]:38674, remote=[::ffff:33.148.62.162]:23456) timed out after 900000ms",
    "Traceback (most recent call last):",
    'File "/opt/conda/lib/python3.10/runpy.py", line 196, in _run_module_as_main',
    "return _run_code(code, main_globals, None,",
    'File "/opt/conda/lib/python3.10/runpy.py", line 86, in _run_code',
    "exec(code, run_globals)",
    'File "/opt/conda/lib/python3.10/site-packages/torch/distributed/run.py", line 923, in <module>',
    "main()",
    'File "/opt/conda/lib/python3.10/site-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 355, in wrapper',
    "return f(*args, **kwargs)",
    'File "/opt/conda/lib/python3.10/site-packages/torch/distributed/run.py", line 919, in main',
    "run(args)",
    'File "/opt/conda/lib/python3.10/site-packages/torch/distributed/run.py", line 910, in run',
]


def test_the_launcher_s_own_store_wait_is_a_job_that_never_formed(tmp_path):
    verdict = analyze_files(tmp_path, {"console.log": AGENT_STORE_WAIT}).verdict
    assert verdict.finding.kind == "missing_rank" and verdict.ranks == []
    assert verdict.finding.details["side"] == "wait"
    assert "[::ffff:33.148.62.162]:23456" in verdict.finding.summary
    assert "15 min" in verdict.finding.summary
    # the wait is the failure told, not a second timeout after it
    assert verdict.headline == (
        "A process timed out waiting at the rendezvous store: the job never formed"
    )


def test_a_worker_s_store_wait_is_not_the_launcher_s(tmp_path):
    # the same two lines followed by a training script's traceback: a worker waited at the
    # store for a peer once the job had formed
    worker = [
        *AGENT_STORE_WAIT[:3],
        '  File "/app/train.py", line 88, in <module>',
        "    dist.barrier()",
    ]
    analysis = analyze_files(tmp_path, {"console.log": worker})
    assert analysis.verdict.finding.kind == "collective_timeout"


def test_a_store_wait_after_the_job_trained_is_a_wait_for_a_busy_rank(tmp_path):
    # the same line after training went on: a rank kept the others waiting, no failed start
    files = {"console.log": [*marks(0, range(3)), *STORE_WAIT_ALONE]}
    analysis = analyze_files(tmp_path, files)
    assert not any(f.details.get("phase") == "rendezvous" for f in analysis.findings)


def test_a_store_wait_beside_another_exception_leaves_the_cause_to_that_exception(tmp_path):
    lines = [
        "[rank0]: Traceback (most recent call last):",
        '[rank0]:   File "/app/train.py", line 12, in <module>',
        "[rank0]:     load_dataset(path)",
        "[rank0]: FileNotFoundError: [Errno 2] No such file or directory: '/data/train.jsonl'",
        *(f"[rank1]: {line}" for line in STORE_WAIT_ALONE),
    ]
    verdict = analyze_files(tmp_path, {"console.log": lines}).verdict
    assert verdict.finding.kind == "rank_exception" and verdict.ranks == [0]


def test_ranks_absent_from_init_process_group_s_barrier_never_got_that_far(tmp_path):
    # the Open-Llama waits (tests/parsers/test_world_size.py) at the default group's key 1, in
    # a 4-process world where the three waiters are all seen: rank 3 is the absent one
    waits = [
        f"I0510 07:28:04.417845 139863945226048 distributed_c10d.py:337] Waiting in store based barrier to initialize process group for rank: {rank}, key: store_based_barrier_key:1 (world_size=4, worker_count=3, timeout=0:30:00)"
        for rank in (0, 1, 2)
    ]
    analysis = analyze_files(tmp_path, {"train.log": waits})
    short = analysis.verdict.finding
    assert (short.kind, analysis.verdict.ranks) == ("missing_rank", [3])
    assert analysis.job.world_size.value == 4
    assert analysis.verdict.headline.startswith(
        "Rank 3 never reached the store barrier of `init_process_group`"
    )


# NVIDIA-NeMo/Speech#5819, verbatim (`srun -l` task ids in front: one task per node, each
# starting three processes that took ranks 1-3): the ranks are the lines' own, not the task's
NEMO_SAME_RANKS = [
    "0: Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/8",
    "0: Initializing distributed: GLOBAL_RANK: 3, MEMBER: 4/8",
    "0: Initializing distributed: GLOBAL_RANK: 2, MEMBER: 3/8",
    "1: Initializing distributed: GLOBAL_RANK: 2, MEMBER: 3/8",
    "1: Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/8",
    "1: Initializing distributed: GLOBAL_RANK: 3, MEMBER: 4/8",
    "0: Waiting in store based barrier to initialize process group for rank: 3, key: store_based_barrier_key:1 (world_size=8, worker_count=3, timeout=0:30:00)",
    "0: Waiting in store based barrier to initialize process group for rank: 2, key: store_based_barrier_key:1 (world_size=8, worker_count=3, timeout=0:30:00)",
]


def test_ranks_claimed_twice_are_read_from_the_lines_not_a_node_s_task_id(tmp_path):
    analysis = analyze_files(tmp_path, {"slurm.out": NEMO_SAME_RANKS})
    twice = analysis.verdict.finding
    assert twice.details["claimed_twice"] == [1, 2, 3]
    # rank 0 has no line, but a node that took ranks 1-3 took rank 0 too: 4-7 are unrun
    assert analysis.verdict.ranks == [4, 5, 6, 7]
    # the barrier's shortfall is the same failure: one finding, not two
    assert [f.kind for f in analysis.findings] == ["missing_rank"]


# aws/aws-k8s-tester#454, verbatim excerpt of a healthy 32-rank mpirun run: the paste shows
# some ranks' `Init COMPLETE` and, after a gap, other ranks' teardown of the same communicator
HEALTHY_RUN_EXCERPT = [
    "[1,15]<stdout>:bert-mpi-training-worker-1:28:567 [7] NCCL INFO comm 0x55833c92f9c0 rank 15 nranks 32 cudaDev 7 nvmlDev 7 busId 1e0 commId 0x837dd0976e1b4338 - Init COMPLETE",
    "[1,5]<stdout>:bert-mpi-training-worker-0:26:574 [5] NCCL INFO comm 0x564c64f91780 rank 5 nranks 32 cudaDev 5 nvmlDev 5 busId 1c0 commId 0x837dd0976e1b4338 - Init COMPLETE",
    "[1,1]<stdout>:bert-mpi-training-worker-0:22:572 [1] NCCL INFO comm 0x559fe7380640 rank 1 nranks 32 cudaDev 1 nvmlDev 1 busId 180 commId 0x837dd0976e1b4338 - Init COMPLETE",
    "[1,4]<stdout>:Process 4 - Training time: 10.05 seconds",
    "[1,4]<stdout>:Process 4 - Throughput: 9.95 samples/second",
    "[1,1]<stdout>:bert-mpi-training-worker-0:22:670 [0] NCCL INFO comm 0x559fe7380640 rank 1 nranks 32 cudaDev 1 busId 180 - Abort COMPLETE",
    "[1,0]<stdout>:bert-mpi-training-worker-0:21:583 [0] NCCL INFO [Service thread] Connection closed by localRank 4",
    "[1,6]<stdout>:bert-mpi-training-worker-0:27:671 [0] NCCL INFO comm 0x5640d3700dc0 rank 6 nranks 32 cudaDev 6 busId 1d0 - Abort COMPLETE",
    "[1,4]<stdout>:bert-mpi-training-worker-0:25:673 [0] NCCL INFO comm 0x5641c3f88e40 rank 4 nranks 32 cudaDev 4 busId 1b0 - Abort COMPLETE",
    "[1,0]<stdout>:bert-mpi-training-worker-0:21:667 [0] NCCL INFO comm 0x55bc31870680 rank 0 nranks 32 cudaDev 0 busId 170 - Abort COMPLETE",
]


def test_ranks_seen_tearing_down_the_communicator_are_not_stuck_in_its_init(tmp_path):
    analysis = analyze_files(tmp_path, {"output.log": HEALTHY_RUN_EXCERPT})
    assert analysis.verdict is None
    stuck = [f for f in analysis.findings if "never printed `Init COMPLETE`" in f.summary]
    assert stuck == []


# skypilot-org/skypilot#825, verbatim: after node-1 was killed, node-0's worker aborted and its
# torchrun agent timed out at the exit barrier, waiting for node-1's agent
EXIT_BARRIER_TIMEOUT = [
    "(node-0 pid=26831) ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -6) local_rank: 0 (pid: 26950) of binary: /opt/conda/bin/python3",
    "(node-0 pid=26831) ERROR:torch.distributed.elastic.agent.server.api:Error waiting on exit barrier. Elapsed: 309.24648356437683 seconds",
    "(node-0 pid=26831) Traceback (most recent call last):                    ",
    '(node-0 pid=26831)   File "/home/ubuntu/.local/lib/python3.9/site-packages/torch/distributed/elastic/agent/server/api.py", line 906, in _exit_barrier',
    "(node-0 pid=26831)     store_util.barrier(",
    '(node-0 pid=26831)   File "/home/ubuntu/.local/lib/python3.9/site-packages/torch/distributed/elastic/utils/store.py", line 67, in barrier',
    "(node-0 pid=26831)     synchronize(store, data, rank, world_size, key_prefix, barrier_timeout)",
    '(node-0 pid=26831)   File "/home/ubuntu/.local/lib/python3.9/site-packages/torch/distributed/elastic/utils/store.py", line 53, in synchronize',
    "(node-0 pid=26831)     agent_data = get_all(store, key_prefix, world_size)",
    '(node-0 pid=26831)   File "/home/ubuntu/.local/lib/python3.9/site-packages/torch/distributed/elastic/utils/store.py", line 31, in get_all',
    '(node-0 pid=26831)     data = store.get(f"{prefix}{idx}")',
    "(node-0 pid=26831) RuntimeError: Socket Timeout",
]


def test_a_store_wait_at_torchrun_s_exit_barrier_is_no_start_up_failure(tmp_path):
    analysis = analyze_files(tmp_path, {"node0.log": EXIT_BARRIER_TIMEOUT})
    assert "missing_rank" not in kinds(analysis)  # it had been "the job never formed"
    assert analysis.verdict.finding.kind == "rank_exception"
    # without the agent's record, its traceback through `_exit_barrier` says the same
    traceback_only = [
        line
        for line in EXIT_BARRIER_TIMEOUT
        if "exit barrier" not in line and "exitcode" not in line
    ]
    ended = analyze_files(tmp_path / "traceback", {"node0.log": traceback_only})
    assert "missing_rank" not in kinds(ended)


# huggingface/accelerate#2229, verbatim (a paste quoted as inline code, its last line cut by
# the excerpt): node 0's agent timed out at the exit barrier; one of its workers could not
# reach the other machine
EXIT_BARRIER_AFTER_NO_ROUTE = [
    "`Traceback (most recent call last):",
    '  File "/opt/conda/lib/python3.7/site-packages/torch/distributed/elastic/agent/server/api.py", line 904, in _exit_barrier',
    "    barrier_timeout=self._exit_barrier_timeout,",
    '  File "/opt/conda/lib/python3.7/site-packages/torch/distributed/elastic/utils/store.py", line 67, in barrier',
    "    synchronize(store, data, rank, world_size, key_prefix, barrier_timeout)",
    '  File "/opt/conda/lib/python3.7/site-packages/torch/distributed/elastic/utils/store.py", line 53, in synchronize',
    "    agent_data = get_all(store, key_prefix, world_size)",
    '  File "/opt/conda/lib/python3.7/site-packages/torch/distributed/elastic/utils/store.py", line 31, in get_all',
    '    data = store.get(f"{prefix}{idx}")',
    "RuntimeError: Socket Timeout`",
    "`ps-8:796:796 [1] NCCL INFO Bootstrap : Using enp67s0:192.168.1.8<0>",
    "ps-8:796:796 [1] NCCL INFO NET/Socket : Using [0]enp67s0:192.168.1.8<0>",
    "ps-8:795:822 [0] include/socket.h:409 NCCL WARN Net : Connect to 192.168.1.9<54263> failed : No route to",
]


def test_the_agents_exit_barrier_wait_is_no_start_up_failure_beside_the_nccl_error(tmp_path):
    analysis = analyze_files(tmp_path, {"main.log": EXIT_BARRIER_AFTER_NO_ROUTE})
    assert "missing_rank" not in kinds(analysis)
    assert analysis.verdict.finding.kind == "nccl_error"


def test_a_rendezvous_join_that_timed_out_waited_for_nodes_not_for_a_store(tmp_path):
    # sample_logs/rendezvous_node_missing (a run here: torchrun --nnodes=2, node 0 alone,
    # join_timeout=20), the end of torchrun's traceback
    lines = [
        "W1204 05:14:36.490000 29959 torch/distributed/run.py:874] *****************************************",
        "Traceback (most recent call last):",
        '  File "/tmp/torchenv/lib/python3.11/site-packages/torch/distributed/elastic/agent/server/api.py", line 528, in _rendezvous',
        "    rdzv_info = spec.rdzv_handler.next_rendezvous()",
        "                ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        '  File "/tmp/torchenv/lib/python3.11/site-packages/torch/distributed/elastic/rendezvous/dynamic_rendezvous.py", line 1171, in next_rendezvous',
        "    self._op_executor.run(join_op, deadline, self._get_deadline)",
        '  File "/tmp/torchenv/lib/python3.11/site-packages/torch/distributed/elastic/rendezvous/dynamic_rendezvous.py", line 680, in run',
        "    raise RendezvousTimeoutError",
        "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError",
    ]
    analysis = analyze_files(tmp_path, {"node0.log": lines})
    missing = analysis.verdict.finding
    assert missing.kind == "missing_rank" and missing.ranks == []
    assert "not every process joined" in missing.summary
    assert "could not reach" not in missing.summary
    assert "same number of nodes" in missing.fix


RESTART_REFUSED = Path(__file__).parents[1] / "data" / "launchers" / "torchrun" / "restart_refused"


def test_a_restart_s_refused_connects_are_no_start_up_failure_of_the_job(tmp_path):
    # a run here (tests/data/launchers/torchrun/restart_refused): rank 1 raised at step 3, the
    # group trained over the loopback before; torchrun's restart then failed to form its group
    analysis = analyze(RESTART_REFUSED)
    assert (analysis.verdict.finding.kind, analysis.verdict.ranks) == ("rank_exception", [1])
    assert "illegal memory access" in analysis.verdict.finding.summary
    # the refused connects on the loopback are neither gloo on the wrong interface (the group
    # had formed over the same addresses) nor a job that never formed
    assert not any(f.details.get("transport") == "gloo" for f in analysis.findings)
    assert not any(f.details.get("phase") == "connect" for f in analysis.findings)


# pytorch/pytorch#91943, verbatim excerpts of worker 0's console: the run trained, a peer's
# agent was stopped with Ctrl-C, rank 0 failed in NCCL, and its agent's re-rendezvous after
# the restart found the rendezvous closed
RENDEZVOUS_CLOSED = [
    "Epoch: [0][10/68]       Time  6.651 ( 6.576)    Data  4.328 ( 4.479)    Loss 1.6200e+01 (1.1323e+01)    Acc@1   5.47 (  4.33)  Acc@5  25.00 ( 23.86)",
    "terminate called after throwing an instance of 'std::runtime_error'",
    "  what():  NCCL error: unhandled system error, NCCL version 21.0.3",
    "ncclSystemError: System call (socket, malloc, munmap, etc) failed.",
    "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -6) local_rank: 0 (pid: 2019) of binary: /usr/bin/python",
    "INFO:torch.distributed.elastic.agent.server.api:[default] Worker group FAILED. 100/100 attempts left; will restart worker group",
    '  File "/usr/local/lib/python3.6/dist-packages/torch/distributed/elastic/rendezvous/dynamic_rendezvous.py", line 1024, in next_rendezvous',
    "    self._op_executor.run(join_op, deadline)",
    '  File "/usr/local/lib/python3.6/dist-packages/torch/distributed/elastic/rendezvous/dynamic_rendezvous.py", line 634, in run',
    "    raise RendezvousClosedError()",
    "torch.distributed.elastic.rendezvous.api.RendezvousClosedError",
]


# kubeflow/trainer#1638, verbatim up to where the stored thread cut it: an elastic PyTorchJob's
# pod on the etcd backend, restarted, joins its first rendezvous and finds it closed (its
# reporter's pytorch/pytorch#82160: every job ran on run id `none`, so the pod picked up the
# last run's closed rendezvous)
CLOSED_AT_FIRST_JOIN = [
    "INFO:torch.distributed.elastic.agent.server.local_elastic_agent:log directory set to: /tmp/torchelastic_pnz8n4_3/none_b_ggbxiq",
    "INFO:torch.distributed.elastic.agent.server.api:[default] starting workers for entrypoint: python",
    "INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous'ing worker group",
    "ERROR:torch.distributed.elastic.multiprocessing.errors.error_handler:{",
    '  "message": {',
    '    "message": "RendezvousClosedError: ",',
    '    "extraInfo": {',
]


def test_a_rendezvous_closed_at_the_agent_s_first_join_is_a_job_that_never_formed(tmp_path):
    analysis = analyze_files(tmp_path, {"pod.log": CLOSED_AT_FIRST_JOIN})
    verdict = analysis.verdict
    assert verdict.finding.kind == "missing_rank" and verdict.ranks == []
    assert verdict.finding.details["side"] == "closed"
    assert "`--rdzv-id`" in verdict.finding.fix
    assert verdict.headline == (
        "A node's agent found the rendezvous already closed: the job never formed"
    )
    assert not english_runs(translate_headline(verdict.headline, "zh"))
    assert not english_runs(translate(verdict.finding.summary, "zh"))


def test_a_rendezvous_closed_after_the_run_trained_is_no_start_up_failure(tmp_path):
    analysis = analyze_files(tmp_path, {"worker0.log": RENDEZVOUS_CLOSED})
    assert "missing_rank" not in kinds(analysis)
    assert analysis.verdict.finding.kind == "nccl_error"


def test_a_training_bar_that_counted_steps_means_every_rank_had_joined(tmp_path):
    # Lightning-AI/pytorch-lightning#4225 (tests/data/threads): a healthy 16-rank run whose
    # paste keeps four ranks' start-up lines; the epoch bar's steps needed all sixteen
    files = {
        name: (THREADS / f"lightning4225_{name}").read_text(encoding="utf-8").splitlines()
        for name in ("train.log", "progress.log")
    }
    analysis = analyze_files(tmp_path, files)
    assert analysis.verdict is None
    absent = finding(analysis, "missing_rank")
    assert (absent.severity, absent.part) == ("warning", "context")
    # the start-up lines alone, without the bar: the run may wait for the others
    alone = analyze_files(tmp_path / "alone", {"train.log": files["train.log"]})
    assert alone.verdict is not None and alone.verdict.finding.kind == "missing_rank"


# argonne-lcf/alcf-nccl-tests, pytests/logs0/2024-05-02-19-06-47/n4.p2.dat (2 nodes x 2 GPUs,
# NCCL_NET_GDR_LEVEL=PHB), verbatim: every rank's Init START, ranks 2 and 3's Init COMPLETE,
# and ranks 0 and 1's records cut mid-line by their own watchdogs' timeouts in ALLREDUCE #1
CUT_BY_TIMEOUTS = [
    "x3200c0s19b1n0:191354:191473 [0] NCCL INFO comm 0x55ac57e4dd50 rank 0 nranks 4 cudaDev 0 nvmlDev 0 busId 7000 commId 0xc4e25979c91fc06d - Init START",
    "x3200c0s19b1n0:191355:191475 [1] NCCL INFO comm 0x56123aa09c60 rank 1 nranks 4 cudaDev 1 nvmlDev 1 busId 46000 commId 0xc4e25979c91fc06d - Init START",
    "x3200c0s1b0n0:200639:200756 [0] NCCL INFO comm 0x5579044c5850 rank 2 nranks 4 cudaDev 0 nvmlDev 0 busId 7000 commId 0xc4e25979c91fc06d - Init START",
    "x3200c0s1b0n0:200638:200758 [1] NCCL INFO comm 0x55985f4de5d0 rank 3 nranks 4 cudaDev 1 nvmlDev 1 busId 46000 commId 0xc4e25979c91fc06d - Init START",
    "x3200c0s1b0n0:200639:200756 [0] NCCL INFO comm 0x5579044c5850 rank 2 nranks 4 cudaDev 0 nvmlDev 0 busId 7000 commId 0xc4e25979c91fc06d - Init COMPLETE",
    "[rank2]:[E ProcessGroupNCCL.cpp:563] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1048576, NumelOut=1048576, Timeout(ms)=120000) ran for 120012 milliseconds before timing out.",
    "x3200c0s19b1n0:191354:191473 [0] NCCL INFO comm 0x55ac57e4dd50 rank 0 nra[rank0]:[E ProcessGroupNCCL.cpp:563] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1048576, NumelOut=1048576, Timeout(ms)=120000) ran for 120013 milliseconds before timing out.",
    "nks 4 cudaDev 0 nvmlDev 0 busId 7000 commId 0xc4e25979c91fc06d - Init COMPLETE",
    "x3200c0s19b1n0:191355:191475 [1] NCCL INFO comm 0x56123aa09c60 rank 1 nranks 4 cudaDev 1 nvmlDev 1 busId 46000 commId 0xc4e25979c91fc06d - Init CO[rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1048576, NumelOut=1048576, Timeout(ms)=120000) ran for 120030 milliseconds before timing out.",
    "MPLETE",
    "x3200c0s1b0n0:200638:200758 [1] NCCL INFO comm 0x55985f4de5d0 rank 3 nranks 4 cudaDev 1 nvmlDev 1 busId 46000 commId 0xc4e25979c91fc06d - Init COMPLETE",
    "[rank3]:[E ProcessGroupNCCL.cpp:563] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1048576, NumelOut=1048576, Timeout(ms)=120000) ran for 120083 milliseconds before timing out.",
]


def test_ranks_whose_watchdog_timed_out_in_a_collective_had_finished_their_init(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": CUT_BY_TIMEOUTS})
    assert "missing_rank" not in kinds(analysis)
    assert analysis.verdict.finding.kind == "collective_timeout"
    assert analysis.verdict.ranks == []


def test_a_rank_with_no_timeout_and_no_init_complete_is_still_stuck_in_its_init(tmp_path):
    # rank 1's cut record and its timeout left out (its Init START alone), and the tail of rank
    # 0's record that could have been rank 1's
    lines = [
        line
        for line in CUT_BY_TIMEOUTS
        if "Init CO[rank1]" not in line and not line.startswith("nks 4 ")
    ]
    missing = finding(analyze_files(tmp_path, {"console.log": lines}), "missing_rank")
    assert missing.ranks == [1]


def test_the_store_s_socket_error_quoted_alone_is_the_port_held(tmp_path):
    # Meituan-AutoML/MobileVLM#60, verbatim (the paste's leading space kept): c10d's words under
    # a RuntimeError, with no frame or launcher line around them
    line = " RuntimeError: The server socket has failed to listen on any local network address. The server socket has failed to bind to [::]:9901 (errno: 98 - Address already in use). The server socket has failed to bind to ?UNKNOWN? (errno: 98 - Address already in use)."
    verdict = analyze_files(tmp_path, {"train.log": [line]}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("missing_rank", [])
    assert verdict.finding.details.get("side") == "server"


def test_torch_xla_s_mesh_service_unreachable_at_set_up_is_a_job_that_never_formed(tmp_path):
    # pytorch/xla#2341, verbatim (its start): a Kaggle TPU's process 6 could not get the mesh
    # configuration while `xmp.spawn` set it up; the traceback after it is cut
    lines = [
        "Exception in device=TPU:6: tensorflow/compiler/xla/xla_client/mesh_service.cc:331 : Failed to retrieve mesh configuration: Connection reset by peer (14)",
        "Traceback (most recent call last):",
        '  File "/opt/conda/lib/python3.7/site-packages/torch_xla/distributed/xla_multiprocessing.py", line 323, in _start_fn',
        "    _setup_replication()",
    ]
    verdict = analyze_files(tmp_path, {"console.log": lines}).verdict
    assert verdict.finding.kind == "missing_rank" and verdict.ranks == []
    assert "Failed to retrieve mesh configuration" in verdict.finding.summary


def test_a_process_no_launcher_started_is_a_job_that_never_formed(tmp_path):
    # tinyvision/DAMO-YOLO#63, verbatim (the end of the loguru traceback): `python train.py`
    # on Windows, no torchrun
    lines = [
        '  File "C:\\D_installation_packet\\Anaconda\\installion_package\\envs\\yolox\\lib\\site-packages\\torch\\distributed\\rendezvous.py", line 166, in _env_rendezvous_handler',
        '    raise _env_error("RANK")',
        "",
        "ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable RANK expected, but not set",
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("missing_rank", [])
    assert verdict.headline == (
        "No launcher started the job's processes; RANK was not set and the job never formed"
    )
    assert "torchrun --nproc_per_node" in verdict.finding.fix
    assert kinds(analysis) == ["missing_rank"]  # no second reading as a rank's exception


def test_a_store_this_pytorch_cannot_make_without_libuv_is_a_job_that_never_formed(tmp_path):
    # pytorch/pytorch#139990, verbatim: a Windows runner on torch 2.5
    lines = [
        '  File "C:\\hostedtoolcache\\windows\\Python\\3.12.7\\x64\\Lib\\site-packages\\torch\\distributed\\rendezvous.py", line 189, in _create_c10d_store',
        "    return TCPStore(",
        "           ^^^^^^^^^",
        "RuntimeError: use_libuv was requested but PyTorch was build without libuv support",
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("missing_rank", [])
    assert verdict.headline.startswith("The rendezvous store could not be made")
    assert "USE_LIBUV=0" in verdict.finding.fix
    assert kinds(analysis) == ["missing_rank"]


def test_one_process_stating_its_world_in_two_wordings_is_not_two_processes(tmp_path):
    # pytorch/examples#772, verbatim: the command echoed (`--world_size=2 --rank=0`), then the
    # script's own `using world_size 2`, both in rank 0's console
    lines = [
        "$ python rpc_parameter_server.py --world_size=2 --rank=0",
        "using master_addr localhost",
        "using master_port 29500",
        "using world_size 2",
        "PS master initializing RPC",
    ]
    analysis = analyze_files(tmp_path, {"rank0.log": lines})
    assert not any(f.details.get("claimed_twice") for f in analysis.findings)


def test_the_port_taken_in_the_words_of_torch_s_process_group_code_is_the_store_s(tmp_path):
    # facebookresearch/maskrcnn-benchmark#241, verbatim: a second 4-GPU launch on a machine
    # where another job held the default port (torch 1.0's THD, no traceback posted)
    line = (
        "RuntimeError: Address already in use at /opt/conda/conda-bld/pytorch-nightly_"
        "1543051141017/work/torch/lib/THD/process_group/General.cpp:20"
    )
    verdict = analyze_files(tmp_path, {"console.log": [line]}).verdict
    assert verdict.finding.kind == "missing_rank" and verdict.finding.details["side"] == "server"
    assert verdict.headline == "A process could not open the rendezvous store's port: it was taken"


def test_a_store_address_that_does_not_resolve_is_a_start_up_that_never_formed(tmp_path):
    verdict = analyze_files(tmp_path, {"train.log": [UNRESOLVED_BRACKETS]}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("missing_rank", [])
    assert verdict.headline == (
        "A process could not look up the rendezvous store's address at "
        "([2605:340:cd51:4900:73e8:12cb:cfe2:1540], 59699): the job never started"
    )
    assert "`Name or service not known`" in verdict.finding.summary
    assert "/etc/hosts" in verdict.finding.fix and "square brackets" in verdict.finding.fix
    assert translate_headline(verdict.headline, "zh") != verdict.headline
    for said in (verdict.finding.summary, verdict.finding.fix):
        assert english_runs(translate(said, "zh")) == []


def test_a_lookup_that_failed_before_the_job_went_on_is_no_failure(tmp_path):
    # c10d tries each address family in turn: a run that trained after it got through
    lines = [UNRESOLVED_NAME, *marks(0, range(3))]
    assert analyze_files(tmp_path, {"rank0.log": lines}).verdict is None


# pytorch/pytorch#64990, verbatim up to where the stored thread cut it: the second node's
# torchrun (`--rdzv_endpoint=172.30.2.12`, no port) asks to join rendezvous '1234', and nothing
# more; the first node had picked a random port the second could not know (kiukchung)
AGENT_JOINING = [
    "➜  pipeline_resnet50 git:(pytorch-pipeline) ✗ ./run.sh",
    "[INFO] 2021-09-14 14:02:29,295 run: Running torch.distributed.run with args: ['/home/ubuntu/.local/lib/python3.6/site-packages/torch/distributed/run.py', '--nnodes=2', '--nproc_per_node=1', '--rdzv_id=1234', '--rdzv_backend=c10d', '--rdzv_endpoint=172.30.2.12', 'main.py']",
    "[INFO] 2021-09-14 14:02:29,297 run: Using nproc_per_node=1.",
    "[INFO] 2021-09-14 14:02:29,297 api: Starting elastic_operator with launch configs:",
    "  entrypoint       : main.py",
    "  min_nodes        : 2",
    "  max_nodes        : 2",
    "  nproc_per_node   : 1",
    "  run_id           : 1234",
    "  rdzv_backend     : c10d",
    "  rdzv_endpoint    : 172.30.2.12",
    "  rdzv_configs     : {'timeout': 900}",
    "  max_restarts     : 3",
    "  monitor_interval : 5",
    "  log_dir          : None",
    "  metrics_cfg      : {}",
    "",
    "[INFO] 2021-09-14 14:02:29,309 local_elastic_agent: log directory set to: /tmp/torchelastic_ozl1psve/1234_31eglxsv",
    "[INFO] 2021-09-14 14:02:29,309 api: [default] starting workers for entrypoint: python3",
    "[INFO] 2021-09-14 14:02:29,309 api: [default] Rendezvous'ing worker group",
    "[INFO] 2021-09-14 14:02:29,309 dynamic_rendezvous: The node 'ip-172-30-2-79_28389_0' attempts to join the next round of the rendezvous '1234'.",
]


def test_an_agent_left_asking_to_join_the_rendezvous_is_a_job_that_never_formed(tmp_path):
    verdict = analyze_files(tmp_path, {"machine_two.log": AGENT_JOINING}).verdict
    assert verdict.finding.kind == "missing_rank" and verdict.ranks == []
    assert (verdict.finding.confidence, verdict.finding.details["side"]) == ("low", "joining")
    assert "rendezvous '1234'" in verdict.finding.summary
    assert verdict.headline == (
        "The agent on ip-172-30-2-79 waited to join the rendezvous; the other nodes most likely "
        "never came"
    )
    assert "`--rdzv-endpoint host:port`" in verdict.finding.fix
    assert not english_runs(translate_headline(verdict.headline, "zh"))
    assert not english_runs(translate(verdict.finding.summary, "zh"))


def test_an_agent_that_joined_and_started_its_workers_is_no_such_stall(tmp_path):
    # the agent's words once the round completed, and its workers' first lines
    # (sample_logs/restart_recovered, a run here)
    console = (SAMPLE_LOGS / "restart_recovered" / "logs" / "launcher.log").read_text()
    started = [*AGENT_JOINING, *console.splitlines()[26:60]]
    analysis = analyze_files(tmp_path, {"machine_two.log": started})
    assert not any(f.details.get("side") == "joining" for f in analysis.findings)


# pytorch/pytorch#76287, verbatim: a node of the job crashed, and this node's agent went on
# failing to reach the rendezvous for 8 hours until the job was cancelled by hand
KEEP_ALIVE_LOST = [
    "WARNING:torch.distributed.elastic.rendezvous.dynamic_rendezvous:The node 'jean-zay-iam37-ib0_187281_0' has failed to send a keep-alive heartbeat to the rendezvous 'none' due to an error of type RendezvousConnectionError.",
] * 3


def test_an_agent_that_lost_the_rendezvous_store_is_a_node_lost_to_the_job(tmp_path):
    verdict = analyze_files(tmp_path, {"console.log": KEEP_ALIVE_LOST}).verdict
    assert verdict.finding.kind == "missing_rank" and verdict.ranks == []
    assert verdict.headline == (
        "The agent on jean-zay-iam37-ib0 lost the rendezvous store; the node hosting it had "
        "stopped or was unreachable"
    )
    assert "(3 times): `RendezvousConnectionError`" in verdict.finding.summary
    assert "--kill-on-bad-exit" in verdict.finding.fix
    for english in (verdict.finding.summary, verdict.finding.fix):
        assert english_runs(translate(english, "zh")) == []
    assert english_runs(translate_headline(verdict.headline, "zh")) == []


def test_an_agent_that_outlived_the_store_after_its_run_finished_is_no_failure(tmp_path):
    # pytorch/pytorch#97191, verbatim: the agent's own word that its workers succeeded, before
    # the keep-alives failed
    finished = [
        "INFO:torch.distributed.elastic.agent.server.api:Local worker group finished (SUCCEEDED). Waiting 300 seconds for other agents to finish",
        *KEEP_ALIVE_LOST,
    ]
    analysis = analyze_files(tmp_path, {"console.log": finished})
    assert "missing_rank" not in kinds(analysis)


# OpenRLHF/OpenRLHF#350, verbatim (the run succeeded; the stored paste is cut inside Ray's last
# line): Ray folded the weight-sync group's workers' like lines into one, so the ranks it names
# are not all the ranks that printed it
RAY_FOLDED_INIT = [
    "(ActorModelRayActor pid=675352)",
    "Episode [1/1]: 100%|██████████| 12/12 [03:51<00:00, 19.18s/it]",
    "Episode [1/1]: 100%|██████████| 12/12 [03:51<00:00, 19.27s/it]",
    "(LLMRayActor pid=676133)",
    "Processed prompts:   6%|▋         | 1/16 [00:12<03:12, 12.82s/it]",
    "Processed prompts: 100%|██████████| 16/16 [00:12<00:00,  1.25it/s]",
    "(RayWorkerWrapper pid=676716) init_process_group: master_address=0.0.0.0, master_port=50949,  rank=2, world_size=5, group_name=openrlhf [repeated 3x across cluster]",
    "",
    "------------------------------------------",
]


@pytest.mark.parametrize("colour", [False, True], ids=["plain", "coloured"])
def test_ranks_ray_folded_into_another_s_line_are_not_absent(tmp_path, colour):
    # (Ray colours its prefixes on a terminal: the note stands before the reset code then)
    lines = [f"\x1b[36m{line}\x1b[0m" if colour else line for line in RAY_FOLDED_INIT]
    analysis = analyze_files(tmp_path, {"driver.log": lines})
    assert "missing_rank" not in kinds(analysis)
    assert analysis.verdict is None
