"""py-spy dumps read as stacks: real dumps of the hung `pyspy_hang` job (sample_logs/, made
here with py-spy 0.4.3 on torch 2.13 CPU/gloo) and of a lock wait (tests/data/dumps/lock_wait)."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

from logforensics.api import analyze, analyze_upload
from logforensics.dumps import pyspy
from logforensics.dumps.pyspy import where_stuck
from logforensics.intake import dump_kind
from tests.conftest import ROOT, SAMPLE_LOGS

HANG = SAMPLE_LOGS / "pyspy_hang" / "logs"
LOCK = ROOT / "tests" / "data" / "dumps" / "lock_wait"
TORCHRUN = "torchrun/eb0961f2-4bf5-49bb-b29a-71a020812df8_6x68k4xo"


def lines_of(path: Path, name: str) -> pl.DataFrame:
    text = path.read_text().splitlines()
    return pl.DataFrame(
        {"file": [name] * len(text), "line": list(range(1, len(text) + 1)), "text": text},
        schema={"file": pl.String, "line": pl.UInt32, "text": pl.String},
    )


def copy_logs(tmp_path: Path, *names: str) -> Path:
    """The hung job's own logs (no dumps) plus the dumps named."""
    root = tmp_path / "logs"
    shutil.copytree(HANG / "torchrun", root / "torchrun")
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(HANG / name, root / name)
    return root


def test_a_text_dump_is_read_frame_by_frame_innermost_first():
    # Thread 18459 (idle): "MainThread"
    #     barrier (torch/distributed/distributed_c10d.py:5356)
    frames = pyspy.text_frames(lines_of(HANG / "pyspy" / "rank2.txt", "rank2.txt"))
    main = frames.filter(pl.col("thread_name") == "MainThread").sort("depth")
    assert main.item(0, "function") == "barrier"
    assert main.item(0, "source") == "torch/distributed/distributed_c10d.py"
    assert main.item(0, "source_line") == 5356
    assert main.item(0, "thread_state") == "idle"
    assert main.item(0, "pid") == main.item(0, "thread_id") == 18459
    assert main.item(0, "text") == "    barrier (torch/distributed/distributed_c10d.py:5356)"
    assert "train" in main.get_column("function").to_list()


def test_colour_codes_are_dropped():
    path = HANG / "pyspy" / "rank2.txt"
    coloured = [
        f"\x1b[1;32m{line}\x1b[0m" if line.startswith(("Process", "Thread")) else line
        for line in path.read_text().splitlines()
    ]
    assert dump_kind("\n".join(coloured).encode()) == "pyspy_text"
    plain = pyspy.text_frames(lines_of(path, "a"))
    frame = pl.DataFrame(
        {"file": "a", "line": list(range(1, len(coloured) + 1)), "text": coloured},
        schema={"file": pl.String, "line": pl.UInt32, "text": pl.String},
    )
    read = pyspy.text_frames(frame)
    columns = ["pid", "thread_id", "thread_name", "function", "source", "source_line"]
    assert read.select(columns).equals(plain.select(columns))


def test_each_rank_is_where_its_main_thread_waits(tmp_path):
    analysis = analyze(copy_logs(tmp_path, *(f"pyspy/rank{rank}.txt" for rank in range(4))))
    stuck = {
        row["rank"]: row for row in where_stuck(analysis.job.dumps.stacks).iter_rows(named=True)
    }
    assert stuck[2]["waiting"] == "dist.barrier"
    assert stuck[2]["user_frame"] == "train (dumps_train.py:267)"
    assert stuck[2]["innermost"] == "barrier (torch/distributed/distributed_c10d.py:5356)"
    for rank in (0, 1, 3):
        assert stuck[rank]["waiting"].startswith("backward")
        assert stuck[rank]["user_frame"] == "train (dumps_train.py:246)"


def test_json_dumps_say_the_same_as_text_dumps(tmp_path):
    analysis = analyze(copy_logs(tmp_path, *(f"pyspy-json/rank{rank}.json" for rank in range(4))))
    stuck = where_stuck(analysis.job.dumps.stacks).sort("rank")
    assert stuck.get_column("user_frame").to_list() == [
        "train (dumps_train.py:246)",
        "train (dumps_train.py:246)",
        "train (dumps_train.py:267)",
        "train (dumps_train.py:246)",
    ]


