"""Ray's reports that a node or a worker process died (parsers/ray_core.py)."""
# ruff: noqa: E501 -- verbatim log lines

from __future__ import annotations

from tests.builders import analyze_files, only, parse, parsed_by

# ray-project/ray#15128, verbatim: the driver's warning that a node stopped answering
NODE_DEAD = "The node with node id: 75b2eec8a61cdafd37cc8072b1caf9abdeef9c4e74a4f24d5dfce28d and ip: 10.4.4.107 has been marked dead because the detector has missed too many heartbeats from it. This can happen when a raylet crashes unexpectedly or has lagging heartbeats."

# ray-project/ray#31828, verbatim: a Ray Train worker killed as its container ran out of memory
WORKER_DIED = [
    "\x1b[2m\x1b[36m(RayTrainWorker pid=1942, ip=100.97.252.234)\x1b[0m 17-Jan-23 17:21:19 [Worker:0] [INFO] Returning from train func!!",
    "2023-01-17 17:21:35,472\tWARNING worker.py:1829 -- A worker died or was killed while executing a task by an unexpected system error. To troubleshoot the problem, check the logs for the dead worker. RayTask ID: ffffffffffffffff686c4586a18aa58bf9747eb504000000 Worker ID: 0c62b78d30f3642bc1fc9a6f3cb257202e1230b03d988031722bc993 Node ID: 38300cefdc3b42caebdba478cc1da1adbba154304cecb24fd8ba1a7e Worker IP address: 100.97.252.234 Worker port: 10016 Worker PID: 1942 Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of file. There are some potential root causes. (1) The process is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop --force is called. (3) The worker is crashed unexpectedly due to SIGSEGV or other unexpected errors.",
]

# hkust-nlp/simpleRL-reason#25, verbatim: the driver's traceback for an actor that died, its
# fields a tab in, then Ray's sentence for the exit type
ACTOR_DIED = [
    "Traceback (most recent call last):",
    '  File "/scratch/amlt_code/train/openrlhf/cli/train_ppo_ray_box.py", line 175, in train',
    "    ray.get(refs)",
    '  File "/usr/local/lib/python3.10/dist-packages/ray/_private/worker.py", line 863, in get_objects',
    "    raise value",
    "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
    "\tclass_name: ActorModelRayActorBOX",
    "\tactor_id: f20da4dcf474d8bb05e952bb03000000",
    "\tpid: 5226",
    "\tnamespace: aa07eaa0-19a3-4a8b-9095-8872e5d243ba",
    "\tip: 10.7.34.138",
    "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of file. There are some potential root causes. (1) The process is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop --force is called. (3) The worker is crashed unexpectedly due to SIGSEGV or other unexpected errors.",
]


def test_a_node_ray_marked_dead_is_a_node_lost_under_the_job(tmp_path):
    lost = only(parsed_by("ray_core", [NODE_DEAD]).filter(event="node_lost"))
    assert lost["host"] == "10.4.4.107"
    verdict = analyze_files(tmp_path, {"driver.log": [NODE_DEAD]}).verdict
    assert verdict.finding.kind == "peer_lost"
    assert verdict.headline == "Node 10.4.4.107 was lost under the job (Ray marked it dead)"


def test_a_worker_ray_saw_die_by_a_system_error_most_likely_ran_out_of_memory(tmp_path):
    # Ray's own first guess for a worker gone without an error is the OOM killer: read like
    # a SIGKILL no report explains
    died = only(parsed_by("ray_core", WORKER_DIED).filter(event="worker_died"))
    assert (died["pid"], died["host"]) == (1942, "100.97.252.234")
    assert died["exc_message"].startswith("SYSTEM_ERROR: Worker unexpectedly exits")
    analysis = analyze_files(tmp_path, {"driver.log": WORKER_DIED})
    assert analysis.verdict.finding.kind == "oom"
    assert analysis.verdict.headline == (
        "A worker process (pid 1942) died without an error of its own: most likely killed for "
        "memory"
    )
    assert "OOM killer" in analysis.verdict.finding.fix


