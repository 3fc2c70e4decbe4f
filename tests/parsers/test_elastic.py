from __future__ import annotations

import datetime as dt
import json

import polars as pl
import pytest

from logforensics.stopped_workers import unstopped_worker
from tests.builders import analyze_files, kinds, only, parse, parsed_by

# formats.md §9.2 (open-mmlab/mmsegmentation#3106; the excerpt ends after the root cause's
# error_file).
SUMMARY = [
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
    "========================================================",
    "tools/train.py FAILED",
    "--------------------------------------------------------",
    "Failures:",
    "[1]:",
    "  time      : 2023-06-14_22:36:10",
    "  host      : neptun.informatik.uni-kl.de",
    "  rank      : 1 (local_rank: 1)",
    "  exitcode  : -6 (pid: 2385923)",
    "  error_file: <N/A>",
    "  traceback : Signal 6 (SIGABRT) received by PID 2385923",
    "[2]:",
    "  time      : 2023-06-14_22:36:10",
    "  host      : neptun.informatik.uni-kl.de",
    "  rank      : 2 (local_rank: 2)",
    "  exitcode  : -6 (pid: 2385924)",
    "  error_file: <N/A>",
    "  traceback : Signal 6 (SIGABRT) received by PID 2385924",
    "--------------------------------------------------------",
    "Root Cause (first observed failure):",
    "[0]:",
    "  time      : 2023-06-14_22:36:10",
    "  host      : neptun.informatik.uni-kl.de",
    "  rank      : 0 (local_rank: 0)",
    "  exitcode  : -6 (pid: 2385922)",
    "  error_file: <N/A>",
]

# Field sample pt-148976 (torchrun_output.txt, whole file): the child's traceback is in the
# summary, indented, and the paste cuts its last line.
WITH_TRACEBACK = [
    "============================================================",
    "bug.py FAILED",
    "------------------------------------------------------------",
    "Failures:",
    "[1]:",
    "  time      : 2025-03-11_18:33:20",
    "  host      : lenovo",
    "  rank      : 1 (local_rank: 1)",
    "  exitcode  : 1 (pid: 340055)",
    "  error_file: /tmp/torchelastic_ih8xk_wi/5240416c-e326-45c8-a708-c3ec0cc3d51b_sfj1zute/attempt_0/1/error.json",
    "  traceback : Traceback (most recent call last):",
    '    File "/home/lisergey/.local/lib/python3.12/site-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 355, in wrapper',
    "      return f(*args, **kwargs)",
    "             ^^^^^^^^^^^^^^^^^^",
    '    File "/home/lisergey/deepseek/bug.py", line 16, in main',
    "      dist.barrier()",
    '    File "/home/lisergey/.local/lib/python3.12/site-packages/torch/distributed/c10d_logger.py", line 81, in wrapper',
    "      return func(*args, **kwargs)",
    "             ^^^^^^^^^^^^^^^^^^^^^",
    '    File "/home/lisergey/.local/lib/python3.12/site-packages/torch/distributed/distributed_c10d.py", line 4551, in barrier',
    "      work = group.barrier(opts=opts)",
    "             ^^^^^^^^^^^^^^^^^^^^^^^^",
    "  RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=1OpType=BARRIER), but Rank 2 is running collective: CollectiveFingerPrint(SequenceNumber=0OpType=BARRIER).Collectives di",
]

# torchrun 2.13 (gloo, 2 ranks; rank 0 calls os.abort()): the agent SIGTERMs rank 1, reports
# rank 0, raises; the summary names each signal after the pid.
SIGNALLED = [
    "W1130 15:21:21.832000 1790 torch/distributed/elastic/multiprocessing/api.py:1028] Sending process 1807 closing signal SIGTERM",
    "E1130 15:21:22.032000 1790 torch/distributed/elastic/multiprocessing/api.py:1002] failed (exitcode: -6) local_rank: 0 (pid: 1806) of binary: /work/venv/bin/python3",
    "Traceback (most recent call last):",
    '  File "/work/venv/bin/torchrun", line 8, in <module>',
    "    sys.exit(main())",
    "             ^^^^^^",
    '  File "/work/venv/lib/python3.11/site-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 367, in wrapper',
    "    return f(*args, **kwargs)",
    "           ^^^^^^^^^^^^^^^^^^",
    '  File "/work/venv/lib/python3.11/site-packages/torch/distributed/run.py", line 1028, in main',
    "    run(args)",
    '  File "/work/venv/lib/python3.11/site-packages/torch/distributed/run.py", line 1019, in run',
    "    elastic_launch(",
    '  File "/work/venv/lib/python3.11/site-packages/torch/distributed/launcher/api.py", line 194, in __call__',
    "    return launch_agent(",
    "           ^^^^^^^^^^^^^",
    '  File "/work/venv/lib/python3.11/site-packages/torch/distributed/launcher/api.py", line 383, in launch_agent',
    "    raise ChildFailedError(",
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
    "======================================================",
    "chained.py FAILED",
    "------------------------------------------------------",
    "Failures:",
    "[1]:",
    "  time      : 2026-11-30_15:21:22",
    "  host      : localhost",
    "  rank      : 1 (local_rank: 1)",
    "  exitcode  : -15 (pid: 1807)  (SIGTERM)",
    "  error_file: <N/A>",
    "  traceback : Signal 15 (SIGTERM) received by PID 1807",
    "------------------------------------------------------",
    "Root Cause (first observed failure):",
    "[0]:",
    "  time      : 2026-11-30_15:21:21",
    "  host      : localhost",
    "  rank      : 0 (local_rank: 0)",
    "  exitcode  : -6 (pid: 1806)  (SIGABRT)",
    "  error_file: <N/A>",
    "  traceback : Signal 6 (SIGABRT) received by PID 1806",
    "======================================================",
]

