"""The store a process could not reach at start-up (parsers/rendezvous.py), on verbatim lines."""

from __future__ import annotations

import json

from tests.builders import analyze_files, only, parsed_by

# kubeflow/trainer#2041, verbatim: worker 1 cannot reach worker 0's dynamic c10d port
NO_ROUTE = "[W socket.cpp:601] [c10d] The client socket has failed to connect to [elastic-example-imagenet-worker-0.default.svc.cluster.local]:43461 (errno: 113 - No route to host)."

# pytorch/pytorch#81704, verbatim: a Kubeflow PyTorchJob's worker pod (gloo, 4 replicas) whose
# init_process_group hung after connecting to the master's store; the cause was the Istio sidecar
# injected into every pod (kubeflow/trainer#1637)
CONNECTED_TO_THE_STORE = [
    "[I debug.cpp:47] [c10d] The debug level is set to DETAIL.",
    "this is main",
    "Namespace(backend='gloo', batch_size=64, epochs=1, log_interval=10, log_path='', lr=0.01, momentum=0.5, no_cuda=False, save_model=False, seed=1, test_batch_size=1000)",
    "Using distributed PyTorch with gloo backend",
    "4 1",
    "[I socket.cpp:580] [c10d - debug] The client socket will attempt to connect to an IPv6 address of (pytorch-simple-master-0, 23456).",
    "[I socket.cpp:648] [c10d - trace] The client socket is attempting to connect to [10-1-0-200.pytorch-simple-master-0.kubeflow.svc.cluster.local]:23456.",
    "[I socket.cpp:725] [c10d] The client socket has connected to [10-1-0-200.pytorch-simple-master-0.kubeflow.svc.cluster.local]:23456 on [pytorch-simple-worker-0]:38244.",
    "[I socket.cpp:580] [c10d - debug] The client socket will attempt to connect to an IPv6 address of (pytorch-simple-master-0, 23456).",
    "[I socket.cpp:648] [c10d - trace] The client socket is attempting to connect to [10-1-0-200.pytorch-simple-master-0.kubeflow.svc.cluster.local]:23456.",
    "[I socket.cpp:725] [c10d] The client socket has connected to [10-1-0-200.pytorch-simple-master-0.kubeflow.svc.cluster.local]:23456 on [pytorch-simple-worker-0]:38250.",
]


def test_the_endpoint_and_the_systems_reason_are_read():
    failure = only(parsed_by("rendezvous", [NO_ROUTE], file="worker-1.log"))
    assert failure["event"] == "store_unreachable"
    assert failure["peer"] == (
        "[elastic-example-imagenet-worker-0.default.svc.cluster.local]:43461"
    )
    assert (failure["value"], failure["error_code"]) == (113, "No route to host")


def test_windows_system_error_reason_is_read():
    # hiyouga/LlamaFactory#7127, verbatim (a Windows console in Chinese)
    line = (
        "[W socket.cpp:697] [c10d] The client socket has failed to connect to "
        "[WIN-57PDHSNQNT2]:28133 (system error: 10049 - 在其上文中，该请求的地址无效。)."
    )
    failure = only(parsed_by("rendezvous", [line], file="train.log"))
    assert failure["peer"] == "[WIN-57PDHSNQNT2]:28133"
    assert (failure["value"], failure["error_code"]) == (10049, "在其上文中，该请求的地址无效。")


def test_a_connection_made_to_the_store_is_read_with_the_store_s_endpoint():
    line = CONNECTED_TO_THE_STORE[-1]
    connected = only(parsed_by("rendezvous", [line], file="worker.log"))
    assert (connected["event"], connected["severity"]) == ("store_connected", "info")
    assert (
        connected["peer"] == "[10-1-0-200.pytorch-simple-master-0.kubeflow.svc.cluster.local]:23456"
    )


def test_torchruns_rendezvous_result_states_the_world_size():
    # kubeflow/trainer#2041, verbatim (the agent's `Rendezvous complete for workers` block)
    lines = ["  global_ranks=[1]", "  role_world_sizes=[2]", "  global_world_sizes=[2]"]
    size = only(parsed_by("rendezvous", lines))
    assert (size["event"], size["world_size"]) == ("world_size", 2)