def test_an_actor_that_died_is_the_workers_death_not_the_drivers_exception(tmp_path):
    died = only(parsed_by("ray_core", ACTOR_DIED).filter(event="worker_died"))
    assert (died["pid"], died["host"]) == (5226, "10.7.34.138")
    assert died["exc_message"].startswith("SYSTEM_ERROR")
    analysis = analyze_files(tmp_path, {"driver.log": ACTOR_DIED})
    assert analysis.unrecognised_lines == 0  # the fields and the exit sentence are Ray's report
    assert analysis.verdict.finding.kind == "oom"
    assert "pid 5226 on 10.7.34.138" in analysis.verdict.finding.summary


# AgentR1/Agent-R1#33, verbatim: verl's TaskRunner actor gone under Kubernetes, Ray's exit
# detail for a worker with no exit code naming the pod's memory limit
K8S_ACTOR_DIED = [
    "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
    "        class_name: TaskRunner",
    "        actor_id: 8d1498767d305748d59d87da01000000",
    "        pid: 319017",
    "        namespace: 1109301e-e25e-4e12-9ae4-1dd5fc7468e4",
    "        ip: 10.44.139.116",
    "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit detail: Worker exits unexpectedly. Worker exits with an exit code None. The worker may have exceeded K8s pod memory limits.",
]


def test_an_actor_gone_past_its_pods_memory_limit_is_an_oom_not_the_drivers_exception(tmp_path):
    analysis = analyze_files(tmp_path, {"driver.log": K8S_ACTOR_DIED})
    verdict = analysis.verdict
    assert verdict.finding.kind == "oom"
    assert verdict.headline == (
        "A worker process (pid 319017) died without an error of its own: most likely killed "
        "for memory"
    )
    assert "pid 319017 on 10.44.139.116" in verdict.finding.summary
    assert [f.kind for f in analysis.findings].count("rank_exception") == 0


def test_an_actor_that_exited_on_purpose_is_no_death_from_outside(tmp_path):
    # the same report with another of Ray's exit types (the worker asked to exit)
    intended = [
        *ACTOR_DIED[:-1],
        ACTOR_DIED[-1].split(" Worker exit type:")[0]
        + " Worker exit type: INTENDED_USER_EXIT Worker exit detail: Worker exits by an user request.",
    ]
    died = only(parsed_by("ray_core", intended).filter(event="worker_died"))
    assert died["exc_message"].startswith("INTENDED_USER_EXIT")
    analysis = analyze_files(tmp_path, {"driver.log": intended})
    assert not [f for f in analysis.findings if f.details.get("worker_died")]


def test_the_node_a_worker_died_with_explains_its_death(tmp_path):
    # the node ray#22349's worker ran on was lost: the worker's death is not a second cause
    node = NODE_DEAD.replace("10.4.4.107", "10.7.34.138")
    analysis = analyze_files(tmp_path, {"driver.log": [node, *ACTOR_DIED]})
    assert analysis.verdict.headline.startswith("Node 10.7.34.138 was lost under the job")
    assert not [f for f in analysis.findings if f.details.get("worker_died")]
    assert parse([node, *ACTOR_DIED]).filter(event="worker_died").height == 1


# ypwang61/One-Shot-RLVR#14, the driver's report as posted (verl GRPO on 8 A100s): the dead
# actor's name, verl's `<prefix>WorkerDict_<placement group>:<rank>`, says which worker it was
VERL_WORKER_DIED = [
    "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
    "        class_name: create_colocated_worker_cls.<locals>.WorkerDict",
    "        actor_id: d9a51a748bcef11ba6ba37d001000000",
    "        pid: 1504364",
    "        name: 5xLRFRWorkerDict_0:5",
    "        namespace: 5ec414da-db2d-4513-9c40-527af00ebaaa",
    "        ip: 172.24.67.40",
    "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of file. There are some potential root causes. (1) The process is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop --force is called. (3) The worker is crashed unexpectedly due to SIGSEGV or other unexpected errors.",
]