# torchrun 2.13: one failure, no traceback captured (no @record).
ONLY_ROOT_CAUSE = [
    "============================================================",
    "chained.py FAILED",
    "------------------------------------------------------------",
    "Failures:",
    "  <NO_OTHER_FAILURES>",
    "------------------------------------------------------------",
    "Root Cause (first observed failure):",
    "[0]:",
    "  time      : 2026-11-30_15:21:11",
    "  host      : localhost",
    "  rank      : 1 (local_rank: 1)",
    "  exitcode  : 1 (pid: 1095) ",
    "  error_file: <N/A>",
    "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
    "============================================================",
]

# torch 1.9: `Root Cause:` first, then `Other Failures:`, fields without `host`
# (templates of torch/distributed/elastic/multiprocessing/errors/__init__.py before
# pytorch/pytorch#66182; entry lines from pytorch/pytorch#64681).
BEFORE_1_10 = [
    "==================================================",
    "train.py FAILED",
    "--------------------------------------------------",
    "Root Cause:",
    "[0]:",
    "  time: 2021-08-26_17:12:07",
    "  rank: 0 (local_rank: 0)",
    "  exitcode: 1 (pid: 8045)",
    "  error_file: /tmp/torchelastic_6cj9eppm/6d9d844a-6ce4-4838-93ed-1639a9525b00_rec9kuv3/attempt_0/0/error.json",
    "--------------------------------------------------",
    "Other Failures:",
    "==================================================",
]

# torch 1.10 printed the traceback under a bare `traceback :` (pytorch/pytorch#66182; the
# excerpt ends inside the traceback).
TORCH_1_10 = [
    "============================================================",
    "run_script_path FAILED",
    "------------------------------------------------------------",
    "Failures:",
    "  <NO_OTHER_FAILURES>",
    "------------------------------------------------------------",
    "Root Cause (first observed failure):",
    "[0]:",
    "  time      : 2021-10-05_17:37:22",
    "  host      : devvm4955.prn0.facebook.com",
    "  rank      : 0 (local_rank: 0)",
    "  exitcode  : 1 (pid: 3296201)",
    "  error_file: /home/kiuk/tmp/elastic/none_3_lsytqe/attempt_0/0/error.json",
    "  traceback :",
    "  Traceback (most recent call last):",
    '    File "/tmp/jetter.xr3_x6qq/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 372, in wrapper',
]

# torchrun's start-up banner in its three logging eras: sample_logs (torch 2.13, glog),
# pytorch/pytorch#125990 (torch ~2.1-2.2), torch <= 2.0 (stdlib logging).
BANNERS = [
    [
        "W1130 15:04:26.975000 4263 torch/distributed/run.py:874] ",
        "W1130 15:04:26.975000 4263 torch/distributed/run.py:874] *****************************************",
        "W1130 15:04:26.975000 4263 torch/distributed/run.py:874] Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. ",
        "W1130 15:04:26.975000 4263 torch/distributed/run.py:874] *****************************************",
    ],
    [
        "[2024-05-10 22:43:34,776] torch.distributed.run: [WARNING] ",
        "[2024-05-10 22:43:34,776] torch.distributed.run: [WARNING] *****************************************",
    ],
    [
        "WARNING:torch.distributed.run:",
        "*****************************************",
        "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. ",
        "*****************************************",
    ],
]


def _events(lines: list[str], event: str) -> list[dict]:
    table = parse(lines, "launcher.log")
    rows = table.filter((pl.col("parser") == "elastic") & (pl.col("event") == event))
    return rows.sort("line").to_dicts()


