# ruff: noqa: E501 -- test data are verbatim log lines
"""The ROCm runtime's fatal report of a GPU memory access fault (parsers/rocm_runtime.py),
verbatim from ROCm/aiter#5192 (eight vLLM workers on MI355X, a Kubernetes container log quoted
in Markdown)."""

from __future__ import annotations

import json

from tests.builders import analyze_files, only, parsed_by

FAULT = "Memory access fault by GPU node-6 (Agent handle: 0x501def90) on address 0x7f5e50c00000. Reason: Unknown."
CONSOLE = [
    "> 2026-08-31T17:43:36.650052872Z stderr F (Worker_TP4 pid=955) [aiter] finish build /root/.aiter/build/top_k_renorm_probs_d41d8cd98f00b204e9800998ecf8427e, cost 14.56399715s",
    "> 2026-08-31T17:43:36.6703347Z stderr F Memory access fault by GPU node-6 (Agent handle: 0x501def90) on address 0x7f5e50c00000. Reason: Unknown.",
    "> 2026-08-31T17:43:36.716068815Z stderr F Memory access fault by GPU node-2 (Agent handle: 0x319bf880) on address 0x7f46e0400000. Reason: Unknown.",
    "> 2026-08-31T17:43:36.716090635Z stderr F Memory access fault by GPU node-8 (Agent handle: 0x4df431d0) on address 0x7ef56be00000. Reason: Unknown.",
    "> 2026-08-31T17:43:37.261697558Z stderr F GPU coredump: execvp failed: No such file or directory",
    "> 2026-08-31T17:43:37.499072988Z stderr F GPU coredump: handler exited with error (status: 1)",
]


def test_a_memory_access_fault_is_the_processs_exception():
    fault = only(parsed_by("rocm_runtime", [FAULT]))
    assert (fault["event"], fault["severity"], fault["exc_type"]) == (
        "exception",
        "error",
        "Memory access fault",
    )
    assert fault["exc_message"] == "reason: Unknown"
    assert json.loads(fault["extra"]) == {"gpu_node": "node-6", "address": "0x7f5e50c00000"}
    assert fault["rank"] is None  # an HSA agent's number, not a rank


def test_faults_on_every_gpu_are_one_error_in_what_they_all_run(tmp_path):
    analysis = analyze_files(tmp_path, {"engine.log": CONSOLE})
    # every line read but the aiter build line: the core dump handler's lines too
    assert analysis.unrecognised_lines == 1
    verdict = analysis.verdict
    assert verdict.finding.kind == "rank_exception" and verdict.ranks == []
    assert verdict.headline == "3 processes died of the same Memory access fault"


# ROCm/ROCm#4021, verbatim (lines left out between): eight MI300X ranks of an axolotl run, 5 h in,
# the runtime's report of the hung GPU from each process, the abort, then a shell prompt the
# surviving ranks' watchdog reports were written after
GPU_HANG = [
    "HW Exception by GPU node-9 (Agent handle: 0x64ff272d8ab0) reason :GPU Hang",
    "HW Exception by GPU node-9 (Agent handle: 0x565d634d8610) reason :GPU Hang",
    "HW Exception by GPU node-9 (Agent handle: 0x5ea50312c910) reason :GPU Hang",
    "Aborted (core dumped)",
    "(axolotl) 134 hotaisle@ENC1-CLS01-SVR14:~/shisa-v2/train/ablations$ [rank2]:[E1109 16:13:20.222288244 ProcessGroupNCCL.cpp:616] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=500045, OpType=_REDUCE_SCATTER_BASE, NumelIn=67108864, NumelOut=8388608, Timeout(ms)=600000) ran for 600038 milliseconds before timing out.",
    "[rank2]:[E1109 16:13:20.222705810 ProcessGroupNCCL.cpp:1785] [PG ID 1 PG GUID 1 Rank 2] Exception (either an error or timeout) detected by watchdog at work: 500045, last enqueued NCCL work: 500047, last completed NCCL work: 500044.",
    "[rank7]:[E1109 16:13:20.230357202 ProcessGroupNCCL.cpp:616] [Rank 7] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=500045, OpType=_REDUCE_SCATTER_BASE, NumelIn=67108864, NumelOut=8388608, Timeout(ms)=600000) ran for 600046 milliseconds before timing out.",
    "[rank7]:[E1109 16:13:20.230674458 ProcessGroupNCCL.cpp:1785] [PG ID 1 PG GUID 1 Rank 7] Exception (either an error or timeout) detected by watchdog at work: 500045, last enqueued NCCL work: 500047, last completed NCCL work: 500044.",
]


def test_the_runtimes_report_of_a_hung_gpu_is_a_hardware_fault():
    hang = parsed_by("rocm_runtime", GPU_HANG[:1]).row(0, named=True)
    assert (hang["event"], hang["exc_type"], hang["exc_message"]) == (
        "exception",
        "HW Exception",
        "GPU Hang",
    )


def test_a_hung_gpu_is_the_cause_of_the_others_timeouts_and_no_rank_is_guessed(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": GPU_HANG})
    verdict = analysis.verdict
    assert verdict.finding.kind == "rank_exception" and verdict.ranks == []
    assert "died of the same HW Exception" in verdict.headline
    assert "dmesg" in verdict.finding.fix
    # the untagged reports are no rank's: the console holds several ranks' tagged lines
    hangs = analysis.job.events.filter(exc_type="HW Exception")
    assert hangs.get_column("rank").null_count() == hangs.height