def test_the_agent_dump_gives_ranks_by_pid_and_leaves_out_the_agent_and_workers(tmp_path):
    # `py-spy dump --subprocesses --pid <torchrun agent>`: the agent, four ranks and three
    # DataLoader workers in one file; the ranks' pids are in their `rank=<r> pid=<pid>` lines
    analysis = analyze(copy_logs(tmp_path, "pyspy-subprocesses/torchrun_agent.txt"))
    stacks = analysis.job.dumps.stacks
    stuck = where_stuck(stacks).sort("rank")
    assert stuck.get_column("rank").to_list() == [0, 1, 2, 3]
    assert stuck.get_column("pid").to_list() == [18455, 18456, 18459, 18460]
    workers = stacks.filter(pl.col("is_worker")).get_column("pid").unique().sort().to_list()
    assert workers == [18758, 18769, 18770]  # attributed to their parents' ranks
    assert 18370 not in stacks.get_column("pid").to_list()  # the agent has no rank


def test_a_rank_dumped_in_several_forms_counts_once(tmp_path):
    analysis = analyze(
        copy_logs(
            tmp_path,
            "pyspy/rank0.txt",
            "pyspy-json/rank0.json",
            "pyspy-native/rank0.txt",
            "pyspy-subprocesses/rank0.txt",
            "pyspy/rank2.txt",
        )
    )
    stuck = where_stuck(analysis.job.dumps.stacks)
    assert sorted(stuck.get_column("rank").to_list()) == [0, 2]


def test_a_rank_in_the_command_line_names_the_dump(tmp_path):
    dump = (HANG / "pyspy" / "rank2.txt").read_text()
    first, rest = dump.split("\n", 1)
    root = copy_logs(tmp_path)
    (root / "stack-a.txt").write_text(first + " RANK=2\n" + rest)  # e.g. `env RANK=2 python ...`
    analysis = analyze(root)
    (row,) = where_stuck(analysis.job.dumps.stacks).iter_rows(named=True)
    assert row["rank"] == 2 and row["waiting"] == "dist.barrier"


def test_a_lock_wait_names_the_other_threads_in_the_jobs_code():
    frames = pyspy.text_frames(lines_of(LOCK / "plain.txt", "plain.txt")).with_columns(
        pl.lit(0, pl.Int32).alias("rank")
    )
    (row,) = where_stuck(frames).iter_rows(named=True)
    # Thread 14491 (idle): "MainThread" / train_step (lockhang.py:12): blocked in C
    assert row["waiting"].startswith("a blocking call")
    assert row["user_frame"] == "train_step (lockhang.py:12)"
    assert row["other_threads"] == '"checkpoint-writer" (active+gil) at holder (lockhang.py:7)'


def test_native_frames_show_the_lock():
    frames = pyspy.text_frames(lines_of(LOCK / "native.txt", "native.txt")).with_columns(
        pl.lit(0, pl.Int32).alias("rank")
    )
    (row,) = where_stuck(frames).iter_rows(named=True)
    # PyThread_acquire_lock_timed (libpython3.11.so.1.0)
    assert row["waiting"] == "a lock"
    assert row["user_frame"] == "train_step (lockhang.py:12)"
    assert "checkpoint-writer" in row["other_threads"]


def test_locals_do_not_become_frames():
    frames = pyspy.text_frames(lines_of(LOCK / "locals.txt", "locals.txt"))
    assert not frames.filter(pl.col("function").str.contains(":")).height
    assert frames.filter(pl.col("thread_name") == "checkpoint-writer").height == 4


def test_a_user_frame_is_outside_torch_site_packages_and_the_standard_library():
    assert pyspy.is_user_frame("train.py", 10)
    assert pyspy.is_user_frame("mypkg/loop.py", 10)
    assert not pyspy.is_user_frame("torch/distributed/distributed_c10d.py", 5356)
    # py-spy's import paths of installed libraries (deepspeedai/DeepSpeed#6524)
    assert not pyspy.is_user_frame("deepspeed/runtime/zero/stage3.py", 2247)
    assert not pyspy.is_user_frame("accelerate/accelerator.py", 2188)
    assert not pyspy.is_user_frame("threading.py", 982)
    assert not pyspy.is_user_frame("<frozen importlib._bootstrap>", 1176)
    assert not pyspy.is_user_frame("libc.so.6", None)


