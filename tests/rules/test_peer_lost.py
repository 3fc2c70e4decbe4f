"""A broken connection to a peer, and what is not one."""

from __future__ import annotations

from pathlib import Path

from logforensics.registry import diagnosis
from tests.builders import analyze, analyze_files, finding, kinds


def test_a_pair_closed_by_the_ranks_own_timeout_is_no_lost_peer(tmp_path):
    # sql-machine-learning/elasticdl#1895, verbatim: worker 1 timed out while worker 0 was alive
    lines = [
        "ERROR:root:[/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:84] Timed out waiting 60000ms for recv operation to complete",
        "ERROR:root:Application timeout caused pair closure",
    ]
    analysis = analyze_files(tmp_path, {"worker1.log": lines})
    assert "peer_lost" not in kinds(analysis)
    assert finding(analysis, "collective_timeout").ranks == [1]


# huggingface/m4-logs tr_141 (num_workers 06), verbatim: training and validation went on, then
# SLURM lost a node and cancelled the step; the experiment's notes: a node crashed, "most
# likely a normal JZ hardware issue"
NODE_FAILED = [
    "** Starting validation **",
    "** Finished validation **",
    "srun: error: Node failure on jean-zay-iam37",
    "srun: Job step aborted: Waiting up to 62 seconds for job step to finish.",
    "slurmstepd: error: *** STEP 1943824.0 ON jean-zay-iam17 CANCELLED AT 2023-03-06T03:17:51 DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***",
]


def test_a_node_the_scheduler_lost_is_the_cause(tmp_path):
    analysis = analyze_files(tmp_path, {"main_log.txt": NODE_FAILED})
    assert analysis.verdict is not None  # it had been "no failure found"
    cause = analysis.verdict.finding
    assert cause.kind == "peer_lost" and cause.details["nodes"] == ["jean-zay-iam37"]
    assert diagnosis(cause) == "missing_rank"  # the report's kind: its ranks went missing
    assert cause.blames_nobody and "exclude" in cause.fix
    assert analysis.verdict.headline.startswith("Node jean-zay-iam37 failed under the job")
    # the step SLURM cancelled is that node's loss, not a stop from outside the job
    assert kinds(analysis) == ["peer_lost"]


# kubeflow/mpi-operator#152, verbatim: the launcher's mpirun after a worker pod crashed
DAEMON_LOST = [
    "ORTE has lost communication with a remote daemon.",
    "",
    "  HNP daemon   : [[43015,0],0] on node tf-bert-libnlp-token-lr-5e-6-fp32-1572827779-launcher-gdqv7",
    "  Remote daemon: [[43015,0],20] on node tf-bert-libnlp-token-lr-5e-6-fp32-1572827779-worker-19",
    "",
    "This is usually due to either a failure of the TCP network",
    "connection to the node, or possibly an internal failure of",
    "the daemon itself. We cannot recover from this failure, and",
    "therefore will terminate the job.",
]


def test_a_node_whose_daemon_mpirun_lost_is_the_cause(tmp_path):
    analysis = analyze_files(tmp_path, {"launcher.log": DAEMON_LOST})
    cause = analysis.verdict.finding
    node = "tf-bert-libnlp-token-lr-5e-6-fp32-1572827779-worker-19"
    assert cause.kind == "peer_lost" and cause.details["nodes"] == [node]
    assert cause.blames_nobody and "kubectl describe pod" in cause.fix
    assert (
        analysis.verdict.headline
        == f"Node {node} was lost under the job (mpirun lost its daemon there)"
    )
    assert analysis.unrecognised_lines == 0
    # the one finding there is: no talk of others that follow from it
    assert analysis.verdict.reason == "It is the only finding in the logs."


# --- a rank that left while the others still waited for it --------------------------------

LEFT_EARLY = Path(__file__).parents[1] / "data" / "launchers" / "torchrun" / "left_early"


def test_the_worker_torchrun_neither_lists_nor_stopped_had_left_early(tmp_path):
    # a run here: rank 1 returned from its loop at step 4 and exited 0; ranks 0 and 2 lost
    # their connection to it in step 4's all_reduce; torchrun's summary lists ranks 2 and 0
    analysis = analyze(LEFT_EARLY)
    left = analysis.verdict.finding
    assert (left.kind, left.ranks, left.part) == ("stage_divergence", [1], "departure")
    assert left.details == {"departure": "left", "other_ranks": [0, 2]}
    assert "`return` or `break`" in left.fix
    assert analysis.verdict.headline == (
        "Rank 1 left the job early, with no error; ranks 0 and 2 then lost their connection to it"
    )


