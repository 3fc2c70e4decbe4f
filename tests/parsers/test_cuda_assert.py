# ruff: noqa: E501 -- test data are verbatim log lines
from __future__ import annotations

from tests.builders import analyze_files, parsed_by

# jaeyun95/error_collections README (an mpirun job, an embedding lookup past the vocabulary),
# verbatim: one line per GPU thread that hit the kernel's assertion
KERNEL_LINE = (
    "/tmp/pip-req-build-l1dtn3mo/aten/src/THC/THCTensorIndex.cu:362: void "
    "indexSelectLargeIndex(TensorInfo<T, IndexType>, TensorInfo<T, IndexType>, "
    "TensorInfo<long, IndexType>, int, int, IndexType, IndexType, long) [with T = c10::Half, "
    "IndexType = unsigned int, DstDim = 2, SrcDim = 2, IdxDim = -2, IndexIsMajor = true]: "
    "block: [4,0,0], thread: [96,0,0] Assertion `srcIndex < srcSelectDimSize` failed."
)


def test_a_kernels_assertion_is_an_exception_with_its_condition():
    (row,) = parsed_by("cuda_assert", [KERNEL_LINE]).select("exc_type", "exc_message").rows()
    assert row == (
        "CUDA assertion",
        "Assertion `srcIndex < srcSelectDimSize` failed (THCTensorIndex.cu:362)",
    )


def test_a_python_assertion_is_not_a_kernels():
    assert parsed_by("cuda_assert", ["AssertionError: Assertion `x` failed."]).is_empty()


HOST_SIDE = "RuntimeError: cuda runtime error (710) : device-side assert triggered at /tmp/pip-req-build-l1dtn3mo/aten/src/THC/THCReduceAll.cuh:321"


def test_the_rank_whose_kernel_asserted_is_the_cause(tmp_path):
    lines = [
        f"[1,1]<stderr>:{KERNEL_LINE}",
        *[f"[1,0]<stderr>:rank=0 step={s} stage=fwd" for s in (1, 2)],
    ]
    analysis = analyze_files(tmp_path, {"mpirun_console.log": lines})
    assert analysis.verdict.finding.kind == "rank_exception"
    assert analysis.verdict.ranks == [1]
    assert "srcIndex < srcSelectDimSize" in analysis.verdict.finding.summary


def test_the_host_s_device_side_assert_and_a_kernel_s_assertion_are_one_error(tmp_path):
    # the README's log, verbatim: rank 1 shows only the host's error, rank 0 the kernel's lines
    lines = [f"[1,1]<stderr>:{HOST_SIDE}", *[f"[1,0]<stderr>:{KERNEL_LINE}"] * 3]
    analysis = analyze_files(tmp_path, {"mpirun_console.log": lines})
    (failure,) = [f for f in analysis.findings if f.kind == "rank_exception"]
    assert failure.ranks == [0, 1] and analysis.verdict.finding is failure
    assert "srcIndex < srcSelectDimSize" in failure.summary  # the kernel's words speak for both