def _entry(row: dict) -> tuple:
    extra = json.loads(row["extra"])
    return (
        row["rank"],
        row["local_rank"],
        row["exitcode"],
        row["pid"],
        row["signal"],
        extra["root_cause"],
    )


def test_every_entry_of_the_summary_is_a_child_failure():
    found = _events(SUMMARY, "child_failed")
    assert [_entry(row) for row in found] == [
        (1, 1, -6, 2385923, "SIGABRT", False),
        (2, 2, -6, 2385924, "SIGABRT", False),
        (0, 0, -6, 2385922, None, True),  # its `traceback :` line is past the excerpt
    ]
    assert [(row["line"], row["end_line"]) for row in found] == [(6, 12), (13, 19), (22, 27)]
    assert {row["host"] for row in found} == {"neptun.informatik.uni-kl.de"}
    assert {row["timestamp"] for row in found} == {dt.datetime(2023, 6, 14, 22, 36, 10)}
    assert {row["rank_from"] for row in found} == {"content"}  # the summary names the rank
    assert all(json.loads(row["extra"])["error_file"] is None for row in found)  # <N/A>


def test_the_childs_traceback_in_the_summary_gives_its_exception():
    (found,) = _events(WITH_TRACEBACK, "child_failed")
    assert _entry(found) == (1, 1, 1, 340055, None, False)
    assert (found["line"], found["end_line"]) == (5, 23)
    assert found["exc_type"] == "RuntimeError"
    assert found["exc_message"].startswith("Detected mismatch between collectives on ranks.")
    assert found["frame"] == (
        "/home/lisergey/.local/lib/python3.12/site-packages/torch/distributed/"
        "distributed_c10d.py:4551 in barrier"
    )
    assert json.loads(found["extra"])["error_file"] == (
        "/tmp/torchelastic_ih8xk_wi/5240416c-e326-45c8-a708-c3ec0cc3d51b_sfj1zute/attempt_0/1/"
        "error.json"
    )


def test_the_summary_s_copy_of_the_traceback_is_the_rank_s_exception():
    # (the field sample holds the summary alone: rank 1's own print of it is not there)
    (carried,) = _events(WITH_TRACEBACK, "exception")
    assert (carried["rank"], carried["exc_type"], carried["line"]) == (1, "RuntimeError", 11)
    assert carried["exc_message"].startswith("Detected mismatch between collectives on ranks.")
    # a traceback the summary cuts before its exception says no error
    assert _events(TORCH_1_10, "exception") == []
    assert [row["rank"] for row in _events(TORCH_1_10, "child_failed")] == [0]


# pytorch/pytorch#73465, verbatim (the paste starts inside the summary): the worker's NameError
# reached only the summary, where `@record` put it
ROOT_CAUSE_WITH_TRACEBACK = [
    "------------------------------------------------------------",
    "Root Cause (first observed failure):",
    "[0]:",
    "  time      : 2022-02-26_22:02:07",
    "  host      : jean-zay-iam39-ib0",
    "  rank      : 304 (local_rank: 0)",
    "  exitcode  : 1 (pid: 181845)",
    "  error_file: /tmp/torchelastic_78rus22c/none_h9w4ezyp/attempt_0/0/error.json",
    "  traceback : Traceback (most recent call last):",
    '    File "/gpfswork/rech/six/commun/conda/py38-pt111/lib/python3.8/site-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 345, in wrapper',
    "      return f(*args, **kwargs)",
    '    File "/gpfswork/rech/six/commun/code/tr8b-104B/Megatron-DeepSpeed/pretrain_gpt.py", line 241, in main',
    "      die",
    "  NameError: name 'die' is not defined",
    "  ",
    "============================================================",
]


def test_the_exception_only_the_summary_carries_is_the_verdict(tmp_path):
    verdict = analyze_files(tmp_path, {"train.log": ROOT_CAUSE_WITH_TRACEBACK}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [304])
    assert verdict.headline == "Rank 304 died of a NameError"
    assert "name 'die' is not defined" in verdict.finding.summary


def test_a_copied_traceback_is_not_a_second_exception(tmp_path):
    # the worker printed its traceback under its torchrun tag, then the agent's summary
    # copied it: one exception of rank 304 (its own lines built from the summary's frames)
    own = [
        "[default0]:Traceback (most recent call last):",
        '[default0]:  File "/gpfswork/rech/six/commun/code/tr8b-104B/Megatron-DeepSpeed/pretrain_gpt.py", line 241, in main',
        "[default0]:    die",
        "[default0]:NameError: name 'die' is not defined",
    ]
    analysis = analyze_files(
        tmp_path, {"rank304.log": own, "launcher.log": ROOT_CAUSE_WITH_TRACEBACK}
    )
    exceptions = analysis.job.events.filter(pl.col("event") == "exception")
    assert exceptions.select("file", "rank").rows() == [("rank304.log", 304)]


