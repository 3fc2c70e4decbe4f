from __future__ import annotations

from tests.builders import analyze_files, finding, kinds, marks

TRACEBACK = [
    "Traceback (most recent call last):",
    '  File "/work/train.py", line 120, in main',
    "    batch = transform(sample)",
    '  File "/work/data.py", line 33, in transform',
    '    raise ValueError("corrupt sample 1731")',
    "ValueError: corrupt sample 1731",
]


def test_a_swallowed_exception_is_where_the_rank_left_the_path(tmp_path):
    files = {f"rank{r}.log": marks(r, range(8)) for r in (0, 2, 3)}
    before = marks(1, range(4)) + marks(1, [4], stages=("before_forward",))
    files["rank1.log"] = before + TRACEBACK + marks(1, range(5, 8))
    analysis = analyze_files(tmp_path, files)
    exception = finding(analysis, "rank_exception")
    assert exception.ranks == [1] and exception.step == 4
    assert exception.details["swallowed"] is True
    assert "caught it and kept going" in exception.summary
    assert exception.details["frame"].startswith("/work/data.py:33")
    assert analysis.verdict.finding is exception  # before the stage divergence it causes


def test_a_rank_that_died_of_it_is_the_one_waited_for(tmp_path):
    files = {f"rank{r}.log": marks(r, range(6)) for r in (0, 1)}
    files["rank2.log"] = marks(2, range(3)) + TRACEBACK
    exception = finding(analyze_files(tmp_path, files), "rank_exception")
    assert exception.ranks == [2] and exception.details["swallowed"] is False


def test_communication_errors_are_not_rank_exceptions(tmp_path):
    lines = [
        "Traceback (most recent call last):",
        '  File "/work/train.py", line 186, in main',
        "    loss.backward()",
        "RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting 20000ms for recv operation to complete",
    ]
    assert "rank_exception" not in kinds(analyze_files(tmp_path, {"rank0.log": lines}))


def test_traceback_in_stderr_of_a_rank_whose_marks_go_on_was_swallowed(tmp_path):
    files = {f"run/attempt_0/{r}/stdout.log": marks(r, range(6)) for r in (0, 2)}
    files["run/attempt_0/1/stdout.log"] = marks(
        1, range(6), skip={2: ("after_backward", "after_step")}
    )
    files["run/attempt_0/1/stderr.log"] = TRACEBACK
    analysis = analyze_files(tmp_path, files)
    exception = finding(analysis, "rank_exception")
    assert exception.ranks == [1] and exception.details["swallowed"] is True
    # another file than the marks does not place it; the rank's own departure does: a caught
    # exception on the rank that left the path is why it left (principle 8)
    assert analysis.verdict.finding is exception
    assert exception.step == 2 and "It left the others' path there" in exception.summary
    assert finding(analysis, "stage_divergence").role == "context"
    assert analysis.verdict.chain[:2] == (exception, finding(analysis, "stage_divergence"))


# facebookresearch/fairseq#708, verbatim: a hung job's traceback after Ctrl-C, pasted up to
# its last frame; the exception line is not in the excerpt
CUT_TRACEBACK = [
    "Traceback (most recent call last):",
    '  File "/usr/lib/python3.6/runpy.py", line 193, in _run_module_as_main',
    '    "__main__", mod_spec)',
    '  File "/usr/lib/python3.6/runpy.py", line 85, in _run_code',
    "    exec(code, run_globals)",
    '  File "/usr/local/lib/python3.6/dist-packages/torch/distributed/launch.py", line 219, in <module>',
    "    main()",
    '  File "/usr/local/lib/python3.6/dist-packages/torch/distributed/launch.py", line 215, in main',
    "    process.wait()",
    '  File "/usr/lib/python3.6/subprocess.py", line 1477, in wait',
    "    (pid, sts) = self._try_wait(0)",
    '  File "/usr/lib/python3.6/subprocess.py", line 1424, in _try_wait',
    "    (pid, sts) = os.waitpid(self.pid, wait_flags)",
]


def test_a_traceback_cut_before_its_exception_line_is_no_cause(tmp_path):
    files = {f"rank{r}.log": marks(r, range(6)) for r in (0, 2, 3)}
    files["rank1.log"] = marks(1, range(3)) + CUT_TRACEBACK
    analysis = analyze_files(tmp_path, files)
    assert "rank_exception" not in kinds(analysis)
    # it only shows where the rank was; the departure it ends is the verdict
    assert analysis.verdict.finding.kind == "stage_divergence"
    assert analysis.verdict.ranks == [1]
