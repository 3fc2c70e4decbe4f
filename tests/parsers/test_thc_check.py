# ruff: noqa: E501 -- test data are verbatim log lines
"""Old PyTorch's THC CUDA check (parsers/thc_check.py)."""

from __future__ import annotations

from tests.builders import analyze_files, only, parsed_by

# martiansideofthemoon/squash-generation#29, verbatim: `torch.distributed.launch` of four
# processes; three print the check's failure, none its traceback
LAUNCH = [
    "WARNING:question-generation/train.py:Running process 1",
    "WARNING:question-generation/train.py:Running process 0",
    "WARNING:question-generation/train.py:Running process 2",
    "WARNING:question-generation/train.py:Running process 3",
    "THCudaCheck FAIL file=/pytorch/torch/csrc/cuda/Module.cpp line=37 error=101 : invalid device ordinal",
    "THCudaCheck FAIL file=/pytorch/torch/csrc/cuda/Module.cpp line=37 error=101 : invalid device ordinal",
    "THCudaCheck FAIL file=/pytorch/torch/csrc/cuda/Module.cpp line=37 error=101 : invalid device ordinal",
]
# HRNet/HRNet-Semantic-Segmentation#171, verbatim: the exception a check raised is in the paste
RAISED = [
    "RuntimeError: cuda runtime error (10) : invalid device ordinal at /pytorch/torch/csrc/cuda/Module.cpp:33",
    "THCudaCheck FAIL file=/pytorch/torch/csrc/cuda/Module.cpp line=33 error=10 : invalid device ordinal",
]


def test_a_failed_check_with_no_exception_after_it_is_the_process_s_exception():
    check = only(parsed_by("thc_check", LAUNCH[4:5]))
    assert (check["event"], check["exc_type"], check["exc_message"]) == (
        "exception",
        "THCudaCheck",
        "invalid device ordinal",
    )
    assert (check["frame"], check["error_code"]) == (
        "/pytorch/torch/csrc/cuda/Module.cpp:37",
        "101",
    )


def test_a_check_whose_exception_is_in_the_file_is_left_to_it():
    assert parsed_by("thc_check", RAISED).is_empty()


def test_three_processes_past_the_node_s_gpus(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": LAUNCH})
    verdict = analysis.verdict
    assert verdict.finding.kind == "rank_exception"
    assert verdict.finding.details["alike"] == 3
    assert "more processes were started on the node than it has GPUs" in verdict.finding.fix