# MIC-DKFZ/nnUNet#856, verbatim: the agent reports local rank 2's exit, restarts the workers,
# and its rendezvous result states the node's ranks (local 0-3 are global 0-3)
AGENT_RESTART = [
    "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 2 (pid: 68788) of binary: /home/yupeng/anaconda3/envs/HUAWEI/bin/python",
    "ERROR:torch.distributed.elastic.agent.server.local_elastic_agent:[default] Worker group failed",
    "INFO:torch.distributed.elastic.agent.server.api:[default] Worker group FAILED. 3/3 attempts left; will restart worker group",
    "INFO:torch.distributed.elastic.agent.server.api:[default] Stopping worker group",
    "INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous'ing worker group",
    "INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous complete for workers. Result:",
    "  restart_count=1",
    "  master_addr=127.0.0.1",
    "  master_port=1234",
    "  group_rank=0",
    "  group_world_size=1",
    "  local_ranks=[0, 1, 2, 3]",
    "  role_ranks=[0, 1, 2, 3]",
    "  global_ranks=[0, 1, 2, 3]",
    "  role_world_sizes=[4, 4, 4, 4]",
    "  global_world_sizes=[4, 4, 4, 4]",
    "",
    "INFO:torch.distributed.elastic.agent.server.api:[default] Starting worker group",
    "INFO:torch.distributed.elastic.multiprocessing:Setting worker0 reply file to: /tmp/torchelastic_zl553u6x/none_2gl_eds4/attempt_1/0/error.json",
    "INFO:torch.distributed.elastic.multiprocessing:Setting worker1 reply file to: /tmp/torchelastic_zl553u6x/none_2gl_eds4/attempt_1/1/error.json",
]


def test_the_rendezvous_result_gives_the_node_s_offset_to_its_local_ranks(tmp_path):
    analysis = analyze_files(tmp_path, {"output.log": AGENT_RESTART})
    failed = analysis.verdict.finding
    assert (failed.kind, failed.ranks) == ("rank_exception", [2])
    assert "Rank 2 exited with code 1" in failed.summary


# kubeflow/website#4186, verbatim: a Kubeflow TrainJob's node-1 pod, whose only line is its store
# client reading end-of-file from node-0's store (the C++ frames flattened onto the line)
STORE_CLOSED = "[W822 03:54:49.636977195 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=15, addr=[wcde03d70a73-node-0-1.wcde03d70a73.kubeflow-user-example-com.svc.cluster.local]:60560, remote=[wcde03d70a73-node-0-0.wcde03d70a73.kubeflow-user-example-com.svc.cluster.local]:29500): failed to recv, got 0 bytes Exception raised from recvBytes at /pytorch/torch/csrc/distributed/c10d/Utils.hpp:678 (most recent call first): frame #0: c10::Error::Error(c10::SourceLocation, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >) + 0x98 (0x7f0ec5b785e8 in /opt/conda/lib/python3.11/site-packages/torch/lib/libc10.so) frame #1: <unknown function> + 0x5ba8bfe (0x7f0eaa0afbfe in /opt/conda/lib/python3.11/site-packages/torch/lib/libtorch_cpu.so)"


def test_the_store_closing_a_client_s_connection_is_read_with_its_endpoint():
    dropped = only(parsed_by("rendezvous", [STORE_CLOSED]))
    assert dropped["event"] == "store_dropped"
    assert dropped["peer"].endswith(
        "node-0-0.wcde03d70a73.kubeflow-user-example-com.svc.cluster.local]:29500"
    )
    assert dropped["exc_message"] == "failed to recv, got 0 bytes"


def test_a_job_whose_only_word_is_the_store_closing_never_formed(tmp_path):
    finding = analyze_files(tmp_path, {"node-1.log": [STORE_CLOSED]}).verdict.finding
    assert (finding.kind, finding.ranks) == ("missing_rank", [])
    assert (
        "lost its connection to the rendezvous store at [wcde03d70a73-node-0-0" in finding.summary
    )