def test_a_worker_the_summary_lists_did_not_leave_early(tmp_path):
    # the same console with a third summary entry for local rank 1: every worker failed
    lines = (LEFT_EARLY / "console.log").read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("Root Cause"))
    entry = [
        "[2]:",
        "  time      : 2026-12-04_05:30:10",
        "  host      : localhost",
        "  rank      : 1 (local_rank: 1)",
        "  exitcode  : 1 (pid: 476)",
        "  error_file: <N/A>",
        "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
    ]
    listed = lines[: at - 1] + entry + lines[at - 1 :]
    analysis = analyze_files(tmp_path, {"console.log": listed})
    assert not [f for f in analysis.findings if f.details.get("departure") == "left"]


EXITED_QUIETLY = LEFT_EARLY.parent / "exited_quietly"


def test_a_rank_that_exited_with_a_code_but_no_error_went_first():
    # a run here: rank 1 prints `rank 1: found corrupt shard data-00017.tar, exiting` and calls
    # sys.exit(1) at step 3; ranks 0 and 2 lose their connection to it; torchrun's summary
    # names rank 1 (exit code 1) the root cause and ranks 0 and 2 as stopped (-15)
    analysis = analyze(EXITED_QUIETLY)
    exited = analysis.verdict.finding
    assert (exited.kind, exited.ranks, exited.part) == ("stage_divergence", [1], "departure")
    assert exited.details["departure"] == "exited" and exited.details["exit_codes"] == [1]
    assert "`rank 1: found corrupt shard data-00017.tar, exiting`" in exited.summary
    assert "sys.exit(1)" in exited.fix
    quoted = [evidence.text for evidence in exited.evidence]
    assert any("found corrupt shard" in text for text in quoted)
    assert any("exitcode: 1" in text or "exitcode  : 1" in text for text in quoted)
    assert analysis.verdict.headline == (
        "Rank 1 exited with code 1 without an error of its own; ranks 0 and 2 then lost their "
        "connection to it"
    )


def test_an_exit_code_is_no_quiet_exit_when_the_ranks_output_is_not_in_the_logs(tmp_path):
    # the same console without rank 1's own lines: its error may be where these logs are not
    lines = (EXITED_QUIETLY / "console.log").read_text().splitlines()
    kept = [line for line in lines if not line.startswith(("[rank 1]", "rank 1:"))]
    analysis = analyze_files(tmp_path, {"console.log": kept})
    assert not [f for f in analysis.findings if f.details.get("departure") == "exited"]
    # torchrun's summary still names it: the lost peers are its exit's echo
    assert analysis.verdict.finding.kind == "rank_exception"
    assert analysis.verdict.ranks == [1]
    assert "while the other workers still ran" in analysis.verdict.finding.summary


