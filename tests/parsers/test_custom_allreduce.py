# ruff: noqa: E501 -- test data are verbatim log lines
"""vLLM's custom all-reduce failing a CUDA call of its own (parsers/custom_allreduce.py)."""

from __future__ import annotations

from logforensics.i18n import translate, translate_headline
from tests.builders import analyze_files, parsed_by
from tests.test_i18n import english_runs

# sgl-project/sglang#552, verbatim: two tensor-parallel workers on two T4s, no peer access
# between them; the maintainer: disable the custom all-reduce
NO_PEER_ACCESS = [
    "Failed: Cuda error /home/runner/work/vllm/vllm/csrc/custom_all_reduce.cuh:307 'peer access is not supported between these two devices'",
    "Failed: Cuda error /home/runner/work/vllm/vllm/csrc/custom_all_reduce.cuh:307 'peer access is not supported between these two devices'",
    "",
    "[rank1]:[W CudaIPCTypes.cpp:16] Producer process has been terminated before all shared CUDA tensors released. See Note [Sharing CUDA tensors]",
    "[rank0]:[W CudaIPCTypes.cpp:16] Producer process has been terminated before all shared CUDA tensors released. See Note [Sharing CUDA tensors]",
]


def test_the_kernels_own_cuda_failure_is_a_collective_library_error():
    rows = parsed_by("custom_allreduce", NO_PEER_ACCESS).select("line", "event", "exc_message")
    assert rows.rows() == [
        (
            line,
            "nccl_error",
            "Cuda error peer access is not supported between these two devices (custom_all_reduce.cuh:307)",
        )
        for line in (1, 2)
    ]


def test_the_verdict_names_the_library_and_its_fix(tmp_path):
    verdict = analyze_files(tmp_path, {"server.log": NO_PEER_ACCESS}).verdict
    assert verdict.finding.kind == "nccl_error"
    assert verdict.headline == "vLLM's custom all-reduce failed on a process"
    assert "--disable-custom-all-reduce" in verdict.finding.fix
    assert "hit the first error of vLLM's custom all-reduce:" in verdict.finding.summary
    assert english_runs(translate_headline(verdict.headline, "zh")) == []
    for text in (verdict.finding.summary, verdict.finding.fix):
        assert english_runs(translate(text, "zh")) == []


def test_another_programs_cuda_check_is_not_read_here():
    line = (
        "Failed: Cuda error /src/kernels/attention.cu:42 'an illegal memory access was encountered'"
    )
    assert parsed_by("custom_allreduce", [line]).is_empty()