def test_the_store_closing_after_a_rank_failed_is_that_failure_s_teardown(tmp_path):
    # vllm-project/vllm#19483, verbatim: rank 0's CUDA error ended the server; the others' store
    # clients then read end-of-file (their own line; the traceback shortened to its end)
    lines = [
        "[rank0]: RuntimeError: CUDA error: an illegal memory access was encountered",
        "[rank2]:[W611 01:51:09.369133081 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=86, addr=[localhost]:37972, remote=[localhost]:59835): failed to recv, got 0 bytes",
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    assert (analysis.verdict.finding.kind, analysis.verdict.ranks) == ("rank_exception", [0])
    assert "missing_rank" not in [item.kind for item in analysis.findings]


# sgl-project/sglang#20859, verbatim: the store's host gone under a running TP=16 job
STORE_RESET = "[rank12]:[W318 10:00:41.915284135 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=135, addr=[sglang-0-1.sglang.default.svc.transwarp.local]:48750, remote=[sglang-0.default.pod.transwarp.local]:20000): Connection reset by peer"
DUMP_FLAG = '[rank8]:[W318 10:00:41.929037914 ProcessGroupNCCL.cpp:1771] [PG ID 0 PG GUID 0 Rank 8] Failed to check the "should dump" flag on TCPStore, (maybe TCPStore server has shut down too early), with error: Connection reset by peer'


def test_a_store_reset_and_an_unread_dump_flag_are_the_store_dropped():
    rows = parsed_by("rendezvous", [STORE_RESET, DUMP_FLAG]).sort("line").to_dicts()
    assert [(row["event"], row["rank"]) for row in rows] == [
        ("store_dropped", 12),
        ("store_dropped", 8),
    ]
    assert rows[0]["peer"] == "[sglang-0.default.pod.transwarp.local]:20000"
    assert {row["exc_message"] for row in rows} == {"Connection reset by peer"}


def test_a_watchdog_that_looked_for_a_dump_says_the_job_had_formed(tmp_path):
    # without it, the store's reset alone reads as a start-up that never formed
    analysis = analyze_files(tmp_path, {"sglang.log": [STORE_RESET, DUMP_FLAG]})
    assert analysis.verdict is None
    alone = analyze_files(tmp_path / "alone", {"sglang.log": [STORE_RESET]}).verdict
    assert alone.headline.endswith("the job never started")


# ymcui/Chinese-LLaMA-Alpaca-2#274, verbatim: the two nodes' agents, each with an id of its own
GENERATED = "WARNING:torch.distributed.launcher.api:config has no run_id, generated a random run_id: 304504801270300669882724678499925037384"
SHUTDOWN_FAILED = "WARNING:torch.distributed.elastic.rendezvous.dynamic_rendezvous:The node '38049eef641b_3140_0' has failed to shutdown the rendezvous '304504801270300669882724678499925037384' due to an error of type RendezvousConnectionError."


def test_the_run_id_a_node_s_agent_joins_is_read_with_the_node_s_name():
    rows = parsed_by("rendezvous", [GENERATED, SHUTDOWN_FAILED]).sort("line").to_dicts()
    assert [row["event"] for row in rows] == ["rendezvous_run", "rendezvous_run"]
    assert [json.loads(row["extra"]) for row in rows] == [
        {"run_id": "304504801270300669882724678499925037384", "generated": True},
        {"run_id": "304504801270300669882724678499925037384", "generated": False},
    ]
    assert (rows[1]["host"], rows[1]["pid"]) == ("38049eef641b", 3140)
    assert (rows[1]["severity"], rows[1]["exc_type"]) == ("warning", "RendezvousConnectionError")


# pytorch/pytorch#74824, verbatim (quoted in a README's troubleshooting)
UNRESOLVED_NAME = "[W socket.cpp:601] [c10d] The IPv6 network addresses of (ece-a58489.austin.utexas.edu, 44685) cannot be retrieved (gai error: -2 - Name or service not known)."
# verl-project/verl#2550, verbatim: a Ray worker's, the store's IPv6 address still in brackets
UNRESOLVED_BRACKETS = "(4l0bidWorkerDict_0:13 WorkerDict pid=207005, ip=[2605:340:cd51:4900:73e8:12cb:cfe2:1540]) [W715 20:00:39.994813154 socket.cpp:752] [c10d] The IPv6 network addresses of ([2605:340:cd51:4900:73e8:12cb:cfe2:1540], 59699) cannot be retrieved (gai error: -2 - Name or service not known)."


def test_a_store_host_that_does_not_resolve_is_a_store_out_of_reach():
    rows = parsed_by("rendezvous", [UNRESOLVED_NAME, UNRESOLVED_BRACKETS]).sort("line").to_dicts()
    assert [(row["event"], row["error_code"]) for row in rows] == [
        ("store_unreachable", "Name or service not known"),
        ("store_unreachable", "Name or service not known"),
    ]
    # the address as printed: the brackets are the fault in the second
    assert [row["peer"] for row in rows] == [
        "(ece-a58489.austin.utexas.edu, 44685)",
        "([2605:340:cd51:4900:73e8:12cb:cfe2:1540], 59699)",
    ]


# pytorch/pytorch#69197, verbatim (the start of the traceback every node's agent printed):
# torch 1.x's client gave up connecting to the c10d rendezvous store
STORE_CONNECT_TIMED_OUT = [
    "Traceback (most recent call last):",
    '  File "/home/ubuntu/miniconda3/envs/py39/lib/python3.9/site-packages/torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py", line 155, in _create_tcp_store',
    "    store = TCPStore(",
    "RuntimeError: connect() timed out. Original timeout was 60000 ms.",
]


def test_a_store_connection_that_timed_out_is_a_store_not_reached(tmp_path):
    (failed,) = (
        parsed_by("rendezvous", STORE_CONNECT_TIMED_OUT)
        .filter(event="store_unreachable")
        .iter_rows(named=True)
    )
    assert failed["exc_message"] == "connect() timed out"
    verdict = analyze_files(tmp_path, {"console.log": STORE_CONNECT_TIMED_OUT}).verdict
    assert verdict.finding.kind == "missing_rank"
    assert "could not reach the rendezvous store" in verdict.finding.summary