def test_signal_names_after_the_pid_and_the_agents_lines():
    found = _events(SIGNALLED, "child_failed")
    assert [_entry(row) for row in found] == [
        (1, 1, -15, 1807, "SIGTERM", False),
        (0, 0, -6, 1806, "SIGABRT", True),
    ]
    (sigterm,) = _events(SIGNALLED, "worker_sigterm")
    assert (sigterm["line"], sigterm["pid"], sigterm["signal"]) == (1, 1807, "SIGTERM")
    assert sigterm["severity"] == "warning"
    (failed,) = _events(SIGNALLED, "worker_failed")
    assert (failed["exitcode"], failed["local_rank"], failed["pid"]) == (-6, 0, 1806)
    assert failed["severity"] == "error"


def test_a_lone_root_cause():
    (found,) = _events(ONLY_ROOT_CAUSE, "child_failed")
    assert _entry(found) == (1, 1, 1, 1095, None, True)
    assert (found["line"], found["end_line"], found["exc_type"]) == (8, 14, None)


def test_the_summary_before_torch_1_10():
    (found,) = _events(BEFORE_1_10, "child_failed")
    assert _entry(found) == (0, 0, 1, 8045, None, True)
    assert (found["timestamp"], found["host"]) == (dt.datetime(2021, 8, 26, 17, 12, 7), None)
    assert json.loads(found["extra"])["error_file"].endswith("attempt_0/0/error.json")


@pytest.mark.parametrize(
    ("line", "event", "exitcode", "local_rank", "pid", "signal"),
    [
        (
            "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 886321 closing signal SIGTERM",
            "worker_sigterm",
            None,
            None,
            886321,
            "SIGTERM",
        ),
        (
            "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -6) local_rank: 1 (pid: 886322) of binary: /idas/users/yaofengqin/.conda/envs/allspark/bin/python",
            "worker_failed",
            -6,
            1,
            886322,
            None,
        ),
        (
            "[2024-02-09 09:09:15,164] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: 1) local_rank: 0 (pid: 170581) of binary: /usr/bin/python3.10",
            "worker_failed",
            1,
            0,
            170581,
            None,
        ),
        (
            "W0801 13:23:17.366000 32974 torch/distributed/elastic/multiprocessing/api.py:900] Sending process 33051 closing signal SIGTERM",
            "worker_sigterm",
            None,
            None,
            33051,
            "SIGTERM",
        ),
        (
            "E0801 13:23:20.000000 32974 torch/distributed/elastic/multiprocessing/api.py:874] failed (exitcode: 1) local_rank: 3 (pid: 33054) of binary: /home/ubuntu/pythonn3.11/bin/python3",
            "worker_failed",
            1,
            3,
            33054,
            None,
        ),
        (
            # salesforce/BLIP#90, verbatim: the script's own logging format, a space after `api:`
            "[ERROR] 2022-08-21 20:11:07,312 api: failed (exitcode: -9) local_rank: 0 (pid: 28413) of binary: /home/xuzhiyuan/anaconda3/envs/torch19/bin/python",
            "worker_failed",
            -9,
            0,
            28413,
            None,
        ),
    ],
    ids=[
        "stdlib-sigterm",
        "stdlib-failed",
        "bracketed-failed",
        "glog-sigterm",
        "glog-failed",
        "own-format-failed",
    ],
)
def test_agent_lines_in_every_logging_era(line, event, exitcode, local_rank, pid, signal):
    (found,) = _events([line], event)
    assert (found["exitcode"], found["local_rank"], found["pid"]) == (exitcode, local_rank, pid)
    assert found["signal"] == signal


def test_the_bracketed_era_keeps_its_timestamp():
    line = "[2024-02-09 09:09:15,164] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: 1) local_rank: 0 (pid: 170581) of binary: /usr/bin/python3.10"
    (found,) = _events([line], "worker_failed")
    assert found["timestamp"] == dt.datetime(2024, 2, 9, 9, 9, 15, 164000)


@pytest.mark.parametrize(
    "lines",
    [SUMMARY, WITH_TRACEBACK, SIGNALLED, ONLY_ROOT_CAUSE, BEFORE_1_10, TORCH_1_10, *BANNERS],
    ids=[
        "summary",
        "with-traceback",
        "signalled",
        "only-root-cause",
        "before-1.10",
        "torch-1.10",
        "banner-glog",
        "banner-bracketed",
        "banner-stdlib",
    ],
)
def test_every_line_of_the_launchers_output_is_recognised(tmp_path, lines):
    assert analyze_files(tmp_path, {"launcher.log": lines}).unrecognised_lines == 0


