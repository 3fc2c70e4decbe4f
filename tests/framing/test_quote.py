# ruff: noqa: E501 -- test data are verbatim log lines
"""A paste quoted in Markdown (`> ` before every line)."""

from __future__ import annotations

from tests.builders import analyze_files, finding
from tests.framing import frame

# OpenBMB/MiniCPM-V#144, verbatim: several processes' tracebacks interleaved, quoted, cut before
# their exception lines
QUOTED_TRACEBACKS = [
    '>   File "/home/kas/.conda/envs/MiniCPMV/lib/python3.10/site-packages/transformers/trainer.py", line 2274, in _maybe_log_save_evaluate',
    '>   File "/home/kas/.conda/envs/MiniCPMV/lib/python3.10/site-packages/transformers/trainer.py", line 2274, in _maybe_log_save_evaluate',
    ">     self._maybe_log_save_evaluate(tr_loss, model, trial, epoch, ignore_keys_for_eval)",
    '>   File "/home/kas/.conda/envs/MiniCPMV/lib/python3.10/site-packages/transformers/trainer.py", line 2274, in _maybe_log_save_evaluate',
    ">     self._save_checkpoint(model, trial, metrics=metrics)",
    '>   File "/home/kas/.conda/envs/MiniCPMV/lib/python3.10/site-packages/transformers/trainer.py", line 2383, in _save_checkpoint',
    ">     os.rename(staging_output_dir, output_dir)",
]


def test_the_quote_mark_is_peeled_where_it_quotes_the_file():
    rows = frame(QUOTED_TRACEBACKS)
    assert rows[0]["message"].startswith('  File "/home/kas/')
    assert {row["framing"] for row in rows} == {"quote"}


def test_a_line_that_happens_to_start_with_the_mark_is_left_alone():
    rows = frame(["> 5 ranks reached step 10", "rank=0 step=10 stage=forward", "ok"])
    assert rows[0]["message"] == "> 5 ranks reached step 10"


def test_a_quoted_paste_is_analysed(tmp_path):
    analysis = analyze_files(tmp_path, {"issue.txt": QUOTED_TRACEBACKS})
    cut = finding(analysis, "rank_exception")
    assert cut.ranks == [] and "_save_checkpoint" in cut.summary


# NVIDIA/nccl#2106, verbatim (its first lines, quoted by the reporter); here quoted once more,
# as a reply quotes a quote (constructed)
QUOTED_TWICE = [
    "> > !!!!!!! Segfault encountered !!!!!!!",
    '> >   File "./signal/../sysdeps/unix/sysv/linux/x86_64/libc_sigaction.c", line 0, in 0x00007d8764c4532f',
    '> >   File "./nptl/pthread_kill.c", line 44, in __pthread_kill_implementation',
]


def test_a_quote_of_a_quote_is_peeled_whole():
    rows = frame(QUOTED_TWICE)
    assert rows[0]["message"] == "!!!!!!! Segfault encountered !!!!!!!"
    assert rows[1]["message"].startswith('  File "./signal/')
    assert frame([">> x", ">> y"])[0]["message"] == "x"
