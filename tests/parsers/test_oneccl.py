"""Intel oneCCL's own error reports (parsers/oneccl.py)."""

from __future__ import annotations

from tests.builders import analyze_files, only, parsed_by

# intel/intel-extension-for-pytorch#640, verbatim: reduce_scatter across nodes on Intel GPU Max
DEVICE_OOM = [
    "[rank=17]: step=29 memory peak_mem_gib=2.083984375, current_mem_gib=2.083984375",
    "2024:05:29-19:16:18:(202165) |CCL_ERROR| worker.cpp:338 ccl_worker_func: worker 0 caught internal exception: oneCCL: ze_call.cpp:28 do_call: EXCEPTION: ze error at zeCommandQueueExecuteCommandLists, code: ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY",
    "terminate called after throwing an instance of 'ccl::v1::exception'",
]


def test_a_oneccl_error_that_the_device_ran_out_of_memory_is_an_oom_of_its_process(tmp_path):
    oom = only(parsed_by("oneccl", DEVICE_OOM).filter(event="oom"))
    assert (oom["pid"], oom["severity"]) == (202165, "error")
    verdict = analyze_files(tmp_path, {"output.log": DEVICE_OOM}).verdict
    assert verdict.finding.kind == "oom" and verdict.ranks == []
    assert "pid 202165" in verdict.finding.summary and "oneCCL" in verdict.finding.summary
    assert verdict.independent == ()  # the process's abort is the same failure


def test_any_other_oneccl_error_is_a_collective_library_error():
    other = [
        DEVICE_OOM[1].replace("ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", "ZE_RESULT_ERROR_DEVICE_LOST")
    ]
    assert only(parsed_by("oneccl", other).filter(event="nccl_error"))["pid"] == 202165


# intel/torch-xpu-ops#4241, verbatim (two Arc Pro B60 passed through to a VMware VM): newer
# oneCCL names the rank in brackets, where older releases gave the pid in parentheses
BRACKETED_RANK = [
    "[rank0] FSDP wrap OK",
    "[rank0] step 0 FWD ok loss=13.7287  BWD begin (reduce_scatter)",
    "2026:07:02-03:29:05:[1] |CCL_ERROR| worker.cpp:338 ccl_worker_func: worker 0 caught internal",
    "    exception: oneCCL: ze_call.cpp:28 do_call: EXCEPTION: ze error at",
    "    zeCommandQueueExecuteCommandLists, code: ZE_RESULT_ERROR_UNKNOWN",
    "terminate called after throwing an instance of 'ccl::v1::exception'",
]


def test_newer_oneccl_reports_name_their_rank_and_the_verdict_names_the_library(tmp_path):
    error = only(parsed_by("oneccl", BRACKETED_RANK).filter(event="nccl_error"))
    assert (error["rank"], error["pid"]) == (1, None)
    verdict = analyze_files(tmp_path, {"output.log": BRACKETED_RANK}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("nccl_error", [1])
    assert verdict.headline == "oneCCL failed on rank 1"
    assert "NCCL's own lines" not in verdict.finding.summary


def test_a_pid_before_the_bracketed_rank_is_the_process():
    # a CCL_WARN line from an Intel XPU benchmark log, its level made ERROR to test the parse
    line = (
        "2026:06:11-20:54:10:3614083:[0] |CCL_ERROR| topology recognition shows PCIe "
        "connection between devices."
    )
    error = only(parsed_by("oneccl", [line]).filter(event="nccl_error"))
    assert (error["rank"], error["pid"]) == (0, 3614083)
