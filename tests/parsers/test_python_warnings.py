# ruff: noqa: E501 -- test data are verbatim log lines
"""Python's own warnings (parsers/python_warnings.py)."""

from __future__ import annotations

from pathlib import Path

from tests.builders import analyze_files, only, parsed_by

THREADS = Path(__file__).resolve().parents[1] / "data" / "threads"
# Hoilap/O-LoRA's notes (tests/data/threads/olora_first_broadcast_p2p.log, lines 5-7): a
# FutureWarning, its message's second line, and the source line Python prints under it
ACCELERATE_WARNING = (THREADS / "olora_first_broadcast_p2p.log").read_text().splitlines()[4:7]
# tatsu-lab/stanford_alpaca#65, verbatim: FSDP's state-dict gather at the final save
CLONE_OOM = "/local_disk0/.ephemeral_nfs/cluster_libraries/python/lib/python3.9/site-packages/torch/distributed/fsdp/fully_sharded_data_parallel.py:2224: UserWarning: Failed to clone() tensor with name lm_head.weight. This may mean that this state_dict entry could point to invalid memory regions after returning from state_dict() call if this parameter is managed by FSDP. Please check clone implementation of lm_head.weight. Error: CUDA out of memory. Tried to allocate 502.00 MiB (GPU 1; 39.59 GiB total capacity; 35.54 GiB already allocated; 276.19 MiB free; 37.22 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF"


def test_a_warning_and_its_source_line_are_read():
    warning = only(parsed_by("python_warnings", ACCELERATE_WARNING).filter(event="python_warning"))
    assert (warning["exc_type"], warning["line"]) == ("FutureWarning", 1)
    assert warning["exc_message"].startswith("Passing the following arguments to `Accelerator`")


def test_the_source_line_after_a_warning_is_recognised(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": ACCELERATE_WARNING})
    # the warning, its message's second line and `  warnings.warn(`
    assert (analysis.recognised_lines, analysis.unrecognised_lines) == (3, 0)
    assert analysis.verdict is None


def test_out_of_memory_inside_a_warning_is_the_gpus(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": [CLONE_OOM]})  # not refused
    oom = analysis.verdict.finding
    # one node, no device prints: the process on GPU 1 is rank 1 (rules/oom.py)
    assert (oom.kind, oom.severity, oom.ranks) == ("oom", "error", [1])
    assert oom.summary.startswith(
        "Rank 1 (on GPU 1) ran out of GPU memory while allocating 502 MiB"
    )


# kangben258/MCITrack#6, verbatim: a healthy 4-process torchrun run whose paste cut the
# warning's location off; the maintainer: the stride warning can be ignored
STRIDES = [
    "UserWarning: Grad strides do not match bucket view strides. This may indicate grad was not created according to the gradient layout contract, or that the param's strides changed since DDP was constructed.  This is not an error, but may impair performance.",
    "grad.sizes() = [256, 768, 1, 1], strides() = [768, 1, 768, 768]",
    "bucket_view.sizes() = [256, 768, 1, 1], strides() = [768, 1, 1, 1] (Triggered internally at ../torch/csrc/distributed/c10d/reducer.cpp:320.)",
    "  Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass",
    "data sampler bug: Input and output sizes should be greater than 0, but got input (H: 0, W: 186) output (H: 112, W: 112)",
]


def test_a_warning_whose_location_was_cut_off_is_still_a_warning(tmp_path):
    warning = only(parsed_by("python_warnings", STRIDES[:1]).filter(event="python_warning"))
    assert warning["exc_type"] == "UserWarning"
    assert warning["exc_message"].startswith("Grad strides do not match")
    # a DDP run's harmless warning: analysed, and no failure in it
    analysis = analyze_files(tmp_path, {"log.txt": STRIDES})
    assert analysis.verdict is None


def test_a_warning_raised_from_torch_s_cpp_names_its_source_file():
    # microsoft/frameworkcontroller, example/framework/scenario/pytorch/elastic/README.md
    line = (
        "/opt/conda/conda-bld/pytorch_1587428398394/work/torch/csrc/utils/tensor_numpy.cpp:141: "
        "UserWarning: The given NumPy array is not writeable, and PyTorch does not support "
        "non-writeable tensors. This means you can write to the underlying (supposedly "
        "non-writeable) NumPy array using the tensor. You may want to copy the array to protect "
        "its data or make it writeable before converting it to a tensor. This type of warning "
        "will be suppressed for the rest of this program."
    )
    warning = only(parsed_by("python_warnings", [line]))
    assert warning["event"] == "python_warning"