def test_a_rank_that_raised_did_not_exit_quietly(tmp_path):
    # the same console where rank 1's message is its traceback's end: its exception is the cause
    lines = (EXITED_QUIETLY / "console.log").read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("rank 1:"))
    lines[at : at + 1] = [
        "[rank1]: Traceback (most recent call last):",
        '[rank1]:   File "/tmp/sys_exit_worker.py", line 19, in main',
        '[rank1]:     raise ValueError("corrupt shard data-00017.tar")',
        "[rank1]: ValueError: corrupt shard data-00017.tar",
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    assert analysis.verdict.finding.kind == "rank_exception"
    assert analysis.verdict.ranks == [1]
    assert not [f for f in analysis.findings if f.details.get("departure") == "exited"]


LEFT_EARLY_LOGDIR = LEFT_EARLY.parent / "left_early_logdir"


def test_the_one_rank_with_no_error_while_the_others_lost_a_peer_went_first():
    # a run here: the same job's torchrun --log-dir tree, no launcher summary
    analysis = analyze(LEFT_EARLY_LOGDIR)
    quiet = analysis.verdict.finding
    assert (quiet.kind, quiet.ranks) == ("stage_divergence", [1])
    assert quiet.details["departure"] == "quiet" and quiet.confidence == "low"
    assert "`no more data on this rank, stopping`" in quiet.summary
    assert "killed from outside" in quiet.summary and "OOM killer" in quiet.fix
    assert analysis.verdict.headline.startswith("Rank 1 went first, with no error of its own")


def test_no_quiet_rank_is_blamed_when_ranks_of_the_world_are_missing(tmp_path):
    # the same files, with a world of 8 said: the peer that went may be a rank not uploaded
    files = {
        path.relative_to(LEFT_EARLY_LOGDIR).as_posix(): path.read_text().splitlines()
        for path in LEFT_EARLY_LOGDIR.rglob("*.log")
    }
    first = next(name for name in files if name.endswith("0/stdout.log"))
    files[first] = ["world_size=8", *files[first]]
    analysis = analyze_files(tmp_path, files)
    assert not [f for f in analysis.findings if f.details.get("departure") == "quiet"]


# pytorch/examples#772, verbatim: the parameter server's console alone (rank 0 of a world of 2);
# the trainer, rank 1, crashed on a wrong `forward()` call (the maintainers' fix, PR #774)
PARAMETER_SERVER = [
    "$ python rpc_parameter_server.py --world_size=2 --rank=0",
    "using master_addr localhost",
    "using master_port 29500",
    "using world_size 2",
    "PS master initializing RPC",
    "RPC initialized! Running parameter server...",
    "Using 0 GPUs to train",
    "Putting first 2 convs on cpu",
    "Putting rest of layers on cpu",
    "[E process_group_agent.cpp:664] Encountered exception in ProcessGroupAgent::listenLoop(): "
    "[/opt/conda/conda-bld/pytorch_1587428398394/work/third_party/gloo/gloo/transport/tcp/"
    "pair.cc:566] Read error [192.168.9.4]:28296: Connection reset by peer on worker 0. This "
    "means that the RPC agent is in an unhealthy state and unusable.",
]


def test_the_one_rank_of_the_world_not_in_the_logs_is_the_peer_the_others_lost(tmp_path):
    analysis = analyze_files(tmp_path, {"rank0.log": PARAMETER_SERVER})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("missing_rank", [1])
    assert verdict.headline == "Rank 1 left no log here; rank 0 lost its connection to it"
    assert verdict.finding.fix.startswith("Get rank 1's own log")


# horovod/horovod#2484, verbatim: elastic Horovod on gloo, three processes under horovodrun; a
# maintainer killed one after a few iterations, and ranks 0 and 2 lost their connection to it
HOROVOD_KILLED_PEER = [
    "[0]<stdout>:Running warmup...",
    "[0]<stdout>:Running benchmark...",
    "[0]<stdout>:Iter #0: 121.1 img/sec per GPU",
    "[0]<stdout>:Iter #1: 114.1 img/sec per GPU",
    "[2]<stderr>:[2020-12-11 18:47:05.325138: E /tmp/pip-install-fyf54fy5/horovod/horovod/common/operations.cc:546] Horovod background loop uncaught exception: [/tmp/pip-install-fyf54fy5/horovod/third_party/compatible_gloo/gloo/transport/tcp/pair.cc:566] Read error [10.86.169.49]:21925: Connection reset by peer",
    "[0]<stderr>:[2020-12-11 18:47:05.325190: E /tmp/pip-install-fyf54fy5/horovod/horovod/common/operations.cc:546] Horovod background loop uncaught exception: [/tmp/pip-install-fyf54fy5/horovod/third_party/compatible_gloo/gloo/transport/tcp/pair.cc:566] Read error [10.86.169.49]:53652: Connection reset by peer",
]


def test_without_the_world_s_size_the_one_gap_among_the_ranks_is_the_peer_they_lost(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": HOROVOD_KILLED_PEER})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("missing_rank", [1])
    assert "of ranks 0 to 2, rank 1 is the one rank not here" in verdict.finding.summary
    assert verdict.finding.confidence == "low"
    # two ranks missing between them: no one peer to name
    apart = [line.replace("[2]<stderr>", "[3]<stderr>") for line in HOROVOD_KILLED_PEER]
    analysis = analyze_files(tmp_path / "apart", {"console.log": apart})
    assert analysis.verdict.ranks != [1]


def test_a_rank_seen_with_no_error_of_its_own_is_not_taken_for_the_absent_peer(tmp_path):
    # the same console beside a rank 1 that logged on without an error: the world is all here
    rank1 = ["using world_size 2", "Trainer 1 initializing RPC", "Training on batch 0"]
    analysis = analyze_files(tmp_path, {"rank0.log": PARAMETER_SERVER, "rank1.log": rank1})
    assert analysis.verdict.finding.details.get("departure") != "absent"


def test_a_gap_up_to_a_rank_no_job_has_is_counted_not_enumerated(tmp_path):
    # the same console with rank 2's tag become a number near the largest Int32: the gap up to
    # it is no one rank, and is not built as a range of two billion ranks
    far = [line.replace("[2]<stderr>", "[2147483000]<stderr>") for line in HOROVOD_KILLED_PEER]
    analysis = analyze_files(tmp_path, {"console.log": far})
    assert analysis.verdict.ranks != [1]
    assert not analysis.rule_errors
