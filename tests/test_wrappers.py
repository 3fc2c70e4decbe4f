# ruff: noqa: E501 -- test data are verbatim log lines
"""Prefixes learned from files that are nothing but them (logforensics/wrappers.py)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from logforensics.wrappers import learned_wrappers
from tests.builders import analyze_files, kinds

# databrickslabs/dolly#139, verbatim: Metaflow stamps every line of the task's output with its
# time, its task path and pid, and the run's id; the checkpoint save ran out of disk
METAFLOW_TASK = [
    "2023-04-29 06:01:12.977 [177/train/578 (pid 28936)] [09c561ee-a44c-4795-967c-7183a83b3160] 2023-04-29 06:01:12 ERROR [__main__] main failed",
    "2023-04-29 06:01:12.977 [177/train/578 (pid 28936)] [09c561ee-a44c-4795-967c-7183a83b3160] Traceback (most recent call last):",
    '2023-04-29 06:01:12.977 [177/train/578 (pid 28936)] [09c561ee-a44c-4795-967c-7183a83b3160]   File "/opt/conda/lib/python3.7/site-packages/torch/serialization.py", line 379, in save',
    "2023-04-29 06:01:12.977 [177/train/578 (pid 28936)] [09c561ee-a44c-4795-967c-7183a83b3160]     _save(obj, opened_zipfile, pickle_module, pickle_protocol)",
    '2023-04-29 06:01:12.977 [177/train/578 (pid 28936)] [09c561ee-a44c-4795-967c-7183a83b3160]   File "/opt/conda/lib/python3.7/site-packages/torch/serialization.py", line 604, in _save',
    "2023-04-29 06:01:12.977 [177/train/578 (pid 28936)] [09c561ee-a44c-4795-967c-7183a83b3160]     zip_file.write_record(name, storage.data_ptr(), num_bytes)",
    "2023-04-29 06:01:12.977 [177/train/578 (pid 28936)] [09c561ee-a44c-4795-967c-7183a83b3160] OSError: [Errno 28] No space left on device",
]


def _learned(lines: list[str]) -> dict[str, str]:
    return learned_wrappers(pl.DataFrame({"file": "log.txt", "text": lines}))


def test_a_prefix_on_every_line_is_learned_up_to_where_the_lines_differ():
    (pattern,) = _learned(METAFLOW_TASK).values()
    peeled = [pl.Series([line]).str.replace(pattern, "").item() for line in METAFLOW_TASK]
    assert peeled[1] == "Traceback (most recent call last):"
    assert peeled[2].startswith('  File "/opt/conda/')  # the indentation is the line's own
    assert peeled[-1] == "OSError: [Errno 28] No space left on device"


def test_lines_without_a_shared_bracketed_prefix_teach_nothing():
    plain = [line.split("] ", 2)[2] for line in METAFLOW_TASK]
    assert _learned(plain) == {}
    # a time stamp alone on every line is no wrapper's metadata
    stamped = [f"2023-04-29 06:01:{second:02d} {line}" for second, line in enumerate(plain)]
    assert _learned(stamped) == {}


def test_a_file_of_wrapped_lines_is_read_through_its_prefix_and_quoted_as_it_was(tmp_path):
    analysis = analyze_files(tmp_path, {"log.txt": METAFLOW_TASK})
    verdict = analysis.verdict
    assert verdict.finding.kind == "rank_exception"
    assert "No space left on device" in verdict.finding.summary
    # the evidence quotes the lines as the file holds them, prefix and all
    assert [(e.line, e.text) for e in verdict.finding.evidence] == [
        (2, METAFLOW_TASK[1]),
        (7, METAFLOW_TASK[6]),
    ]
    assert analysis.recognised_lines == analysis.lines == 7


def test_the_prefix_is_learnt_under_the_prefixes_the_framers_know(tmp_path):
    # the same task's output as `kubectl logs --timestamps` would relay it from a pod
    relayed = [f"2023-04-29T06:01:12.977812345Z {line}" for line in METAFLOW_TASK]
    verdict = analyze_files(tmp_path, {"log.txt": relayed}).verdict
    assert verdict.finding.kind == "rank_exception"
    assert "No space left on device" in verdict.finding.summary


def test_a_supervisors_tag_over_torchrun_is_peeled_and_the_tags_inside_it_framed(tmp_path):
    # spawnaga/GeneticTrading's committed terminal session (tests/data/threads): a supervisor
    # script relays torchrun's output behind `[TRAINING] `; NCCL's own lines were readable
    # through it, rank 0's `[rank0]:` traceback was not
    threads = Path(__file__).resolve().parent / "data" / "threads"
    lines = (threads / "genetictrading_supervisor_tag.log").read_text(encoding="utf-8")
    analysis = analyze_files(tmp_path, {"session.log": lines.splitlines()})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [0])
    assert "unexpected keyword argument 'elite_count'" in verdict.finding.summary
    assert verdict.finding.evidence[0].text.startswith("[TRAINING] [rank0]: ")


def test_a_supervisors_tag_on_fewer_lines_than_its_own_is_peeled(tmp_path):
    # spawnaga/GeneticTrading's committed console (tests/data/threads): the supervisor's own
    # `INFO:__main__:` lines outnumber its `[TRAINING] ` tag on torchrun's traceback, whose
    # exception says the store's port was taken
    threads = Path(__file__).resolve().parent / "data" / "threads"
    lines = (threads / "genetictrading_store_in_use.log").read_text(encoding="utf-8")
    analysis = analyze_files(tmp_path, {"console.log": lines.splitlines()})
    verdict = analysis.verdict
    assert verdict.finding.kind == "missing_rank"
    assert "EADDRINUSE" in verdict.finding.summary
    assert verdict.finding.evidence[0].text.startswith("[TRAINING] torch.distributed.")


def test_a_label_on_few_lines_is_no_supervisors_tag(tmp_path):
    # the same console with the tag left on nine of its lines only: too few to be a tag
    threads = Path(__file__).resolve().parent / "data" / "threads"
    lines = (threads / "genetictrading_store_in_use.log").read_text(encoding="utf-8")
    tagged = [line for line in lines.splitlines() if line.startswith("[TRAINING] ")]
    kept = [line for line in lines.splitlines() if not line.startswith("[TRAINING] ")]
    analysis = analyze_files(tmp_path, {"console.log": kept + tagged[-9:]})
    assert "missing_rank" not in kinds(analysis)


# Evan-Kim2028/open_swe_traces_research (experiments/curve/VALIDATION.md), verbatim: a Kaggle
# kernel's log kept as `t=<seconds> | <stream> | `, mp.spawn's report of process 1's failure
KAGGLE_RUN = [
    "t=114.62 | stderr | torch.multiprocessing.spawn.ProcessRaisedException: ",
    "t=114.62 | stderr | ",
    "t=114.62 | stderr | -- Process 1 terminated with the following error:",
    "t=114.62 | stderr | Traceback (most recent call last):",
    't=114.62 | stderr |   File "/usr/local/lib/python3.12/dist-packages/torch/multiprocessing/spawn.py", line 87, in _wrap',
    "t=114.62 | stderr |     fn(i, *args)",
    't=114.63 | stderr |   File "/usr/local/lib/python3.12/dist-packages/transformers/models/qwen2/modeling_qwen2.py", line 30, in <module>',
    "t=114.63 | stderr |     from ...utils.generic import maybe_autocast, merge_with_config_defaults",
    "t=114.63 | stderr | ImportError: cannot import name 'merge_with_config_defaults' from 'transformers.utils.generic' (/usr/local/lib/python3.12/dist-packages/transformers/utils/generic.py)",
]


def test_fields_a_separator_closes_are_a_prefix_too(tmp_path):
    (pattern,) = _learned(KAGGLE_RUN).values()
    assert pl.Series([KAGGLE_RUN[3]]).str.replace(pattern, "").item() == (
        "Traceback (most recent call last):"
    )
    verdict = analyze_files(tmp_path, {"log.txt": KAGGLE_RUN}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [1])
    assert "merge_with_config_defaults" in verdict.finding.summary
    # words a separator does not close stay the line's own
    assert _learned([line.replace(" | ", " ") for line in KAGGLE_RUN]) == {}


def test_a_bracketed_tag_a_colon_closes_is_a_prefix_with_or_without_a_space(tmp_path):
    # huggingface/evaluate#481's line, verbatim, after the traceback it closed (the report
    # quoted only the exception line of each node's process)
    lines = [
        "[node1:4]:Traceback (most recent call last):",
        '[node1:4]:  File "/workspace/train.py", line 88, in <module>',
        "[node1:4]:ValueError: Couldn't acquire lock on /.hf_cache/metrics/accuracy/default/exp-16-rdv.lock from process 4.",
    ]
    analysis = analyze_files(tmp_path, {"node1.log": lines})
    assert analysis.verdict.finding.kind == "rank_exception"
    assert "Couldn't acquire lock" in analysis.verdict.finding.summary
    (pattern,) = _learned([line.replace("]:", "]: ", 1) for line in lines]).values()
    assert pl.Series([lines[2]]).str.replace(pattern, "").item().startswith("ValueError: ")
