# ruff: noqa: E501 -- test data are verbatim log lines
from __future__ import annotations

from pathlib import Path

from logforensics.api import analyze
from logforensics.headline import verdict_headline
from tests.builders import analyze_files, finding, kinds, marks

NCCL_DATA = Path(__file__).resolve().parent.parent / "data" / "nccl"

# pytorch/pytorch#22834-style watermark lines and NVIDIA/nccl#1409 timeouts (verbatim shapes)
MIXED_OPS = [
    "    [rank7]:[E816 01:45:40.183009389 ProcessGroupNCCL.cpp:607] [Rank 7] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=80078, OpType=BROADCAST, NumelIn=5056, NumelOut=5056, Timeout(ms)=600000) ran for 600026 milliseconds before timing out.",
    "    [rank3]:[E816 01:45:40.196873285 ProcessGroupNCCL.cpp:607] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=80078, OpType=ALLREDUCE, NumelIn=2106881, NumelOut=2106881, Timeout(ms)=600000) ran for 600089 milliseconds before timing out.",
]


def timeout_line(rank: int, seq: int, op: str = "ALLREDUCE") -> str:
    return (
        f"[rank{rank}]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] [Rank {rank}] Watchdog "
        f"caught collective operation timeout: WorkNCCL(SeqNum={seq}, OpType={op}, "
        f"NumelIn=9801523, NumelOut=9801523, Timeout(ms)=600000) ran for 600063 milliseconds "
        "before timing out."
    )


def progress_line(rank: int, completed: int) -> str:
    return (
        f"[rank{rank}]:[E626 06:24:44.906457629 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID "
        f"0(default_pg) Rank {rank}] Exception (either an error or timeout) detected by watchdog "
        f"at work: 808, last enqueued NCCL work: 811, last completed NCCL work: {completed}."
    )


