# ruff: noqa: E501 -- test data are verbatim log lines
"""A paste indented as a whole: read as the lines it indents, quoted as written."""

from __future__ import annotations

from tests.builders import analyze_files
from tests.framing import frame

# saforem2/mmm, docs/torch-on-aurora.md @1d81b4a (a console in a doc page, every line indented
# by 6), verbatim lines: rank 0's FSDP2 traceback on Aurora's XPUs, then the launcher's report
INDENTED_CONSOLE = [
    "      [rank0]: Traceback (most recent call last):",
    '      [rank0]:   File "/lus/flare/projects/Aurora_deployment/foremans/micromamba/envs/anl_2024_12_release_2/lib/python3.10/runpy.py", line 196, in _run_module_as_main',
    '      [rank0]:     raise AssertionError("Torch not compiled with CUDA enabled")',
    "      [rank0]: AssertionError: Torch not compiled with CUDA enabled",
    "      x4512c5s2b0n0: rank 6 exited with code 1",
    "      x4512c5s2b0n0: rank 11 died from signal 15",
]
# pytorch/xla#2387, verbatim: an excerpt of frames alone, indented only as a traceback is
FRAMES_ALONE = [
    '  File "/opt/conda/lib/python3.7/site-packages/torch_xla/distributed/xla_multiprocessing.py", line 231, in _start_fn',
    "    fn(gindex, *args)",
]


def test_the_indent_every_line_shares_is_no_part_of_the_lines(tmp_path):
    rows = frame(INDENTED_CONSOLE)
    assert (
        rows[0]["prefix_rank"] == 0 and rows[0]["message"] == "Traceback (most recent call last):"
    )
    analysis = analyze_files(tmp_path, {"train.log": INDENTED_CONSOLE})
    assert (analysis.verdict.finding.kind, analysis.verdict.ranks) == ("rank_exception", [0])
    quoted = [evidence.text for evidence in analysis.verdict.finding.evidence]
    assert quoted[0] == INDENTED_CONSOLE[0]  # evidence as the file has it


def test_a_traceback_s_own_indentation_stays():
    assert frame(FRAMES_ALONE)[0]["message"].startswith('  File "/opt/conda/')


# modelscope/ms-swift#9791, verbatim: a commenter's one line; here indented as a Markdown list
# item's code block would (constructed)
ONE_TAGGED_LINE = "[rank15]: RuntimeError: Rank 15, node n122-122-099, device 15, iteration -1: Unexpected result nan (message='found NaN in local grad norm for bucket #0 in backward pass before data-parallel communication collective')"


def test_one_indented_line_that_opens_with_a_rank_tag_is_the_paste_s_indentation(tmp_path):
    (row,) = frame(["      " + ONE_TAGGED_LINE])
    assert row["prefix_rank"] == 15
    verdict = analyze_files(tmp_path, {"comment.txt": ["      " + ONE_TAGGED_LINE]}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [15])


def test_one_indented_line_of_code_is_left_as_it_is():
    (row,) = frame(["      loss = model(batch)"])
    assert row["message"] == "      loss = model(batch)"
