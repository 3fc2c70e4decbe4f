# ruff: noqa: E501 -- test data are verbatim log lines
"""ProcessGroupNCCL watchdog lines, verbatim from /work/shared/formats.md §4 and the field
samples (sources in the comments)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from logforensics.framing import frame_lines
from parsers.watchdog import PARSER
from tests.builders import analyze_files, only, parsed_by

ROOT = Path(__file__).resolve().parents[2]


def watchdog_events(lines: list[str]) -> pl.DataFrame:
    return parsed_by("watchdog", lines)


def content_rows(lines: list[str]) -> pl.DataFrame:
    """What the parser itself says about each line it recognises, before rank attribution."""
    frame = pl.DataFrame(
        {"file": ["job.log"] * len(lines), "line": range(1, len(lines) + 1), "text": lines},
        schema={"file": pl.String, "line": pl.UInt32, "text": pl.String},
    )
    framed = frame_lines(frame)
    candidates = framed.filter(pl.col("message").str.contains_any(list(PARSER.literals)))
    return PARSER.parse(candidates.with_columns(pl.lit(True).alias("candidate"))).sort("line")


TIMEOUTS = [
    # OFA-Sys/OFA#271 (torch 1.x: no prefix, no time)
    (
        "[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=469508, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802212 milliseconds before timing out.",
        dict(
            rank=1,
            seq=469508,
            op="ALLREDUCE",
            numel_in=None,
            numel_out=None,
            timeout_ms=1800000,
            elapsed_ms=1802212,
            pg=None,
            comm_rank=1,
        ),
    ),
    # huggingface/accelerate#2174 (torch ~2.1)
    (
        "[E ProcessGroupNCCL.cpp:916] [Rank 2] NCCL watchdog thread terminated with exception: [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=48490, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800781 milliseconds before timing out.",
        dict(
            rank=2,
            seq=48490,
            op="ALLREDUCE",
            numel_in=1,
            numel_out=1,
            timeout_ms=1800000,
            elapsed_ms=1800781,
        ),
    ),
    # meta-llama/llama-cookbook#543 (torch 2.2.2)
    (
        "[rank1]:[E ProcessGroupNCCL.cpp:523] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=_ALLGATHER_BASE, NumelIn=262669312, NumelOut=1050677248, Timeout(ms)=600000) ran for 600487 milliseconds before timing out.",
        dict(
            rank=1,
            seq=1,
            op="_ALLGATHER_BASE",
            numel_in=262669312,
            numel_out=1050677248,
            timeout_ms=600000,
            elapsed_ms=600487,
        ),
    ),
    # mlfoundations/open_clip#1024 (torch 2.5.1, glog time)
    (
        "[rank5]:[E126 01:17:58.183471014 ProcessGroupNCCL.cpp:616] [Rank 5] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=14217, OpType=ALLGATHER, NumelIn=65536, NumelOut=524288, Timeout(ms)=600000) ran for 600002 milliseconds before timing out.",
        dict(
            rank=5, seq=14217, op="ALLGATHER", numel_in=65536, numel_out=524288, elapsed_ms=600002
        ),
    ),
    # huggingface/diffusers#12422 (blocking wait: no elapsed time)
    (
        "[rank1]:[E1002 18:16:40.662691402 ProcessGroupNCCL.cpp:756] [Rank 1] Work WorkNCCL(SeqNum=2521, OpType=ALLREDUCE, NumelIn=160672064, NumelOut=160672064, Timeout(ms)=600000) timed out in blocking wait.",
        dict(
            rank=1, seq=2521, op="ALLREDUCE", numel_in=160672064, timeout_ms=600000, elapsed_ms=None
        ),
    ),
    # huggingface/accelerate#2174: the C++ `what():` of the abort
    (
        "  what():  [Rank 2] NCCL watchdog thread terminated with exception: [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=48490, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800781 milliseconds before timing out.",
        dict(rank=2, seq=48490, elapsed_ms=1800781),
    ),
    # instructlab/training#520 (torch 2.3+: PG tag on the outer message)
    (
        "  what():  [PG ID 0 PG GUID 0(default_pg) Rank 3] Process group watchdog thread terminated with exception: [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1) ran for 90 milliseconds before timing out.",
        dict(rank=3, seq=1, timeout_ms=1, elapsed_ms=90, pg="0 (default_pg)", comm_rank=3),
    ),
    # open-mmlab/mmdetection#12392 (main-thread re-raise, double space kept)
    (
        "RuntimeError: NCCL communicator was aborted on rank 1.  Original reason for failure was: [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2511984, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1809553 milliseconds before timing out.",
        dict(rank=1, seq=2511984, op="ALLREDUCE", timeout_ms=1800000, elapsed_ms=1809553),
    ),
    # weathergen-360: srun label `11: ` in front of the torch prefix (not peeled yet)
    (
        "11: [rank11]:[E617 15:17:35.520063769 ProcessGroupNCCL.cpp:1895] [PG ID 0 PG GUID 0(default_pg) Rank 11] Process group watchdog thread terminated with exception: [Rank 11] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=52, OpType=ALLREDUCE, NumelIn=11, NumelOut=11, Timeout(ms)=240000) ran for 240077 milliseconds before timing out.",
        dict(
            rank=11,
            seq=52,
            op="ALLREDUCE",
            numel_in=11,
            timeout_ms=240000,
            elapsed_ms=240077,
            pg="0 (default_pg)",
        ),
    ),
    # qlorapipe-19: pdsh host prefix
    (
        "node04: [E ProcessGroupNCCL.cpp:474] [Rank 7] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5727, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800240 milliseconds before timing out.",
        dict(rank=7, seq=5727, op="ALLREDUCE", numel_in=1, timeout_ms=1800000, elapsed_ms=1800240),
    ),
    # nccl-1409: indented by four spaces in the paste
    (
        "    [rank7]:[E816 01:45:40.183009389 ProcessGroupNCCL.cpp:607] [Rank 7] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=80078, OpType=BROADCAST, NumelIn=5056, NumelOut=5056, Timeout(ms)=600000) ran for 600026 milliseconds before timing out.",
        dict(rank=7, seq=80078, op="BROADCAST", numel_in=5056, elapsed_ms=600026),
    ),
    # pl-19487: the line starts after a progress bar that had no newline
    (
        "Epoch 0:   6%|██                               | 32040/500150 [6:28:43<94:39:17,  1.37it/s, loss=2.6, v_num=95nc, reduced_train_loss=2.590, global_step=3.2e+4, consumed_samples=2.56e+7][E ProcessGroupNCCL.cpp:458] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=96120, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 25624887 milliseconds before timing out.",
        dict(rank=0, seq=96120, timeout_ms=1800000, elapsed_ms=25624887),
    ),
    # funasr-2006
    (
        "[rank5]:[E ProcessGroupNCCL.cpp:563] [Rank 5] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=15734, OpType=ALLREDUCE, NumelIn=220084533, NumelOut=220084533, Timeout(ms)=600000) ran for 600037 milliseconds before timing out.",
        dict(rank=5, seq=15734, numel_in=220084533, numel_out=220084533),
    ),
]


@pytest.mark.parametrize(("line", "expected"), TIMEOUTS)
def test_collective_timeout_in_every_generation_and_wrapping(line, expected):
    row = only(watchdog_events([line]))
    assert (row["event"], row["severity"], row["family"]) == (
        "collective_timeout",
        "error",
        "watchdog",
    )
    assert {key: row[key] for key in expected} == expected


# A rank's own report that its collective timed out, with its watermark: a timeout, not progress.
OWN_TIMEOUTS = [
    # pytorch/pytorch#22834
    (
        "[rank3]:[E ProcessGroupNCCL.cpp:1537] [PG 0 Rank 3] Timeout at NCCL work: 4084, last enqueued NCCL work: 4084, last completed NCCL work: 4083.",
        dict(rank=3, seq=4084, last_enqueued=4084, last_completed=4083, pg="0", comm_rank=3),
    ),
    # NVIDIA/physicsnemo#691
    (
        "[rank3]:[E1016 03:33:45.319844411 ProcessGroupNCCL.cpp:1583] [PG 0 Rank 3] Exception (either an error or timeout) detected by watchdog at work: 50, last enqueued NCCL work: 50, last completed NCCL work: 49.",
        dict(seq=50, last_enqueued=50, last_completed=49, pg="0"),
    ),
    # nccl-1409 (indented)
    (
        "    [rank7]:[E816 01:45:40.184373931 ProcessGroupNCCL.cpp:1664] [PG 0 (default_pg) Rank 7] Exception (either an error or timeout) detected by watchdog at work: 80078, last enqueued NCCL work: 80078, last completed NCCL work: 80077.",
        dict(
            rank=7,
            seq=80078,
            last_enqueued=80078,
            last_completed=80077,
            pg="0 (default_pg)",
            comm_rank=7,
        ),
    ),
    # basicsr-737
    (
        "[rank1]:[E626 06:24:44.906457629 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 1] Exception (either an error or timeout) detected by watchdog at work: 808, last enqueued NCCL work: 811, last completed NCCL work: 807.",
        dict(rank=1, seq=808, last_enqueued=811, last_completed=807, pg="0 (default_pg)"),
    ),
    # snowflakedb/ArcticTraining#219 (double space before `failure`)
    (
        "[rank5]:[E626 16:48:25.440238649 ProcessGroupNCCL.cpp:2268] [PG ID 0 PG GUID 0(default_pg) Rank 5]  failure detected by watchdog at work sequence id: 120049 PG status: last enqueued work: 120051, last completed work: 120048",
        dict(rank=5, seq=120049, last_enqueued=120051, last_completed=120048, last_started=None),
    ),
    # modelscope/DiffSynth-Studio#458 (sub-group: the rank comes from the prefix only)
    (
        "[rank4]:[E318 07:39:53.792780659 ProcessGroupNCCL.cpp:1834] [PG ID 2 PG GUID 9 Rank 4] Timeout at NCCL work: 610, last enqueued NCCL work: 616, last completed NCCL work: 609.",
        dict(
            rank=4,
            rank_from="prefix",
            seq=610,
            last_enqueued=616,
            last_completed=609,
            pg="9",  # the group by its GUID: the same on every rank of it
            comm_rank=4,
        ),
    ),
    # vllm-project/vllm-omni#2928: the dump signal of the rank's own timeout
    (
        "[rank1]:[E418 01:32:50.907313453 ProcessGroupNCCL.cpp:1890] [PG ID 0 PG GUID 0(default_pg) Rank 1] Received a dump signal due to a collective timeout from this local rank and we will try our best to dump the debug info. Last enqueued NCCL work: 233659, last completed NCCL work: 233659.This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in the communications library (e.g. NCCL), etc.",
        dict(rank=1, seq=None, last_enqueued=233659, last_completed=233659, peer_rank=None),
    ),
    # OpenRLHF/OpenRLHF#1126 (torch 2.6)
    (
        "[rank7]:[E901 05:20:03.124073319 ProcessGroupNCCL.cpp:2271] [PG ID 0 PG GUID 0(default_pg) Rank 7]  failure detected by watchdog at work sequence id: 460631 PG status: last enqueued work: 460631, last completed work: 460630",
        dict(rank=7, seq=460631, last_enqueued=460631, last_completed=460630),
    ),
    # deepspeedai/DeepSpeed#1834 (torch 1.9's re-raise, no reason appended; the rank from
    # mpirun's tag, framed off here)
    (
        "RuntimeError: NCCL communicator was aborted on rank 19.",
        dict(seq=None, op=None),
    ),
    # hiyouga/LlamaFactory#8261: cut in the report before `WorkNCCL(`, after a progress bar
    (
        "  1%|▏         | 24/1752 [01:08<1:22:56,  2.88s/it][rank5]:[E602 11:17:52.185053341 ProcessGroupNCCL.cpp:632] [Rank 5] Watchdog caught collective operati…",
        dict(rank=5, seq=None, op=None, comm_rank=5),
    ),
]


@pytest.mark.parametrize(("line", "expected"), OWN_TIMEOUTS)
def test_a_rank_s_own_timeout_report_is_a_collective_timeout(line, expected):
    row = only(watchdog_events([line]))
    assert (row["event"], row["severity"]) == ("collective_timeout", "error")
    assert {key: row[key] for key in expected} == expected


def test_the_timeout_signal_of_torch_2_3_is_a_collective_timeout():
    # pytorch/pytorch#122850's test plan (torch 2.3), wrapped by its author over four lines; the
    # second names the rank's own timeout
    line = "   Rank 0] Received a timeout signal from this local rank and will start"
    assert only(watchdog_events([line]))["event"] == "collective_timeout"


PROGRESS = [
    # vllm-project/vllm-omni#2928: the rank that signalled the dump first
    (
        "[rank0]:[E418 01:32:50.907342463 ProcessGroupNCCL.cpp:1890] [PG ID 0 PG GUID 0(default_pg) Rank 0] Received a dump signal due to a collective timeout from  rank 1 and we will try our best to dump the debug info. Last enqueued NCCL work: 233659, last completed NCCL work: 233659.This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the order of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in the communications library (e.g. NCCL), etc.",
        dict(
            rank=0,
            seq=None,
            last_enqueued=233659,
            last_completed=233659,
            peer_rank=1,
            pg="0 (default_pg)",
        ),
    ),
]


@pytest.mark.parametrize(("line", "expected"), PROGRESS)
def test_work_progress_watermarks(line, expected):
    row = only(watchdog_events([line]))
    assert (row["event"], row["severity"]) == ("work_progress", "error")
    assert {key: row[key] for key in expected} == expected


@pytest.mark.parametrize(
    ("tag_line", "pg", "comm_rank", "content_rank"),
    [
        # the four PG tag forms, as the watchdog prints them (formats.md §4.4, §4.6)
        (
            "[rank1]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 1] Heartbeat monitor timed out! Process will be terminated after dumping debug info. workMetaList_.size()=103",
            "0",
            1,
            1,
        ),
        (
            "[rank7]:[E816 01:45:40.184373931 ProcessGroupNCCL.cpp:1664] [PG 0 (default_pg) Rank 7] Exception (either an error or timeout) detected by watchdog at work: 80078, last enqueued NCCL work: 80078, last completed NCCL work: 80077.",
            "0 (default_pg)",
            7,
            7,
        ),
        (
            "[rank1]:[E626 06:24:44.906457629 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 1] Exception (either an error or timeout) detected by watchdog at work: 808, last enqueued NCCL work: 811, last completed NCCL work: 807.",
            "0 (default_pg)",
            1,
            1,
        ),
        (
            "[rank7]:[E1019 01:04:03.357615073 ProcessGroupNCCL.cpp:1375] [PG 3 Rank 7] First PG on this rank that detected no heartbeat of its watchdog.",
            "3",
            7,
            None,
        ),
        (
            "[rank4]:[E318 07:39:53.792780659 ProcessGroupNCCL.cpp:1834] [PG ID 2 PG GUID 9 Rank 4] Timeout at NCCL work: 610, last enqueued NCCL work: 616, last completed NCCL work: 609.",
            "9",
            4,
            None,
        ),
        # hiyouga/LlamaFactory#6269: a sub-group with the pg rank 0 on global rank 0
        (
            "[rank0]:[E1206 18:44:12.715588844 ProcessGroupNCCL.cpp:1664] [PG 1 Rank 0] Exception (either an error or timeout) detected by watchdog at work: 7753, last enqueued NCCL work: 7755, last completed NCCL work: 7752.",
            "1",
            0,
            None,
        ),
    ],
)
def test_pg_rank_is_global_only_in_the_default_group(tag_line, pg, comm_rank, content_rank):
    row = only(content_rows([tag_line]))
    assert (row["pg"], row["comm_rank"], row["rank"]) == (pg, comm_rank, content_rank)


def test_pg_tag_with_a_group_name():
    # modelscope/ms-swift#4724: a named sub-group (`[PG ID 12 PG GUID 99(EXPERT_MODEL_PARALLEL_GROUP)
    # Rank 4]` in ms-swift#7992 has the same form)
    line = "[rank0]:[E626 15:29:37.152254235 ProcessGroupNCCL.cpp:2168] [PG ID 2 PG GUID 5(mesh_sequence) Rank 0]  failure detected by watchdog at work sequence id: 4 PG status: last enqueued work: 4, last completed work: 3"
    row = only(content_rows([line]))
    assert (row["pg"], row["comm_rank"], row["rank"]) == ("5 (mesh_sequence)", 0, None)
    assert (row["seq"], row["last_enqueued"], row["last_completed"]) == (4, 4, 3)


def test_sub_group_rank_is_not_taken_for_the_global_rank():
    # GAIR-NLP/DeepResearcher#16: a Ray prefix hides `[rank3]:` from the framing; the line's
    # `[PG 5 Rank 3]` is a rank in group 5, which says nothing about the global rank.
    line = "(WorkerDict pid=63294) [rank3]:[E416 20:40:12.986007770 ProcessGroupNCCL.cpp:1664] [PG 5 Rank 3] Exception (either an error or timeout) detected by watchdog at work: 8, last enqueued NCCL work: 10, last completed NCCL work: 7."
    row = only(watchdog_events([line]))
    assert row["rank_from"] != "content"
    assert (row["pg"], row["comm_rank"], row["seq"]) == ("5", 3, 8)


def test_prefix_rank_wins_over_the_content_rank():
    line = "[rank1]:[E ProcessGroupNCCL.cpp:523] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=_ALLGATHER_BASE, NumelIn=262669312, NumelOut=1050677248, Timeout(ms)=600000) ran for 600487 milliseconds before timing out."
    assert only(watchdog_events([line]))["rank_from"] == "prefix"


@pytest.mark.parametrize(
    ("line", "event", "rank"),
    [
        # salesforce/MUST#7: the old single-line form is one event
        (
            "[E ProcessGroupNCCL.cpp:341] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data. To avoid this inconsistency, we are taking the entire process down.",
            "ops_failed",
            None,
        ),
        # MLI-lab/DeepDeWedge#22: split into two lines
        (
            "[rank1]:[E ProcessGroupNCCL.cpp:537] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
            "ops_failed",
            1,
        ),
        (
            "[rank1]:[E ProcessGroupNCCL.cpp:543] To avoid data inconsistency, we are taking the entire process down.",
            "process_abort",
            1,
        ),
        # snowflakedb/ArcticTraining#219
        (
            "[rank3]:[E626 16:48:25.440250129 ProcessGroupNCCL.cpp:684] [Rank 3] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
            "ops_failed",
            3,
        ),
        # weathergen-360 (srun label)
        (
            "11: [rank11]:[E617 15:17:35.519071987 ProcessGroupNCCL.cpp:681] [Rank 11] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
            "ops_failed",
            11,
        ),
        (
            "11: [rank11]:[E617 15:17:35.519087787 ProcessGroupNCCL.cpp:695] [Rank 11] To avoid data inconsistency, we are taking the entire process down.",
            "process_abort",
            11,
        ),
    ],
)
def test_ops_failed_and_process_abort(line, event, rank):
    row = only(watchdog_events([line]))
    assert (row["event"], row["severity"], row["rank"]) == (event, "error", rank)


@pytest.mark.parametrize(
    ("line", "pg", "stuck_seconds"),
    [
        # Intellindust-AI-Lab/DEIM#105, sgl-project/sglang#1691, hiyouga/LlamaFactory#8549
        (
            "[rank1]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 1] Heartbeat monitor timed out! Process will be terminated after dumping debug info. workMetaList_.size()=103",
            "0",
            None,
        ),
        (
            "[rank7]:[E1019 01:04:03.357615073 ProcessGroupNCCL.cpp:1375] [PG 3 Rank 7] First PG on this rank that detected no heartbeat of its watchdog.",
            "3",
            None,
        ),
        (
            "[rank2]:[E704 13:48:58.260494728 ProcessGroupNCCL.cpp:1746] [PG ID 0 PG GUID 0(default_pg) Rank 2] ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued collectives. This typically indicates a NCCL/CUDA API (e.g., CudaEventDestroy) hang blocking the watchdog, and could be triggered by another thread holding the GIL inside a CUDA api (for example, CudaEventDestroy), or other deadlock-prone behaviors.If you suspect the watchdog is not actually stuck and a longer timeout would help, you can either increase the timeout (TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC) to a larger value or disable the heartbeat monitor (TORCH_NCCL_ENABLE_MONITORING=0).If either of aforementioned helps, feel free to file an issue to PyTorch about the short timeout or false positive abort; otherwise, please attempt to debug the hang. ",
            "0 (default_pg)",
            480,
        ),
    ],
)
def test_heartbeat_timeout(line, pg, stuck_seconds):
    row = only(watchdog_events([line]))
    assert (row["event"], row["severity"], row["pg"], row["value"]) == (
        "heartbeat_timeout",
        "error",
        pg,
        stuck_seconds,
    )


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # hiyouga/LlamaFactory#3698
        (
            "torch.distributed.DistBackendError: [4] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Socket Timeout",
            dict(rank=4, peer_rank=0),
        ),
        # zai-org/ChatGLM-6B#1232 (older spelling `retreiving`)
        (
            "RuntimeError: [1] is setting up NCCL communicator and retreiving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Socket Timeout",
            dict(rank=1, peer_rank=0),
        ),
        # Liuziyu77/Visual-RFT#123
        (
            "torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 1/3 clients joined.",
            dict(rank=None, value=1, world_size=3, timeout_ms=901000),
        ),
        # neu-vi/ezflow#194 (torch 1.x store-based barrier)
        (
            "`RuntimeError: Timed out initializing process group in store based barrier on rank: 0, for key: store_based_barrier_key:1 (world_size=2, worker_count=1, timeout=0:30:00)`",
            dict(rank=0, value=1, world_size=2, timeout_ms=1800000),
        ),
        # deepspeedai/Megatron-DeepSpeed#338 (a 30 s timeout)
        (
            "RuntimeError: Timed out initializing process group in store based barrier on rank: 7, for key: store_based_barrier_key:32 (world_size=8, worker_count=4, timeout=0:00:30)",
            dict(rank=7, value=4, world_size=8, timeout_ms=30000),
        ),
    ],
)
def test_store_timeout(line, expected):
    row = only(watchdog_events([line]))
    assert (row["event"], row["severity"]) == ("store_timeout", "error")
    assert {key: row[key] for key in expected} == expected


# Lines that repeat what another line already said: recognised, no event.
NOISE = [
    "Exception raised from checkTimeout at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:632 (most recent call first):",
    "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f83f296c1b6 in /actions-runner/_work/training/training/instructlab/venv/lib64/python3.11/site-packages/torch/lib/libc10.so)",
    "11: Exception raised from checkTimeout at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:632 (most recent call first):",
    # (the checkTimeout frame after it is an event when its report is missing: see
    # test_a_timeout_known_only_from_its_stack)
    "11: frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7fff3fe361b6 in /work/ab0995/a270225/WeatherGenerator2/.venv/lib/python3.12/site-packages/torch/lib/libc10.so)",
    "[rank7]:[E626 16:48:25.440228878 ProcessGroupNCCL.cpp:1533] [PG ID 0 PG GUID 0(default_pg) Rank 7] ProcessGroupNCCL preparing to dump debug info. Include stack trace: 1",
    "[rank1]:[E626 16:48:25.440243908 ProcessGroupNCCL.cpp:670] Stack trace of the failed collective not found, potentially because FlightRecorder is disabled. You can enable it by setting TORCH_NCCL_TRACE_BUFFER_SIZE to a non-zero value.",
]


def test_cpp_noise_is_recognised_without_an_event():
    assert content_rows(NOISE).get_column("line").to_list() == list(range(1, len(NOISE) + 1))
    assert watchdog_events(NOISE).is_empty()


@pytest.mark.parametrize(
    "line",
    [
        # not a timeout: an NCCL error carried by a WorkNCCL (pytorch/pytorch#149984)
        "Collective WorkNCCL(SeqNum=2, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1000000) raised the following async exception: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.25.1",
        # the traceback parser's line, not the watchdog's (huggingface/accelerate#2174)
        "terminate called after throwing an instance of 'std::runtime_error'",
    ],
)
def test_lines_that_are_not_the_watchdogs(line):
    assert content_rows([line]).is_empty()


def test_field_sample_basicsr_737():
    lines = [
        "[rank1]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9801523, NumelOut=9801523, Timeout(ms)=600000) ran for 600020 milliseconds before timing out.",
        "[rank1]:[E626 06:24:44.906457629 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 1] Exception (either an error or timeout) detected by watchdog at work: 808, last enqueued NCCL work: 811, last completed NCCL work: 807.",
        "[rank0]:[E626 06:24:44.159932949 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9801523, NumelOut=9801523, Timeout(ms)=600000) ran for 600030 milliseconds before timing out.",
        "[rank0]:[E626 06:24:44.160366013 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 0] Exception (either an error or timeout) detected by watchdog at work: 808, last enqueued NCCL work: 811, last completed NCCL work: 807.",
        "[rank2]:[E626 06:24:44.173078629 ProcessGroupNCCL.cpp:616] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9801523, NumelOut=9801523, Timeout(ms)=600000) ran for 600061 milliseconds before timing out.",
    ]
    events = watchdog_events(lines)
    timeouts = events.filter(pl.col("event") == "collective_timeout")
    assert sorted(set(timeouts.get_column("rank").to_list())) == [0, 1, 2]
    assert timeouts.filter(pl.col("op").is_not_null()).select(
        "seq", "op", "timeout_ms"
    ).unique().rows() == [(808, "ALLREDUCE", 600000)]
    watermarks = events.filter(pl.col("last_completed").is_not_null())
    assert watermarks.select("rank", "last_enqueued", "last_completed").sort("rank").rows() == [
        (0, 811, 807),
        (1, 811, 807),
    ]
    assert not events.filter(pl.col("event") == "work_progress").height


def test_groups_are_told_apart_by_guid_even_with_one_id():
    # NVIDIA/nccl#1610, verbatim: PG ID 11 names two different groups on ranks 13 and 15 (their
    # GUIDs differ), so their sequence numbers are not comparable
    lines = [
        "[rank13]:[E218 04:54:22.864535778 ProcessGroupNCCL.cpp:1795] [PG ID 11 PG GUID 119 Rank 1] Exception (either an error or timeout) detected by watchdog at work: 216, last enqueued NCCL work: 220, last completed NCCL work: 215.",
        "[rank15]:[E218 04:54:22.883358915 ProcessGroupNCCL.cpp:1795] [PG ID 11 PG GUID 112 Rank 0] Exception (either an error or timeout) detected by watchdog at work: 57, last enqueued NCCL work: 57, last completed NCCL work: 56.",
    ]
    rows = content_rows(lines)
    assert rows.get_column("pg").to_list() == ["119", "112"]


def test_a_hash_guid_names_the_group():
    # PrimeIntellect-ai/prime-rl#3186, rank 13's log, verbatim
    line = "[rank13]:[E804 23:05:54.517045067 ProcessGroupNCCL.cpp:2303] [PG ID 3 PG GUID d03ba143833c6bf31b072ffdb22f1745957fcbfb Rank 1]  failure detected by watchdog at work sequence id: 1438 PG status: last enqueued work: 1441, last completed work: 1437"
    row = only(content_rows([line]))
    assert (row["pg"], row["comm_rank"], row["seq"]) == ("d03ba143833c", 1, 1438)


def test_a_report_a_console_wrapped_onto_two_lines_is_read_whole(tmp_path):
    # meta-pytorch/torchtune#1165, verbatim: the paste wrapped mid-word (`Timeo` / `ut(ms)=`)
    lines = [
        "[rank3]:[E ProcessGroupNCCL.cpp:563] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=15037, OpType=_ALLGATHER_BASE, NumelIn=131072512, NumelOut=524290048, Timeo",
        "ut(ms)=600000) ran for 600055 milliseconds before timing out.",
    ]
    found = parsed_by("watchdog", lines)
    report = only(found.filter(pl.col("event").is_not_null()))
    assert (report["event"], report["seq"], report["op"]) == (
        "collective_timeout",
        15037,
        "_ALLGATHER_BASE",
    )
    assert (report["timeout_ms"], report["elapsed_ms"]) == (600000, 600055)
    # the second half is recognised as part of it, and read as nothing else
    assert parsed_by("progress_lines", lines).is_empty()
    assert analyze_files(tmp_path, {"job.log": lines}).recognised_lines == 2


def all_events(tmp_path, lines: list[str]):
    """What a user gets from a file of these lines: its events (every family) and how many of
    its lines were recognised."""
    analysis = analyze_files(tmp_path, {"job.log": lines})
    return analysis.job.events.sort("line"), analysis.recognised_lines


def test_a_store_socket_wait_that_timed_out_is_one_timeout_of_the_waiting_rank(tmp_path):
    # axolotl-ai-cloud/axolotl#2684, verbatim: the poll that returned 0, then the wait's timeout
    lines = [
        "[rank1]:[W516 14:34:56.853490829 socket.cpp:464] [c10d] waitForInput: poll for socket SocketImpl(fd=79, addr=[localhost]:41170, remote=[localhost]:29500) returned 0, likely a timeout",
        "[rank1]:[W516 14:34:56.854597329 socket.cpp:489] [c10d] waitForInput: socket SocketImpl(fd=79, addr=[localhost]:41170, remote=[localhost]:29500) timed out after 1800000ms",
    ]
    events, recognised = all_events(tmp_path, lines)
    row = only(events)  # the poll line is recognised without an event of its own
    assert (row["line"], row["event"], row["severity"], row["rank"], row["rank_from"]) == (
        2,
        "collective_timeout",
        "error",
        1,
        "prefix",
    )
    assert (row["timeout_ms"], row["op"], row["peer"]) == (1800000, None, "[localhost]:29500")
    assert recognised == 2


@pytest.mark.parametrize(
    ("line", "rank", "pg"),
    [
        # vllm-project/vllm#6042 (torch 2.3: glog header without date); `[PG 2 Rank 3]` is the
        # rank in group 2, the global rank is the prefix's
        (
            "[rank3]:[E ProcessGroupNCCL.cpp:1414] [PG 2 Rank 3] Process group watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered",
            3,
            "2",
        ),
        # InternLM/lmdeploy#3048 (dated header)
        (
            "[rank0]:[E117 11:40:54.259889664 ProcessGroupNCCL.cpp:1595] [PG ID 0 PG GUID 0(default_pg) Rank 0] Process group watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered",
            0,
            "0 (default_pg)",
        ),
        # InternLM/lmdeploy#3258: the C++ terminate handler's copy, no prefix; the default
        # group's `Rank 2` is the global rank
        (
            "  what():  [PG ID 0 PG GUID 0(default_pg) Rank 2] Process group watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered",
            2,
            "0 (default_pg)",
        ),
    ],
)
def test_a_watchdog_that_died_of_its_own_error_is_that_ranks_exception(tmp_path, line, rank, pg):
    events, recognised = all_events(tmp_path, [line])
    row = only(events)
    assert (row["event"], row["severity"], row["rank"], row["pg"]) == (
        "exception",
        "error",
        rank,
        pg,
    )
    assert (row["exc_type"], row["exc_message"]) == (
        "CUDA error",
        "an illegal memory access was encountered",
    )
    assert recognised == 1


def test_the_same_rank_dies_alike_with_and_without_a_dated_header(tmp_path):
    # vllm-project/vllm#6042 verbatim, and the same line with the dated header torch >= 2.4
    # prints (`E1016 03:31:38.877`, as in sgl-project/sglang#1693)
    dateless = "[rank3]:[E ProcessGroupNCCL.cpp:1414] [PG 2 Rank 3] Process group watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered"
    dated = dateless.replace("[E ProcessGroupNCCL", "[E1016 03:31:38.877 ProcessGroupNCCL")
    columns = (
        "event",
        "severity",
        "rank",
        "rank_from",
        "pg",
        "comm_rank",
        "exc_type",
        "exc_message",
    )
    rows = [
        only(all_events(tmp_path / name, [line])[0])
        for name, line in (("a", dateless), ("b", dated))
    ]
    assert [tuple(row[c] for c in columns) for row in rows] == [
        (
            "exception",
            "error",
            3,
            "prefix",
            "2",
            3,
            "CUDA error",
            "an illegal memory access was encountered",
        )
    ] * 2


@pytest.mark.parametrize(
    "line",
    [
        # instructlab/training#520 and weathergen-360: the watchdog died of a timeout
        "  what():  [PG ID 0 PG GUID 0(default_pg) Rank 3] Process group watchdog thread terminated with exception: [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1) ran for 90 milliseconds before timing out.",
        "11: [rank11]:[E617 15:17:35.520063769 ProcessGroupNCCL.cpp:1895] [PG ID 0 PG GUID 0(default_pg) Rank 11] Process group watchdog thread terminated with exception: [Rank 11] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=52, OpType=ALLREDUCE, NumelIn=11, NumelOut=11, Timeout(ms)=240000) ran for 240077 milliseconds before timing out.",
    ],
)
def test_a_watchdog_that_died_of_a_timeout_stays_a_timeout(line):
    assert only(watchdog_events([line]))["event"] == "collective_timeout"


def test_the_watchdog_dying_of_an_nccl_error_is_the_nccl_familys():
    # the nccl family reads `NCCL error: ...` after the same words (its own tests); the
    # watchdog adds no exception of its own for it
    line = "[rank3]:[E ProcessGroupNCCL.cpp:1414] [PG 2 Rank 3] Process group watchdog thread terminated with exception: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:121, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3"
    assert watchdog_events([line]).is_empty()
    assert only(parsed_by("nccl", [line]))["event"] == "nccl_error"


# jpata/particleflow#390, verbatim: the paste starts at the first frame of a watchdog timeout's
# stack; the report above it (`Watchdog caught collective operation timeout`) is not in it
HEADLESS_STACK = [
    "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x1554e8b12f86 in /mnt/home/ewulff/miniforge3/envs/mlpf/lib/python3.11/site-packages/torch/lib/libc10.so)",
    "frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, std::ratio<1l, 1000l> > >) + 0x1d2 (0x1554e9e0f8f2 in /mnt/home/ewulff/miniforge3/envs/mlpf/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so)",
    "frame #2: c10d::ProcessGroupNCCL::watchdogHandler() + 0x233 (0x1554e9e16333 in /mnt/home/ewulff/miniforge3/envs/mlpf/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so)",
    "frame #3: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x10c (0x1554e9e1871c in /mnt/home/ewulff/miniforge3/envs/mlpf/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so)",
    "frame #4: <unknown function> + 0xdfc74 (0x15554f329c74 in /mnt/sw/nix/store/6560mkp838syd8jpp6gdyyisczwcvs67-gcc-11.4.0/lib64/libstdc++.so.6)",
    "frame #5: <unknown function> + 0x81ca (0x155554e081ca in /lib64/libpthread.so.0)",
    "frame #6: clone + 0x43 (0x155553e398d3 in /lib64/libc.so.6)",
    "",
    "Exception raised from ncclCommWatchdog at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1521 (most recent call first):",
    "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x1554e8b12f86 in /mnt/home/ewulff/miniforge3/envs/mlpf/lib/python3.11/site-packages/torch/lib/libc10.so)",
]


def test_a_timeout_known_only_from_its_stack(tmp_path):
    events, recognised = all_events(tmp_path, HEADLESS_STACK)
    row = only(events)  # the checkTimeout frame, once; the other frames are only recognised
    assert (row["line"], row["event"], row["severity"], row["rank"]) == (
        2,
        "collective_timeout",
        "error",
        None,
    )
    assert row["extra"] == '{"inferred_from":"stack"}'
    assert (row["op"], row["seq"], row["timeout_ms"]) == (None, None, None)
    assert recognised == len(HEADLESS_STACK) - 1  # all but the blank line


def test_a_stack_without_its_report_takes_the_rank_of_its_prefix(tmp_path):
    # weathergen-360 (field sample), verbatim, the excerpt starting after the report: srun's
    # `11: ` label is the rank
    lines = [
        "11: Exception raised from checkTimeout at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:632 (most recent call first):",
        "11: frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7fff3fe361b6 in /work/ab0995/a270225/WeatherGenerator2/.venv/lib/python3.12/site-packages/torch/lib/libc10.so)",
        "11: frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, std::ratio<1l, 1000l> > >) + 0x2b4 (0x7fff4117fc74 in /work/ab0995/a270225/WeatherGenerator2/.venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so)",
    ]
    row = only(all_events(tmp_path, lines)[0])
    assert (row["line"], row["event"], row["rank"], row["rank_from"]) == (
        3,
        "collective_timeout",
        11,
        "prefix",
    )
    assert row["extra"] == '{"inferred_from":"stack"}'


def test_a_stack_under_its_report_adds_no_second_timeout():
    # weathergen-360, the whole field sample: torch 2.x's report, then its stack
    sample = ROOT / "tests/data/field_samples/weathergen-360-srun-label-timeout/slurm-job.out"
    lines = sample.read_text().splitlines()
    timeouts = watchdog_events(lines).filter(pl.col("event") == "collective_timeout")
    row = only(timeouts)
    assert (row["line"], row["seq"], row["extra"]) == (3, 52, None)


def test_frames_of_a_watchdog_stack_without_checktimeout_make_no_event():
    # sgl-project/sglang#1693, verbatim: the paste starts below the checkTimeout frame
    lines = [
        "frame #2: c10d::ProcessGroupNCCL::watchdogHandler() + 0x233 (0x7f3b6e721313 in /usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so)",
        "frame #3: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x10c (0x7f3b6e7236fc in /usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so)",
        "Exception raised from ncclCommWatchdog at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1521 (most recent call first):",
    ]
    assert content_rows(lines).get_column("line").to_list() == [1, 2, 3]
    assert watchdog_events(lines).is_empty()


@pytest.mark.parametrize(
    ("line", "pg", "comm_rank"),
    [
        # NVIDIA/Fuser#3055, verbatim: the heartbeat monitor kills the process of a hung
        # watchdog, and the warning before it; both in non-default groups (`PG GUID` empty)
        (
            "[F930 15:23:07.686401350 ProcessGroupNCCL.cpp:1309] [PG ID 6 PG GUID  Rank 0] [PG ID 6 PG GUID  Rank 0] Terminating the process after attempting to dump debug info, due to ProcessGroupNCCL watchdog hang.",
            "6",
            0,
        ),
        (
            "[E930 15:23:00.059980974 ProcessGroupNCCL.cpp:1487] [PG ID 4 PG GUID  Rank 2] ProcessGroupNCCL's watchdog got stuck for 10 seconds without making progress in monitoring enqueued collectives. This typically indicates a NCCL/CUDA API (e.g., CudaEventDestroy) hang blocking the watchdog, and could be triggered by another thread holding the GIL inside a CUDA api (for example, CudaEventDestroy), or other deadlock-prone behaviors.If you suspect the watchdog is not actually stuck and a longer timeout would help, you can either increase the timeout (TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC) to a larger value or disable the heartbeat monitor (TORCH_NCCL_ENABLE_MONITORING=0).If either of these aren't true, please open an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml with the label 'oncall: distributed'.",
            "4",
            2,
        ),
    ],
)
def test_the_heartbeat_monitor_killing_a_hung_watchdog(line, pg, comm_rank):
    row = only(watchdog_events([line]))
    assert (row["event"], row["severity"], row["pg"], row["comm_rank"]) == (
        "heartbeat_timeout",
        "error",
        pg,
        comm_rank,
    )
    assert row["rank"] is None  # a rank in group 6 or 4, not the global rank


@pytest.mark.parametrize(
    "line",
    [
        # pytorch/pytorch#120849 ("False alarm during ProcessGroup shutdown?"), verbatim, and
        # the message alone as other excerpts show it
        "I0228 14:05:56.114109 1619334 ProcessGroupNCCL.cpp:484] [Rank 3] found async exception when checking for NCCL errors: NCCL communicator encountered error set by ProcessGroupNCCL: Process Group shutdown on rank 3",
        "[Rank 3] found async exception when checking for NCCL errors: NCCL communicator encountered error set by ProcessGroupNCCL: Process Group shutdown on rank 3",
    ],
)
def test_the_communicator_a_shutdown_aborted_is_no_error(tmp_path, line):
    events, recognised = all_events(tmp_path, [line])
    row = only(events)
    assert (row["event"], row["severity"], row["rank"]) == ("pg_shutdown", "info", 3)
    assert recognised == 1


def test_the_first_pg_to_signal_dumping_is_a_dump_signal_of_the_rank():
    # lsdefine/simple_GRPO#46 (torch >= 2.4): a collective of this rank's group 1 failed (a
    # timeout or an error) and it is the first to dump
    line = "[rank2]:[E723 01:58:45.511452851 ProcessGroupNCCL.cpp:2103] [PG ID 1 PG GUID 1 Rank 2] First PG on this rank to signal dumping."
    row = only(watchdog_events([line]))
    assert (row["event"], row["severity"], row["rank"], row["pg"]) == (
        "dump_signal",
        "error",
        2,
        "1",
    )


def test_a_rank_that_observed_another_s_dump_signal_is_a_dump_observed():
    # huggingface/accelerate#3861, verbatim (torch >= 2.4): rank 0 had not timed out itself
    line = "[rank0]:[E1128 21:11:49.041188078 ProcessGroupNCCL.cpp:1806] [PG ID 0 PG GUID 0(default_pg) Rank 0] Observed flight recorder dump signal from another rank via TCPStore."
    row = only(watchdog_events([line]))
    assert (row["event"], row["rank"]) == ("dump_observed", 0)


def test_a_socket_poll_that_timed_out_alone_is_the_rank_s_timeout(tmp_path):
    # pytorch/torchtitan#1492, verbatim: the pipeline's ranks waited; the excerpt ends with the
    # poll of rank 4 (node 1's local rank 0), without the line that states the timeout
    lines = [
        "[rank0]:[rank4]:[W731 01:01:29.544034999 socket.cpp:460] [c10d] waitForInput: poll for socket SocketImpl(fd=49, addr=jrc0913.jureca:46374, remote=jrc0912.jureca:38293) returned 0, likely a timeout"
    ]
    events, recognised = all_events(tmp_path, lines)
    row = only(events)
    assert (row["event"], row["rank"], row["peer"]) == (
        "collective_timeout",
        4,
        "jrc0912.jureca:38293",
    )
    assert recognised == 1


def test_a_report_broken_at_each_of_its_parts_is_read_whole():
    # bghira/SimpleTuner#3099, verbatim (the issue elides the time with "...")
    lines = [
        "[rank1]:[E ... ProcessGroupNCCL.cpp:689] [Rank 1] Watchdog caught collective operation timeout:",
        "WorkNCCL(SeqNum=34036, OpType=ALLGATHER, NumelIn=8, NumelOut=64, Timeout(ms)=5400000)",
        "ran for 5400073 milliseconds before timing out.",
    ]
    row = only(watchdog_events(lines))
    assert (row["line"], row["rank"], row["op"], row["seq"], row["timeout_ms"]) == (
        1,
        1,
        "ALLGATHER",
        34036,
        5400000,
    )


# CarperAI/trlx#373, verbatim: Rich's traceback box wrapped rank 0's report at 80 columns,
# padding each row with a space; the third row holds no word the watchdog is routed on
PADDED_THREE_ROWS = [
    "failure was: [Rank 0] Watchdog caught collective operation timeout: ",
    "WorkNCCL(SeqNum=2059, OpType=ALLGATHER, Timeout(ms)=1800000) ran for 1801398 ",
    "milliseconds before timing out.",
    "wandb: Waiting for W&B process to finish... (failed 1).",
]


def test_a_report_wrapped_onto_three_padded_rows_is_read_whole(tmp_path):
    analysis = analyze_files(tmp_path, {"log.txt": PADDED_THREE_ROWS})
    timeouts = analysis.job.events.filter(pl.col("event") == "collective_timeout")
    row = only(timeouts)
    assert (row["line"], row["rank"], row["op"], row["seq"]) == (1, 0, "ALLGATHER", 2059)
    assert analysis.unrecognised_lines == 1  # only wandb's line


# Alpha-VLLM/LLaMA2-Accessory#147: five processes of a Mixtral run, each rank 2 of its subgroup
SUBGROUP_RANK_2 = [
    "[E ProcessGroupNCCL.cpp:828] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=65265, OpType=_ALLGATHER_BASE, Timeout(ms)=1800000) ran for 1804787 milliseconds before timing out.",
    "[E ProcessGroupNCCL.cpp:828] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=65265, OpType=_ALLGATHER_BASE, Timeout(ms)=1800000) ran for 1803489 milliseconds before timing out.",
    "[E ProcessGroupNCCL.cpp:828] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=65265, OpType=_ALLGATHER_BASE, Timeout(ms)=1800000) ran for 1803376 milliseconds before timing out.",
    "[E ProcessGroupNCCL.cpp:455] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
    "[E ProcessGroupNCCL.cpp:460] To avoid data inconsistency, we are taking the entire process down.",
    "terminate called after throwing an instance of 'std::runtime_error'",
]


def test_one_rank_timing_out_with_several_times_is_no_process_s_rank(tmp_path):
    def timeouts(lines: list[str]) -> pl.DataFrame:
        return watchdog_events(lines).filter(pl.col("event") == "collective_timeout")

    assert timeouts(SUBGROUP_RANK_2).get_column("rank").is_null().all()
    # the same report repeated by one process keeps its rank
    repeated = [SUBGROUP_RANK_2[0], SUBGROUP_RANK_2[0]]
    assert timeouts(repeated).get_column("rank").to_list() == [2, 2]
    analysis = analyze_files(tmp_path, {"console.log": SUBGROUP_RANK_2})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("collective_timeout", [])
    assert verdict.finding.summary.startswith("3 processes timed out in _ALLGATHER_BASE #65265")


def test_the_process_group_destroyed_on_a_rank_names_the_console_s_rank(tmp_path):
    # huggingface/pytorch-image-models#1077: rank 0's console (no prefixes) ends in torch
    # 1.10's `Process Group destroyed on rank 0` after its device-side assert
    lines = (
        (
            (Path(__file__).resolve().parent.parent / "data" / "threads")
            / "timm1077_device_assert_pg_destroyed.log"
        )
        .read_text()
        .splitlines()
    )
    destroyed = only(parsed_by("watchdog", lines).filter(event="pg_shutdown"))
    assert (destroyed["rank"], destroyed["severity"]) == (0, "info")
    analysis = analyze_files(tmp_path, {"train.log": lines})
    assert (analysis.verdict.finding.kind, analysis.verdict.ranks) == ("rank_exception", [0])
    assert analysis.verdict.headline == "Rank 0 died of a CUDA assertion"


# "Standalone ProcessGroupNCCL validation" (a record in the code index, see
# tests/rules/test_collective_timeout.py): PyTorch 2.13's teardown, dump signal and dump lines
@pytest.mark.parametrize(
    ("line", "event", "rank"),
    [
        ("[rank1] ... Rank 1] Watchdog joined, destroying NCCL communicators.", "pg_shutdown", 1),
        (
            "[rank0] ... Rank 0] Broadcasting signal exception_dump to other ranks via TCPStore.",
            "dump_signal",
            0,
        ),
        ("[rank0] ... Rank 0] Flight Recorder trace successfully dumped.", None, 0),
    ],
)
def test_torch_2_13_teardown_and_dump_lines(line, event, rank):
    assert content_rows([line]).height == 1  # recognised
    rows = parsed_by("watchdog", [line])
    if event is None:
        assert rows.is_empty()
    else:
        assert rows.select("event", "rank").row(0) == (event, rank)


# ultralytics/yolov5#7481, verbatim (the paste's end): rank 0's caching bar near 30 minutes,
# then rank 1's watchdog report cut within its first words
CUT_EARLY = [
    "Added key: store_based_barrier_key:1 to store for rank: 0",
    "  0%|          | 0/41999 [00:00<?, ?it/s]",
    "train: Caching images (31.3GB ram):  85%|████████▍ | 35592/41999 [29:56<06:34, 16.24it/s]",
    "train: Caching images (31.3GB ram):  85%|████████▍ | 35595/41999 [29:57<08:39, 12.34it/s]",
    "[E ProcessGroupNCCL.cpp:587] [Rank 1] Watchdog c",
]


def test_a_report_cut_within_its_first_words_is_the_rank_s_timeout(tmp_path):
    timeout = only(parsed_by("watchdog", CUT_EARLY[-1:]))
    assert (timeout["event"], timeout["rank"]) == ("collective_timeout", 1)
    verdict = analyze_files(tmp_path, {"console.log": CUT_EARLY}).verdict
    assert verdict.ranks == [0]
    assert "Caching images" in verdict.finding.summary


def test_words_that_do_not_begin_the_report_are_no_timeout():
    other = CUT_EARLY[-1].replace("Watchdog c", "Watchdog co")
    assert parsed_by("watchdog", [other]).filter(pl.col("event") == "collective_timeout").is_empty()


def test_a_report_broken_by_hand_with_its_sequence_number_elided_is_read_whole(tmp_path):
    # alan-turing-institute/autocast#381, verbatim: the author broke the watchdog's line into
    # indented rows and wrote `...` for the fields before the op
    lines = [
        "`Trainer.fit` stopped: `max_epochs=N` reached.",
        "[Rank 0] Watchdog caught collective operation timeout:",
        "  WorkNCCL(..., OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000)",
        "  ran for 1800090 milliseconds before timing out.",
    ]
    timeout = only(parsed_by("watchdog", lines))
    assert (timeout["rank"], timeout["op"], timeout["timeout_ms"]) == (0, "ALLREDUCE", 1800000)
    verdict = analyze_files(tmp_path, {"console.log": lines}).verdict
    assert verdict.headline.startswith("Rank 0 timed out in ALLREDUCE after 30 min")


def test_sglang_s_scheduler_watchdog_is_a_timeout_with_its_limit(tmp_path):
    # sgl-project/sglang#29144, verbatim (the first of the eight DP ranks' reports): the
    # scheduler's batch ran past its watchdog's limit
    line = "[DP0 TP0] Scheduler watchdog timeout (self.watchdog_timeout=300.0, self.soft=False)"
    timeout = only(parsed_by("watchdog", [line]))
    assert (timeout["event"], timeout["timeout_ms"]) == ("collective_timeout", 300_000)
    verdict = analyze_files(tmp_path, {"console.log": [line]}).verdict
    assert verdict.finding.kind == "collective_timeout"