def test_names_reporters_op_seq_and_timeout(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": [timeout_line(r, 808) for r in (1, 0, 2)]})
    timeout = finding(analysis, "collective_timeout")
    assert (timeout.ranks, timeout.op, timeout.seq) == ([0, 1, 2], "ALLREDUCE", 808)
    assert timeout.details["timeout_ms"] == 600000
    assert timeout.severity == "error"


def test_different_ops_at_one_seq_prove_a_desync(tmp_path):
    analysis = analyze_files(tmp_path, {"accelerate_train.log": MIXED_OPS})
    timeout = finding(analysis, "collective_timeout")
    assert timeout.ranks == [3, 7] and timeout.op is None and timeout.seq == 80078
    divergence = finding(analysis, "stage_divergence")
    assert divergence.ranks == [3, 7] and divergence.seq == 80078
    assert "rank 7 BROADCAST" in divergence.summary and "rank 3 ALLREDUCE" in divergence.summary


def test_lower_last_completed_names_the_laggard_and_stands_in_as_verdict(tmp_path):
    lines = [timeout_line(r, 808) for r in range(4)]
    lines += [progress_line(r, 807 if r != 2 else 805) for r in range(4)]
    analysis = analyze_files(tmp_path, {"train.log": lines})
    timeout = finding(analysis, "collective_timeout")
    assert timeout.culprit_ranks == [2]
    # nothing else names a cause: the timeout stands in, its culprit is the verdict's rank
    assert analysis.verdict.finding is timeout
    assert analysis.verdict.ranks == [2]
    assert timeout.confidence == "medium"


def test_timeout_after_a_skip_is_a_symptom_of_it(tmp_path):
    files = {f"rank{r}.log": marks(r, range(8)) for r in (0, 1, 3)}
    files["rank2.log"] = marks(2, range(8), skip={4: ("after_backward", "after_step")})
    for rank in range(4):
        files[f"rank{rank}.log"].append(timeout_line(rank, 40))
    analysis = analyze_files(tmp_path, files)
    assert analysis.verdict.finding.kind == "stage_divergence"
    timeout = finding(analysis, "collective_timeout")
    assert timeout.role == "symptom"
    assert "symptom" in timeout.note and "rank 2" in timeout.note
    # the last marks (10:00:07) plus the 600 s timeout, against the divergence at 10:00:04
    assert "fired at about 10:10:07, 10 min after the divergence" in timeout.note


def test_no_timeouts_no_finding(tmp_path):
    assert "collective_timeout" not in kinds(analyze_files(tmp_path, {"a.log": marks(0, range(3))}))


def test_store_timeout_at_init_names_the_rank_waited_for(tmp_path):
    # hiyouga/LlamaFactory#3698 (formats.md §4.9), verbatim
    line = "torch.distributed.DistBackendError: [4] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Socket Timeout"
    analysis = analyze_files(tmp_path, {"train.log": [line]})
    setup = finding(analysis, "collective_timeout")
    assert setup.ranks == [4] and setup.culprit_ranks == [0]
    assert setup.details["phase"] == "rendezvous"
    # nothing else names a cause: it stands in, blaming the rank that was waited for
    assert analysis.verdict.ranks == [0]


def test_more_processes_than_ranks_at_the_store_barrier(tmp_path):
    # ligang-cs/PseCo#15 (torch 1.x): 16 processes checked in for a world of 4
    line = "RuntimeError: Timed out initializing process group in store based barrier on rank: 0, for key: store_based_barrier_key:1 (world_size=4, worker_count=16, timeout=0:30:00)"
    setup = finding(analyze_files(tmp_path, {"train.log": [line]}), "collective_timeout")
    assert setup.ranks == [0] and setup.details["phase"] == "rendezvous"
    assert "16 processes checked in for a world of 4" in setup.summary
    assert "started twice" in setup.summary


def test_stuck_watchdog(tmp_path):
    # Intellindust-AI-Lab/DEIM#105 (formats.md §4.6), verbatim
    line = "[rank1]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 1] Heartbeat monitor timed out! Process will be terminated after dumping debug info. workMetaList_.size()=103"
    stuck = finding(analyze_files(tmp_path, {"train.log": [line]}), "collective_timeout")
    assert stuck.ranks == [1] and stuck.details["phase"] == "heartbeat"


# vllm-project/vllm#9839, verbatim: rank 2's watchdog times out in the tensor-parallel group's
# GATHER, then rank 0 (the gather's destination, which reported no timeout) has its heartbeat
# monitor fire: its process was blocked, and rank 2 waited for it
GATHER_WAIT = "[rank2]:[E ProcessGroupNCCL.cpp:1414] [PG 2 Rank 2] Process group watchdog thread terminated with exception: [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=12471541, OpType=GATHER, NumelIn=1520640, NumelOut=0, Timeout(ms)=600000) ran for 600053 milliseconds before timing out."
RANK0_HEARTBEAT = "[rank0]:[E ProcessGroupNCCL.cpp:1316] [PG 2 Rank 0] Heartbeat monitor timed out! Process will be terminated after dumping debug info. workMetaList_.size()=9"


def test_a_stuck_watchdog_on_a_rank_that_never_timed_out_is_what_the_others_waited_for(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": [GATHER_WAIT, RANK0_HEARTBEAT]})
    stuck = analysis.verdict.finding
    assert stuck.details["phase"] == "heartbeat"
    assert analysis.verdict.ranks == [0]
    assert "Rank 2 timed out in GATHER #12471541 meanwhile" in stuck.summary
    assert "most likely waiting for rank 0" in stuck.summary
    assert "the heartbeat monitor singles out rank 0" in analysis.verdict.reason


def test_a_stuck_watchdog_names_no_culprit_beside_its_own_timeout(tmp_path):
    # DEIM#105's rank 1 heartbeat after rank 1's own timeout (vllm#9839's line, its rank tag
    # changed to 1): the watchdog stalled while aborting the timed-out work, as every rank may
    own_timeout = GATHER_WAIT.replace("[rank2]", "[rank1]").replace("Rank 2]", "Rank 1]")
    heartbeat = "[rank1]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 1] Heartbeat monitor timed out! Process will be terminated after dumping debug info. workMetaList_.size()=103"
    analysis = analyze_files(tmp_path, {"train.log": [own_timeout, heartbeat]})
    stuck = next(f for f in analysis.findings if f.details.get("phase") == "heartbeat")
    assert stuck.culprit_ranks == []
    assert "meanwhile" not in stuck.summary


# verl-project/verl#1158, verbatim: ranks 7 and 3 time out in ALLTOALL at 10:42:28; rank 2's
# watchdog, stuck for 480 s, is reported at 10:53:25: it stalled after they had timed out
STALLED_AFTER_THE_TIMEOUTS = [
    "[rank7]:[E419 10:42:28.858931807 ProcessGroupNCCL.cpp:616] [Rank 7] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4486, OpType=ALLTOALL, NumelIn=46684160, NumelOut=46684160, Timeout(ms)=600000) ran for 600013 milliseconds before timing out.",
    "[rank7]:[E419 10:42:28.861967180 ProcessGroupNCCL.cpp:1785] [PG ID 2 PG GUID 9 Rank 7] Exception (either an error or timeout) detected by watchdog at work: 4486, last enqueued NCCL work: 4489, last completed NCCL work: 4485.",
    "[rank3]:[E419 10:42:28.883292273 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4486, OpType=ALLTOALL, NumelIn=46684160, NumelOut=46684160, Timeout(ms)=600000) ran for 600088 milliseconds before timing out.",
    "[rank3]:[E419 10:42:28.883570619 ProcessGroupNCCL.cpp:1785] [PG ID 2 PG GUID 9 Rank 3] Exception (either an error or timeout) detected by watchdog at work: 4486, last enqueued NCCL work: 4489, last completed NCCL work: 4485.",
    "[rank2]:[E419 10:53:25.421620797 ProcessGroupNCCL.cpp:1484] [PG ID 2 PG GUID 9 Rank 2] ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued collectives. This typically indicates a NCCL/CUDA API (e.g., CudaEventDestroy) hang blocking the watchdog, and could be triggered by another thread holding the GIL inside a CUDA api (for example, CudaEventDestroy), or other deadlock-prone behaviors.If you suspect the watchdog is not actually stuck and a longer timeout would help, you can either increase the timeout (TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC) to a larger value or disable the heartbeat monitor (TORCH_NCCL_ENABLE_MONITORING=0).If either of aforementioned helps, feel free to file an issue to PyTorch about the short timeout or false positive abort; otherwise, please attempt to debug the hang. ",
]


def test_a_watchdog_that_stalled_after_the_others_timed_out_is_not_what_they_waited_for(
    tmp_path,
):
    analysis = analyze_files(tmp_path, {"console.log": STALLED_AFTER_THE_TIMEOUTS})
    stuck = next(f for f in analysis.findings if f.details.get("phase") == "heartbeat")
    assert stuck.ranks == [2] and stuck.culprit_ranks == []
    assert analysis.verdict.ranks == []


def test_untagged_seqs_from_several_groups_name_no_laggard(tmp_path):
    # pytorch-lightning#19487 (field sample pl-19487): no PG tag; rank 0 times out on three
    # works of one group and rank 7 on another group's 64088, so nobody is behind anybody
    lines = [
        "[E ProcessGroupNCCL.cpp:458] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=96117, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 25625613 milliseconds before timing out.",
        "[E ProcessGroupNCCL.cpp:458] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=96125, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 25625593 milliseconds before timing out.",
        "[E ProcessGroupNCCL.cpp:458] [Rank 7] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=64088, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 25625251 milliseconds before timing out.",
    ]
    analysis = analyze_files(tmp_path, {"train.log": lines})
    timeout = finding(analysis, "collective_timeout")
    assert timeout.ranks == [0, 7] and timeout.culprit_ranks == []
    assert analysis.verdict.finding is timeout and timeout.confidence == "low"


# FlagOpen/FlagEmbedding#764, verbatim (four ranks, no PG tag): rank 0 also times out in an
# ALLREDUCE of a group made with a 10-minute timeout; in the default group's ALLGATHERs rank 1
# is still in #6206, which ranks 0 and 2 had completed
ALLGATHER_BEHIND = [
    "  1%|▏         | 4817/360910 [38:19<22:40:36,  4.36it/s][rank2]:[E ProcessGroupNCCL.cpp:523] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=6207, OpType=ALLGATHER, NumelIn=48128, NumelOut=192512, Timeout(ms)=1800000) ran for 1800644 milliseconds before timing out.",
    "[rank0]:[E ProcessGroupNCCL.cpp:523] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=6207, OpType=ALLGATHER, NumelIn=49152, NumelOut=196608, Timeout(ms)=1800000) ran for 1800838 milliseconds before timing out.",
    "[rank0]:[E ProcessGroupNCCL.cpp:523] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=6029, OpType=ALLREDUCE, NumelIn=65084417, NumelOut=65084417, Timeout(ms)=600000) ran for 1801622 milliseconds before timing out.",
    "[rank1]:[E ProcessGroupNCCL.cpp:523] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=6206, OpType=ALLGATHER, NumelIn=8192, NumelOut=32768, Timeout(ms)=1800000) ran for 1801713 milliseconds before timing out.",
]


def test_an_untagged_report_with_another_timeout_is_another_groups(tmp_path):
    # a group has one timeout: rank 0's 10-minute ALLREDUCE #6029 does not stand for its place
    # in the 30-minute group, where rank 1 is the one behind
    verdict = analyze_files(tmp_path, {"train.log": ALLGATHER_BEHIND}).verdict
    assert verdict.ranks == [1]
    assert "#6206" in verdict.finding.summary


# --- timeouts that name no WorkNCCL ---------------------------------------------------------

# vllm-project/vllm-omni#2928: rank 1's dump signal of its own timeout, rank 0's of rank 1's
DUMP_SIGNALS = [
    "[rank1]:[E418 01:32:50.907313453 ProcessGroupNCCL.cpp:1890] [PG ID 0 PG GUID 0(default_pg) Rank 1] Received a dump signal due to a collective timeout from this local rank and we will try our best to dump the debug info. Last enqueued NCCL work: 233659, last completed NCCL work: 233659.This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in the communications library (e.g. NCCL), etc.",
    "[rank0]:[E418 01:32:50.907342463 ProcessGroupNCCL.cpp:1890] [PG ID 0 PG GUID 0(default_pg) Rank 0] Received a dump signal due to a collective timeout from  rank 1 and we will try our best to dump the debug info. Last enqueued NCCL work: 233659, last completed NCCL work: 233659.This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in the communications library (e.g. NCCL), etc.",
]


def test_a_dump_signal_of_the_rank_s_own_timeout_is_its_timeout(tmp_path):
    analysis = analyze_files(tmp_path, {"server.log": DUMP_SIGNALS})
    timeout = finding(analysis, "collective_timeout")
    assert timeout.ranks == [1]  # rank 0 only heard of rank 1's
    assert timeout.evidence[0].text == DUMP_SIGNALS[0]


def test_the_failure_detected_by_the_watchdog_is_a_timeout_with_its_watermark(tmp_path):
    # OpenRLHF/OpenRLHF#1126 (torch 2.6): rank 2 heard of rank 6's timeout; rank 7 timed out
    lines = [
        "[rank2]:[E901 05:20:03.118859045 ProcessGroupNCCL.cpp:1746] [PG ID 0 PG GUID 0(default_pg) Rank 2] Received a dump signal due to a collective timeout from  rank 6 and we will try our best to dump the debug info. Last enqueued NCCL work: 460631, last completed NCCL work: 460630.This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in the communications library (e.g. NCCL), etc. ",
        "[rank7]:[E901 05:20:03.124073319 ProcessGroupNCCL.cpp:2271] [PG ID 0 PG GUID 0(default_pg) Rank 7]  failure detected by watchdog at work sequence id: 460631 PG status: last enqueued work: 460631, last completed work: 460630",
    ]
    timeout = finding(analyze_files(tmp_path, {"train.log": lines}), "collective_timeout")
    # rank 6 timed out too, by rank 2's word
    assert (timeout.ranks, timeout.seq) == ([6, 7], 460631)


def test_a_watchdog_line_cut_before_its_work_is_still_the_rank_s_timeout(tmp_path):
    # hiyouga/LlamaFactory#8261 (formats.md §0): cut in the report, after a progress bar
    line = "  1%|▏         | 24/1752 [01:08<1:22:56,  2.88s/it][rank5]:[E602 11:17:52.185053341 ProcessGroupNCCL.cpp:632] [Rank 5] Watchdog caught collective operati…"
    analysis = analyze_files(tmp_path, {"train.log": [line]})
    (timeout,) = [f for f in analysis.findings if f.part == "consequence"]
    assert (timeout.kind, timeout.ranks) == ("collective_timeout", [5])
    assert timeout.seq is None and timeout.op is None


def test_the_watermark_with_a_timeout_names_the_laggard(tmp_path):
    # `failure detected` lines built in the shape of OpenRLHF/OpenRLHF#1126's: rank 2 completed
    # less than the others
    lines = [
        f"[rank{r}]:[E901 05:20:03.124073319 ProcessGroupNCCL.cpp:2271] [PG ID 0 PG GUID "
        f"0(default_pg) Rank {r}]  failure detected by watchdog at work sequence id: 81 PG "
        f"status: last enqueued work: 81, last completed work: {79 if r == 2 else 80}"
        for r in range(4)
    ]
    timeout = finding(analyze_files(tmp_path, {"train.log": lines}), "collective_timeout")
    assert timeout.ranks == [0, 1, 2, 3] and timeout.culprit_ranks == [2]


def test_the_rank_in_another_collective_at_one_number_is_blamed_even_when_reports_wrap():
    # mila-iqia/milabench#269: two nodes' consoles, every watchdog report wrapped onto two
    # lines behind milabench's prefix; rank 6 ran ALLREDUCE as #2070, ranks 11-15 REDUCE
    analysis = analyze(NCCL_DATA / "milabench-269-reduce-vs-allreduce")
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks, verdict.finding.seq) == (
        "stage_divergence",
        [6],
        2070,
    )
    assert verdict.headline.startswith(
        "Rank 6 ran ALLREDUCE as collective #2070 where the others ran REDUCE"
    )


def test_the_rank_that_left_no_line_is_the_suspect():
    # meta-pytorch/torchtune#1165: ranks 1-3 timed out in _ALLGATHER_BASE #15037 (an all-gather
    # of 4: NumelOut / NumelIn); rank 0, failing in its checkpoint save, left no line. In the
    # real hangs collected (this one, myria3d#123, ColBERT#318) the one rank that left no line
    # while all others timed out was the one they waited for: named, with medium confidence.
    analysis = analyze(NCCL_DATA / "torchtune-1165-rank0-silent")
    timeout = finding(analysis, "collective_timeout")
    assert timeout.ranks == [1, 2, 3] and timeout.culprit_ranks == [0]
    assert timeout.details["silent_ranks"] == [0]
    assert "Rank 0 left no line in these logs" in timeout.summary
    assert (analysis.verdict.ranks, analysis.verdict.finding.confidence) == ([0], "medium")


def test_ranks_absent_from_most_of_the_group_are_not_named(tmp_path):
    # ranks 5-7 report; 0-4 left no line: more than a quarter of the group is not in the
    # upload, which says more about the upload than about a rank
    files = {"train.log": [timeout_line(rank, 808) for rank in (5, 6, 7)]}
    timeout = finding(analyze_files(tmp_path, files), "collective_timeout")
    assert timeout.details["silent_ranks"] == [] and "left no line" not in timeout.summary


def test_one_rank_absent_below_the_reporters_is_the_suspect(tmp_path):
    files = {"train.log": [timeout_line(rank, 808) for rank in (0, 1, 3, 4, 5, 6, 7)]}
    timeout = finding(analyze_files(tmp_path, files), "collective_timeout")
    assert timeout.details["silent_ranks"] == [2] and timeout.culprit_ranks == [2]


def test_a_huge_group_size_in_the_sizes_makes_no_list_of_ranks(tmp_path):
    # hostile sizes: an all-gather whose NumelOut / NumelIn claims a group of 2^30
    line = (
        "[rank1]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught "
        "collective operation timeout: WorkNCCL(SeqNum=9, OpType=_ALLGATHER_BASE, NumelIn=1, "
        "NumelOut=1073741824, Timeout(ms)=600000) ran for 600063 milliseconds before timing out."
    )
    timeout = finding(analyze_files(tmp_path, {"train.log": [line]}), "collective_timeout")
    assert timeout.details["silent_ranks"] == []


def test_a_rank_whose_own_log_shows_no_failure_is_the_one_that_never_joined(tmp_path):
    # sql-machine-learning/elasticdl#1895, verbatim: worker 0 kept asking for tasks while
    # worker 1 timed out in the barrier; no world size is stated, but both logs are here
    files = {
        "worker0.log": [
            "[2020-07-15 06:29:15,255] [INFO] [task_data_service.py:220:_gen] No tasks for now, maybe more later",
            "[2020-07-15 06:29:20,302] [INFO] [task_data_service.py:220:_gen] No tasks for now, maybe more later",
        ],
        "worker1.log": [
            "ERROR:root:[/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:84] Timed out waiting 60000ms for recv operation to complete",
            "ERROR:root:Application timeout caused pair closure",
        ],
    }
    analysis = analyze_files(tmp_path, files)
    timeout = finding(analysis, "collective_timeout")
    assert timeout.ranks == [1] and timeout.culprit_ranks == [0]
    assert analysis.verdict.ranks == [0] and analysis.verdict.finding.confidence == "medium"


def test_a_stuck_watchdog_of_no_known_rank_is_said_of_a_rank(tmp_path):
    # NVIDIA/Fuser#3055, verbatim: the heartbeat monitor of a rank of process group 4 (its
    # `Rank 2` is within that group, not global)
    line = (
        "[E930 15:23:00.059980974 ProcessGroupNCCL.cpp:1487] [PG ID 4 PG GUID  Rank 2] "
        "ProcessGroupNCCL's watchdog got stuck for 10 seconds without making progress in "
        "monitoring enqueued collectives."
    )
    analysis = analyze_files(tmp_path, {"test.log": [line]})
    assert analysis.verdict.headline.startswith("The NCCL watchdog of a rank got stuck")


def test_half_the_world_unaccounted_for_is_not_named(tmp_path):
    # determined-ai/determined#8915's shape: a world of 8, ranks 1, 2 and 4 in the excerpt
    files = {
        "train.log": [
            "[rank0]: world_size=8 rank=0 local_rank=0",
            *(timeout_line(rank, 1, "ALLGATHER") for rank in (1, 2, 4)),
        ]
    }
    timeout = finding(analyze_files(tmp_path, files), "collective_timeout")
    assert timeout.culprit_ranks == []


# meta-pytorch/torchtune#2093, verbatim: ranks 4 and 5 timed out in a 1-element ALLREDUCE
# while rank 0 wrote a checkpoint for 16 minutes (rank 0 printed nothing of it)
BARRIER_TIMEOUTS = [
    f"[rank{rank}]:[E1129 11:56:57.{stamp} ProcessGroupNCCL.cpp:616] [Rank {rank}] Watchdog "
    "caught collective operation timeout: WorkNCCL(SeqNum=28956, OpType=ALLREDUCE, NumelIn=1, "
    f"NumelOut=1, Timeout(ms)=600000) ran for {elapsed} milliseconds before timing out."
    for rank, stamp, elapsed in ((5, "205862232", 600024), (4, "206174398", 600025))
]


def test_a_barrier_timeout_without_rank_0_suspects_rank_0_with_low_confidence(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": BARRIER_TIMEOUTS})
    timeout = finding(analysis, "collective_timeout")
    assert timeout.culprit_ranks == [0] and timeout.details["culprits_from"] == "rank 0's own work"
    assert (analysis.verdict.ranks, analysis.verdict.finding.confidence) == ([0], "low")


def test_a_barrier_timeout_of_one_rank_among_hundreds_suspects_nobody(tmp_path):
    # NVIDIA/dgxc-benchmarking, grok1/README.md's FAQ (release 25.08), verbatim: rank 368's lines
    # are all the logs hold; the vendor's cause is a platform setting (TP_COMM_OVERLAP), and
    # nothing is known of rank 0 or the 367 others
    lines = [
        "[rank368]:[E808 04:21:41.160918398 ProcessGroupNCCL.cpp:655] [Rank 368] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600001 milliseconds before timing out.",
        "[rank368]:[E808 04:21:41.161005534 ProcessGroupNCCL.cpp:2299] [PG ID 0 PG GUID 0(default_pg) Rank 368]  failure detected by watchdog at work sequence id: 5 PG status: last enqueued work: 5, last completed work: 4",
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    timeout = finding(analysis, "collective_timeout")
    assert timeout.ranks == [368] and timeout.culprit_ranks == []
    assert analysis.verdict.ranks == []


# huggingface/accelerate#223, verbatim (trailing space as posted): rank 2 timed out in a
# BROADCAST of the training loop's data loader while rank 0 evaluated alone for over 30 minutes
BROADCAST_TIMEOUT = (
    "[E ProcessGroupNCCL.cpp:587] [Rank 2] Watchdog caught collective operation timeout: "
    "WorkNCCL(OpType=BROADCAST, Timeout(ms)=1800000) ran for 1802157 milliseconds before timing "
    "out. "
)


def test_a_broadcast_timeout_without_rank_0_suspects_its_source_rank_0(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": [BROADCAST_TIMEOUT]})
    timeout = finding(analysis, "collective_timeout")
    assert timeout.culprit_ranks == [0] and timeout.details["culprits_from"] == "rank 0's broadcast"
    assert (analysis.verdict.ranks, analysis.verdict.finding.confidence) == ([0], "low")
    assert "busy with work of its own" in analysis.verdict.headline
    # rank 0 timing out in it as well: it was in the broadcast, and is not suspected (rank 1,
    # silent between the two, is)
    both = [BROADCAST_TIMEOUT, BROADCAST_TIMEOUT.replace("[Rank 2]", "[Rank 0]")]
    timeout = finding(analyze_files(tmp_path / "both", {"console.log": both}), "collective_timeout")
    assert timeout.culprit_ranks == [1]
    assert timeout.details["culprits_from"] == "the ranks that left no line"


def test_a_barrier_timeout_rank_0_reported_too_suspects_nobody(tmp_path):
    lines = [
        *BARRIER_TIMEOUTS,
        BARRIER_TIMEOUTS[0].replace("rank5", "rank0").replace("Rank 5", "Rank 0"),
    ]
    timeout = finding(analyze_files(tmp_path, {"console.log": lines}), "collective_timeout")
    assert timeout.culprit_ranks == []


# lsdefine/simple_GRPO#46, verbatim (the dump signal's line as the thread's excerpt cuts it):
# rank 5 hears of rank 2's timeout; the thread never found the cause
DUMP_SIGNAL_FROM_RANK_2 = "[rank5]:[E723 01:58:45.667329643 ProcessGroupNCCL.cpp:1743] [PG ID 0 PG GUID 0(default_pg) Rank 5] Received a dump signal due to a collective timeout from  rank 2 and we will try our best to dump the debug info. Last enqueued NCCL work: 136, last completed NCCL work: 136.This is most likely caused b"


def test_another_rank_s_dump_signal_is_the_named_rank_s_timeout(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": [DUMP_SIGNAL_FROM_RANK_2]})
    timeout = finding(analysis, "collective_timeout")
    assert timeout.ranks == [2] and timeout.severity == "error"
    # the line is rank 5's and is quoted as rank 5's
    assert [(e.line, e.rank) for e in timeout.evidence] == [(1, 5)]
    # neither the rank that timed out nor the one that heard of it is blamed
    assert analysis.verdict.ranks == [] and analysis.verdict.finding is timeout


def test_a_rank_first_to_dump_timed_out_and_is_not_blamed(tmp_path):
    # lsdefine/simple_GRPO#46, verbatim: rank 2's watchdog dumps first; the thread never found
    # the cause
    lines = [
        "[rank2]:[E723 01:58:45.511334660 ProcessGroupNCCL.cpp:670] Stack trace of the failed collective not found, potentially because FlightRecorder is disabled. You can enable it by setting TORCH_NCCL_TRACE_BUFFER_SIZE to a non-zero value.",
        "[rank2]:[E723 01:58:45.511452851 ProcessGroupNCCL.cpp:2103] [PG ID 1 PG GUID 1 Rank 2] First PG on this rank to signal dumping.",
        DUMP_SIGNAL_FROM_RANK_2,
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    timeout = finding(analysis, "collective_timeout")
    assert timeout.ranks == [2] and [e.line for e in timeout.evidence] == [2]
    assert analysis.verdict.finding is timeout and analysis.verdict.ranks == []


def test_a_timeout_shorter_than_any_collective_is_the_setting_not_a_rank(tmp_path):
    # instructlab/training#520, verbatim: the PR set the watchdog timeout to 1 ms on purpose
    lines = [
        "terminate called after throwing an instance of 'c10::DistBackendError'",
        "  what():  [PG ID 0 PG GUID 0(default_pg) Rank 3] Process group watchdog thread terminated with exception: [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1) ran for 90 milliseconds before timing out.",
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    timeout = finding(analysis, "collective_timeout")
    assert timeout.culprit_ranks == [] and analysis.verdict.ranks == []
    assert "A timeout of 1 ms is shorter than any collective takes" in timeout.summary
    assert "minutes, not milliseconds" in timeout.fix
    assert analysis.verdict.headline.endswith("the timeout setting is too short")


def test_one_rank_s_timeout_alone_names_no_silent_rank(tmp_path):
    # MLI-lab/DeepDeWedge#22, verbatim: rank 1's lines are all the paste holds; the others
    # are missing from the excerpt, not proven silent (the cause was the machine)
    lines = [
        "[rank1]:[E ProcessGroupNCCL.cpp:523] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=44, OpType=ALLREDUCE, NumelIn=6832129, NumelOut=6832129, Timeout(ms)=1800000) ran for 1800772 milliseconds before timing out.",
        "[rank1]:[E ProcessGroupNCCL.cpp:537] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
        "[rank1]:[E ProcessGroupNCCL.cpp:543] To avoid data inconsistency, we are taking the entire process down.",
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    assert finding(analysis, "collective_timeout").culprit_ranks == []
    assert analysis.verdict.ranks == []


# ivadomed/seg-sc-ms-lesion-multicontrast#53 (an nnU-Net run), verbatim: rank 1's ALLGATHER
# gathers 3 elements into 6, so its group is rank 1 and one more; rank 0 printed only the
# unranked epoch lines before it
PAIR = [
    "2025-04-12 03:48:04.077450: Epoch 453",
    "2025-04-12 03:48:04.078914: Current learning rate: 0.00581",
    "[rank1]:[E412 04:21:24.254321149 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4128661, OpType=ALLGATHER, NumelIn=3, NumelOut=6, Timeout(ms)=600000) ran for 600060 milliseconds before timing out.",
    "[rank1]:[E412 04:21:25.573431017 ProcessGroupNCCL.cpp:1834] [PG ID 0 PG GUID 0(default_pg) Rank 1] Timeout at NCCL work: 4128661, last enqueued NCCL work: 4128690, last completed NCCL work: 4128660.",
]


def test_one_rank_s_timeout_in_a_group_of_two_names_the_other(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": PAIR})
    timeout = finding(analysis, "collective_timeout")
    assert (timeout.ranks, timeout.culprit_ranks) == ([1], [0])
    assert analysis.verdict.ranks == [0]


def test_one_rank_s_timeout_in_a_larger_group_names_no_one(tmp_path):
    # the same report gathering 3 elements into 12: three other ranks, none of them seen
    lines = [line.replace("NumelOut=6", "NumelOut=12") for line in PAIR]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    assert finding(analysis, "collective_timeout").culprit_ranks == []


# huggingface/alignment-handbook#59, verbatim: the main process announces the upload, then
# its own ZeRO-3 parameter ALLGATHER (a save inside `push_to_hub`) times out; the other rank,
# waiting at the script's barrier, printed nothing
PUSHED = [
    "2023-12-01 00:05:43 - INFO - __main__ - Pushing to hub...",
    "[E ProcessGroupNCCL.cpp:475] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=130722, OpType=ALLGATHER, NumelIn=65536000, NumelOut=131072000, Timeout(ms)=1800000) ran for 1800460 milliseconds before timing out.",
    "[E ProcessGroupNCCL.cpp:489] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
    "[E ProcessGroupNCCL.cpp:495] To avoid data inconsistency, we are taking the entire process down.",
]


def test_a_lone_timeout_right_after_announcing_one_process_work_names_that_rank(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": PUSHED})
    timeout = finding(analysis, "collective_timeout")
    assert (timeout.ranks, timeout.culprit_ranks) == ([0], [0])
    assert timeout.details["culprits_from"] == "the rank alone in its own work"
    assert "outside `if is_main_process:`" in timeout.fix
    # the announcement is quoted before the timeout
    assert [evidence.line for evidence in timeout.evidence] == [1, 2]


def test_a_lone_timeout_in_a_barrier_after_the_announcement_waits_for_the_others(tmp_path):
    # the same report in a one-element collective: the barrier after the upload, where rank 0
    # waits for the others; the group of two then names the other rank
    lines = [
        line.replace("NumelIn=65536000, NumelOut=131072000", "NumelIn=1, NumelOut=2")
        for line in PUSHED
    ]
    timeout = finding(analyze_files(tmp_path, {"console.log": lines}), "collective_timeout")
    assert timeout.culprit_ranks == [1]


THREADS = Path(__file__).parents[1] / "data" / "threads"

# huggingface/accelerate#3861, verbatim: rank 1 timed out in a barrier only the main process
# skipped; rank 0 only observed rank 1's dump signal
OBSERVED = [
    "[rank1]:[E1128 21:11:49.041194513 ProcessGroupNCCL.cpp:1870] [PG ID 0 PG GUID 0(default_pg) Rank 1] Received a dump signal due to a collective timeout from this local rank and we will try our best to dump the debug info. Last enqueued NCCL work: 22, last completed NCCL work: 21.This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in the communications library (e.g. NCCL), etc. ",
    "[rank0]:[E1128 21:11:49.041188078 ProcessGroupNCCL.cpp:1806] [PG ID 0 PG GUID 0(default_pg) Rank 0] Observed flight recorder dump signal from another rank via TCPStore.",
]


def test_a_rank_that_only_observed_the_dump_signal_is_the_suspect(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": OBSERVED})
    timeout = finding(analysis, "collective_timeout")
    assert (timeout.ranks, timeout.culprit_ranks) == ([1], [0])
    assert "only observed another rank's dump signal" in timeout.summary
    assert timeout.details["suspect_confidence"] == "low"


def test_no_rank_is_called_silent_while_a_report_has_no_rank(tmp_path):
    # hiyouga/LlamaFactory#8261 (tests/data/threads): ranks 0-2 report the timeout behind a
    # paste's line-number gutter; read without the gutter's numbers, every rank is there
    lines = (THREADS / "llamafactory8261_gutter.log").read_text(encoding="utf-8").splitlines()
    analysis = analyze_files(tmp_path, {"console.log": lines})
    timeout = finding(analysis, "collective_timeout")
    assert timeout.ranks == [0, 1, 2] and timeout.culprit_ranks == []
    assert analysis.verdict.ranks == []
    # the same lines with rank 0's cut to what no prefix attributes (constructed): rank 0 is
    # not named "silent" for it
    cut = [line.replace("[rank0]:", "") for line in lines]
    timeout = finding(analyze_files(tmp_path / "cut", {"console.log": cut}), "collective_timeout")
    assert timeout.culprit_ranks == []


def test_a_rank_outside_the_subgroup_that_timed_out_is_no_suspect(tmp_path):
    # PrimeIntellect-ai/prime-rl#3186, verbatim: rank 13 timed out in an expert group's
    # all-to-all (its group rank is 1); rank 0, not in that group, observed the dump signal
    lines = [
        "[rank13]:[E804 23:05:54.516665906 ProcessGroupNCCL.cpp:689] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1438, OpType=ALLTOALL_BASE, NumelIn=195004416, NumelOut=195004416, Timeout(ms)=600000) ran for 600093 milliseconds before timing out.",
        "[rank13]:[E804 23:05:54.517045067 ProcessGroupNCCL.cpp:2303] [PG ID 3 PG GUID d03ba143833c6bf31b072ffdb22f1745957fcbfb Rank 1]  failure detected by watchdog at work sequence id: 1438 PG status: last enqueued work: 1441, last completed work: 1437",
        "[rank13]:[E804 23:05:54.518322344 ProcessGroupNCCL.cpp:733] Stack trace of the failed collective: ",
        "#0 all_to_all_single from /home/daniel/git/prime-rl-laguna-upstream/.venv/lib/python3.12/site-packages/torch/distributed/distributed_c10d.py:4829",
        "#1 wrapper from /home/daniel/git/prime-rl-laguna-upstream/.venv/lib/python3.12/site-packages/torch/distributed/c10d_logger.py:83",
    ]
    observed = [
        # rank 0's own log (rank0_stderr.log in the thread), verbatim
        "[rank0]:[E804 23:05:54.816499929 ProcessGroupNCCL.cpp:1849] [PG ID 0 PG GUID 0(default_pg) Rank 0] Observed flight recorder dump signal from another rank via TCPStore.",
    ]
    files = {"rank13.log": lines, "rank0_stderr.log": observed}
    timeout = finding(analyze_files(tmp_path, files), "collective_timeout")
    assert timeout.ranks == [13] and timeout.culprit_ranks == []


def test_ranks_that_never_enqueued_the_collective_are_the_ones_waited_for(tmp_path):
    # Pein2017/CoordExp's provenance record of an 8-rank run, per-rank lines verbatim: ranks 1
    # and 2 timed out in BROADCAST #78; rank 4's dump-signal line says its last enqueued work
    # was 77: it never issued #78
    files = {
        "rank1.log": [
            "[rank1]:[E810 03:04:11.061727749 ProcessGroupNCCL.cpp:683] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=78, OpType=BROADCAST, NumelIn=80, NumelOut=80, Timeout(ms)=600000) ran for 600096 milliseconds before timing out.",
            "[rank1]:[E810 03:04:11.063313477 ProcessGroupNCCL.cpp:2241] [PG ID 0 PG GUID 0(default_pg) Rank 1]  failure detected by watchdog at work sequence id: 78 PG status: last enqueued work: 79, last completed work: 77",
        ],
        "rank2.log": [
            "[rank2]:[E810 03:04:10.939039900 ProcessGroupNCCL.cpp:683] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=78, OpType=BROADCAST, NumelIn=80, NumelOut=80, Timeout(ms)=600000) ran for 600087 milliseconds before timing out.",
            "[rank2]:[E810 03:04:10.940346318 ProcessGroupNCCL.cpp:2241] [PG ID 0 PG GUID 0(default_pg) Rank 2]  failure detected by watchdog at work sequence id: 78 PG status: last enqueued work: 79, last completed work: 77",
        ],
        "rank4.log": [
            "[rank4]:[E810 03:04:11.562661853 ProcessGroupNCCL.cpp:1858] [PG ID 0 PG GUID 0(default_pg) Rank 4] Received a dump signal due to a collective timeout from  rank 1 and we will try our best to dump the debug info. Last enqueued NCCL work: 77, last completed NCCL work: 77.This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in the communications library (e.g. NCCL), etc. ",
        ],
    }
    analysis = analyze_files(tmp_path, files)
    timeout = finding(analysis, "collective_timeout")
    assert timeout.ranks == [1, 2] and timeout.culprit_ranks == [4]
    assert timeout.details["culprits_from"] == "the ranks that never enqueued it"
    assert analysis.verdict.ranks == [4]


def test_two_ranks_that_timed_out_at_different_numbers_are_each_said_where_and_none_blamed(
    tmp_path,
):
    # huggingface/accelerate#3250, verbatim: rank 0 gave up in #122, rank 1 in #126
    lines = [
        "[rank0]:[E1122 06:40:00.504052851 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=122, OpType=_REDUCE_SCATTER_BASE, NumelIn=106343680, NumelOut=53171840, Timeout(ms)=600000) ran for 600080 milliseconds before timing out.",
        "[rank0]:[E1122 06:40:00.504952916 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 0] Exception (either an error or timeout) detected by watchdog at work: 122, last enqueued NCCL work: 127, last completed NCCL work: 121.",
        "[rank1]:[E1122 06:40:01.902604829 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=126, OpType=_ALLGATHER_BASE, NumelIn=378702080, NumelOut=757404160, Timeout(ms)=600000) ran for 600079 milliseconds before timing out.",
        "[rank1]:[E1122 06:40:01.903028278 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 1] Exception (either an error or timeout) detected by watchdog at work: 126, last enqueued NCCL work: 128, last completed NCCL work: 125.",
    ]
    analysis = analyze_files(tmp_path, {"nccl_error.log": lines})
    timeout = finding(analysis, "collective_timeout")
    assert (
        "at different points (rank 0: _REDUCE_SCATTER_BASE #122; rank 1: _ALLGATHER_BASE #126)"
        in timeout.summary
    )
    assert timeout.op is None  # no one collective both gave up in
    # rank 1 had completed #122-#125, which rank 0 was still in: not a rank that lagged (it
    # would have timed out in nothing) but two ranks out of step, and two cannot say which
    assert timeout.culprit_ranks == []
    apart = finding(analysis, "collective_mismatch")
    assert apart.ranks == [0, 1] and apart.blames_nobody
    assert analysis.verdict.finding is apart and analysis.verdict.ranks == []
    assert verdict_headline(analysis.verdict) == (
        "Ranks 0 and 1 were out of step in their collectives (#122, #126); ranks 0 and 1 "
        "timed out after 10 min"
    )


# isaac-sim/OmniIsaacGymEnvs#50, verbatim: a job of two ranks; rank 1's watchdog fires in the
# first BROADCAST, rank 0's in ALLREDUCE #3, having finished #1 and #2
TWO_APART = [
    "Error executing job with overrides: ['headless=True', 'task=AnymalTerrain', 'multi_gpu=True']",
    "[E ProcessGroupNCCL.cpp:456] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
    "[E ProcessGroupNCCL.cpp:461] To avoid data inconsistency, we are taking the entire process down.",
    "terminate called after throwing an instance of 'std::runtime_error'",
    "  what():  [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST, Timeout(ms)=1800000) ran for 1806521 milliseconds before timing out.",
    "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 28378 closing signal SIGTERM",
    "[E ProcessGroupNCCL.cpp:821] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=3, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1806882 milliseconds before timing out.",
    "[E ProcessGroupNCCL.cpp:456] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
    "[E ProcessGroupNCCL.cpp:461] To avoid data inconsistency, we are taking the entire process down.",
    "terminate called after throwing an instance of 'std::runtime_error'",
]


def test_of_two_ranks_the_one_still_in_work_the_other_finished_lagged_behind(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": TWO_APART})
    timeout = finding(analysis, "collective_timeout")
    assert timeout.culprit_ranks == [1]
    assert analysis.verdict.ranks == [1]
    assert verdict_headline(analysis.verdict) == (
        "Ranks 0 and 1 timed out after 30 min; rank 1 lagged behind"
    )


def test_a_store_that_closed_the_connection_during_set_up_lost_its_host_rank(tmp_path):
    # snowflakedb/ArcticTraining#233, verbatim: rank 0 (the store's host) had exited in its data
    # loading; rank 1's wait for the NCCL id was reset, not timed out
    lines = [
        "[rank1]: torch.distributed.DistBackendError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Connection reset by peer",
        "[rank1]: Exception raised from recvBytes at ../torch/csrc/distributed/c10d/Utils.hpp:672 (most recent call first):",
    ]
    analysis = analyze_files(tmp_path, {"rank1.log": lines})
    verdict = analysis.verdict
    assert verdict.ranks == [0] and verdict.finding.details["store_lost"] is True
    assert "the store rank 0 hosts closed the connection" in verdict.finding.summary
    assert "timed out" not in verdict.finding.summary
    assert verdict_headline(verdict) == "Process group set-up lost the store rank 0 hosts"
    assert "the store's host singles out rank 0" in verdict.reason


# ultralytics/yolov5#4290, verbatim (two pieces of one paste): every rank waits at key 1 with
# twice the world counted, then the agent restarts the workers
OVERCOUNTED_WAITS = [
    "Waiting in store based barrier to initialize process group for rank: 0, key: store_based_barrier_key:1 (world_size=4, worker_count=8, timeout=0:01:00)",
    "Waiting in store based barrier to initialize process group for rank: 3, key: store_based_barrier_key:1 (world_size=4, worker_count=8, timeout=0:01:00)",
    "Waiting in store based barrier to initialize process group for rank: 1, key: store_based_barrier_key:1 (world_size=4, worker_count=8, timeout=0:01:00)",
    "Waiting in store based barrier to initialize process group for rank: 2, key: store_based_barrier_key:1 (world_size=4, worker_count=8, timeout=0:01:00)",
]
RESTARTED = [
    "ERROR:torch.distributed.elastic.agent.server.local_elastic_agent:[default] Worker group failed",
    "INFO:torch.distributed.elastic.agent.server.api:[default] Worker group FAILED. 2/3 attempts left; will restart worker group",
    "INFO:torch.distributed.elastic.agent.server.api:[default] Stopping worker group",
    "INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous'ing worker group",
    "INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous complete for workers. Result:",
    "  restart_count=2",
    "  master_addr=127.0.0.1",
    "  master_port=29500",
    "  group_rank=0",
    "  group_world_size=1",
    "  local_ranks=[0, 1, 2, 3]",
    "  role_ranks=[0, 1, 2, 3]",
    "  global_ranks=[0, 1, 2, 3]",
    "  role_world_sizes=[4, 4, 4, 4]",
    "  global_world_sizes=[4, 4, 4, 4]",
    "",
    "INFO:torch.distributed.elastic.agent.server.api:[default] Starting worker group",
    "INFO:torch.distributed.elastic.multiprocessing:Setting worker0 reply file to: /tmp/torchelastic_ss5h62fz/none_dps7frav/attempt_2/0/error.json",
    "INFO:torch.distributed.elastic.multiprocessing:Setting worker1 reply file to: /tmp/torchelastic_ss5h62fz/none_dps7frav/attempt_2/1/error.json",
    "INFO:torch.distributed.elastic.multiprocessing:Setting worker2 reply file to: /tmp/torchelastic_ss5h62fz/none_dps7frav/attempt_2/2/error.json",
]


def test_a_store_barrier_counting_more_than_the_world_is_an_earlier_attempt_s(tmp_path):
    analysis = analyze_files(
        tmp_path, {"output_barrier.log": OVERCOUNTED_WAITS, "output_restart.log": RESTARTED}
    )
    stuck = analysis.verdict.finding
    assert stuck.kind == "collective_timeout" and stuck.blames_nobody
    assert "counts 8 arrivals for a world of 4" in stuck.summary
    assert "will restart worker group" in stuck.fix


def test_a_communicator_aborted_on_a_rank_is_its_collective_that_failed(tmp_path):
    # deepspeedai/DeepSpeed#1834, verbatim (Open MPI's tags; the paste stops inside rank 60's
    # stack): rank 19's re-raised abort is the hang's only word; rank 60's cut traceback below
    # it is the same abort reaching another rank, not a failure of its own
    lines = [
        "[1,19]<stderr>:RuntimeError[1,19]<stderr>:: NCCL communicator was aborted on rank 19.",
        "[1,60]<stderr>:Traceback (most recent call last):",
        '[1,60]<stderr>:  File "src/qd/qd_common.py", line 3868, in <module>',
        "[1,60]<stderr>:    locals()[function_name](**kwargs)",
        '[1,60]<stderr>:  File "/tmp/code/quickdetection/src/qd/opt/trainer.py", line 1540, in do',
        "[1,60]<stderr>:    self.inner_loop()",
    ]
    analysis = analyze_files(tmp_path, {"train.log": lines})
    assert (analysis.verdict.finding.kind, analysis.verdict.finding.ranks) == (
        "collective_timeout",
        [19],
    )
    assert analysis.recognised_lines == analysis.lines


# TorchInferno's 8-GPU server log (the code index's file 60331145948, a benchmark summary),
# verbatim: ranks 0-6's dump signal from their own timeout, rank 7's from rank 3's, its last
# enqueued work the one the others last completed
NEVER_ISSUED = [
    "[rank3]:[E710 18:00:32.603241927 ProcessGroupNCCL.cpp:1987] [PG ID 0 PG GUID 0(default_pg) Rank 3] Received a dump signal due to a collective timeout from this local rank and we will try our best to dump the debug info. Last enqueued NCCL work: 59998, last completed NCCL work: 59957.This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in the communications library (e.g. NCCL), etc. ",
    "[rank1]:[E710 18:00:32.686224934 ProcessGroupNCCL.cpp:1987] [PG ID 0 PG GUID 0(default_pg) Rank 1] Received a dump signal due to a collective timeout from this local rank and we will try our best to dump the debug info. Last enqueued NCCL work: 59998, last completed NCCL work: 59957.This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in the communications library (e.g. NCCL), etc. ",
    "[rank2]:[E710 18:00:32.686262246 ProcessGroupNCCL.cpp:1987] [PG ID 0 PG GUID 0(default_pg) Rank 2] Received a dump signal due to a collective timeout from this local rank and we will try our best to dump the debug info. Last enqueued NCCL work: 59998, last completed NCCL work: 59957.This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in the communications library (e.g. NCCL), etc. ",
    "[rank5]:[E710 18:00:32.686365442 ProcessGroupNCCL.cpp:1987] [PG ID 0 PG GUID 0(default_pg) Rank 5] Received a dump signal due to a collective timeout from this local rank and we will try our best to dump the debug info. Last enqueued NCCL work: 59998, last completed NCCL work: 59957.This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in the communications library (e.g. NCCL), etc. ",
    "[rank6]:[E710 18:00:32.686417085 ProcessGroupNCCL.cpp:1987] [PG ID 0 PG GUID 0(default_pg) Rank 6] Received a dump signal due to a collective timeout from this local rank and we will try our best to dump the debug info. Last enqueued NCCL work: 59998, last completed NCCL work: 59957.This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in the communications library (e.g. NCCL), etc. ",
    "[rank4]:[E710 18:00:32.686477409 ProcessGroupNCCL.cpp:1987] [PG ID 0 PG GUID 0(default_pg) Rank 4] Received a dump signal due to a collective timeout from this local rank and we will try our best to dump the debug info. Last enqueued NCCL work: 59998, last completed NCCL work: 59957.This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in the communications library (e.g. NCCL), etc. ",
    "[rank7]:[E710 18:00:32.686716232 ProcessGroupNCCL.cpp:1987] [PG ID 0 PG GUID 0(default_pg) Rank 7] Received a dump signal due to a collective timeout from  rank 3 and we will try our best to dump the debug info. Last enqueued NCCL work: 59957, last completed NCCL work: 59957.This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in the communications library (e.g. NCCL), etc. ",
    "[rank0]:[E710 18:00:32.089607983 ProcessGroupNCCL.cpp:1987] [PG ID 0 PG GUID 0(default_pg) Rank 0] Received a dump signal due to a collective timeout from this local rank and we will try our best to dump the debug info. Last enqueued NCCL work: 59998, last completed NCCL work: 59957.This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in the communications library (e.g. NCCL), etc. ",
]


def test_a_rank_whose_last_enqueued_work_is_the_others_last_completed_never_issued_it(tmp_path):
    analysis = analyze_files(tmp_path, {"server.log": NEVER_ISSUED})
    timeout = finding(analysis, "collective_timeout")
    assert timeout.blamed == [7] and timeout.role == "symptom"
    assert timeout.details["culprits_from"] == "the ranks that never enqueued it"
    # the departure itself is the verdict (tests/test_never_issued.py)
    assert analysis.verdict.finding.kind == "stage_divergence"


# "Standalone ProcessGroupNCCL validation", a record committed in a public repository (found in
# the code index; the poster cut each c10d prefix to `[rankN] ... `): PyTorch 2.13, two GPUs;
# rank 1 raised an injected error and went into `destroy_process_group` while rank 0 waited
# in its second all-reduce
SHUT_DOWN_WHILE_WAITED_FOR = [
    "rank 0: all-reduce enqueued; waiting",
    "rank 1: injecting local failure",
    "rank 1: destroy_process_group entered",
    "[rank1] ... Rank 1] Watchdog joined, destroying NCCL communicators.",
    "[rank0] ... [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, "
    "OpType=ALLREDUCE, NumelIn=16, NumelOut=16, Timeout(ms)=30000) ran for 30005 milliseconds "
    "before timing out.",
    "[rank0] ... Rank 0] Broadcasting signal exception_dump to other ranks via TCPStore.",
    "[rank0] ... Rank 0] Flight Recorder trace successfully dumped.",
]


def test_a_rank_that_shut_its_process_group_down_is_the_one_the_others_waited_for(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": SHUT_DOWN_WHILE_WAITED_FOR})
    timeout = analysis.verdict.finding
    assert (timeout.kind, timeout.ranks, timeout.culprit_ranks) == ("collective_timeout", [0], [1])
    assert analysis.verdict.ranks == [1]
    assert analysis.verdict.headline.endswith("rank 1 had shut down its process group")
    assert "shut down its process group (`destroy_process_group`)" in timeout.summary
    # the rank that timed out is never its own culprit, even as it tears down after the report
    own = [
        *SHUT_DOWN_WHILE_WAITED_FOR[4:5],
        "[rank0] ... Rank 0] Watchdog joined, destroying NCCL communicators.",
    ]
    alone = analyze_files(tmp_path / "own", {"console.log": own}).verdict.finding
    assert alone.culprit_ranks == []


# MarioPasc/MU-Diff, error_logs/log_mudiff_t2.13920881.{out,err} (at 929d505), verbatim: a
# 2-process SLURM job; both ranks announce themselves on stdout, then only rank 1's watchdog
# reports, an hour into training
SLURM_OUT = [
    "Node rank 0, local proc 0, global proc 0",
    "Node rank 0, local proc 1, global proc 1",
    "[rank: 0] pre-pinning to GPU, CUDA_VISIBLE_DEVICES=6,7",
    "[rank: 1] pre-pinning to GPU, CUDA_VISIBLE_DEVICES=6,7",
    "[rank: 0] pinned to GPU 0, CUDA_VISIBLE_DEVICES=6",
    "[rank: 1] pinned to GPU 0, CUDA_VISIBLE_DEVICES=7",
]
SLURM_ERR = [
    "[rank1]:[E1012 20:28:49.057051422 ProcessGroupNCCL.cpp:607] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=668, OpType=ALLREDUCE, NumelIn=52, NumelOut=52, Timeout(ms)=600000) ran for 600097 milliseconds before timing out.",
    "[rank1]:[E1012 20:28:49.067761202 ProcessGroupNCCL.cpp:1664] [PG 0 (default_pg) Rank 1] Exception (either an error or timeout) detected by watchdog at work: 668, last enqueued NCCL work: 669, last completed NCCL work: 667.",
    "[rank1]:[E1012 20:28:49.069012768 ProcessGroupNCCL.cpp:1709] [PG 0 (default_pg) Rank 1] Timeout at NCCL work: 668, last enqueued NCCL work: 669, last completed NCCL work: 667.",
]


def test_a_rank_seen_in_the_console_that_reported_nothing_never_joined(tmp_path):
    analysis = analyze_files(tmp_path, {"job.out": SLURM_OUT, "job.err": SLURM_ERR})
    timeout = finding(analysis, "collective_timeout")
    assert (timeout.ranks, timeout.culprit_ranks) == ([1], [0])
    assert analysis.verdict.headline.endswith("rank 0 most likely never joined")


def test_a_console_without_the_silent_rank_s_lines_names_no_one(tmp_path):
    analysis = analyze_files(tmp_path, {"job.err": SLURM_ERR})
    assert finding(analysis, "collective_timeout").culprit_ranks == []


# flytocc/rtdetr-mmdet#1, verbatim: rank 1's timeout told only inside its Python exception, the
# two others' watchdog lines
ABORTED_WITH_ITS_REASON = [
    "RuntimeError: NCCL communicator was aborted on rank 1.  Original reason for failure was: [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2511984, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1809553 milliseconds before timing out.",
    "[E ProcessGroupNCCL.cpp:828] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2511984, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1809826 milliseconds before timing out.",
    "[E ProcessGroupNCCL.cpp:828] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2511984, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1809836 milliseconds before timing out.",
]


def test_an_exception_quoting_the_watchdog_s_report_is_that_timeout_not_a_wait_of_its_own(
    tmp_path,
):
    analysis = analyze_files(tmp_path, {"train.log": ABORTED_WITH_ITS_REASON})
    timeout = analysis.verdict.finding
    assert (timeout.kind, timeout.ranks, timeout.seq) == ("collective_timeout", [0, 1, 2], 2511984)
    assert [f.kind for f in analysis.findings] == ["collective_timeout"]
