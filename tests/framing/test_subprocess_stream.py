# ruff: noqa: E501 -- test data are verbatim log lines
"""A test harness echoing its subprocess's streams behind their labels (`stderr: `)."""

from __future__ import annotations

from tests.builders import analyze_files
from tests.framing import frame

# huggingface/accelerate#1473, verbatim: `accelerate test` on a DGX A100; torchrun's summary
# behind the harness's `stderr: ` labels, then the harness's own traceback (cut by the paste)
ACCELERATE_TEST = [
    "stderr: ------------------------------------------------------------",
    "stderr: Root Cause (first observed failure):",
    "stderr: [0]:",
    "stderr:   time      : 2023-06-15_00:47:44",
    "stderr:   host      : dgx-a100-02.cse.iith.ac.in",
    "stderr:   rank      : 1 (local_rank: 1)",
    "stderr:   exitcode  : 1 (pid: 226263)",
    "stderr:   error_file: <N/A>",
    "stderr:   traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
    "stderr: ============================================================",
    "Traceback (most recent call last):",
    '  File "/home/student/2022/ai22mtech12005/miniconda3/envs/climb/bin/accelerate", line 8, in <module>',
    "    sys.exit(main())",
    "             ^^^^^^",
    '  File "/home/student/2022/ai22mtech12005/miniconda3/envs/climb/lib/python3.11/site-packages/accelerate/commands/accelerate_cli.py", line 45, in main',
    "    args.func(args)",
    '  File "/home/student/2022/ai22mtech12005/miniconda3/envs/climb/lib/python3.11/site-packages/accelerate/commands/test.py", line 54, in test_command',
    "    result = execute_subprocess_async(cmd, env=os.environ.copy())",
    "             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
    '  File "/home/student/2022/ai22mtech12005/miniconda3/envs/climb/lib/python3.11/site-packages/accelerate/test_utils/testing.py", line 383, in execute_subprocess_async',
    "    raise RuntimeError(",
]


def test_the_stream_label_is_peeled():
    row = frame(ACCELERATE_TEST[5:6], "x.log")[0]
    assert row["message"] == "  rank      : 1 (local_rank: 1)"
    assert row["prefix_stream"] == "stderr"


def test_the_summary_behind_the_labels_names_the_rank_that_failed(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": ACCELERATE_TEST})
    assert analysis.verdict.ranks == [1]
    assert analysis.verdict.headline == "Rank 1 exited with code 1"