def test_a_verl_worker_s_actor_name_gives_its_rank(tmp_path):
    died = only(parsed_by("ray_core", VERL_WORKER_DIED).filter(event="worker_died"))
    assert (died["rank"], died["pid"], died["host"]) == (5, 1504364, "172.24.67.40")
    verdict = analyze_files(tmp_path, {"driver.log": VERL_WORKER_DIED}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("oom", [5])


# ray-project/ray#47461, verbatim: a release test's console, the raylet's report of a worker gone
# without an error, then Ray Train naming the worker (the trainer's line, padded as posted)
TRAIN_WORKER_FAILED = [
    "(raylet) A worker died or was killed while executing a task by an unexpected system error. To troubleshoot the problem, check the logs for the dead worker. RayTask ID: ffffffffffffffff3fe85624f7ebc8f28d076a0702000000 Worker ID: fead2dfe78eeee17dd8922f0569f798cf51660782f4222a9acfc8fbe Node ID: 201f2cc4bc593d830338a3ed774649489389d8695222912df0994e79 Worker IP address: 10.0.7.57 Worker port: 10046 Worker PID: 89513 Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of file. There are some potential root causes. (1) The process is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop --force is called. (3) The worker is crashed unexpectedly due to SIGSEGV or other unexpected errors.",
    "(TorchTrainer pid=89392) Worker 0 has failed.                                                                                                 ",
]


def test_ray_trains_word_on_the_failed_worker_gives_the_dead_process_its_rank(tmp_path):
    failed = only(parsed_by("ray_core", TRAIN_WORKER_FAILED).filter(event="train_worker_failed"))
    assert (failed["line"], failed["value"], failed["rank"]) == (2, 0, None)
    analysis = analyze_files(tmp_path, {"console.log": TRAIN_WORKER_FAILED})
    assert analysis.unrecognised_lines == 0
    verdict = analysis.verdict
    assert verdict.finding.kind == "oom" and verdict.ranks == [0]
    assert (
        verdict.headline == "Rank 0 died without an error of its own: most likely killed for memory"
    )


def test_a_failed_worker_named_before_the_death_does_not_name_it(tmp_path):
    # the same lines in the other order: Ray Train's word is about an earlier failure
    analysis = analyze_files(tmp_path, {"console.log": TRAIN_WORKER_FAILED[::-1]})
    assert analysis.verdict.finding.kind == "oom" and analysis.verdict.ranks == []


def test_a_worker_number_past_any_integer_names_no_rank(tmp_path):
    # the trainer's words with a number no rank has (hostile or garbled input)
    lines = [
        TRAIN_WORKER_FAILED[0],
        "(TorchTrainer pid=89392) Worker 99999999999999999999999 has failed.",
    ]
    verdict = analyze_files(tmp_path, {"console.log": lines}).verdict
    assert verdict.finding.kind == "oom" and verdict.ranks == []


# verl-project/verl#3987, verbatim (cut as posted): the excerpt starts inside Ray's report, the
# `ActorDiedError` line above the actor's fields left out
REPORT_CUT_ABOVE_FIELDS = [
    "(FullyAsyncTaskRunner pid=130397)       actor_id: 1bc865d7417ba6d5182635e30a000000",
    "(FullyAsyncTaskRunner pid=130397)       pid: 132182",
    "(FullyAsyncTaskRunner pid=130397)       name: ra0GdtWorkerDict_0:1",
    "(FullyAsyncTaskRunner pid=130397)       namespace: 31d1e1ed-4eeb-4a83-b235-4847d56a68c7",
    "(FullyAsyncTaskRunner pid=130397)       ip: 172.16.2.252",
    "(FullyAsyncTaskRunner pid=130397) The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of file. There are some potential root causes. (1) The process is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop --force is called. (3) The worker is crashed unexpectedly due to SIGSEGV or other unexpected errors.",
    "(FullyAsyncTaskRunner pid=130397) [ASYNC MAIN] Training completed or interrupted",
    "(WorkerDict pid=132181) dlca1ik21m92lu3n-master-0:132181:134952 [0] NCCL INFO [Service thread] Connection closed by localRank 1 [repeated 9x across cluster]",
]


def test_a_report_the_excerpt_cut_above_its_fields_still_names_the_worker(tmp_path):
    verdict = analyze_files(tmp_path, {"console.log": REPORT_CUT_ABOVE_FIELDS}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("oom", [1])
    assert verdict.headline.startswith("Rank 1 died without an error of its own")