def test_in_an_upload_of_several_jobs_each_job_reads_its_own_dumps(tmp_path):
    # two hung jobs in one upload, each with its dumps in a folder below its logs
    upload = tmp_path / "upload"
    shutil.copytree(HANG, upload / "pyspy_hang")
    shutil.copytree(SAMPLE_LOGS / "flight_recorder_mismatch" / "logs", upload / "fr_job")
    jobs = analyze_upload(upload).jobs
    assert len(jobs) == 2
    by_folder = {analysis.job.inventory.files[0].name.split("/")[0]: analysis for analysis in jobs}
    stacks = by_folder["pyspy_hang"].job.dumps.stacks
    assert set(stacks.get_column("file").str.split("/").list.get(1)) <= {
        "pyspy",
        "pyspy-json",
        "pyspy-locals",
        "pyspy-native",
        "pyspy-subprocesses",
    }
    assert by_folder["pyspy_hang"].job.dumps.flight.is_empty()
    assert by_folder["fr_job"].job.dumps.stacks.is_empty()
    # each job's verdict is the one it gets alone
    assert by_folder["fr_job"].verdict.finding.kind == "fr_mismatch"
    assert by_folder["fr_job"].verdict.finding.ranks == [3]
    assert by_folder["pyspy_hang"].verdict.finding.ranks == [2]
    assert "stuck_location" in [chain.kind for chain in by_folder["pyspy_hang"].verdict.chain]


# --- blocks pasted without py-spy's headers ---------------------------------------------------

# facebookresearch/fairseq#4816, verbatim (the reporter's dump of rank 0, 32 ranks hung: "rank0
# is stuck at dataloader place ... all other 31 ranks are waiting for rank0")
RANK0_THREAD = [
    'Thread 0x7FA6E7C01740 (idle): "MainThread"',
    "    wait (threading.py:302)",
    "    get (queue.py:170)",
    "    __next__ (fairseq/data/iterators.py:648)",
    "    __iter__ (fairseq/data/iterators.py:59)",
    "    _chunk_iterator (fairseq/data/iterators.py:528)",
    "    train (fairseq_cli/train.py:274)",
]
# sgl-project/sglang#22607, verbatim: TP rank 0's stack, frames alone
RANK0_FRAMES = [
    "all_reduce (torch/distributed/distributed_c10d.py:3075)",
    "  _all_reduce_attn_groups (hiradix_cache.py:196)",
    "  can_terminate_prefetch (hiradix_cache.py:1350)",
]


def pasted(text: list[str]) -> pl.DataFrame:
    lines = {"file": "rank0.log", "line": range(1, len(text) + 1), "text": text}
    return pl.DataFrame(lines, schema={"file": pl.String, "line": pl.UInt32, "text": pl.String})


def test_a_thread_block_pasted_without_its_process_header_is_a_dump():
    assert dump_kind("\n".join(RANK0_THREAD).encode()) == "pyspy_text"
    frames = pyspy.text_frames(pasted(RANK0_THREAD))
    assert frames.item(0, "thread_id") == 0x7FA6E7C01740 and frames.item(0, "function") == "wait"
    assert frames.height == 6


def test_frames_pasted_without_any_header_are_the_main_thread():
    assert dump_kind("\n".join(RANK0_FRAMES).encode()) == "pyspy_text"
    frames = pyspy.text_frames(pasted(RANK0_FRAMES))
    stuck = where_stuck(frames.with_columns(pl.lit(0, pl.Int32).alias("rank")))
    assert stuck.item(0, "waiting") == "dist.all_reduce"
    assert stuck.item(0, "user_frame") == "_all_reduce_attn_groups (hiradix_cache.py:196)"


def test_log_lines_that_mention_a_file_and_line_are_no_dump():
    lines = [
        "2024-05-01 10:00:00 INFO train (train.py:12)",
        "loss=0.5 step=3",
        "  done (train.py:40)",
    ]
    assert dump_kind("\n".join(lines).encode()) is None


def test_an_upload_of_one_rank_s_dump_alone_names_it_when_it_is_outside_any_collective(tmp_path):
    (tmp_path / "rank0.log").write_text("\n".join(RANK0_THREAD) + "\n")
    analysis = analyze(tmp_path)
    stuck = analysis.verdict.finding
    assert (stuck.kind, analysis.verdict.ranks, stuck.confidence) == ("stuck_location", [0], "low")
    assert "the only rank with a stack dump, waits in a lock (wait) at __next__" in stuck.summary
    assert (
        analysis.verdict.headline == "Rank 0 is stuck outside any collective, the only rank dumped"
    )