def test_the_notice_about_the_parents_error_file_is_recognised(tmp_path):
    # formats.md §9.1 (speechbrain/speechbrain#2401)
    line = "[2024-02-09 09:09:15,172] torch.distributed.elastic.multiprocessing.errors.error_handler: [ERROR] no error file defined for parent, to copy child error file (/tmp/torchelastic_ttv1bvv7/none_8kh569f4/attempt_0/0/error.json)"
    assert analyze_files(tmp_path, {"launcher.log": [line]}).unrecognised_lines == 0
    assert parse([line], "launcher.log").filter(pl.col("parser") == "elastic").is_empty()


def test_the_childs_exception_is_the_line_after_its_frames_not_the_messages_tail():
    # The summary indents the child's traceback by two spaces (`msg.replace("\n", "\n  ")`);
    # here the child's is field sample megatron-661's (pretrain_gpt.log lines 7-12), whose
    # message goes on with NCCL's own `ncclInvalidUsage: ...` line.
    child = [
        '  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/c10d_logger.py", line 72, in wrapper',
        "    work = default_pg.barrier(opts=opts)",
        "torch.distributed.DistBackendError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1727, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.19.3",
        "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.",
        "Last error:",
        "Duplicate GPU detected : rank 7 and rank 0 both on CUDA device f000",
    ]
    entry = SUMMARY[:11] + ["  traceback : Traceback (most recent call last):"]
    (found,) = _events(entry + ["  " + line for line in child], "child_failed")
    assert found["exc_type"] == "torch.distributed.DistBackendError"
    assert found["exc_message"].startswith("NCCL error in: /opt/pytorch/pytorch/torch/csrc")
    assert found["frame"].endswith("c10d_logger.py:72 in wrapper")
    assert found["end_line"] == len(entry) + len(child)


# hiyouga/ChatGLM-Efficient-Tuning#75, verbatim: the reporter pasted the table from its first
# section border on, without the title above it
HEADLESS_TABLE = [
    "------------------------------------------------------------",
    "Failures:",
    "[1]:",
    "  time      : 2023-06-05_17:57:46",
    "  host      : d0629_15u",
    "  rank      : 1 (local_rank: 1)",
    "  exitcode  : 1 (pid: 39887)",
    "  error_file: <N/A>",
    "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
    "------------------------------------------------------------",
    "Root Cause (first observed failure):",
    "[0]:",
    "  time      : 2023-06-05_17:57:46",
    "  host      : d0629_15u",
    "  rank      : 0 (local_rank: 0)",
    "  exitcode  : 1 (pid: 39886)",
    "  error_file: <N/A>",
    "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
]


def test_a_table_pasted_without_its_title_is_still_read(tmp_path):
    found = _events(HEADLESS_TABLE, "child_failed")
    assert [(row["rank"], row["exitcode"]) for row in found] == [(1, 1), (0, 1)]
    analysis = analyze_files(tmp_path, {"console.log": HEADLESS_TABLE})
    # the border above `Failures:` holds no literal that routes a line to this family
    assert analysis.unrecognised_lines == 1
    assert analysis.verdict.finding.summary == (
        "Ranks 0 and 1 exited with code 1 (the launcher's report); the errors they printed are not "
        "in these logs."
    )


# NVIDIA/Megatron-LM#1880, verbatim: the paste starts at the entry's `rank` field, below its
# `[0]:` line and every heading
FIELDS_ONLY = [
    "  rank      : 0 (local_rank: 0)",
    "  exitcode  : -11 (pid: 6421)",
    "  error_file: <N/A>",
    "  traceback : Signal 11 (SIGSEGV) received by PID 6421",
    "======================================================",
]


def test_an_entry_pasted_from_its_fields_on_is_still_read(tmp_path):
    [found] = _events(FIELDS_ONLY, "child_failed")
    assert (found["rank"], found["exitcode"], found["pid"], found["signal"]) == (
        0,
        -11,
        6421,
        "SIGSEGV",
    )
    analysis = analyze_files(tmp_path, {"console.log": FIELDS_ONLY})
    assert analysis.unrecognised_lines == 0
    assert (analysis.verdict.finding.kind, analysis.verdict.ranks) == ("rank_exception", [0])


def test_fields_without_an_exit_code_are_no_entry():
    # the same field names in a configuration a script prints: no worker's exit in them
    lines = ["dist:", "  host      : node-1", "  rank      : 0", "  time      : 30"]
    assert _events(lines, "child_failed") == []


