"""A platform's failure report that quotes the tail of a process's stderr (SageMaker's
`ErrorMessage "...`): the quote's opening is no part of the process's line."""

from __future__ import annotations

from tests.builders import analyze_files
from tests.framing import frame

# Lightning-AI/pytorch-lightning#20409, verbatim (the notebook's view of a SageMaker job)
SAGEMAKER_REPORT = [
    "UnexpectedStatusException: Error for Training job model-res50-300k-noft-contra-aug-2024-11-"
    "09-00-18-33: Failed. Reason: AlgorithmError: ExecuteUserScriptError:",
    "ExitCode 1",
    'ErrorMessage "RuntimeError: SMDDP does not support: ReduceOp',
    " Traceback (most recent call last)",
]


def test_the_reports_opening_is_peeled():
    _, _, quoted, _ = frame(SAGEMAKER_REPORT)
    assert quoted["message"] == "RuntimeError: SMDDP does not support: ReduceOp"
    assert quoted["framing"] == "platform_report"


def test_the_quoted_exception_is_a_failure(tmp_path):
    verdict = analyze_files(tmp_path, {"notebook.log": SAGEMAKER_REPORT}).verdict
    assert verdict is not None and verdict.finding.kind == "rank_exception"
    assert "SMDDP does not support: ReduceOp" in verdict.finding.summary


def test_the_report_is_read_inside_a_collectors_stamp():
    # the same report as `kubectl logs --timestamps` (or CloudWatch's stamp) relays it
    stamped = [
        f"2024-11-09T00:41:0{at}.000000000Z {line}" for at, line in enumerate(SAGEMAKER_REPORT)
    ]
    quoted = frame(stamped)[2]
    assert quoted["message"] == "RuntimeError: SMDDP does not support: ReduceOp"
    assert quoted["framing"] == "kubectl_timestamp+platform_report"
