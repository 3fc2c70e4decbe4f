from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from bench.nccl_job import JobPlan, write_job
from logforensics.api import analyze
from logforensics.i18n import translate, translate_headline
from tests.builders import analyze_files, finding, kinds, marks, parse, parsed_by
from tests.parsers.test_gloo import APPLIO_79, AWS_DO_EKS_50, AWS_DO_EKS_51
from tests.parsers.test_traceback import NCCL_1996, PIPEDREAM_76, TRLX_536
from tests.rules.test_duplicate_device import init_line
from tests.test_i18n import english_runs

NCCL_DATA = Path(__file__).resolve().parent.parent / "data" / "nccl"


def nccl_errors(analysis, role: str | None = None):
    return [
        f
        for f in analysis.findings
        if f.kind == "nccl_error" and f.severity == "error" and role in (None, f.role)
    ]


# --- field samples ------------------------------------------------------------------------


def test_a_broken_pipe_is_the_first_error_of_rank_9():
    case = NCCL_DATA / "nccl-795-remote-error-broken-pipe"
    (wanted,) = json.loads((case / "truth.json").read_text())["findings"]
    error = finding(analyze(case), "nccl_error")
    assert set(wanted["ranks"]) <= set(error.ranks) and error.ranks == [9]
    assert error.evidence[0].text == wanted["evidence"]
    assert error.role == "root_cause"
    assert error.details["peer"] == "10.200.84.247<58355>"
    assert error.details["class"] == "peer"  # a report that the peer went away
    assert error.confidence == "medium"
    assert error.evidence_total == 3  # both socket WARNs and the proxy WARN


def test_the_invalid_usage_errors_of_a_duplicate_gpu_are_its_symptoms():
    case = NCCL_DATA / "megatron-661-duplicate-gpu-barrier"
    wanted = [f for f in json.loads((case / "truth.json").read_text())["findings"]]
    analysis = analyze(case)
    (error,) = nccl_errors(analysis)
    truth = next(item for item in wanted if item["kind"] == "nccl_error")
    assert any(truth["evidence"] in e.text for e in error.evidence)
    assert error.role == "symptom" and "share a GPU" in error.summary
    assert analysis.verdict.finding.kind == "duplicate_device"


def test_a_healthy_nccl_init_gives_no_nccl_error():
    analysis = analyze(NCCL_DATA / "pl-19487-nemo-multi-seq-timeout")
    assert "nccl_error" not in kinds(analysis)
    assert analysis.unrecognised_lines == 0


# --- which error came first ----------------------------------------------------------------


def world(hosts: list[str]) -> dict[str, list[str]]:
    """One file per process with its world init record (rank = position in `hosts`)."""
    return {
        f"nccl.{host}.{100 + rank}.log": [init_line(host, 100 + rank, rank, len(hosts), 0, "18000")]
        for rank, host in enumerate(hosts)
    }


def test_an_ib_failure_comes_before_the_peers_that_lost_it(tmp_path):
    files = world(["node-a", "node-b", "node-c"])
    # the peers' WARNs are printed before (and even stamped before) the failing link's own
    files["nccl.node-a.100.log"] += [
        "",
        "[2026-11-30 10:00:03] node-a:100:900 [0] misc/socket.cc:50 NCCL WARN socketProgress: Connection closed by remote peer node-b<43109>",
    ]
    files["nccl.node-b.101.log"] += [
        "",
        "[2026-11-30 10:00:05] node-b:101:901 [0] transport/net_ib.cc:2358 NCCL WARN NET/IB: Got completion from peer 10.0.0.3<43109> with status=12 opcode=129 len=0 vendor err 129 (Recv) hca mlx5_0",
        "node-b:101:901 [0] NCCL INFO transport/net_ib.cc:2381 -> 6",
    ]
    files["nccl.node-c.102.log"] += [
        "",
        "[2026-11-30 10:00:06] node-c:102:902 [0] misc/socket.cc:50 NCCL WARN socketProgress: Connection closed by remote peer node-b<43109>",
    ]
    analysis = analyze_files(tmp_path, files)
    (root,) = nccl_errors(analysis, "root_cause")
    assert root.ranks == [1] and root.details["class"] == "infiniband"
    assert root.details["peer"] == "10.0.0.3<43109>"
    assert "InfiniBand" in root.fix
    (cascade,) = nccl_errors(analysis, "symptom")
    assert cascade.ranks == [0, 2] and "cascade after rank 1" in cascade.summary
    assert analysis.verdict.finding is root


def test_the_earliest_printed_time_wins_among_failures(tmp_path):
    files = world(["node-a", "node-b"])
    files["nccl.node-a.100.log"] += [
        "[2026-11-30 10:00:09] node-a:100:900 [0] enqueue.cc:58 NCCL WARN Cuda failure 'an illegal memory access was encountered'"
    ]
    files["nccl.node-b.101.log"] += [
        "[2026-11-30 10:00:04] node-b:101:901 [0] enqueue.cc:58 NCCL WARN Cuda failure 'an illegal memory access was encountered'"
    ]
    (root,) = nccl_errors(analyze_files(tmp_path, files), "root_cause")
    assert root.ranks == [1] and root.details["class"] == "cuda"
    assert root.confidence == "high"


def test_without_times_a_lone_peer_report_is_a_medium_confidence_cause(tmp_path):
    files = world(["node-a", "node-b"])
    files["nccl.node-b.101.log"] += [
        "node-b:101:901 [0] misc/socket.cc:518 NCCL WARN Net : Call to recv from 10.0.0.1<58355> failed : Broken pipe"
    ]
    analysis = analyze_files(tmp_path, files)
    (root,) = nccl_errors(analysis)
    assert (root.ranks, root.role, root.confidence) == ([1], "root_cause", "medium")
    assert "peer went away" in root.summary


def test_an_error_is_placed_after_its_rank_s_last_stage_mark(tmp_path):
    files = world(["node-a", "node-b"])
    for rank, host in enumerate(["node-a", "node-b"]):
        stop = (3, "after_backward") if rank == 1 else None
        files[f"nccl.{host}.{100 + rank}.log"] += marks(rank, range(5), stop_after=stop)
    files["nccl.node-b.101.log"].append(
        "node-b:101:901 [0] enqueue.cc:58 NCCL WARN Cuda failure 'an illegal memory access was encountered'"
    )
    (root,) = nccl_errors(analyze_files(tmp_path, files), "root_cause")
    assert root.ranks == [1] and (root.step, root.stage) == (3, "after_backward")
    assert root.order is not None


def test_pytorch_s_wrapper_alone_points_to_nccl_debug(tmp_path):
    files = {
        "rank3.log": [
            "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1333, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1",
        ]
    }
    (root,) = nccl_errors(analyze_files(tmp_path, files))
    assert root.ranks == [3] and "NCCL_DEBUG=INFO" in root.fix
    assert root.details["error_code"] == "unhandled system error"


# --- NCCL versions --------------------------------------------------------------------------


def test_different_nccl_versions_are_a_warning(tmp_path):
    files = world(["node-a", "node-b"])
    files["nccl.node-a.100.log"].append("node-a:100:100 [0] NCCL INFO NCCL version 2.18.3+cuda12.2")
    files["nccl.node-b.101.log"].append("node-b:101:101 [0] NCCL INFO NCCL version 2.19.3+cuda12.2")
    versions = finding(analyze_files(tmp_path, files), "nccl_error")
    assert (versions.severity, versions.role) == ("warning", "context")
    assert "2.18.3 on rank 0" in versions.summary and "2.19.3 on rank 1" in versions.summary


# NVIDIA/nccl#1267, verbatim (each node's first lines): one node loads NCCL 2.14.3 with the
# FastSocket plugin, another 2.19.3; the posted logs end during init, with no error in them
MIXED_AT_INIT = {
    "node1.log": [
        "instance-8g-96c-1:525765:525765 [0] NCCL INFO Bootstrap : Using ens7:10.128.0.30<0>",
        "instance-8g-96c-1:525765:525765 [0] NCCL INFO NET/Plugin: Failed to find ncclNetPlugin_v6 symbol.",
        "instance-8g-96c-1:525765:525765 [0] NCCL INFO NET/Plugin: Loaded net plugin FastSocket (v4)",
        "instance-8g-96c-1:525765:525765 [0] NCCL INFO NET/Plugin: Failed to find ncclCollNetPlugin_v6 symbol.",
        "instance-8g-96c-1:525765:525765 [0] NCCL INFO NET/Plugin: Failed to find ncclCollNetPlugin symbol (v4 or v5).",
        "instance-8g-96c-1:525765:525765 [0] NCCL INFO cudaDriverVersion 12000",
        "NCCL version 2.14.3+cuda11.7",
    ],
    "node2.log": [
        "instance-8g-96c-2:525781:525781 [0] NCCL INFO Bootstrap : Using ens7:10.128.0.31<0>",
        "instance-8g-96c-2:525781:525781 [0] NCCL INFO NET/Plugin: Failed to find ncclNetPlugin_v7 symbol.",
        "instance-8g-96c-2:525781:525781 [0] NCCL INFO NET/Plugin: Failed to find ncclNetPlugin symbol (>= v5). ncclNetPlugin symbols v4 and lower are not supported.",
        "instance-8g-96c-2:525781:525781 [0] NCCL INFO cudaDriverVersion 12000",
        "NCCL version 2.19.3+cuda12.3",
        "instance-8g-96c-2:525781:525957 [0] NCCL INFO NET/IB : No device found.",
        "instance-8g-96c-2:525781:525957 [0] NCCL INFO NET/Socket : Using [0]ens7:10.128.0.31<0>",
        "instance-8g-96c-2:525781:525957 [0] NCCL INFO Using non-device net plugin version 0",
        "instance-8g-96c-2:525781:525957 [0] NCCL INFO Using network Socket",
        "instance-8g-96c-2:525781:525957 [0] NCCL INFO comm 0x55f90cbfd740 rank 0 nranks 1 cudaDev 0 nvmlDev 0 busId 30 commId 0x795b968dc454cfee - Init START",
    ],
}


def test_nccl_releases_that_differ_are_the_cause_when_nothing_else_failed(tmp_path):
    verdict = analyze_files(tmp_path, MIXED_AT_INIT).verdict
    assert (verdict.finding.kind, verdict.finding.confidence) == ("nccl_error", "low")
    assert verdict.headline == "The processes run different NCCL versions (2.14.3 and 2.19.3)"


def test_mixed_releases_past_init_stay_context(tmp_path):
    # the same nodes, one of whose communicators then reports its init complete
    files = {name: list(lines) for name, lines in MIXED_AT_INIT.items()}
    started = next(line for line in files["node2.log"] if line.endswith("Init START"))
    files["node2.log"].append(started.replace("Init START", "Init COMPLETE"))
    versions = finding(analyze_files(tmp_path, files), "nccl_error")
    assert (versions.severity, versions.role) == ("warning", "context")


# NVIDIA/nccl#1634, verbatim (the two lines the thread quotes): a two-node nccl-tests run that
# hangs with no error; one node finds no network plugin, the other loads HPC-X's
PLUGIN_ON_ONE_NODE = [
    "HGX-H100-11:18226:18274 [5] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.",
    "HGX-H100-04:589474:589541 [0] NCCL INFO Plugin Path : /opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so",
]


def test_nodes_whose_nccl_set_up_the_network_differently_are_the_cause_when_nothing_failed(
    tmp_path,
):
    verdict = analyze_files(tmp_path, {"console.log": PLUGIN_ON_ONE_NODE}).verdict
    assert (verdict.finding.kind, verdict.finding.confidence) == ("nccl_error", "low")
    assert verdict.ranks == []
    assert verdict.headline == "The nodes set up NCCL's network differently"
    summary = verdict.finding.summary
    assert "NCCL's internal network plugin on HGX-H100-11" in summary
    assert "`/opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so` on HGX-H100-04" in summary
    assert [e.line for e in verdict.finding.evidence] == [1, 2]
    assert "NCCL_IB_DISABLE=1" in verdict.finding.fix
    assert not english_runs(translate(summary, "zh"))