def test_a_process_failure_record_is_a_failed_worker():
    # intelligent-machine-learning/dlrover#1046, verbatim: the agent logs torchelastic's
    # failures dict; worker 0 died of SIGBUS (Docker's 64 MB /dev/shm, checkpoint saving)
    line = "The worker fails with {0: ProcessFailure(local_rank=0, pid=54, exitcode=-7, error_file='<N/A>', error_file_data={'message': '<NONE>'}, message='Signal 7 (SIGBUS) received by PID 54', timestamp=1711419181)}"
    failed = only(parsed_by("elastic", [line]).filter(event="worker_failed"))
    assert (failed["local_rank"], failed["pid"], failed["exitcode"]) == (0, 54, -7)


# modelscope/ms-swift#8193, verbatim: the agent itself was sent SIGTERM (the host ran out of
# memory while saving) and stops its four workers
AGENT_SIGNALLED = [
    "W0304 01:00:36.891000 3535919 site-packages/torch/distributed/elastic/agent/server/api.py:725] Received Signals.SIGTERM death signal, shutting down workers",
    "W0304 01:00:37.092000 3535919 site-packages/torch/distributed/elastic/multiprocessing/api.py:908] Sending process 3536001 closing signal SIGTERM",
]


def test_the_agent_s_own_death_signal_is_an_event_before_its_workers_stops():
    events = parsed_by("elastic", AGENT_SIGNALLED)
    signalled = only(events.filter(pl.col("event") == "launcher_signalled"))
    assert (signalled["line"], signalled["signal"]) == (1, "SIGTERM")
    assert events.filter(pl.col("event") == "worker_sigterm").get_column("line").to_list() == [2]


def test_a_death_signal_by_its_number_is_named():
    # pytorch/pytorch#150916, verbatim (torch 2.7): the agent of one node killed as a test
    line = "W0409 07:28:49.530000 1359 torch/distributed/elastic/agent/server/api.py:719] Received 15 death signal, shutting down workers"
    signalled = only(parsed_by("elastic", [line]))
    assert (signalled["event"], signalled["signal"]) == ("launcher_signalled", "SIGTERM")


def test_the_older_launchers_word_that_it_was_signalled_is_read():
    # bigscience-workshop/bigscience, experiments/gpt2-meg/meg_gpt2_base_n8_dp1_tp4_pp8-1809562.out
    # (at 6980df2), verbatim: torch.distributed.launch stopping its workers when SLURM cancelled
    lines = ["Killing subprocess 748", "Main process received SIGTERM, exiting"]
    signalled = only(parsed_by("elastic", lines))
    assert (signalled["event"], signalled["line"], signalled["signal"]) == (
        "launcher_signalled",
        2,
        "SIGTERM",
    )


# brendansu/CAV-Agent-Defense, doc/transcripts/2026-03-27_gridsybil-pseudo-first-training-treatment-
# try-7b-model.md (at a6183a8), verbatim: under SLURM's preemption the agent's warning failed to
# format, leaving its SignalException and the stops of its workers
AGENT_SIGNAL_EXCEPTION = [
    "--- Logging error ---",
    "Traceback (most recent call last):",
    '  File "/home/haotias/.conda/envs/veremi/lib/python3.13/site-packages/torch/distributed/elastic/agent/server/api.py", line 731, in run',
    "    result = self._invoke_run(role)",
    '  File "/home/haotias/.conda/envs/veremi/lib/python3.13/site-packages/torch/distributed/elastic/agent/server/api.py", line 908, in _invoke_run',
    "    time.sleep(monitor_interval)",
    "    ~~~~~~~~~~^^^^^^^^^^^^^^^^^^",
    '  File "/home/haotias/.conda/envs/veremi/lib/python3.13/site-packages/torch/distributed/elastic/multiprocessing/api.py", line 86, in _terminate_process_handler',
    '    raise SignalException(f"Process {os.getpid()} got signal: {sigval}", sigval=sigval)',
    "torch.distributed.elastic.multiprocessing.api.SignalException: Process 3045566 got signal: 15",
    "",
    "Message: 'Received %s death signal, shutting down workers'",
    "Arguments: (<Signals.SIGTERM: 15>,)",
    "W0325 10:34:07.578000 3045566 site-packages/torch/distributed/elastic/multiprocessing/api.py:1010] Sending process 3045680 closing signal SIGTERM",
    "W0325 10:34:07.578000 3045566 site-packages/torch/distributed/elastic/multiprocessing/api.py:1010] Sending process 3045681 closing signal SIGTERM",
    "W0325 10:34:07.579000 3045566 site-packages/torch/distributed/elastic/multiprocessing/api.py:1010] Sending process 3045682 closing signal SIGTERM",
]