def test_one_rank_s_dump_inside_a_collective_singles_out_nobody(tmp_path):
    (tmp_path / "rank0.log").write_text("\n".join(RANK0_FRAMES) + "\n")
    analysis = analyze(tmp_path)
    assert analysis.verdict is None
    (stuck,) = [f for f in analysis.findings if f.kind == "stuck_location"]
    assert stuck.severity == "info"


def test_a_dump_named_for_a_range_of_ranks_stands_for_each_of_them(tmp_path):
    # sgl-project/sglang#22607, verbatim: TP rank 0 in an all_reduce only it issues, TP ranks
    # 1-3 (one paste for the three) in the scheduler's broadcast
    (tmp_path / "rank0.log").write_text("\n".join(RANK0_FRAMES) + "\n")
    (tmp_path / "tp1-3.log").write_text(
        "broadcast (torch/distributed/distributed_c10d.py:2974)\n"
        "  broadcast_pyobj (utils/common.py:1437)\n"
        "  _broadcast_reqs_across_ranks (scheduler_components/request_receiver.py:187)\n"
    )
    analysis = analyze(tmp_path)
    stuck = analysis.verdict.finding
    assert (stuck.kind, analysis.verdict.ranks) == ("stuck_location", [0])
    assert "while ranks 1-3 wait in dist.broadcast at broadcast_pyobj" in stuck.summary


def test_a_native_thread_block_pasted_without_its_process_header_is_a_dump():
    # huggingface/text-generation-inference#2099, verbatim (py-spy --native of a hung shard)
    lines = [
        'Thread 1302975 (active): "MainThread"',
        "    sched_yield (libc.so.6)",
        "    ncclLaunchKernelBefore_NoUncapturedCuda (enqueue.cc:968)",
        "    doLaunches (group.cc:161)",
    ]
    assert dump_kind("\n".join(lines).encode()) == "pyspy_text"
    frames = pyspy.text_frames(pasted(lines))
    assert frames.get_column("function").to_list()[:2] == [
        "sched_yield",
        "ncclLaunchKernelBefore_NoUncapturedCuda",
    ]


@pytest.mark.parametrize(
    "wrapped",
    [
        # `kubectl logs --timestamps` of a pod that ran py-spy
        lambda at, line: f"2024-05-08T08:00:{at:02d}.261530427Z {line}",
        # `docker compose logs`
        lambda at, line: f"trainer-1  | {line}",
        # a node's CRI log (its stream and tag after the stamp)
        lambda at, line: f"2024-05-08T08:00:{at:02d}.261530427Z stdout F {line}",
        # `pdsh -w node[48-49] py-spy dump ...`: the host before each line
        lambda at, line: f"jean-zay-iam48: {line}",
        # a Markdown paste
        lambda at, line: f"> {line}",
        # blanks after each line, as a padded terminal's copy leaves them
        lambda at, line: f"{line}    ",
        # a console block under a Markdown list item (saforem2/mmm's Aurora notes indent by 6)
        lambda at, line: f"      {line}" if line.strip() else line,
    ],
    ids=["kubectl", "compose", "cri", "pdsh", "quote", "padded", "indented"],
)
def test_a_dump_saved_with_a_collector_s_wrapping_is_still_a_dump(tmp_path, wrapped):
    # bigscience's prequel stacks (tests/data/dumps/bigscience_prequel_split), each line
    # wrapped as the container's log shows it
    source = ROOT / "tests" / "data" / "dumps" / "bigscience_prequel_split" / "pyspy_node.log"
    lines = [wrapped(at, line) for at, line in enumerate(source.read_text().splitlines())]
    (tmp_path / "pyspy_node.log").write_text("\n".join(lines) + "\n")
    analysis = analyze(tmp_path)
    assert [dump.kind for dump in analysis.job.inventory.dumps] == ["pyspy_text"]
    found = analysis.verdict.finding
    assert found.kind == "stuck_location"
    assert "outside any collective at train (megatron/training.py:915)" in found.summary


LHOTSE = ROOT / "tests" / "data" / "dumps" / "lhotse_1146"


def test_a_dump_pasted_under_the_command_that_took_it_is_a_dump():
    # lhotse-speech/lhotse#1146: the shell prompt and `py-spy dump -p 3740553` above the dump
    assert dump_kind((LHOTSE / "py-spy.txt").read_bytes()) == "pyspy_text"
    assert dump_kind(b"$ py-spy dump -p 1\nTraining starts\nepoch 1\n") is None