def test_transports_apart_are_read_from_the_network_each_node_uses(tmp_path):
    # the line of MIXED_AT_INIT's second node, and the same on a node with InfiniBand
    socket = "instance-8g-96c-2:525781:525957 [0] NCCL INFO Using network Socket"
    ib = "instance-8g-96c-1:525765:525957 [0] NCCL INFO Using network IB"
    networks = finding(analyze_files(tmp_path, {"console.log": [socket, ib]}), "nccl_error")
    assert "the IB transport on instance-8g-96c-1" in networks.summary
    assert "the Socket transport on instance-8g-96c-2" in networks.summary
    # every node on the same one: nothing to say
    same = analyze_files(tmp_path / "same", {"console.log": [socket, socket.replace("-2:", "-1:")]})
    assert "nccl_error" not in kinds(same)


def test_a_network_difference_beside_a_failure_is_context(tmp_path):
    # the nodes' lines beside a broken connection's WARN (formats.md §3, verbatim)
    lines = [
        *PLUGIN_ON_ONE_NODE,
        "a100-st-p4d24xlarge-22:183006:183220 [1] misc/socket.cc:518 NCCL WARN Net : Call to recv from 10.200.84.247<58355> failed : Broken pipe",
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    networks = next(f for f in analysis.findings if f.details.get("networks"))
    assert (networks.severity, networks.role) == ("warning", "context")


def test_one_version_printed_two_ways_is_consistent(tmp_path):
    files = world(["node-a", "node-b"])
    files["nccl.node-a.100.log"].append("node-a:100:100 [0] NCCL INFO NCCL version 2.18.3+cuda12.2")
    files["rank1.log"] = [
        "torch.distributed.DistBackendError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1197, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.3"
    ]
    warnings = [f for f in analyze_files(tmp_path, files).findings if f.severity == "warning"]
    assert not [f for f in warnings if f.kind == "nccl_error"]


# --- a synthetic 64-rank job (the 1,024-rank run is bench/bench_nccl.py) -------------------


@pytest.fixture(scope="module")
def ib_job(tmp_path_factory):
    root = tmp_path_factory.mktemp("ib_job")
    written = write_job(root, JobPlan(nodes=8, channels=8, duplicate=None, ib_failure=43))
    return written, analyze(root)


def test_synthetic_job_names_the_planted_ib_failure(ib_job):
    written, analysis = ib_job
    (root,) = nccl_errors(analysis, "root_cause")
    assert root.ranks == [written.ib_rank] == [43]
    assert root.details["peer"] == written.ib_peer
    assert root.details["host"] == "gpu-h100-005.pod-a.example.net"
    assert analysis.verdict.finding is root


def test_synthetic_job_cascade_is_every_other_rank(ib_job):
    written, analysis = ib_job
    (cascade,) = nccl_errors(analysis, "symptom")
    assert cascade.ranks == [r for r in range(64) if r != written.ib_rank]
    assert len(cascade.evidence) == 20 and cascade.evidence_total == 63


def test_synthetic_job_is_read_in_full(ib_job):
    written, analysis = ib_job
    assert analysis.job.ranks_seen == tuple(range(64))
    assert analysis.unrecognised_lines == 0
    assert analysis.lines == written.lines
    # ring, tree and connection lines are counted, not kept
    assert analysis.job.events.height < written.lines // 5


def test_synthetic_job_with_both_faults(tmp_path):
    written = write_job(tmp_path, JobPlan(nodes=8, channels=4, duplicate=(2, 2, 5), ib_failure=37))
    analysis = analyze(tmp_path)
    assert analysis.verdict.finding.kind == "duplicate_device"
    assert analysis.verdict.finding.ranks == written.duplicate_ranks
    ib = [f for f in nccl_errors(analysis) if f.details.get("class") == "infiniband"]
    assert [f.ranks for f in ib] == [[37]]


# --- the same error on several ranks at once ------------------------------------------------


def test_the_same_cuda_failure_on_several_processes_is_one_common_cause(tmp_path):
    # vllm-project/vllm#6732 (NCCL_DEBUG=INFO of an 8-GPU node), verbatim: four processes
    # print the same CUDA failure from NVLS setup, three more only its unwinding through the same
    # source file (`transport/nvls.cc:328 -> 1`), and none reports a lost peer
    lines = [
        "h100-kickoff-llama-70b-chat-20230328-bcf75c4f6-gn6nd:843:843 [5] transport/nvls.cc:157 NCCL WARN Cuda failure 1 'invalid argument'",
        "h100-kickoff-llama-70b-chat-20230328-bcf75c4f6-gn6nd:774:774 [0] NCCL INFO transport/nvls.cc:328 -> 1",
        "",
        "h100-kickoff-llama-70b-chat-20230328-bcf75c4f6-gn6nd:842:842 [4] transport/nvls.cc:157 NCCL WARN Cuda failure 1 'invalid argument'",
        "h100-kickoff-llama-70b-chat-20230328-bcf75c4f6-gn6nd:839:839 [1] NCCL INFO transport/nvls.cc:328 -> 1",
        "",
        "h100-kickoff-llama-70b-chat-20230328-bcf75c4f6-gn6nd:840:840 [2] transport/nvls.cc:157 NCCL WARN Cuda failure 1 'invalid argument'",
        "h100-kickoff-llama-70b-chat-20230328-bcf75c4f6-gn6nd:844:844 [6] NCCL INFO transport/nvls.cc:328 -> 1",
        "",
        "h100-kickoff-llama-70b-chat-20230328-bcf75c4f6-gn6nd:841:841 [3] transport/nvls.cc:157 NCCL WARN Cuda failure 1 'invalid argument'",
    ]
    analysis = analyze_files(tmp_path, {"vllm.log": lines})
    (error,) = nccl_errors(analysis)
    assert error.details["common_mode"] is True and error.details["processes"] == 7
    assert "`Cuda failure 1 'invalid argument'`" in error.summary
    assert "same NCCL error" in error.summary and "not one rank failing first" in error.summary
    assert analysis.verdict.finding is error  # one finding, no root-and-cascade split


def test_ranks_that_hit_the_same_error_at_once_are_named_but_not_blamed(tmp_path):
    # NVIDIA/nccl#957 (mpirun --tag-output --timestamp-output), verbatim: ranks 0 and 3 hit
    # the same CUDA failure in the same second (a bug of NCCL 2.18.3)
    lines = [
        "Fri Aug 11 12:31:45 2023[1,0]<stdout>:tomte401:1850301:1881341 [0] transport.cc:154 NCCL WARN Cuda failure 'invalid argument'",
        "Fri Aug 11 12:31:45 2023[1,3]<stdout>:tomte401:1850304:1881110 [3] transport.cc:154 NCCL WARN Cuda failure 'invalid argument'",
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    (error,) = nccl_errors(analysis)
    assert error.details["common_mode"] is True and error.ranks == [0, 3]
    assert analysis.verdict.finding is error and analysis.verdict.ranks == []
    assert error.details["at_once"]  # the stamps say the same second


def test_two_hosts_failing_alike_to_their_own_peers_share_one_cause(tmp_path):
    # skypilot-org/skypilot#4448 (SkyPilot console, no time stamps), verbatim: each node fails to
    # connect to its own peer's link-local address; the one pasted first did not fail first
    lines = [
        "(head, rank=0, pid=5634) [nccl-e9ef-7d4f-0:3]:nccl-e9ef-7d4f-0:11172:11249 [3] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to fe80::20d:3aff:fef7:74b3%enP7906s1<51577> failed : Software caused connection abort",
        "(head, rank=0, pid=5634) [nccl-e9ef-7d4f-0:3]:nccl-e9ef-7d4f-0:11172:11249 [3] NCCL INFO misc/socket.cc:567 -> 2",
        "(worker1, rank=1, pid=4888, ip=10.60.0.4) [nccl-e9ef-7d4f-1:3]:nccl-e9ef-7d4f-1:10479:10520 [3] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to fe80::20d:3aff:fef9:4aef%enP43105s1<57649> failed : Software caused connection abort",
        "(worker1, rank=1, pid=4888, ip=10.60.0.4) [nccl-e9ef-7d4f-1:3]:nccl-e9ef-7d4f-1:10479:10520 [3] NCCL INFO misc/socket.cc:567 -> 2",
    ]
    analysis = analyze_files(tmp_path, {"sky_launch_console.log": lines})
    (error,) = nccl_errors(analysis)
    assert error.details["common_mode"] is True and error.details["processes"] == 2
    assert analysis.verdict.finding is error and analysis.verdict.ranks == []
    assert not error.details["at_once"]  # nothing in the logs says when
    assert "`fe80::20d:3aff:fef7:74b3%enP7906s1`, is link-local" in error.summary
    assert "NCCL_SOCKET_IFNAME" in error.fix


def test_a_lone_fabric_error_names_the_plugin_and_blames_no_side_of_the_link(tmp_path):
    # aws/aws-ofi-nccl#156, verbatim (nccl-tests under mpirun): the EC2 security group did not
    # allow EFA traffic; one process's error, its peer not in the logs
    lines = [
        "[1,13]<stdout>:nccl-tests-worker-1:35:89 [5] ofi_process_cq:1039 NCCL WARN NET/OFI Request 0x7fbb944701b8 completed with error. RC: 20. Error: unknown error. Completed length: 0, Request: { buffer_index: 255, dev: 1, size: 0, state: CREATED, direction: SEND }",
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    error = analysis.verdict.finding
    assert (error.kind, error.ranks, error.details["class"]) == ("nccl_error", [13], "fabric")
    assert analysis.verdict.ranks == []
    assert "security group" in error.fix


def test_a_peer_whose_queue_pair_is_gone_is_where_the_cause_lies(tmp_path):
    # awslabs/awsome-distributed-ai#312, verbatim: the receiver's process had been OOM-killed
    lines = [
        "[1,2]<stdout>:test-nccl-worker-0:199:263 [2] process_err_completion:1562 NCCL WARN NET/OFI Request 0x7f08c0001d30 completed with error. RC: 5. Error: Invalid receiver queue pair number (QPN) My EFA addr: fi_addr_efa://[fe80::30:43ff:fe60:456b]:0:657145598 My host id: i-00ee91ea93e985ee0 Peer EFA addr: fi_addr_efa://[fe80::ed:61ff:fe1d:a3b3]:0:229342137 Peer host id: i-08d8a345a75ab52a0. Completed length: 0, Request: { dev: 2, size: 0, state: CREATED, type: SEND_CTRL }",
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    error = analysis.verdict.finding
    assert (error.details["class"], error.details["peer"]) == ("peer", "i-08d8a345a75ab52a0")
    assert analysis.verdict.ranks == []  # the rank that says so is not the one that died
    assert "the peer's process was gone" in error.summary
    assert "link-local" not in error.summary  # EFA's own addresses are not a socket's


def test_a_warn_without_identity_that_a_rank_s_error_quotes_is_that_rank_s_error(tmp_path):
    # nanochat's two-node notes (NCCL 2.28.9), verbatim: the WARN's identity is cut off, and
    # rank 13's DistBackendError quotes it as its `Last error:`; nothing orders the two
    files = {
        "nccl_lines.log": [
            "NCCL WARN Call to ibv_create_cq failed with error Cannot allocate memory",
            "NCCL WARN [Service thread] Error encountered progressing operation=Connect, res=3, closing connection",
        ],
        "rank13.log": [
            "[rank13]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3780, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.28.9",
            "[rank13]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.",
            "[rank13]: Last error:",
            "[rank13]: Call to ibv_create_cq failed with error Cannot allocate memory",
        ],
    }
    analysis = analyze_files(tmp_path, files)
    (error,) = nccl_errors(analysis)  # one failure, no cascade after it
    assert error.ranks == [13] and error.details["subsystem"] == "infiniband"
    assert error.details["class"] == "system" and "ulimit -l" in error.fix
    assert analysis.verdict.ranks == []  # one process's failed call: no side of a link blamed


def test_a_failed_nvls_set_up_points_at_the_fabric_manager(tmp_path):
    # NVIDIA/nccl#1488, verbatim: NVLS set-up failed after nvidia-fabricmanager was restarted
    lines = [
        "node23:12098:12141 [2] transport/nvls.cc:244 NCCL WARN Cuda failure 1 'invalid argument'",
        "node23:12098:12141 [2] NCCL INFO transport/nvls.cc:394 -> 1",
        "node23:12098:12141 [2] NCCL INFO init.cc:1196 -> 1",
    ]
    error = analyze_files(tmp_path, {"node23.log": lines}).verdict.finding
    assert error.details["subsystem"] == "nvls"
    assert "nvidia-fabricmanager" in error.fix and "NCCL_NVLS_ENABLE=0" in error.fix


# --- what NCCL's return-code chain says -----------------------------------------------------


def test_a_transfer_truncated_between_peers_is_invalid_usage_of_the_ranks(tmp_path):
    # NVIDIA/nccl#626: the maintainer named two causes, collectives called with different
    # sizes or different protocols on the two sides; no return-code chain was posted
    lines = [
        "transport/net_socket.cc:424 NCCL WARN NET/Socket : peer 192.168.161.30<59210> message truncated :",
        "receiving 1048576 bytes instead of 65536",
    ]
    verdict = analyze_files(tmp_path, {"train.log": lines}).verdict
    error = verdict.finding
    assert (error.kind, error.details["class"]) == ("nccl_error", "usage")
    assert "different sizes" in error.fix and "NCCL_PROTO" in error.fix
    assert verdict.headline == (
        "NCCL on a process received a message of another size than it expected; the ranks' "
        "calls differ"
    )
    assert english_runs(translate_headline(verdict.headline, "zh")) == []


def test_a_bootstrap_warn_with_its_chain_is_an_internal_error_of_the_bootstrap(tmp_path):
    # NVIDIA/nccl#1176 (srun --label; the job's other node prints torch's warnings as `3: `)
    lines = [
        "0: compute-st-p4de24xlarge-1:34639:36718 [5] bootstrap.cc:77 NCCL WARN Message truncated : received 256 bytes instead of 4",
        "0: compute-st-p4de24xlarge-1:34639:36718 [5] NCCL INFO bootstrap.cc:554 -> 3",
        "0: compute-st-p4de24xlarge-1:34639:36718 [5] NCCL INFO transport.cc:250 -> 3",
        "0: compute-st-p4de24xlarge-1:34639:36718 [5] NCCL INFO group.cc:110 -> 3",
        "0: compute-st-p4de24xlarge-1:34639:36718 [5] NCCL INFO group.cc:64 -> 3 [Async thread]",
        "0: compute-st-p4de24xlarge-1:34639:34639 [5] NCCL INFO group.cc:418 -> 3",
        "0: compute-st-p4de24xlarge-1:34639:34639 [5] NCCL INFO group.cc:95 -> 3",
    ]
    analysis = analyze_files(tmp_path, {"slurm.out": lines})
    (error,) = nccl_errors(analysis)
    assert error.role == "root_cause" and analysis.verdict.finding is error
    assert (error.details["class"], error.details["subsystem"]) == ("internal", "bootstrap")
    assert error.evidence[0].line == 1
    assert "internal error" in error.summary and "bootstrap" in error.summary
    assert "same NCCL build" in error.fix


def test_invalid_usage_on_an_infiniband_link_is_told_as_a_mismatch(tmp_path):
    # NVIDIA/nccl#969 (pdsh host prefix)
    lines = [
        "10.10.23.10: so-ucloud-10-10-23-10:1307367:1307586 [0] transport/net_ib.cc:1038 NCCL WARN NET/IB : req 0/1 tag 0 peer 10.10.23.6<58683> collective mismatch error, local size 496640 remote size 65536",
        "10.10.23.10: so-ucloud-10-10-23-10:1307367:1307586 [0] NCCL INFO include/net.h:32 -> 5",
        "10.10.23.10: so-ucloud-10-10-23-10:1307367:1307586 [0] NCCL INFO transport/net.cc:890 -> 5",
        "10.10.23.10: so-ucloud-10-10-23-10:1307367:1307586 [0] NCCL INFO proxy.cc:520 -> 5",
        "10.10.23.10: so-ucloud-10-10-23-10:1307367:1307586 [0] NCCL INFO proxy.cc:684 -> 5 [Proxy Thread]",
    ]
    (error,) = nccl_errors(analyze_files(tmp_path, {"train.log": lines}))
    assert (error.details["class"], error.details["result"]) == ("usage", "5")
    assert error.details["peer"] == "10.10.23.6<58683>"
    assert "TORCH_DISTRIBUTED_DEBUG=DETAIL" in error.fix


def test_a_process_without_init_records_takes_its_rank_from_its_tree_line(tmp_path):
    # NVIDIA/nccl#380 (NCCL 2.7.8, node 1 of 2): the IB setup fails before `Init COMPLETE`,
    # so no init record names the process; its tree and channel lines say it is rank 0
    lines = [
        "spark01:2683:2780 [0] NCCL INFO Bootstrap : Using [0]ens192f1:10.150.178.134<0>",
        "spark01:2683:2780 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using internal implementation",
        "spark01:2683:2780 [0] NCCL INFO NET/IB : Using [0]mlx5_1:1/RoCE ; OOB ens192f1:10.150.178.134<0>",
        "spark01:2683:2780 [0] NCCL INFO Using network IB",
        "NCCL version 2.7.8+cuda11.0",
        "spark01:2683:2826 [0] NCCL INFO Channel 00/02 :    0   1",
        "spark01:2683:2826 [0] NCCL INFO Channel 01/02 :    0   1",
        "spark01:2683:2826 [0] NCCL INFO threadThresholds 8/8/64 | 16/8/64 | 8/8/64",
        "spark01:2683:2826 [0] NCCL INFO Trees [0] 1/-1/-1->0->-1|-1->0->1/-1/-1 [1] -1/-1/-1->0->1|1->0->-1/-1/-1",
        "spark01:2683:2826 [0] NCCL INFO Channel 00 : 1[3000] -> 0[3000] [receive] via NET/IB/0",
        "spark01:2683:2826 [0] NCCL INFO Channel 00 : 0[3000] -> 1[3000] [send] via NET/IB/0",
        "",
        "spark01:2683:2826 [0] misc/ibvwrap.cc:268 NCCL WARN Call to ibv_create_cq failed",
    ]
    analysis = analyze_files(tmp_path, {"node1.log": lines})
    (error,) = nccl_errors(analysis)
    assert error.ranks == [0] and error.evidence[0].rank == 0
    assert analysis.unrecognised_lines == 0


def test_a_process_in_two_communicators_takes_no_rank_from_topology(tmp_path):
    # Built from NVIDIA/nccl#226's NCCL 2.4 ring lines (the third gives the second process a
    # second ring rank, as a world and a sub-communicator would) and NVIDIA/nccl#795's WARN
    # text on both processes: the process with two ranks stays without one
    lines = [
        "ip-172-31-10-82:45236:45241 [0] NCCL INFO Ring 00 : 30 -> 28 [send] via NET/Socket/0",
        "ip-172-31-12-210:45305:45310 [0] NCCL INFO Ring 00 : 46 -> 44 [receive] via NET/Socket/0",
        "ip-172-31-12-210:45305:45310 [0] NCCL INFO Ring 00 : 44 -> 40 [receive] via NET/Socket/0",
        "ip-172-31-10-82:45236:45241 [0] misc/socket.cc:518 NCCL WARN Net : Call to recv from 10.0.0.1<58355> failed : Broken pipe",
        "ip-172-31-12-210:45305:45310 [0] misc/socket.cc:518 NCCL WARN Net : Call to recv from 10.0.0.1<58355> failed : Broken pipe",
    ]
    analysis = analyze_files(tmp_path, {"job.log": lines})
    ranks = {
        row["host"]: row["rank"]
        for row in analysis.job.events.filter(pl.col("event") == "nccl_error").iter_rows(named=True)
    }
    assert ranks == {"ip-172-31-10-82": 30, "ip-172-31-12-210": None}


# --- a rank started twice -------------------------------------------------------------------


def test_a_rank_that_checked_in_twice_is_blamed_at_set_up(tmp_path):
    # ROCm/rccl#876 (RCCL under NCCL_DEBUG=WARN)
    line = "/long_pathname_so_that_rpms_can_package_the_debug_info/src/extlibs/rccl/build/src/bootstrap.cpp:132 NCCL WARN Bootstrap Root : rank 1 of 2 ranks has already checked in"
    analysis = analyze_files(tmp_path, {"run.log": [line]})
    (error,) = nccl_errors(analysis)
    assert error.ranks == [1] and error.order == -1.0 and error.part == "explanation"
    assert "rank 1 of 2 twice" in error.summary and "started as rank 1" in error.summary
    assert "--node_rank" in error.fix
    assert analysis.verdict.finding is error and analysis.verdict.ranks == [1]


def test_ranks_past_the_world_size_are_the_launch_s_numbering_not_a_rank_s_fault(tmp_path):
    # jeffffffli/HybrIK#47 (verbatim): 8 processes on 8 GPUs, `--world-size 4`
    lines = [
        "ued37c44e4ea65b:6861:6861 [7] init.cc:981 NCCL WARN Invalid rank requested : 7/4",
        "ued37c44e4ea65b:6859:6859 [5] init.cc:981 NCCL WARN Invalid rank requested : 5/4",
        "ued37c44e4ea65b:6860:6860 [6] NCCL INFO Bootstrap : Using [0]enp1s0f0:10.49.66.196<0>",
        "ued37c44e4ea65b:6860:6860 [6] NCCL INFO NET/IB : No device found.",
        "",
        "ued37c44e4ea65b:6860:6860 [6] init.cc:981 NCCL WARN Invalid rank requested : 6/4",
        "ued37c44e4ea65b:6854:7877 [0] NCCL INFO Setting affinity for GPU 0 to 03,fffff000,003fffff",
    ]
    analysis = analyze_files(tmp_path, {"log.txt": lines})
    (error,) = nccl_errors(analysis)
    assert analysis.verdict.finding is error and error.part == "explanation"
    assert error.ranks == [] and error.blames_nobody
    assert "NCCL refused ranks 5-7 of a world of 4" in error.summary
    assert "ranks run from 0 to 3" in error.summary
    assert "nproc_per_node" in error.fix and "CUDA_VISIBLE_DEVICES" in error.fix
    assert [item.line for item in error.evidence] == [1, 2, 6]
    assert "more processes were started" in analysis.verdict.headline


def test_errors_of_communicators_being_closed_are_teardown_not_the_cause():
    # NVIDIA/nccl#1610: ranks 13-15 timed out (two threads on one communicator); the proxies'
    # `Failed to execute operation Close` WARNs that follow are NCCL closing up, not a cause
    analysis = analyze(NCCL_DATA / "nccl-1610-two-threads")
    assert analysis.verdict.finding.kind == "collective_timeout"
    teardown = finding(analysis, "nccl_error")
    assert teardown.role == "symptom" and teardown.severity == "warning"
    assert "Failed to execute operation Close" in teardown.summary
    assert "torn down" in teardown.summary


def test_the_collector_s_stamp_does_not_hide_the_global_rank():
    # NVIDIA/nccl#1610: ` 2025-02-18 12:54 [rank13]:[E218 ...` (a log collector's stamp first)
    analysis = analyze(NCCL_DATA / "nccl-1610-two-threads")
    assert set(analysis.job.events.get_column("rank").drop_nulls()) >= {13, 14, 15}
    timeout = finding(analysis, "collective_timeout")
    assert timeout.ranks == [13, 14, 15]
    # their sequence numbers belong to different groups (PG GUID 119, 112, 120): no laggard
    assert "lagged" not in timeout.summary


# NVIDIA/NeMo#13996, verbatim: the WARN as the issue quotes it, without NCCL's process identity;
# every multi-node run failed there until NCCL was upgraded
TOPOLOGY_WARN = [
    "All distributed processes registered. Starting with 32 processes",
    "graph/topo.h:230 NCCL WARN Could not find NET with id 0",
]


def test_a_warn_without_its_identity_is_read_and_its_topology_failure_named(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": TOPOLOGY_WARN})
    failed = finding(analysis, "nccl_error")
    assert "Could not find NET with id 0" in failed.summary
    assert "NCCL's own lines are not in the logs" not in failed.summary
    assert "NCCL_DEBUG_SUBSYS=INIT,GRAPH,NET" in failed.fix
    assert analysis.verdict.headline.startswith("NCCL could not map the devices of")


# EvolvingLMMs-Lab/open-r1-multimodal#7, verbatim: NCCL_SOCKET_IFNAME=eth0 named an interface
# the host did not have; PyTorch's wrapper quotes NCCL's last error
NO_INTERFACE = [
    "[rank0]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/"
    "c10d/ProcessGroupNCCL.cpp:2588, internal error - please report this issue to the NCCL "
    "developers, NCCL version 2.21.5",
    "[rank0]: ncclInternalError: Internal check failed.",
    "[rank0]: Last error:",
    "[rank0]: Bootstrap : no socket interface found",
]


def test_a_fault_of_the_hosts_set_up_blames_no_rank(tmp_path):
    analysis = analyze_files(tmp_path, {"rank0_console.log": NO_INTERFACE})
    failed = finding(analysis, "nccl_error")
    assert failed.details["class"] == "environment" and failed.blamed == []
    assert failed.fix.startswith("Name an interface the host has: `NCCL_SOCKET_IFNAME`")
    assert (
        analysis.verdict.headline == "NCCL found no network interface to use on the host of rank 0"
    )


# pytorch/torchtitan#853, verbatim (the CI container had 16 MB of /dev/shm; the reporter: raising
# it to 1 GB fixed it): PyTorch's wrapper quoting NCCL's last error, no rank on the lines
SHM_SEGMENT = [
    "  torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
    "NCCLUtils.hpp:268, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL "
    "version 2.21.5",
    "  ncclSystemError: System call (e.g. socket, malloc) or external library call failed or "
    "device error. ",
    "  Last error:",
    "  Error while creating shared memory segment /dev/shm/nccl-1YsMbG (size 7340384)",
]


def test_nccl_s_shared_memory_failing_says_so_with_the_shm_fix(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": SHM_SEGMENT})
    failed = analysis.verdict.finding
    assert (failed.kind, failed.details["host_part"], failed.blamed) == (
        "nccl_error",
        "shared_memory",
        [],
    )
    assert analysis.verdict.headline == (
        "NCCL could not get shared memory (/dev/shm) on the host of a process"
    )
    assert "host's shared memory (/dev/shm)" in failed.summary
    assert failed.fix.startswith("Give the node's shared memory room")
    assert "--shm-size" in failed.fix


# ai-dynamo/dynamo#1408, verbatim (vLLM TP=2 workers in a Kubernetes pod): both processes set up
# their rings, then rank 1 (pid 15016) alone cannot grow NCCL's segment in a full /dev/shm
SHM_FULL_ON_ONE = [
    "ucwlai-k8snode-12-123:15016:15016 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/IPC",
    "ucwlai-k8snode-12-123:15015:15015 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC",
    "ucwlai-k8snode-12-123:15016:15016 [1] NCCL INFO Connected all trees",
    "ucwlai-k8snode-12-123:15015:15015 [0] NCCL INFO Connected all trees",
    "Loading safetensors checkpoint shards:  50% Completed | 1/2 [00:00<00:00,  2.29it/s]",
    "",
    "[2025-06-06 09:52:01] ucwlai-k8snode-12-123:15016:15201 [1] misc/shmutils.cc:87 NCCL WARN "
    "Error: failed to extend /dev/shm/nccl-YrFC5V to 33030532 bytes, error: No space left on "
    "device (28)",
    "",
    "[2025-06-06 09:52:01] ucwlai-k8snode-12-123:15016:15201 [1] misc/shmutils.cc:129 NCCL WARN "
    "Error while creating shared memory segment /dev/shm/nccl-YrFC5V (size 33030528), error: No "
    "space left on device (28)",
]


def test_a_host_s_set_up_failing_one_process_while_another_set_up_names_that_rank(tmp_path):
    analysis = analyze_files(tmp_path, {"worker.log": SHM_FULL_ON_ONE})
    failed = analysis.verdict.finding
    assert (failed.kind, failed.details["class"], analysis.verdict.ranks) == (
        "nccl_error",
        "environment",
        [1],
    )
    assert "No space left on device (28)" in failed.summary
    assert "/dev/shm" in failed.fix
    assert analysis.verdict.headline == (
        "NCCL could not get shared memory (/dev/shm) on rank 1 (host ucwlai-k8snode-12-123)"
    )


def test_the_same_set_up_failure_on_every_process_seen_still_blames_none(tmp_path):
    both = SHM_FULL_ON_ONE + [
        line.replace(":15016:15201 [1]", ":15015:15202 [0]") for line in SHM_FULL_ON_ONE[6:]
    ]
    analysis = analyze_files(tmp_path, {"worker.log": both})
    assert analysis.verdict.finding.blamed == []
    assert analysis.verdict.headline == "Ranks 0 and 1 hit the same NCCL error at once"


# aws/aws-k8s-tester PR #524, verbatim (a passing 32-rank run's launcher log, as the PR kept
# it): the OFI plugin warns while the communicators are aborted at exit
OFI_CLOSE_AT_EXIT = [
    "[1,28]<stdout>:bert-training-worker-3:25:584 [4] NCCL INFO proxy.cc:996 -> 3",
    "[1,16]<stdout>:bert-training-worker-2:21:585 [0] NCCL INFO [Service thread] Connection closed by localRank 1",
    "[1,17]<stdout>:bert-training-worker-2:22:587 [1] NCCL INFO [Service thread] Connection closed by localRank 1",
    "[1,16]<stdout>:",
    "[1,16]<stdout>:bert-training-worker-2:21:585 [0] recv_close:3201 NCCL WARN NET/OFI Attempt to call recv_close with outstanding requests!",
    "[1,16]<stdout>:bert-training-worker-2:21:585 [0] NCCL INFO transport/net.cc:1015 -> 3",
    "[1,16]<stdout>:bert-training-worker-2:21:585 [0] NCCL INFO proxy.cc:984 -> 3",
    "[1,16]<stdout>:bert-training-worker-2:21:585 [0] NCCL INFO proxy.cc:996 -> 3",
    "[1,28]<stdout>:bert-training-worker-3:25:668 [0] NCCL INFO comm 0x55f18f7772c0 rank 28 nranks 32 cudaDev 4 busId 97000 - Abort COMPLETE",
    "[1,16]<stdout>:bert-training-worker-2:21:666 [0] NCCL INFO comm 0x5585418196c0 rank 16 nranks 32 cudaDev 0 busId 53000 - Abort COMPLETE",
    "[1,29]<stdout>:bert-training-worker-3:26:669 [0] NCCL INFO comm 0x55adc9df2440 rank 29 nranks 32 cudaDev 5 busId a8000 - Abort COMPLETE",
    "[1,17]<stdout>:bert-training-worker-2:22:663 [0] NCCL INFO comm 0x5598352d45c0 rank 17 nranks 32 cudaDev 1 busId 64000 - Abort",
    "Logs from Pod bert-training-launcher-ltgd5:",
    "COMPLETE",
]


def test_a_warning_of_the_network_plugin_closing_its_connections_is_teardown(tmp_path):
    analysis = analyze_files(tmp_path, {"launcher.log": OFI_CLOSE_AT_EXIT})
    assert analysis.verdict is None
    closing = finding(analysis, "nccl_error")
    assert closing.severity == "warning" and "while closing a communicator" in closing.summary


def test_the_other_errors_of_a_thread_that_failed_to_close_are_its_teardown(tmp_path):
    # deepseek-ai/DeepEP#41, verbatim: after every test had passed, the proxy's service thread
    # fails to accept, to receive, then to run a Close, as the processes exit
    lines = [
        "0bc8f5b83646:2374:2994 [0] proxy.cc:1458 NCCL WARN [Service thread] Accept failed Resource temporarily unavailable",
        "0bc8f5b83646:2374:2994 [0] NCCL INFO misc/socket.cc:826 -> 3",
        "",
        "0bc8f5b83646:2374:2994 [0] proxy.cc:1497 NCCL WARN [Service thread] Could not receive type from localRank 0, res=3, closed=0",
        "",
        "0bc8f5b83646:2374:2994 [0] proxy.cc:1521 NCCL WARN [Proxy Service 0] Failed to execute operation Close from rank 0, retcode 3",
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    assert analysis.verdict is None
    assert nccl_errors(analysis) == []
    assert "while closing a communicator" in finding(analysis, "nccl_error").summary


# NVIDIA/nccl#697, verbatim (the one process the paste shows): NCCL stripes a 2-rank link over
# eight socket interfaces, docker bridges included, and a network call fails; fixed by
# NCCL_SOCKET_IFNAME=bond0
ALL_INTERFACES = [
    "dgxa100:1050:1315 [0] NCCL INFO Channel 03/0 : 0[90000] -> 1[1000] [send] via NET/Socket/3",
    "dgxa100:1050:1315 [0] NCCL INFO Channel 04/0 : 0[90000] -> 1[1000] [send] via NET/Socket/4",
    "dgxa100:1050:1315 [0] NCCL INFO Channel 05/0 : 0[90000] -> 1[1000] [send] via NET/Socket/5",
    "dgxa100:1050:1315 [0] NCCL INFO Channel 06/0 : 0[90000] -> 1[1000] [send] via NET/Socket/6",
    "dgxa100:1050:1315 [0] NCCL INFO Channel 07/0 : 0[90000] -> 1[1000] [send] via NET/Socket/7",
    "dgxa100:1050:1315 [0] NCCL INFO Channel 08/0 : 0[90000] -> 1[1000] [send] via NET/Socket/0",
    "dgxa100:1050:1315 [0] NCCL INFO Channel 09/0 : 0[90000] -> 1[1000] [send] via NET/Socket/1",
    "dgxa100:1050:1315 [0] NCCL INFO Channel 10/0 : 0[90000] -> 1[1000] [send] via NET/Socket/2",
    "dgxa100:1050:1315 [0] NCCL INFO Channel 11/0 : 0[90000] -> 1[1000] [send] via NET/Socket/3",
    "dgxa100:1050:1315 [0] NCCL INFO Channel 12/0 : 0[90000] -> 1[1000] [send] via NET/Socket/4",
    "dgxa100:1050:1315 [0] NCCL INFO Channel 13/0 : 0[90000] -> 1[1000] [send] via NET/Socket/5",
    "dgxa100:1050:1315 [0] NCCL INFO Channel 14/0 : 0[90000] -> 1[1000] [send] via NET/Socket/6",
    "dgxa100:1050:1315 [0] NCCL INFO Channel 15/0 : 0[90000] -> 1[1000] [send] via NET/Socket/7",
    "dgxa100:1050:1316 [0] NCCL INFO include/net.h:25 -> 2",
    "dgxa100:1050:1316 [0] NCCL INFO transport/net.cc:515 -> 2",
]


def test_one_process_failed_network_call_blames_no_side_of_the_link(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": ALL_INTERFACES})
    error = analysis.verdict.finding
    assert (error.kind, error.ranks, error.details["class"]) == ("nccl_error", [0], "system")
    assert analysis.verdict.ranks == [] and error.details["subsystem"] == "network transport"
    assert error.fix.startswith("A network call inside NCCL failed while connecting")
    assert "NCCL_SOCKET_IFNAME" in error.fix


def test_a_return_code_chain_no_warn_announced_is_the_process_s_error(tmp_path):
    # NVIDIA/nccl#1000, verbatim (node 2, cut): bootstrap over IPoIB interfaces in different
    # subnets fails at INFO level, `-> 2` (ncclSystemError) up the chain and no WARN
    lines = [
        "dso-s1-r1-a100-03:2330:2658 [2] NCCL INFO misc/socket.cc:567 -> 2",
        "dso-s1-r1-a100-03:2330:2658 [2] NCCL INFO misc/socket.cc:618 -> 2",
        "dso-s1-r1-a100-03:2330:2658 [2] NCCL INFO bootstrap.cc:270 -> 2",
        "dso-s1-r1-a100-03:2334:2665 [6] NCCL INFO misc/socket.cc:567 -> 2",
    ]
    analysis = analyze_files(tmp_path, {"node2.log": lines})
    errors = nccl_errors(analysis)
    assert analysis.verdict.finding in errors and analysis.verdict.ranks == []
    assert "misc/socket.cc:567 -> 2" in analysis.verdict.finding.summary
    assert "NCCL_SOCKET_IFNAME" in analysis.verdict.finding.fix


POLYAXON_657 = Path(__file__).parents[1] / "data" / "threads" / "polyaxon_657_horovod_stall.log"


def test_a_one_frame_chain_nccl_went_on_from_is_no_error(tmp_path):
    # polyaxon/polyaxon#657 (tests/data/threads): each pod's topology probe of a virtual NIC
    # returns `include/net.h:24 -> 2` and its set-up goes on; minutes later Horovod's stall
    # inspector names rank 0 as the one that never submitted the allreduce
    analysis = analyze(POLYAXON_657)
    assert nccl_errors(analysis) == []
    assert analysis.verdict.finding.kind == "collective_timeout"  # (rank 0 only missing)
    assert analysis.verdict.ranks == [0]


def test_a_chain_after_its_process_s_warn_is_no_second_error(tmp_path):
    # NVIDIA/nccl#1176 (srun --label), verbatim: the WARN says it, the chain unwinds it
    lines = [
        "0: compute-st-p4de24xlarge-1:34639:36718 [5] bootstrap.cc:77 NCCL WARN Message truncated : received 256 bytes instead of 4",
        "0: compute-st-p4de24xlarge-1:34639:36718 [5] NCCL INFO bootstrap.cc:554 -> 3",
        "0: compute-st-p4de24xlarge-1:34639:36718 [5] NCCL INFO transport.cc:250 -> 3",
    ]
    analysis = analyze_files(tmp_path, {"slurm.out": lines})
    (error,) = nccl_errors(analysis)
    assert error.evidence[0].line == 1


# NVIDIA/nccl#1808, verbatim (cut): a log shipper's `<time> worker-9 >> ` before NCCL lines that
# lost their host; an HTTP request (`GET /met`) reached rank 80's NCCL port and its proxy hung
SHIPPED = [
    "2025-08-12 09:37:02.216313 worker-9 >> :168:1228 [2] NCCL INFO Connected all trees",
    "2025-08-12 09:37:02.259934 worker-9 >> :166:1233 [0] NCCL INFO Connected all trees",
    "2025-08-12 09:37:03.463948 worker-9 >> [2025-08-12 01:37:03] :166:1226 [0] misc/socket.cc:484 NCCL WARN socketFinalizeAccept: wrong magic 74656d2f20544547 != 7970663b906d70b9",
    "2025-08-12 09:37:14.267026 worker-9 >> :166:1835 [0] NCCL INFO Channel 00/0 : 80[0] -> 87[7] via P2P/CUMEM",
    "2025-08-12 09:37:14.28165 worker-9 >> :168:1836 [2] NCCL INFO Channel 03/0 : 82[2] -> 90[2] [send] via NET/IBext_v10/10/GDRDMA",
]


def test_a_foreign_connection_to_an_nccl_port_is_the_error_of_the_rank_it_reached(tmp_path):
    analysis = analyze_files(tmp_path, {"worker-9.log": SHIPPED})
    error = analysis.verdict.finding
    assert (error.kind, analysis.verdict.ranks) == ("nccl_error", [80])
    assert error.details["class"] == "foreign"
    assert "read as text: `GET /met`" in error.summary
    assert analysis.verdict.headline == "Another program connected to the NCCL port of rank 80"
    # the shipper's host is the processes' host; the file is no one rank's, whatever its name
    assert set(analysis.job.events.get_column("host").drop_nulls()) == {"worker-9"}
    assert analysis.job.file_stats.item(0, "rank") is None


# awslabs/awsome-distributed-ai#386, verbatim (a KubeRay job on two p5 nodes, Ray's prefix and
# de-duplication): the AWS network plugin fails to load on every worker, NCCL falls back to
# TCP sockets and sets up its communicator, and the epochs advance. A healthy, slower run.
PLUGIN_FELL_BACK = [
    "(RayTrainWorker pid=954, ip=10.67.132.202) ini-worker-ray-worker-p5:954:3133 [6] nccl_net_ofi_create_plugin:1067 NCCL WARN NET/OFI aws-ofi-nccl initialization failed [repeated 15x across cluster]",
    "(RayTrainWorker pid=954, ip=10.67.132.202) ini-worker-ray-worker-p5:954:3133 [6] NCCL INFO net.cc:56 -> 2 [repeated 15x across cluster]",
    "(RayTrainWorker pid=954, ip=10.67.132.202) ini-worker-ray-worker-p5:954:3133 [6] NCCL INFO NET/IB : No device found. [repeated 15x across cluster]",
    "(RayTrainWorker pid=954, ip=10.67.132.202) ini-worker-ray-worker-p5:954:3133 [6] NCCL INFO NET/Socket : Using [0]eth0:10.67.132.202<0> [repeated 15x across cluster]",
    "(RayTrainWorker pid=954, ip=10.67.132.202) ini-worker-ray-worker-p5:954:3133 [6] NCCL INFO Using non-device net plugin version 0 [repeated 15x across cluster]",
    "(RayTrainWorker pid=954, ip=10.67.132.202) ini-worker-ray-worker-p5:954:3133 [6] NCCL INFO Using network Socket [repeated 15x across cluster]",
    "(RayTrainWorker pid=954, ip=10.67.132.202) ini-worker-ray-worker-p5:954:3133 [6] NCCL INFO comm 0x7f3aed3f8c00 rank 6 nranks 16 cudaDev 6 nvmlDev 6 busId b9000 commId 0xb28cabf3135b26f2 - Init START [repeated 15x across cluster]",
]


def test_an_error_its_process_went_on_past_is_no_failure(tmp_path):
    analysis = analyze_files(tmp_path, {"ray_job_console.log": PLUGIN_FELL_BACK})
    assert analysis.verdict is None
    survived = finding(analysis, "nccl_error")
    assert survived.severity == "warning" and survived.details["went_on"]
    assert "aws-ofi-nccl initialization failed" in survived.summary


def test_the_same_error_without_a_later_init_is_the_failure(tmp_path):
    analysis = analyze_files(tmp_path, {"ray_job_console.log": PLUGIN_FELL_BACK[:2]})
    assert analysis.verdict.finding.kind == "nccl_error"


def test_gloo_connecting_over_the_loopback_is_a_network_setting_not_a_missing_rank(tmp_path):
    lines = [
        *AWS_DO_EKS_50,
        "RuntimeError: Gloo connectFullMesh failed ...",
        "EngineCore failed to start.",
    ]
    verdict = analyze_files(tmp_path, {"engine.log": lines}).verdict
    assert verdict.finding.kind == "nccl_error" and verdict.finding.details["transport"] == "gloo"
    assert "[127.0.0.1]:14215" in verdict.finding.summary
    assert "GLOO_SOCKET_IFNAME" in verdict.finding.fix
    assert verdict.headline.startswith("gloo used the wrong network interface")


def test_an_interface_gloo_cannot_find_names_the_setting(tmp_path):
    verdict = analyze_files(tmp_path, {"engine.log": AWS_DO_EKS_51}).verdict
    assert verdict.finding.kind == "nccl_error" and verdict.ranks == []
    assert "(`^lo`)" in verdict.finding.summary
    assert "not NCCL's `^` exclusion list" in verdict.finding.fix


def test_gloo_given_no_interface_nor_host_name_is_the_network_setting(tmp_path):
    traceback = ["Traceback (most recent call last):", '  File "train.py", line 188, in run']
    verdict = analyze_files(tmp_path, {"console.log": [*traceback, *APPLIO_79]}).verdict
    assert verdict.finding.kind == "nccl_error" and verdict.ranks == []
    assert "neither a network interface nor a host name" in verdict.finding.summary
    assert "GLOO_SOCKET_IFNAME" in verdict.finding.fix
    assert english_runs(translate(verdict.finding.summary, "zh")) == []


# vllm-project/vllm#7074, verbatim: on the second node (10.41.0.8) rank 9 warns that gloo fell
# back to the loopback; rank 8's full-mesh connect then fails without naming a peer
LOOPBACK_THEN_NO_PEER = [
    "DEBUG 08-02 08:50:03 parallel_state.py:803] world_size=16 rank=0 local_rank=0 distributed_init_method=tcp://10.41.0.7:34773 backend=nccl",
    "(RayWorkerWrapper pid=1978, ip=10.41.0.8) [rank9]:[W ProcessGroupGloo.cpp:721] **Warning: Unable to resolve hostname to a (local) address. Using the loopback address as fallback. Manually set the network interface to bind to with** GLOO_SOCKET_IFNAME. (function operator())",
    "(RayWorkerWrapper pid=1890, ip=10.41.0.8) [rank8]:[E ProcessGroupGloo.cpp:144] Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error",
]


def test_a_failed_connect_beside_a_loopback_fallback_on_its_host_is_the_interface(tmp_path):
    analysis = analyze_files(tmp_path, {"log.txt": LOOPBACK_THEN_NO_PEER})
    verdict = analysis.verdict
    assert verdict.finding.kind == "nccl_error" and verdict.ranks == [8, 9]
    assert "GLOO_SOCKET_IFNAME" in verdict.finding.fix
    assert "()" not in verdict.finding.summary
    # the same failure on another host than the fallback's is not explained by it
    elsewhere = [
        LOOPBACK_THEN_NO_PEER[1],
        LOOPBACK_THEN_NO_PEER[2].replace("10.41.0.8", "10.41.0.9"),
    ]
    other = analyze_files(tmp_path / "elsewhere", {"log.txt": elsewhere})
    assert other.verdict.finding.kind != "nccl_error"
    assert "loopback" not in other.verdict.finding.summary


def test_a_gloo_read_timeout_from_the_loopback_is_no_interface_fault(tmp_path):
    # NVIDIA/sentiment-discovery#43: a one-node job's peers are on the loopback; a timeout there
    # is a wait, not a wrong interface
    line = "RuntimeError: [/opt/conda/conda-bld/pytorch_1532579245307/work/third_party/gloo/gloo/transport/tcp/buffer.cc:76] Read timeout [127.0.0.1]:32444"
    analysis = analyze_files(tmp_path, {"train.log": [line]})
    assert not any(f.details.get("transport") == "gloo" for f in analysis.findings)


# karpathy/nanoGPT#55, verbatim (two nodes; the reporter's paste is the watchdog's two lines,
# hard-wrapped): the process was taken down, and nothing says which collective failed or why
WATCHDOG_ABORT_ONLY = [
    "[E ProcessGroupNCCL.cpp:455] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU opera",
    "tions might run on corrupted/incomplete data.",
    "[E ProcessGroupNCCL.cpp:460] To avoid data inconsistency, we are taking the entire process down.",
]


def test_the_watchdog_s_abort_alone_is_a_failure_whose_cause_is_not_in_the_logs(tmp_path):
    analysis = analyze_files(tmp_path, {"node0.log": WATCHDOG_ABORT_ONLY})
    abort = finding(analysis, "nccl_error")
    assert analysis.verdict is not None and analysis.verdict.finding is abort
    assert (abort.ranks, abort.confidence) == ([], "low")
    assert "Watchdog caught collective operation timeout" in abort.fix
    assert analysis.verdict.headline.startswith("A process was taken down by its NCCL watchdog")


def test_the_watchdog_s_abort_beside_its_timeout_is_the_timeout_s_symptom(tmp_path):
    # the same lines after the watchdog's own timeout report (../shared/formats.md, verbatim)
    timeout = "[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=469508, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802212 milliseconds before timing out."
    analysis = analyze_files(tmp_path, {"node0.log": [timeout, *WATCHDOG_ABORT_ONLY]})
    assert "nccl_error" not in kinds(analysis)
    assert analysis.verdict.finding.kind == "collective_timeout"


# ray-project/ray#40758, verbatim (the end of the driver's traceback): Ray relays the Train
# worker's DistBackendError by its type alone, the worker's own traceback cut
RAY_BACKEND_ERROR = [
    '  File "/home/ray/anaconda3/lib/python3.9/site-packages/ray/_private/worker.py", line 2547, in get',
    "    raise value.as_instanceof_cause()",
    "ray.exceptions.RayTaskError(DistBackendError): ray::_Inner.train() (pid=249, ip=10.0.0.78, actor_id=37a2771439edeb1576a519a301000000, repr=TorchTrainer)",
    '  File "/home/ray/anaconda3/lib/python3.9/site-packages/ray/tune/trainable/trainable.py", line 400, in train',
    "    raise skipped from exception_cause(skipped)",
    '  File "/home/ray/anaconda3/lib/python3.9/site-packages/ray/train/_internal/utils.py", line 54, in check_for_failure',
    "    ray.get(object_ref)",
    "ray.exceptions.RayTaskError(DistBackendError): ray::_RayTrainWorker__execute.get_next() (pid=192, ip=10.0.0.19, actor_id=a3e4eb7bfa5c10d44e303ba301000000, repr=<ray.train._internal.worker_group.RayTrainWorker object at 0x7fbfd5e7a100>)",
]


def test_a_backend_error_whose_message_is_cut_is_a_failure_of_the_process_that_raised_it(
    tmp_path,
):
    analysis = analyze_files(tmp_path, {"driver.log": RAY_BACKEND_ERROR})
    failed = finding(analysis, "nccl_error")
    assert analysis.verdict is not None and analysis.verdict.finding is failed
    assert failed.confidence == "low"
    assert failed.summary.startswith(
        "A process (host 10.0.0.19, pid 192) died of a DistBackendError"
    )
    assert analysis.verdict.headline.startswith("A process died of a DistBackendError")


# --- processes whose failure only a return-code chain shows ---------------------------------


def test_a_process_that_unwound_through_another_s_failure_failed_alike(tmp_path):
    # NVIDIA/nccl#224 (Horovod over mpirun on RoCE), verbatim: rank 4 WARNs that it cannot
    # create a socket and unwinds through `init.cu:915`; rank 0's only line is that frame
    analysis = analyze(NCCL_DATA / "nccl-224-roce-socket-ranks-0-4")
    (error,) = nccl_errors(analysis)
    assert error.details["common_mode"] is True and error.ranks == [0, 4]
    assert "(`Net : Socket creation failed : Address family not supported by protocol`)" in (
        error.summary
    )
    # ranks 1-3 and 5-7 set up their rings and failed in nothing: the cause is where 0 and 4 run
    assert "while ranks 1-3 and 5-7 did not" in error.summary
    assert analysis.verdict.finding is error and analysis.verdict.ranks == [0, 4]


def test_ranks_failing_alike_are_not_blamed_when_no_other_rank_is_in_the_logs(tmp_path):
    lines = (NCCL_DATA / "nccl-224-roce-socket-ranks-0-4" / "output.log").read_text().splitlines()
    failing = [line for line in lines if line.startswith(("[1,0]", "[1,4]"))]
    analysis = analyze_files(tmp_path, {"output.log": failing})
    (error,) = [f for f in nccl_errors(analysis) if f.details.get("common_mode")]
    assert error.ranks == [0, 4] and analysis.verdict.ranks == []
    assert "one cause they share" in error.summary


def test_a_chain_in_a_process_that_warned_of_nothing_is_that_process_s_failure(tmp_path):
    # aws/aws-ofi-nccl#24 (Horovod on EFA, the job hung), verbatim: rank 31's failed NIC lookup
    # shows only as `include/net.h:24 -> 2`; rank 23's `Couldn't open AV` WARN is another
    # process's, which once hid the chain and left the logs reading "no failure"
    analysis = analyze(NCCL_DATA / "aws-ofi-nccl-24-open-av-rank-23")
    assert analysis.verdict.finding.kind == "nccl_error" and analysis.verdict.ranks == [31]
    (beside,) = [f for f in nccl_errors(analysis) if f.ranks == [23]]
    assert beside.role == "symptom"
    assert "with errors of its own (none reports a peer that went away)" in beside.summary
    assert "not necessarily caused by it" in beside.summary
    assert "Couldn't open AV" in beside.evidence[0].text


# Lightning-AI/lit-llama#380, verbatim (the host name shortened to `...-48` as posted): every
# process of one node reports its InfiniBand port's error event, then the job hung
IB_PORT_ERROR = [
    "iter 83592: loss 1.5455, time: 4401.19ms, speed: - toks/s/device",
    "iter 83593: loss 2.6294, time: 6669.64ms, speed: - toks/s/device",
    "iter 83594: loss 1.9491, time: 6235.95ms, speed: 1771 toks/s/device",
    "...-48:34050:34121 [0] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : port error",
    "",
    "...-48:34052:34141 [0] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : port error",
    "",
    "...-48:34055:34140 [0] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : port error",
    "",
    "...-48:34051:34143 [0] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : port error",
    "",
    "...-48:34054:34130 [0] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : port error",
    "",
    "...-48:34057:34142 [0] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : port error",
    "",
    "...-48:34053:34129 [0] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : port error",
    "",
    "...-48:34056:34135 [0] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : port error",
]
# NVIDIA/nccl#230, verbatim: a collector's stamp with a colon after it, Open MPI's rank tags;
# ranks 12-14 (one host) report their adapter's catastrophic error within 4 ms
IB_CATASTROPHIC = [
    "2019-06-02T16:13:44.884Z: [1,12]<stdout>:container-e275-1553839402050-12124-01-000057:815:864 [0] transport/net_ib.cu:80 NCCL WARN NET/IB : Got async event : local catastrophic error",
    "2019-06-02T16:13:44.884Z: [1,12]<stdout>:",
    "2019-06-02T16:13:44.884Z: [1,12]<stdout>:container-e275-1553839402050-12124-01-000057:815:864 [0] misc/ibvwrap.cu:220 NCCL WARN Call to ibv_get_async_event failed",
    "2019-06-02T16:13:44.888Z: [1,14]<stdout>:",
    "2019-06-02T16:13:44.888Z: [1,14]<stdout>:container-e275-1553839402050-12124-01-000057:814:868 [0] transport/net_ib.cu:80 NCCL WARN NET/IB : Got async event : local catastrophic error",
    "2019-06-02T16:13:44.888Z: [1,14]<stdout>:",
    "2019-06-02T16:13:44.888Z: [1,14]<stdout>:container-e275-1553839402050-12124-01-000057:814:868 [0] misc/ibvwrap.cu:220 NCCL WARN Call to ibv_get_async_event failed",
    "2019-06-02T16:13:44.888Z: [1,13]<stdout>:",
    "2019-06-02T16:13:44.888Z: [1,13]<stdout>:container-e275-1553839402050-12124-01-000057:812:866 [0] transport/net_ib.cu:80 NCCL WARN NET/IB : Got async event : local catastrophic error",
    "2019-06-02T16:13:44.888Z: [1,13]<stdout>:",
    "2019-06-02T16:13:44.888Z: [1,13]<stdout>:container-e275-1553839402050-12124-01-000057:812:866 [0] misc/ibvwrap.cu:220 NCCL WARN Call to ibv_get_async_event failed",
]


def test_the_ib_adapter_s_own_error_event_is_an_nccl_error_of_that_host(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": IB_PORT_ERROR})
    verdict = analysis.verdict
    assert verdict is not None and verdict.finding.kind == "nccl_error"
    assert verdict.finding.details["class"] == "ib_device"
    assert "ibstat" in verdict.finding.fix
    assert "8 processes hit the same NCCL error" in verdict.finding.summary
    assert "the InfiniBand adapter of their host (...-48) failed" in verdict.finding.summary


def test_ranks_whose_adapters_failed_at_once_are_named_from_their_mpirun_tags(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": IB_CATASTROPHIC})
    assert analysis.job.ranks_seen == (12, 13, 14)
    nccl = finding(analysis, "nccl_error")
    assert nccl.ranks == [12, 13, 14] and "local catastrophic error" in nccl.summary
    # the adapter's error is its host's: the ranks on it are blamed though no other rank shows
    assert analysis.verdict.ranks == [12, 13, 14]
    assert analysis.verdict.headline == "The InfiniBand adapter under ranks 12-14 failed"


def test_an_adapter_event_that_is_no_error_is_no_failure():
    # the same WARN with libibverbs' `port active` (an event of a port coming up; made here)
    line = IB_PORT_ERROR[3].replace("port error", "port active")
    found = parse([line])
    assert found.filter(pl.col("event") == "nccl_error").is_empty()


# pytorch/pytorch#52916, verbatim (NCCL 2.7, the second of two nodes, NCCL_SOCKET_IFNAME=lo)
LOOPBACK_BOOTSTRAP = [
    "[ 10330 ] world_size = 2, rank = 1, backend=nccl",
    "GPU9:10330:10330 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to lo",
    "GPU9:10330:10330 [0] NCCL INFO NCCL_SOCKET_IFNAME set to lo",
    "GPU9:10330:10330 [0] NCCL INFO Bootstrap : Using [0]lo:127.0.0.1<0>",
    "GPU9:10330:10330 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using internal implementation",
    "GPU9:10330:10330 [0] NCCL INFO NET/Socket : Using [0]lo:127.0.0.1<0>",
    "GPU9:10330:10330 [0] NCCL INFO Using network Socket",
    "GPU9:10330:10399 [0] NCCL INFO Call to connect returned Connection refused, retrying",
    "GPU9:10330:10399 [0] NCCL INFO Call to connect returned Connection refused, retrying",
]


def test_a_loopback_bootstrap_whose_connects_are_refused_is_the_network_setting(tmp_path):
    interfaces = parsed_by("nccl", LOOPBACK_BOOTSTRAP).filter(event="nccl_interface")
    assert interfaces.select("device", "peer").rows() == [("lo", "127.0.0.1")] * 2
    verdict = analyze_files(tmp_path, {"rank1.log": LOOPBACK_BOOTSTRAP}).verdict
    assert verdict.finding.kind == "nccl_error" and verdict.ranks == []
    assert "loopback interface (lo:127.0.0.1)" in verdict.finding.summary
    assert "NCCL_SOCKET_IFNAME" in verdict.finding.fix
    assert verdict.headline.startswith("NCCL bootstrapped over the loopback interface")


def test_a_loopback_bootstrap_that_connected_is_no_fault(tmp_path):
    # one host: the bootstrap over lo reaches every rank, no connect is refused
    analysis = analyze_files(tmp_path, {"rank1.log": LOOPBACK_BOOTSTRAP[:-2]})
    assert analysis.verdict is None


# PKU-YuanGroup/UniWorld#46, verbatim: three processes' socket chains as rank 6's communicator
# is aborted by its watchdog
ABORT_TEARDOWN = [
    "n124-137-109:312247:319408 [0] NCCL INFO misc/socket.cc:881 -> 3",
    "n124-137-109:312248:319407 [1] NCCL INFO misc/socket.cc:881 -> 3",
    "n124-137-109:312247:326969 [0] NCCL INFO misc/socket.cc:64 -> 3",
    "n124-137-109:312247:326969 [0] NCCL INFO misc/socket.cc:80 -> 3",
    "n124-137-109:312250:319409 [3] NCCL INFO misc/socket.cc:881 -> 3",
    "n124-137-109:312249:326968 [2] NCCL INFO comm 0x12464df00 rank 6 nranks 8 cudaDev 2 busId b000 - Abort COMPLETE",
    "[rank6]:[E624 04:14:29.224103812 ProcessGroupNCCL.cpp:684] [Rank 6] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
]


def test_socket_chains_beside_a_communicator_abort_are_its_teardown(tmp_path):
    analysis = analyze_files(tmp_path, {"output.log": ABORT_TEARDOWN})
    assert not any("misc/socket.cc" in f.summary for f in analysis.findings)
    assert "taken down by its NCCL watchdog" in analysis.verdict.finding.summary


def test_socket_chains_with_no_abort_are_still_a_failure(tmp_path):
    lines = [line for line in ABORT_TEARDOWN if "socket.cc" in line]
    verdict = analyze_files(tmp_path, {"output.log": lines}).verdict
    assert verdict.finding.kind == "nccl_error" and "misc/socket.cc" in verdict.finding.summary


# pytorch/pytorch#167288, verbatim: a restarted attempt's NCCL retries a refused connect, and
# the paste ends there
REFUSED_TO_THE_END = [
    "bj4-ml-g8h20-k8s-slave1026-20250527:5971:6015 [4] NCCL INFO socketPollConnect: connect to 10.29.224.148<52333> returned Connection refused, retrying (18/34) after sleep for 1800 msec",
    "bj4-ml-g8h20-k8s-slave1026-20250527:5971:6015 [4] NCCL INFO socketPollConnect: connect to 10.29.224.148<52333> returned Connection refused, retrying (19/34) after sleep for 1900 msec",
    "bj4-ml-g8h20-k8s-slave1026-20250527:5971:6015 [4] NCCL INFO socketPollConnect: connect to 10.29.224.148<52333> returned Connection refused, retrying (20/34) after sleep for 2000 msec",
    "bj4-ml-g8h20-k8s-slave1026-20250527:5971:6015 [4] NCCL INFO socketPollConnect: connect to 10.29.224.148<52333> returned Connection refused, retrying (21/34) after sleep for 2100 msec",
]


def test_a_process_whose_log_ends_retrying_a_refused_connect_cannot_form_its_communicator(
    tmp_path,
):
    analysis = analyze_files(tmp_path, {"output.log": REFUSED_TO_THE_END})
    refused = analysis.verdict.finding
    assert refused.kind == "nccl_error" and refused.blames_nobody
    assert "kept retrying NCCL's connect to 10.29.224.148<52333>" in refused.summary
    assert "4 retries shown" in refused.summary


def test_refused_connects_the_process_got_past_are_no_finding(tmp_path):
    # the same process then completes its init (made up for this test)
    done = "bj4-ml-g8h20-k8s-slave1026-20250527:5971:6015 [4] NCCL INFO comm 0x5562191160f0 rank 4 nranks 16 cudaDev 4 busId 13000 - Init COMPLETE"
    analysis = analyze_files(tmp_path, {"output.log": [*REFUSED_TO_THE_END, done]})
    assert not any("kept retrying" in f.summary for f in analysis.findings)


# NVIDIA/nccl#1618, verbatim: the PR's test of NCCL's retry on a 16-rank job whose own logger
# brackets the source and the process; rank 3's poll failed, NCCL retried, and the job completed
RETRIED_AFTER_ITS_WARN = [
    "[03/16][2025-02-25 15:46:48,389] [misc/socket.cc:602] [s11gn1268:pid=3987720] NCCL WARN socketPollConnect poll() failed, ret 1, error Connection timed out, revents 8, connect to 172.16.30.229:39953",
    "[03/16][2025-02-25 15:46:48,390] [misc/socket.cc:551] [s11gn1268:pid=3987720] NCCL INFO socketPollConnect: connect returned Connection timed out, retrying (1/34) after sleep for 100 msec",
]


def test_a_warn_whose_connect_is_retried_next_is_no_failure(tmp_path):
    analysis = analyze_files(tmp_path, {"job.log": RETRIED_AFTER_ITS_WARN})
    assert analysis.verdict is None
    # without the retry, the failed poll is the process's error
    analysis = analyze_files(tmp_path / "alone", {"job.log": RETRIED_AFTER_ITS_WARN[:1]})
    assert analysis.verdict.finding.kind == "nccl_error"


# ray-project/ray#16979, verbatim (RaySGD, 4 GPUs of one host): the driver's copy of PyTorch's
# wrapper first, then rank 3's WARN and the chain it unwound with (`-> 1`, a CUDA failure)
WRAPPER_BEFORE_ITS_WARN = [
    "RuntimeError: NCCL error in: /opt/conda/conda-bld/pytorch_1607370116979/work/torch/lib/c10d/ProcessGroupNCCL.cpp:784, unhandled cuda error, NCCL version 2.7.8",
    "(pid=34272) dev-duanjiangfei-ap0:34272:34565 [0] NCCL INFO threadThresholds 8/8/64 | 32/8/64 | 8/8/64",
    "(pid=34272) dev-duanjiangfei-ap0:34272:34565 [0] NCCL INFO Trees [0] -1/-1/-1->3->2|2->3->-1/-1/-1 [1] -1/-1/-1->3->2|2->3->-1/-1/-1",
    "(pid=34272) dev-duanjiangfei-ap0:34272:34565 [0] NCCL INFO Channel 00 : 3[b0] -> 0[80] via P2P/IPC",
    "(pid=34272) ",
    "(pid=34272) dev-duanjiangfei-ap0:34272:34565 [0] transport/p2p.cc:238 NCCL WARN failed to open CUDA IPC handle : 217 peer access is not supported between these two devices",
    "(pid=34272) dev-duanjiangfei-ap0:34272:34565 [0] NCCL INFO transport.cc:68 -> 1",
    "(pid=34272) dev-duanjiangfei-ap0:34272:34565 [0] NCCL INFO init.cc:766 -> 1",
    "(pid=34272) dev-duanjiangfei-ap0:34272:34565 [0] NCCL INFO init.cc:840 -> 1",
    "(pid=34272) dev-duanjiangfei-ap0:34272:34565 [0] NCCL INFO group.cc:73 -> 1 [Async thread]",
    "(pid=34275) dev-duanjiangfei-ap0:34275:34567 [0] NCCL INFO threadThresholds 8/8/64 | 32/8/64 | 8/8/64",
]


def test_a_wrapper_no_line_names_is_the_one_process_whose_chain_carried_its_result(tmp_path):
    analysis = analyze_files(tmp_path, {"driver.log": WRAPPER_BEFORE_ITS_WARN})
    assert analysis.verdict.finding.kind == "nccl_error" and analysis.verdict.ranks == [3]
    assert "failed to open CUDA IPC handle" in analysis.verdict.finding.summary
    # a wrapper of another class than the chain's stays a failure of its own
    other = [WRAPPER_BEFORE_ITS_WARN[0].replace("unhandled cuda error", "unhandled system error")]
    mixed = analyze_files(tmp_path / "mixed", {"driver.log": other + WRAPPER_BEFORE_ITS_WARN[1:]})
    assert mixed.verdict.ranks == []


# pytorch/pytorch#150852, verbatim (one process, NCCL 2.26.2 on a CUDA 12.2 driver): NCCL's WARN
# and its chain as a process of host devgpu263, then PyTorch's wrapper of the same result as
# `[rank0]:`
NVLS_CHAIN_THEN_RANKED_WRAPPER = [
    "[2025-04-08 08:39:46] devgpu263:589012:591652 [0] transport/nvls.cc:254 NCCL WARN Cuda failure 1 'invalid argument'",
    "devgpu263:589012:591652 [0] NCCL INFO transport/nvls.cc:409 -> 1",
    "devgpu263:589012:591652 [0] NCCL INFO init.cc:1141 -> 1",
    "devgpu263:589012:591652 [0] NCCL INFO init.cc:1409 -> 1",
    "devgpu263:589012:591652 [0] NCCL INFO group.cc:75 -> 1 [Async thread]",
    "devgpu263:589012:589012 [0] NCCL INFO group.cc:422 -> 1",
    "devgpu263:589012:589012 [0] NCCL INFO group.cc:581 -> 1",
    "devgpu263:589012:589012 [0] NCCL INFO init.cc:1836 -> 1",
    "[rank0]: Traceback (most recent call last):",
    '[rank0]:   File "/home/kw2501/local/driver_12.2/repro.py", line 12, in <module>',
    "[rank0]:     dist.all_reduce(x)",
    "[rank0]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:77, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.26.2",
]


def test_a_process_whose_chain_one_ranked_wrapper_raised_is_that_rank(tmp_path):
    analysis = analyze_files(tmp_path, {"log.txt": NVLS_CHAIN_THEN_RANKED_WRAPPER})
    assert analysis.verdict.finding.kind == "nccl_error" and analysis.verdict.ranks == [0]
    assert "invalid argument" in analysis.verdict.finding.summary
    assert "failed in NCCL after it" not in analysis.verdict.headline
    # a wrapper of another result than the chain's is no telling of the same failure
    other = [
        line.replace("unhandled cuda error", "unhandled system error")
        for line in NVLS_CHAIN_THEN_RANKED_WRAPPER
    ]
    apart = analyze_files(tmp_path / "apart", {"log.txt": other})
    assert apart.verdict.ranks == []


# ray-project/ray_lightning#24, verbatim: one Ray worker's bare wrapper, then another worker's
# NCCL lines with the WARN that says what failed
RAY_WORKERS = [
    "(pid=909597) RuntimeError: NCCL error in: /opt/conda/conda-bld/pytorch_1603729062494/work/torch/lib/c10d/ProcessGroupNCCL.cpp:784, unhandled cuda error, NCCL version 2.7.8",
    "(pid=909608) z-pc:909608:910337 [0] NCCL INFO Channel 00/02 :    0   1",
    "(pid=909608) z-pc:909608:910337 [0] NCCL INFO Trees [0] 1/-1/-1->0->-1|-1->0->1/-1/-1 [1] 1/-1/-1->0->-1|-1->0->1/-1/-1",
    "(pid=909608) z-pc:909608:910337 [0] NCCL INFO Channel 00 : 0[2d000] -> 1[2e000] via P2P/IPC",
    "(pid=909608) ",
    "(pid=909608) z-pc:909608:910337 [0] transport/p2p.cc:238 NCCL WARN failed to open CUDA IPC handle : 217 peer access is not supported between these two devices",
    "(pid=909608) z-pc:909608:910337 [0] NCCL INFO transport.cc:68 -> 1",
]


def test_a_bare_wrapper_of_a_process_with_no_nccl_line_of_its_own_is_not_placed_first(tmp_path):
    analysis = analyze_files(tmp_path, {"ray.log": RAY_WORKERS})
    first = analysis.verdict.finding
    assert (first.kind, analysis.verdict.ranks) == ("nccl_error", [0])
    assert "peer access is not supported" in first.summary


def test_the_rank_pytorch_s_wrapper_line_names_is_the_error_s_rank(tmp_path):
    # oeyoews/talks (a KubeCon HK 2024 talk's slides), verbatim: rank 16's watchdog quotes NCCL's
    # last error, an InfiniBand completion error, on the lines below its `[Rank 16]` line
    lines = [
        "[E ProcessGroupNCCL.cpp:852] [Rank 16] NCCL watchdog thread terminated with exception: NCCL error: remote process exited or there was a network error, NCCL version 2.19.3",
        "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
        "Last error:",
        "NET/IB : Got completion from peer 10.42.0.2<47534> with error 5, opcode 48, len 32764, vendor err 244",
    ]
    error = analyze_files(tmp_path, {"node-1.log": lines}).verdict.finding
    assert (error.kind, error.ranks, error.details["class"]) == ("nccl_error", [16], "infiniband")
    # a sub-group's tag names no global rank
    grouped = [lines[0].replace("[Rank 16]", "[PG 1 Rank 3]"), *lines[1:]]
    error = analyze_files(tmp_path / "grouped", {"node-1.log": grouped}).verdict.finding
    assert 3 not in error.ranks


# eth-cscs/cscs-docs, docs/software/communication/nccl.md @2f74baf ("Do not use
# NCCL_NET_PLUGIN="ofi" with uenvs"), verbatim: NCCL_NET names a network no plugin provides
NETWORK_NOT_FOUND = [
    "nid006365:180142:180163 [0] NCCL INFO NET/Plugin: Could not find: ofi libnccl-net-ofi.so. Using internal network plugin.",
    "nid006365:180142:180163 [0] net.cc:626 NCCL WARN Error: network AWS Libfabric not found.",
    "nid006365:179857:179897 [1] net.cc:626 NCCL WARN Error: network AWS Libfabric not found.",
]


def test_a_warn_that_calls_itself_an_error_is_an_nccl_error_of_the_host_s_set_up(tmp_path):
    errors = parsed_by("nccl", NETWORK_NOT_FOUND).filter(pl.col("event") == "nccl_error")
    assert errors.get_column("pid").to_list() == [180142, 179857]
    failed = finding(analyze_files(tmp_path, {"info.log": NETWORK_NOT_FOUND}), "nccl_error")
    assert failed.details["class"] == "environment"
    assert "`NCCL_NET` and `NCCL_NET_PLUGIN` must name a network" in failed.fix


def test_a_connect_nccl_gave_up_on_is_an_error_and_a_link_local_address_blames_no_rank(tmp_path):
    # wenet-e2e/wenet#1891, verbatim (one node's console, NCCL 2.7; lines left out between):
    # rank 1's connect to its peer on the other node, at the address that peer gave, failed
    lines = [
        "voicec105:90736:90736 [0] NCCL INFO NET/Socket : Using [0]eno1:172.16.20.105<0>",
        "voicec105:90736:90736 [0] NCCL INFO Using network Socket",
        "voicec105:90736:91655 [0] NCCL INFO Trees [0] 2/-1/-1->1->0|0->1->2/-1/-1 [1] -1/-1/-1->1->0|0->1->-1/-1/-1",
        "",
        "voicec105:90736:91655 [0] include/socket.h:403 NCCL WARN Connect to fe80::c4eb:49ff:fe04:e32d%6<57335> failed : Network is unreachable",
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    error = finding(analysis, "nccl_error")
    assert error.ranks == [1] and error.details["error_code"] == "Network is unreachable"
    assert "`fe80::c4eb:49ff:fe04:e32d%6`, is link-local" in error.summary
    assert analysis.verdict.finding is error and analysis.verdict.ranks == []
    assert "NCCL_SOCKET_IFNAME" in error.fix


def test_nccl_2_7_s_segment_named_without_its_folder_is_the_host_s_shared_memory(tmp_path):
    # dmlc/xgboost#5963, verbatim (multi-GPU tests in a container with 64 MB of /dev/shm; the
    # maintainer: raise the container's shared memory)
    lines = [
        "7635c25c81cd:41588:41837 [0] include/shm.h:48 NCCL WARN Error while creating shared "
        "memory segment nccl-shm-recv-6c6b02bad5bfc129-0-1-0 (size 9637888)",
    ]
    failed = analyze_files(tmp_path, {"console.log": lines}).verdict.finding
    assert (failed.details["class"], failed.details["host_part"]) == (
        "environment",
        "shared_memory",
    )
    assert failed.fix.startswith("Give the node's shared memory room")


# NVIDIA/nccl#328, verbatim: the process on GPU 0 of a 4-GPU node; `sudo chmod 777 /dev/shm`
# fixed it
SHM_PERMISSION_DENIED = [
    "node08:27106:27302 [0] include/shm.h:27 NCCL WARN Call to shm_open failed : Permission denied",
    "node08:27106:27302 [0] NCCL INFO include/shm.h:41 -> 2",
    "node08:27106:27302 [0] include/shm.h:48 NCCL WARN Error while creating shared memory segment nccl-shm-recv-b7948f403864987a-0-3-0 (size 4460544)",
]


def test_shared_memory_refused_is_fixed_by_its_permissions_not_its_size(tmp_path):
    verdict = analyze_files(tmp_path, {"train.log": SHM_PERMISSION_DENIED}).verdict
    assert verdict.finding.kind == "nccl_error"
    assert "chmod 1777 /dev/shm" in verdict.finding.fix
    assert "--shm-size" not in verdict.finding.fix
    assert english_runs(translate(verdict.finding.fix, "zh")) == []


# zai-org/ChatGLM3#1174 (single-node multi-GPU LoRA), verbatim: the end of an unprefixed rich
# traceback, NCCL's topology error in the first all_gather, then torchrun's agent stopping the
# other worker and naming local rank 0 as the one that failed
REVERSE_PATH = [
    "DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, internal error, NCCL version 2.14.3",
    "ncclInternalError: Internal check failed.",
    "Last error:",
    "Failed to find reverse path from remNode 0/c1000 nlinks 4 to node 0/1d000",
    "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 1957665 closing signal SIGTERM",
    "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 1957662) of binary: /opt/data/sc5tadm/HXY/chatglm3_6B/glm3-6B/bin/python3.10",
]


def test_an_error_no_line_ties_to_a_rank_is_the_worker_the_launcher_alone_names(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": REVERSE_PATH})
    (first,) = nccl_errors(analysis)
    assert analysis.verdict.finding is first
    assert first.ranks == [0] and first.confidence == "medium"
    assert "torchrun's agent lists rank 0 alone as failed (exit code 1)" in first.summary
    assert [e.line for e in first.evidence][-1] == 6  # the agent's line is evidence too
    assert english_runs(translate(first.summary, "zh")) == []


def test_no_worker_is_named_when_the_launcher_reports_two_failed(tmp_path):
    second = REVERSE_PATH[-1].replace(
        "local_rank: 0 (pid: 1957662)", "local_rank: 1 (pid: 1957665)"
    )
    analysis = analyze_files(tmp_path, {"train.log": [*REVERSE_PATH, second]})
    (first,) = nccl_errors(analysis)
    assert first.ranks == []


def test_no_worker_is_named_for_the_same_error_said_by_several_processes(tmp_path):
    # XiaohangZhan/deocclusion#45's shape: one worker's error, told again by others
    # interleaved in the same console, under an agent naming one failed worker
    said_again = REVERSE_PATH[:4] * 2
    analysis = analyze_files(tmp_path, {"train.log": [*said_again, *REVERSE_PATH[4:]]})
    assert all(f.ranks == [] for f in nccl_errors(analysis))


# --- crashes inside NCCL's code -------------------------------------------------------------


def test_bus_errors_in_nccl_s_shared_memory_set_up_are_nccl_s_not_a_rank_s(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": TRLX_536})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("nccl_error", [])
    assert verdict.finding.details["host_part"] == "shared_memory"
    assert verdict.headline.startswith("NCCL could not get shared memory (/dev/shm)")
    assert "at shmutils.cc:52 in ncclShmOpen" in verdict.finding.summary
    assert "--shm-size" in verdict.finding.fix and "NCCL_SHM_DISABLE=1" in verdict.finding.fix
    # the crash is told once, as NCCL's: not again as a rank's death or the host's memory
    assert "rank_exception" not in kinds(analysis) and "oom" not in kinds(analysis)
    assert english_runs(translate(verdict.finding.summary, "zh")) == []


def test_a_bus_error_in_nccl_s_threads_is_its_shared_memory_whatever_the_function(tmp_path):
    verdict = analyze_files(tmp_path, {"console.log": PIPEDREAM_76}).verdict
    assert verdict.finding.kind == "nccl_error"
    assert verdict.headline == "NCCL could not get shared memory (/dev/shm) on host 8d6bf97c3bf4"
    assert "pid 3039" in verdict.finding.summary and "at ncclGroupEnd" in verdict.finding.summary


def test_a_segfault_in_nccl_is_the_library_crashing(tmp_path):
    # NVIDIA/nccl#1996: NCCL 2.27.7's RAS thread crashed
    verdict = analyze_files(tmp_path, {"console.log": NCCL_1996}).verdict
    assert (verdict.finding.kind, verdict.finding.details["class"]) == ("nccl_error", "crash")
    assert verdict.headline == "NCCL crashed in a process on host n125-011-039"
    assert "(host n125-011-039, pid 288505)" in verdict.finding.summary
    assert "report it to NVIDIA/nccl" in verdict.finding.fix
    assert translate_headline(verdict.headline, "zh") != verdict.headline
    for said in (verdict.finding.summary, verdict.finding.fix):
        assert english_runs(translate(said, "zh")) == []


# horovod/horovod#789, verbatim (the first excerpt of the description's log; the blank lines
# between the processes' blocks left out): NCCL 2.3 in two Docker containers on two servers
# lists the loopback interface before eth0; the job then hangs (the title: `NCCL connect timeout
# : Connection refused`, a line the paste's excerpts do not hold)
LOOPBACK_LISTED = [
    "e53b7da88fea:2493:2753 [0] misc/ibvwrap.cu:63 NCCL WARN Failed to open libibverbs.so[.1]",
    "e53b7da88fea:2493:2753 [0] NCCL INFO Using internal Network Socket",
    "e53b7da88fea:2493:2753 [0] NCCL INFO NET : Using interface lo:127.0.0.1<0>",
    "e53b7da88fea:2493:2753 [0] NCCL INFO NET : Using interface eth0:3.10.11.7<0>",
    "e53b7da88fea:2493:2753 [0] NCCL INFO NET/Socket : 2 interfaces found",
    "NCCL version 2.3.5+cuda9.0",
    "e53b7da88fea:2493:2753 [0] NCCL INFO rank 0 nranks 4",
    "e53b7da88fea:2494:2756 [1] misc/ibvwrap.cu:63 NCCL WARN Failed to open libibverbs.so[.1]",
    "e53b7da88fea:2494:2756 [1] NCCL INFO Using internal Network Socket",
    "e53b7da88fea:2494:2756 [1] NCCL INFO rank 1 nranks 4",
    "51ca79e04561:4880:5140 [1] misc/ibvwrap.cu:63 NCCL WARN Failed to open libibverbs.so[.1]",
    "51ca79e04561:4880:5140 [1] NCCL INFO Using internal Network Socket",
    "51ca79e04561:4880:5140 [1] NCCL INFO rank 3 nranks 4",
]


def test_loopback_listed_in_a_job_across_hosts_is_the_likely_cause_when_nothing_failed(tmp_path):
    verdict = analyze_files(tmp_path, {"console.log": LOOPBACK_LISTED}).verdict
    assert (verdict.finding.kind, verdict.finding.confidence) == ("nccl_error", "low")
    assert "(lo:127.0.0.1) on e53b7da88fea, in a job across 2 hosts" in verdict.finding.summary
    assert "NCCL_SOCKET_IFNAME" in verdict.finding.fix
    assert verdict.headline == (
        "NCCL used the loopback interface in a job across hosts; the communicator most likely "
        "never formed"
    )
    assert not english_runs(translate_headline(verdict.headline, "zh"))
    assert not english_runs(translate(verdict.finding.summary, "zh"))


def test_loopback_on_one_host_is_no_fault(tmp_path):
    one_host = [line for line in LOOPBACK_LISTED if line.startswith("e53b7da88fea")]
    analysis = analyze_files(tmp_path, {"console.log": one_host})
    assert not any(f.details.get("transport") == "nccl" for f in analysis.findings)


# yoonsanghyu/Dual-Path-Transformer-Network-PyTorch#1, verbatim: one process driving three GPUs,
# healthy; the post cut the first letter of its first line's host name
ONE_HOST_NAME_CUT = [
    "ufee:19773:20233 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]",
    "lufee:19773:20233 [0] NCCL INFO NET/Socket : Using [0]lo:127.0.0.1<0> [1]eth0:172.17.0.5<0>",
    "NCCL version 2.4.8+cuda10.0",
    "lufee:19773:20233 [0] NCCL INFO nranks 3",
    "lufee:19773:20233 [0] NCCL INFO Ring 00 : 0[0] -> 1[1] via direct shared memory",
]


@pytest.mark.parametrize("prefix", ["", "[pod/job-worker-0/main] "], ids=["plain", "kubectl"])
def test_a_host_name_a_paste_cut_is_not_a_second_host(tmp_path, prefix):
    # (a pod's name is another name for the machine: the version line takes it, not a host)
    lines = [prefix + line for line in ONE_HOST_NAME_CUT]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    assert not any(f.details.get("transport") == "nccl" for f in analysis.findings)