def test_the_agent_s_signal_exception_is_its_death_signal(tmp_path):
    signalled = parsed_by("elastic", AGENT_SIGNAL_EXCEPTION).filter(
        pl.col("event") == "launcher_signalled"
    )
    assert signalled.get_column("signal").unique().to_list() == ["SIGTERM"]
    verdict = analyze_files(tmp_path, {"console.log": AGENT_SIGNAL_EXCEPTION}).verdict
    assert verdict.headline == "The launcher was sent SIGTERM from outside and stopped the job"


# huggingface/accelerate#1214, verbatim: `accelerate launch` logs through Rich, the level in a
# column before the message and the source after it; the failed worker's tail wraps
RICH_AGENT = [
    "Loading checkpoint shards: 100%|██████████| 61/61 [05:45<00:00,  5.66s/it]",
    " WARNING  Sending process 14 closing signal SIGTERM         api.py:699",
    " WARNING  Sending process 15 closing signal SIGTERM         api.py:699",
    " WARNING  Sending process 16 closing signal SIGTERM         api.py:699",
    " WARNING  Sending process 17 closing signal SIGTERM         api.py:699",
    " WARNING  Sending process 20 closing signal SIGTERM         api.py:699",
    " WARNING  Sending process 26 closing signal SIGTERM         api.py:699",
    " WARNING  Sending process 29 closing signal SIGTERM         api.py:699",
    " ERROR    failed (exitcode: -9) local_rank: 5 (pid: 22) of  api.py:673",
    " binary: /opt/conda/bin/python ",
    "056444Z ╭───────────────────── Traceback (most recent call last) ──────────────────────╮",
]


def test_rich_s_level_column_before_the_agent_s_failure_line_is_read():
    found = parsed_by("elastic", RICH_AGENT)
    failed = found.filter(pl.col("event") == "worker_failed")
    assert failed.get_column("exitcode").to_list() == [-9]
    assert failed.get_column("local_rank").to_list() == [5]
    assert found.filter(pl.col("event") == "worker_sigterm").height == 7


# HarderThenHarder/transformers_tasks#27, verbatim: Rich's time column before the level
RICH_WITH_TIME = [
    "[16:26:30] WARNING  Sending process 17571 closing signal SIGTERM                                                                                                                                                                                          ",
    "[16:26:31] ERROR    failed (exitcode: 1) local_rank: 1 (pid: 17572) of binary: /data1/software/anaconda3/envs/llm_env/bin/python ",
]


def test_rich_s_time_column_before_the_level_keeps_the_failure_line_read():
    failed = parsed_by("elastic", RICH_WITH_TIME).filter(pl.col("event") == "worker_failed")
    assert failed.select("exitcode", "local_rank", "pid").rows() == [(1, 1, 17572)]


