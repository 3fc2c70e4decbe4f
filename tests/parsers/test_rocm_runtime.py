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
