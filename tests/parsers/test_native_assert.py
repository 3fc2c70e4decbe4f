# ruff: noqa: E501 -- test data are verbatim log lines
from __future__ import annotations

from tests.builders import analyze_files, parsed_by

# deepspeedai/DeepSpeed#1627, verbatim: ZeRO-3's NVMe offload reads back a gradient swap file
# that was written empty, and DeepSpeed's AIO handle's own check aborts the process
EMPTY_SWAP_FILE = [
    "/zero_stage_3/optimizer/rank1/140302004385408_gradient_988164096_75497472.tensor.swp: buffer nbytes != file bytes 301989888 != 0",
    "python: /home/jkkim/anaconda3/envs/transformers/lib/python3.9/site-packages/deepspeed/ops/csrc/aio/py_lib/deepspeed_py_aio_handle.cpp:223: int deepspeed_aio_handle_t::pread(const at::Tensor&, const char*, bool, bool): Assertion `static_cast<long long int>(buffer.nbytes()) == num_file_bytes' failed.",
]


def test_a_failed_c_assertion_is_an_exception_with_its_condition():
    (row,) = (
        parsed_by("native_assert", EMPTY_SWAP_FILE).select("line", "exc_type", "exc_message").rows()
    )
    assert row == (
        2,
        "C assertion",
        "Assertion `static_cast<long long int>(buffer.nbytes()) == num_file_bytes` failed "
        "(deepspeed_py_aio_handle.cpp:223)",
    )


def test_a_kernels_assertion_and_a_python_one_are_not_read_here():
    lines = [
        "/tmp/pip-req-build-l1dtn3mo/aten/src/THC/THCTensorIndex.cu:362: void indexSelectLargeIndex(TensorInfo<T, IndexType>, TensorInfo<T, IndexType>, TensorInfo<long, IndexType>, int, int, IndexType, IndexType, long) [with T = c10::Half, IndexType = unsigned int, DstDim = 2, SrcDim = 2, IdxDim = -2, IndexIsMajor = true]: block: [4,0,0], thread: [96,0,0] Assertion `srcIndex < srcSelectDimSize` failed.",
        "AssertionError: Assertion `x' failed.",
    ]
    assert parsed_by("native_assert", lines).is_empty()


def test_the_process_died_of_its_own_check(tmp_path):
    # before: "nothing here looks like a training job's log" (exit 2)
    verdict = analyze_files(tmp_path, {"console.log": EMPTY_SWAP_FILE}).verdict
    assert verdict.finding.kind == "rank_exception"
    assert "num_file_bytes` failed (deepspeed_py_aio_handle.cpp:223)" in verdict.finding.summary


# deepspeedai/DeepSpeed#1070, verbatim: the same check on a parameter swap file, the reporter's
# paste breaking the line before `Assertion` with a backslash
CONTINUED_ASSERTION = [
    "/nvme/zero_stage_3/fp16params/rank24/0_param.tensor.swp: buffer nbytes != file bytes 28824000 != 28311552",
    "python: /usr/local/lib/python3.6/dist-packages/deepspeed/ops/csrc/aio/py_lib/deepspeed_py_aio_handle.cpp:223: int deepspeed_aio_handle_t::pread(const at::Tensor&, const char*, bool, bool): \\",
    "Assertion `static_cast<long long int>(buffer.nbytes()) == num_file_bytes' failed.",
]


def test_a_line_a_paste_continued_with_a_backslash_is_read_whole(tmp_path):
    (row,) = parsed_by("native_assert", CONTINUED_ASSERTION).select("line", "exc_type").rows()
    assert row == (2, "C assertion")
    analysis = analyze_files(tmp_path, {"console.log": CONTINUED_ASSERTION})
    assert analysis.verdict.finding.kind == "rank_exception"
    assert analysis.unrecognised_lines == 1  # the swap file's size line alone