def test_a_worker_killed_after_loading_under_rich_logging_is_host_memory(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": RICH_AGENT})
    assert analysis.verdict is not None and analysis.verdict.finding.kind == "oom"


def test_the_summary_is_read_with_blanks_after_its_lines(tmp_path):
    # the summary's table as a paste leaves it (THUDM/CogVLM#320 posted it from `Failures:` on),
    # blanks after every line: an entry's `[1]:` is no prefix with text after it
    table = SIGNALLED[SIGNALLED.index("Failures:") :]
    padded = [f"{line}   " for line in table]
    plain = analyze_files(tmp_path / "plain", {"console.log": table}).verdict
    verdict = analyze_files(tmp_path / "padded", {"console.log": padded}).verdict
    assert (verdict.finding.kind, verdict.ranks, verdict.headline) == (
        plain.finding.kind,
        plain.ranks,
        plain.headline,
    )
    assert verdict.ranks == [0]


# shihao1895/MemoryVLA#20, verbatim (a PAI-DLC pod's console; the viewer glued the traceback's
# first line to the agent's record): this build words the stop `the closing signal` and names
# the failed worker's binary before its local rank
DLC_CONSOLE = [
    "[dlc1mtq58q0821ib-master-0] [2026-03-30 19:24:35,966] torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process 73 the closing signal SIGTERM",
    "[dlc1mtq58q0821ib-master-0] [2026-03-30 19:24:35,967] torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process 74 the closing signal SIGTERM",
    "[dlc1mtq58q0821ib-master-0] [2026-03-30 19:24:35,970] torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process 75 the closing signal SIGTERM",
    "[dlc1mtq58q0821ib-master-0] [2026-03-30 19:24:35,972] torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process 76 the closing signal SIGTERM",
    "[dlc1mtq58q0821ib-master-0] [2026-03-30 19:24:35,973] torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process 78 the closing signal SIGTERM",
    "[dlc1mtq58q0821ib-master-0] [2026-03-30 19:24:42,731] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -9) for binary located at /mnt/data/miniconda3/envs/memvla/bin/python3.10 with local_rank: 0 (process ID: 71) [dlc1mtq58q0821ib-master-0] Traceback (",
]
# NVIDIA/nvidia-resiliency-ext#18, verbatim: the agent of a worker run as a function
CLOSING_VIA = "W0227 17:39:41.936000 293814 site-packages/torch/distributed/elastic/multiprocessing/api.py:766] Closing process 293866 via signal SIGTERM"
# torch.multiprocessing.spawn stopping the other child (tests/data/launchers/elastic_function)
TERMINATING_VIA = "W1206 00:50:24.284000 3271 torch/multiprocessing/spawn.py:165] Terminating process 3276 via signal SIGTERM"


def test_every_wording_of_a_worker_stopped_is_read():
    stops = _events(DLC_CONSOLE, "worker_sigterm")
    assert [(row["pid"], row["signal"]) for row in stops] == [
        (pid, "SIGTERM") for pid in (73, 74, 75, 76, 78)
    ]
    for line, pid in ((CLOSING_VIA, 293866), (TERMINATING_VIA, 3276)):
        (stop,) = _events([line], "worker_sigterm")
        assert (stop["pid"], stop["signal"]) == (pid, "SIGTERM")


def test_the_failed_worker_named_after_its_binary_is_read():
    (failed,) = _events(DLC_CONSOLE, "worker_failed")
    assert (failed["exitcode"], failed["local_rank"], failed["pid"]) == (-9, 0, 71)


def test_the_agent_s_word_of_the_failed_pid_outranks_the_gap_in_its_stops(tmp_path):
    # 71, 72 and 77 were not stopped: the gap at 77 is no failed worker
    verdict = analyze_files(tmp_path, {"console.log": DLC_CONSOLE}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("oom", [0])


def test_no_gap_in_the_stops_is_read_as_the_failed_worker_when_the_agent_names_another(tmp_path):
    assert unstopped_worker(analyze_files(tmp_path, {"console.log": DLC_CONSOLE}).job) is None


# microsoft/Swin-Transformer#267, verbatim: torch.distributed.launch's end, all the paste kept
LEGACY_KILLED = "subprocess.CalledProcessError: Command '['/usr/bin/python3', '-u', 'main.py', '--local_rank=3', '--cfg', 'configs/swin/swin_tiny_patch4_window7_224.yaml', '--data-path', '/content/Swin-Transformer/dataset/cats_and_dogs_filtered', '--batch-size', '32']' died with <Signals.SIGKILL: 9>."
# open-mmlab/mmdetection#6261's error as a committed note quotes it, verbatim
LEGACY_EXIT = "subprocess.CalledProcessError: Command '['/usr/local/bin/python', '-u', 'tools/train.py', '--local_rank=0', 'configs/depthformer/depthformer_swint_w7_nyu.py', '--launcher', 'pytorch']' returned non-zero exit status 1."


def test_the_old_launcher_s_exit_names_its_worker_by_local_rank():
    (killed,) = _events([LEGACY_KILLED], "worker_failed")
    assert (killed["local_rank"], killed["exitcode"]) == (3, -9)
    (failed,) = _events([LEGACY_EXIT], "worker_failed")
    assert (failed["local_rank"], failed["exitcode"]) == (0, 1)


def test_the_old_launcher_s_report_of_a_killed_worker_is_its_death(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": [LEGACY_KILLED]})
    assert (analysis.verdict.finding.kind, analysis.verdict.ranks) == ("oom", [3])
    assert kinds(analysis) == ["oom"]


# ZhehengJiangLancaster/AMVUR#2 (a torch.distributed.launch job of four workers), verbatim: the
# summary pasted from a rendered page, its entry's fields run together
GLUED_SUMMARY = [
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",
    "experiments/supervised HO3D V2.py FAILED",
    "Failures:",
    "<NO OTHER FAILURES>",
    "Root Cause (first observed failure) :",
    "[0]:",
    "time",
    "host",
    "2023-09-14 01:45:50",
    "ding-X10DRG",
    "rank2 (local rank: 2)exitcode: -9 (pid: 36071)error file: <N/A>",
    "traceback : signal 9 (SIGKILL) received by PID 36071",
]


def test_an_entry_whose_fields_ran_together_is_still_that_rank_s_failure(tmp_path):
    (entry,) = _events(GLUED_SUMMARY, "child_failed")
    assert (entry["rank"], entry["local_rank"], entry["exitcode"], entry["pid"]) == (
        2,
        2,
        -9,
        36071,
    )
    assert entry["signal"] == "SIGKILL"
    assert json.loads(entry["extra"])["root_cause"] is True
    verdict = analyze_files(tmp_path, {"train.log": GLUED_SUMMARY}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("oom", [2])
