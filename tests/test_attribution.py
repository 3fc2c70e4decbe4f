"""Which rank wrote a line: prefixes, content, paths of every layout, node offsets; and what
prefixes say about host, pid and time landing in the events."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import polars as pl
import pytest

from logforensics.api import analyze_upload
from logforensics.attribution import (
    PathRank,
    attribute,
    compile_rank_pattern,
    path_ranks,
    rank_from_path,
    rank_pattern,
)
from logforensics.errors import InputError
from logforensics.framing import frame_lines
from tests.builders import analyze, analyze_files, finding, kinds, marks, parse
from tests.conftest import SAMPLE_LOGS
from tests.test_intake import tar_bytes

THREADS = Path(__file__).parent / "data" / "threads"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("rank3.log", PathRank(rank=3)),
        ("logs/rank_3.txt", PathRank(rank=3)),
        ("rank-3/out.log", PathRank(rank=3)),
        ("worker-3.log", PathRank(rank=3)),
        # DeepSpeed --enable_each_rank_log: <YYYYmmddHHMMSS>_rank<dist_rank>.log
        ("20240101120000_rank12.log", PathRank(rank=12)),
        # Open MPI --output-filename DIR: DIR/<jobid>/rank.<N>/{stdout,stderr}
        ("mpi/1234/rank.0007/stdout", PathRank(rank=7)),
        ("out/1/rank.3/stderr", PathRank(rank=3)),
        # torchrun --log-dir: <dir>/<run_id>_<rand>/attempt_<n>/<local_rank>/<file>
        (
            "torchrun/abc_x1/attempt_0/2/stdout.log",
            PathRank(local_rank=2, node="torchrun/abc_x1/attempt_0"),
        ),
        # archive members are paths like any other
        ("logs.tar.gz!/node1/rank3.log", PathRank(rank=3)),
        (
            "node1.zip!/none_wpnppww6/attempt_1/0/stderr.log",
            PathRank(local_rank=0, node="node1.zip/none_wpnppww6/attempt_1"),
        ),
        # NCCL_DEBUG_FILE=<name>.%h.%p names the process, not the rank
        ("nccl.node-a.43121", PathRank(host="node-a", pid=43121)),
        ("train.log.1", PathRank()),
        # SLURM output files name the job (and array task), never a rank
        ("slurm-12345.out", PathRank()),
        ("slurm-12345_7.out", PathRank()),
        # submitit's srun writes <folder>/%j_%t_log.{out,err} (%A_%a_%t for arrays): %t is the
        # task id, submitit's global rank (theislab/IMPA's .submitit/14164533 submission.sh)
        (".submitit/14164533/14164533_3_log.err", PathRank(rank=3)),
        ("logs/2677026_1/2677026_1_0_log.out", PathRank(rank=0)),
        ("14164533_submission.sh", PathRank()),
        ("local_rank3.log", PathRank()),
        ("train.log", PathRank()),
        ("frank3.log", PathRank()),
    ],
)
def test_rank_from_path(name, expected):
    assert rank_from_path(name) == expected


def test_kubeflow_pods_are_nodes_numbered_master_first():
    names = ["mnist-master-0.log", "mnist-worker-0.log", "mnist-worker-2/pytorch.log"]
    paths = {row["file"]: row for row in path_ranks(names).iter_rows(named=True)}
    assert [paths[name]["path_node_index"] for name in names] == [0, 1, 3]
    assert paths["mnist-worker-2/pytorch.log"]["path_node"] == "mnist-worker-2"
    assert all(row["path_rank"] is None for row in paths.values())


def test_users_path_pattern_comes_first():
    pattern = compile_rank_pattern(r"gpu(?P<rank>\d+)_")
    with rank_pattern(pattern):
        assert rank_from_path("host3/gpu5_worker1.txt") == PathRank(rank=5)
        assert rank_from_path("worker1.txt") == PathRank(rank=1)  # no match: built-in shapes
    assert rank_from_path("host3/gpu5_worker1.txt") == PathRank(rank=1)


@pytest.mark.parametrize(("pattern", "says"), [(r"gpu(\d+)", "no named group"), ("(", "regex")])
def test_bad_path_patterns_are_input_errors(pattern, says):
    with pytest.raises(InputError, match=says):
        compile_rank_pattern(pattern)


def test_rank_from_path_option_names_the_files(tmp_path):
    from logforensics.api import analyze

    root = tmp_path / "logs"
    for rank in (0, 1):
        (root / f"host{rank}").mkdir(parents=True)
        (root / f"host{rank}" / f"gpu{rank}.txt").write_text("loader sizes: [3, 3]\n")
    plain = analyze(root)
    assert plain.job.file_stats.get_column("rank").null_count() == 2
    named = analyze(root, rank_from_path=r"gpu(?P<rank>\d+)\.txt$")
    stats = named.job.file_stats.sort("file")
    assert stats.get_column("rank").to_list() == [0, 1]
    assert stats.get_column("rank_from").to_list() == ["path", "path"]


def test_a_file_whose_marks_name_one_rank_belongs_to_it(tmp_path):
    analysis = analyze_files(
        tmp_path,
        {"a/stdout.log": marks(5, [0]) + ["some unrecognised line"], "b/stdout.log": marks(6, [0])},
    )
    stats = {row["file"]: row for row in analysis.job.file_stats.iter_rows(named=True)}
    assert (stats["a/stdout.log"]["rank"], stats["a/stdout.log"]["rank_from"]) == (5, "content")


def test_no_rank_is_invented(tmp_path):
    analysis = analyze_files(
        tmp_path, {"train.log": ["{'rank_x': 1, 'device': 0}", "loader sizes: [3, 3]"]}
    )
    sizes = analysis.job.events
    assert sizes.height == 1
    assert sizes.item(0, "rank") is None and sizes.item(0, "rank_from") is None


def test_single_node_torchrun_tree_local_rank_is_global(tmp_path):
    files = {f"run_ab/attempt_0/{local}/stdout.log": ["loader sizes: [3, 3]"] for local in (0, 1)}
    analysis = analyze_files(tmp_path, files)
    events = analysis.job.events.sort("file")
    assert events.get_column("rank").to_list() == [0, 1]
    assert set(events.get_column("rank_from")) == {"path_local"}


def test_a_node_offset_stated_by_content_beats_the_single_node_guess(tmp_path):
    # only node 1 of a two-node job was uploaded: its local ranks are not global ranks
    files = {
        "run_ab/attempt_0/0/stdout.log": [
            "{'rank': 2, 'local_rank': 0, 'device': 0, 'world_size': 4}"
        ],
        "run_ab/attempt_0/1/stdout.log": ["loader sizes: [3, 3, 3, 3]"],
    }
    events = analyze_files(tmp_path, files).job.events
    sizes = events.filter(pl.col("file") == "run_ab/attempt_0/1/stdout.log")
    assert (sizes.item(0, "rank"), sizes.item(0, "rank_from")) == (3, "node_offset")


def test_two_node_trees_keep_local_ranks_only(tmp_path):
    files = {
        f"node{node}/run_ab/attempt_0/0/stderr.log": ["Traceback (most recent call last):"]
        for node in (0, 1)
    }
    analysis = analyze_files(tmp_path, files)
    assert analysis.job.file_stats.get_column("rank").null_count() == 2


def test_two_node_trees_with_offsets_from_their_own_lines(tmp_path):
    files = {}
    for node in (0, 1):
        tree = f"node{node}/none_{node}x/attempt_0"
        files[f"{tree}/0/stdout.log"] = [
            f"{{'rank': {2 * node}, 'local_rank': 0, 'device': 0, 'world_size': 4}}"
        ]
        files[f"{tree}/1/stdout.log"] = ["loader sizes: [3, 3, 3, 3]"]
    events = analyze_files(tmp_path, files).job.events.filter(pl.col("values").is_not_null())
    assert sorted(events.get_column("rank").to_list()) == [1, 3]


def test_srun_node_offset_in_a_shared_slurm_file():
    events = parse(
        [
            "1: [default0]:{'rank': 2, 'local_rank': 0, 'device': 0, 'world_size': 4}",
            "0: [default0]:{'rank': 0, 'local_rank': 0, 'device': 0, 'world_size': 4}",
            "1: [default1]:loader sizes: [12, 12, 12, 11]",
            "0: [default1]:loader sizes: [12, 12, 12, 11]",
        ],
        "slurm-4242.out",
    )
    sizes = events.filter(pl.col("values").is_not_null()).sort("line")
    assert sizes.get_column("rank").to_list() == [3, 1]
    assert set(sizes.get_column("rank_from")) == {"node_offset"}


def test_conflicting_offsets_on_one_node_infer_nothing():
    # two nodes' consoles merged into one file without srun labels: no offset is known
    events = parse(
        [
            "[default0]:{'rank': 2, 'local_rank': 0, 'device': 0, 'world_size': 4}",
            "[default0]:{'rank': 0, 'local_rank': 0, 'device': 0, 'world_size': 4}",
            "[default1]:loader sizes: [12, 12, 12, 11]",
        ],
        "merged.log",
    )
    assert events.filter(pl.col("values").is_not_null()).item(0, "rank") is None


def events_for(lines: list[str], file: str = "slurm-1.out", **parsed) -> tuple:
    """A framed line table and one parsed event per line, as events.py hands them over."""
    table = pl.DataFrame(
        {"file": [file] * len(lines), "line": list(range(1, len(lines) + 1)), "text": lines},
        schema={"file": pl.String, "line": pl.UInt32, "text": pl.String},
    )
    framed = frame_lines(table)
    events = framed.select("file", "line", "text", "message", "prefix_rank", "prefix_local_rank")
    return events.with_columns(pl.lit(value).alias(name) for name, value in parsed.items()), framed


def test_node_index_times_nproc_per_node_from_the_launch_line():
    lines = [
        "+ srun --label torchrun --nnodes=2 --nproc_per_node=4 train.py",
        "1: [default3]:loader sizes: [12, 12, 12, 12, 12, 12, 12, 11]",
        "1: [default2]:[rank6]: Traceback (most recent call last):",
    ]
    events, framed = events_for(lines)
    attributed = attribute(events, ["slurm-1.out"], framed).sort("line")
    assert attributed.get_column("rank").to_list()[1:] == [7, 6]
    assert attributed.get_column("rank_from").to_list()[1:] == ["node_offset", "prefix"]
    # without a stated global rank on the node, only the launch line says the offset
    events, framed = events_for(lines[:2])
    attributed = attribute(events, ["slurm-1.out"], framed).sort("line")
    assert (attributed.item(1, "rank"), attributed.item(1, "rank_from")) == (7, "node_index")
    unknown_nproc = attribute(events, ["slurm-1.out"], framed.slice(1)).sort("line")
    assert unknown_nproc.item(1, "rank") is None


def test_host_from_a_pdsh_prefix_fills_the_event_host():
    events = parse(["node04: rank=7 loader_len=12"] * 2, "deepspeed_pdsh.log")
    assert events.get_column("host").to_list() == ["node04", "node04"]


def test_ray_worker_pid_and_dedup_count_reach_the_event():
    events, framed = events_for(
        [
            "(RayTrainWorker pid=1193, ip=10.244.4.193) rank=1 step=3 stage=x [repeated 3x across cluster]"
        ],
        "driver.log",
        rank=1,
    )
    row = attribute(events, ["driver.log"], framed).row(0, named=True)
    assert (row["pid"], row["host"]) == (1193, "10.244.4.193")
    assert json.loads(row["extra"]) == {"repeated": 3}


def test_ray_trains_roster_gives_each_workers_pid_its_rank():
    # ROCm/rocm-blogs rocm7-ray README: a healthy four-worker Ray Train run, one console. The
    # workers' lines carry only `(RayTrainWorker pid=N)`; the controller's roster ties each pid
    # to its `world_rank`. Ranks 1-3 had been reported missing.
    analysis = analyze(THREADS / "rocm7_ray_train_four_workers.log")
    assert "missing_rank" not in kinds(analysis)
    assert set(analysis.job.ranks_seen) == {0, 1, 2, 3}
    events = analysis.job.events
    worker = events.filter(pl.col("event") == "world_size").row(0, named=True)
    # `(RayTrainWorker pid=86716) Setting up process group for: env:// [rank=0, world_size=4]`:
    # the line states its own rank and world, as the roster does for its pid
    assert (worker["pid"], worker["rank"], worker["world_size"]) == (86716, 0, 4)


def test_launcher_time_is_used_only_when_the_line_has_none_of_its_own():
    events = parse(
        [
            "[pod/job-worker-0/pytorch] 2024-05-08T08:47:31.261530427Z rank=1 loader_len=12",
            "[pod/job-worker-0/pytorch] 2024-05-08T08:47:32.000000000Z "
            "2024-05-08 10:47:32,500 INFO rank=1 loader_len=12",
        ],
        "pods.log",
    ).sort("line")
    assert events.get_column("timestamp").to_list() == [
        dt.datetime(2024, 5, 8, 8, 47, 31, 261530),
        dt.datetime(2024, 5, 8, 10, 47, 32, 500000),
    ]
    assert set(events.get_column("host")) == {"job-worker-0"}


def test_prefix_columns_are_consumed():
    events, framed = events_for(["node1: [default0]:rank=0 step=0 stage=a"], rank=0)
    attributed = attribute(events, ["slurm-1.out"], framed)
    assert [name for name in attributed.columns if name.startswith("prefix_")] == [
        "prefix_rank",
        "prefix_local_rank",
    ]
    assert "framing" not in attributed.columns


def test_report_names_the_inferred_ranks_of_the_two_node_sample():
    from logforensics.api import analyze

    analysis = analyze(SAMPLE_LOGS / "two_node_slurm" / "logs")
    # torchrun's `failed (exitcode: 1) local_rank: 0` on the second node is global rank 2
    assert 2 in analysis.inferred_ranks["node_offset"]
    inputs = {
        row["file"]: row["rank_from"] for row in analysis.job.file_stats.iter_rows(named=True)
    }
    assert inputs["node1/none_wpnppww6/attempt_0/1/stdout.log"] == "content"


def nccl_init(host: str, pid: int, rank: int) -> str:
    # NCCL 2.18.3-2.20 init line (format as in NVIDIA/nccl#1814), behind pdsh's `host: `
    return (
        f"{host}: {host}:{pid}:{pid} [{rank % 2}] NCCL INFO comm 0x557fe785f7a{rank} rank {rank} "
        f"nranks 4 cudaDev {rank % 2} nvmlDev {rank % 2} busId 9b000 commId 0x5ae77eb5ea4ec1ee "
        "- Init COMPLETE"
    )


def test_host_order_of_nccl_inits_gives_a_pdsh_host_its_offset():
    lines = [nccl_init(host, 100 + rank, rank) for host, rank in [("nodeA1", 0), ("nodeA1", 1)]]
    lines += [nccl_init(host, 100 + rank, rank) for host, rank in [("nodeB2", 2), ("nodeB2", 3)]]
    lines.append("nodeB2: [default1]:loader sizes: [3, 3, 3, 2]")
    sizes = parse(lines, "deepspeed.log").filter(pl.col("values").is_not_null())
    assert (sizes.item(0, "rank"), sizes.item(0, "rank_from")) == (3, "node_offset")
    assert sizes.item(0, "host") == "nodeB2"
    # a host whose inits are not all there gives no offset
    partial = parse([*lines[1:]], "deepspeed.log").filter(pl.col("values").is_not_null())
    assert partial.item(0, "rank") is None


def test_torchrun_summary_ranks_do_not_claim_the_agents_log(tmp_path):
    # One failure in the summary names rank 1; the agent's other lines are not rank 1's.
    lines = [
        "E0801 13:23:20.000000 32974 torch/distributed/elastic/multiprocessing/api.py:874] failed (exitcode: 1) local_rank: 1 (pid: 33054) of binary: /usr/bin/python3",
        "Traceback (most recent call last):",
        '  File "/usr/bin/torchrun", line 8, in <module>',
        "    sys.exit(main())",
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
        "============================================================",
        "train.py FAILED",
        "------------------------------------------------------------",
        "Failures:",
        "  <NO_OTHER_FAILURES>",
        "------------------------------------------------------------",
        "Root Cause (first observed failure):",
        "[0]:",
        "  time      : 2024-08-01_13:23:17",
        "  host      : node-a",
        "  rank      : 1 (local_rank: 1)",
        "  exitcode  : 1 (pid: 33054)",
        "  error_file: <N/A>",
        "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
        "============================================================",
    ]
    analysis = analyze_files(tmp_path, {"launcher.log": lines})
    agent_traceback = analysis.job.events.filter(pl.col("event") == "exception")
    assert agent_traceback.height == 1
    assert agent_traceback.item(0, "rank") is None  # the agent's own traceback


def test_a_failure_summary_quotes_its_children_under_their_own_ranks(tmp_path):
    # sample_logs/reducer_two_ranks/logs/launcher.log (torchrun's ChildFailedError summary),
    # verbatim: the entry for rank 0 quotes rank 0's traceback; the agent's log also names
    # rank 1 elsewhere, which must not make these lines rank 1's
    launcher = (SAMPLE_LOGS / "reducer_two_ranks" / "logs" / "launcher.log").read_text()
    lines = launcher.splitlines()
    events = parse(lines, "launcher.log")
    closed = events.filter(pl.col("event") == "peer_closed")
    assert closed.height == 1 and closed.item(0, "rank") == 0
    unused = events.filter(pl.col("event") == "unused_params")
    assert set(unused.get_column("rank").to_list()) == {1}


def test_a_worker_pods_number_is_not_a_rank_without_its_master():
    # kubeflow/pytorch-operator#125: `kubectl logs optimizer-worker-0` (RANK 1 under a
    # PyTorchJob, join order under elastic): a node, not rank 0
    found = rank_from_path("optimizer-worker-0.log")
    assert found.rank is None and found.node == "optimizer-worker-0"
    assert rank_from_path("job-worker-1/rank-5.log").rank == 5  # a stated rank still wins
    assert rank_from_path("worker-3.log").rank == 3  # a bare `worker-N` file stays a rank


def test_a_spawned_child_s_traceback_gives_no_rank_to_the_console_s_other_lines(tmp_path):
    # facebookresearch/fairseq#869, verbatim (cut): a caught OOM (on GPU 0) above the
    # parent's re-raise of process 3's error; the OOM is not rank 3's
    lines = [
        "| WARNING: ran out of memory with exception: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.93 GiB total capacity; 7.20 GiB already allocated; 17.56 MiB free; 46.25 MiB cached);",
        " Skipping batch",
        "Traceback (most recent call last):",
        '  File "./fairseq/train.py", line 306, in <module>',
        "    cli_main()",
        '  File "/miniconda3/envs/py36/lib/python3.6/site-packages/torch/multiprocessing/spawn.py", line 114, in join',
        "    raise Exception(msg)",
        "Exception:",
        "",
        "-- Process 3 terminated with the following error:",
        "Traceback (most recent call last):",
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    oom = analysis.job.events.filter(pl.col("event") == "oom")
    assert oom.height == 1 and oom.item(0, "rank") is None


# sail-sg/zero-bubble-pipeline-parallelism#60, verbatim (the paste's start, its traceback cut):
# NCCL's bare lines of one process, then PyTorch's `[rank9]:`-tagged traceback
ZBPP_CONSOLE = [
    "lzm-h200-10:74737:75914 [1] transport/net_socket.cc:488 NCCL WARN NET/Socket : peer 10.0.5.194<41988> message truncated : receiving 4 bytes instead of 2. If you believe your socket network is in healthy state,           there may be a mismatch in collective sizes or environment settings (e.g. NCCL_PROTO, NCCL_ALGO) between ranks",
    "",
    "lzm-h200-10:74737:74737 [1] init.cc:290 NCCL WARN Attempt to use communicator before the previous operation returned ncclSuccess",
    "[rank9]: Traceback (most recent call last):",
    '[rank9]:   File "/sharedata/zimoliu/code/zbpp_v010/examples/../pretrain_gpt.py", line 301, in <module>',
    "[rank9]:     pretrain(train_valid_test_datasets_provider,",
    '[rank9]:   File "/sharedata/zimoliu/code/zbpp_v010/megatron/training.py", line 199, in pretrain',
    "[rank9]:     iteration = train(forward_step_func,",
    '[rank9]:   File "/sharedata/zimoliu/code/zbpp_v010/megatron/training.py", line 855, in train',
    "[rank9]:     train_step(forward_step_func,",
]


def test_one_process_s_bare_nccl_lines_beside_one_tagged_rank_are_that_rank_s(tmp_path):
    analysis = analyze_files(tmp_path, {"node1.log": ZBPP_CONSOLE})
    nccl = analysis.job.events.filter(pl.col("family") == "nccl")
    assert nccl.height == 2
    assert set(nccl.get_column("rank").to_list()) == {9}
    assert set(nccl.get_column("rank_from").to_list()) == {"file_content"}
    assert analysis.verdict.ranks == [9]


def test_bare_nccl_lines_of_two_processes_or_beside_two_tagged_ranks_get_no_rank(tmp_path):
    other_process = ZBPP_CONSOLE[0].replace(":74737:75914 [1]", ":74738:75915 [2]")
    other_rank = "[rank10]: Traceback (most recent call last):"
    for lines in ([other_process, *ZBPP_CONSOLE], [*ZBPP_CONSOLE, other_rank]):
        analysis = analyze_files(tmp_path, {"node1.log": lines})
        nccl = analysis.job.events.filter(pl.col("family") == "nccl")
        assert nccl.get_column("rank").null_count() == nccl.height


TRACEBACK = (
    b"Traceback (most recent call last):\n"
    b'  File "train.py", line 12, in <module>\n'
    b"    main()\n"
    b"ValueError: bad sample\n"
)


def test_the_name_of_the_archive_uploaded_says_no_rank(tmp_path):
    # a paste packed under a name of the user's: like a folder's name, it names the upload
    upload = tmp_path / "case-rank0-hang.tar.gz"
    upload.write_bytes(tar_bytes({"logs/output.log": TRACEBACK}, "gz"))
    died = finding(analyze_upload(upload).jobs[0], "rank_exception")
    assert died.ranks == []


def test_an_archive_among_others_in_the_upload_keeps_the_rank_its_name_says(tmp_path):
    (tmp_path / "rank3.tar.gz").write_bytes(tar_bytes({"output.log": TRACEBACK}, "gz"))
    (tmp_path / "rank1.tar.gz").write_bytes(
        tar_bytes({"output.log": b"rank=1 step=0 stage=a\n"}, "gz")
    )
    died = finding(analyze_upload(tmp_path).jobs[0], "rank_exception")
    assert died.ranks == [3]


def test_submitit_s_per_task_error_log_tells_whose_traceback_it_is(tmp_path):
    # a submitit job folder as submitit writes it: each task's stdout and stderr, its
    # submission script and a pickled result (skipped, never opened as a log)
    (tmp_path / "14164533_submission.sh").write_text("#!/bin/bash\n")
    (tmp_path / "14164533_0_result.pkl").write_bytes(b"\x80\x04\x95")
    files = {
        "14164533_0_log.out": ["rank=0 step=1 stage=before_backward"],
        "14164533_1_log.err": [
            "Traceback (most recent call last):",
            '  File "train.py", line 10, in <module>',
            "RuntimeError: boom",
        ],
    }
    analysis = analyze_files(tmp_path, files)
    assert (analysis.verdict.finding.kind, analysis.verdict.ranks) == ("rank_exception", [1])


# cnulab/RealNet#54, verbatim: a launch of one process, then that worker's argparse banner
ONE_PROCESS = [
    "python -m torch.distributed.launch --nproc_per_node=1  train_realnet.py --dataset MVTec-AD --class_name bottle",
    "NOTE: Redirects are currently not supported in Windows or MacOs.",
    "usage: train_realnet.py [-h] [--config CONFIG] [--dataset {MVTec-AD,VisA,MPDD,BTAD}] [--local_rank LOCAL_RANK]",
]


def test_in_a_world_of_one_process_the_workers_lines_are_rank_0s(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": ONE_PROCESS})
    refused = analysis.job.events.filter(pl.col("event") == "exception").row(0, named=True)
    assert (refused["rank"], refused["rank_from"]) == (0, "world_of_one")
    assert analysis.verdict.headline == "Rank 0 died of an ArgumentError"
    # with a second process launched, nothing says which one it was
    two = [ONE_PROCESS[0].replace("=1", "=2"), *ONE_PROCESS[1:]]
    unsure = analyze_files(tmp_path / "two", {"train.log": two})
    assert unsure.verdict.ranks == []
