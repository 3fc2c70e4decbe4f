# ruff: noqa: E501 -- test data are verbatim log lines
"""Gloo transport errors, verbatim from /work/shared/formats.md §5, public issues and runs of
torch 2.13 (CPU, gloo) on this project's machine."""

from __future__ import annotations

import json

import polars as pl
import pytest

from tests.builders import analyze_files, only, parsed_by


def gloo_events(lines: list[str]) -> pl.DataFrame:
    return parsed_by("gloo", lines)


@pytest.mark.parametrize(
    ("line", "timeout_ms", "direction", "rank"),
    [
        # sample_logs/*/logs/launcher.log (torch 2.13, torchrun --tee)
        (
            "[default1]:[rank1]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting 20000ms for recv operation to complete",
            20000,
            "recv",
            1,
        ),
        (
            "[default3]:[rank3]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:129] Timed out waiting 20000ms for send operation to complete",
            20000,
            "send",
            3,
        ),
        # the same error quoted in torchrun's ChildFailedError summary block
        (
            "  RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting 20000ms for recv operation to complete",
            20000,
            "recv",
            None,
        ),
        # monitored_barrier's original exception on a rank that reached the barrier
        (
            "[rank2]: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting 4000ms for recv operation to complete",
            4000,
            "recv",
            2,
        ),
    ],
)
def test_transport_timeout(line, timeout_ms, direction, rank):
    row = only(gloo_events([line]))
    assert (row["event"], row["severity"], row["family"]) == ("transport_timeout", "error", "gloo")
    assert (row["timeout_ms"], row["rank"]) == (timeout_ms, rank)
    assert row["op"] is None  # the transport's direction is no collective op
    assert json.loads(row["extra"])["direction"] == direction


@pytest.mark.parametrize(
    ("line", "peer"),
    [
        # pytorch/pytorch#75512, #61670
        (
            "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [18.25.6.30]:28048",
            "[18.25.6.30]:28048",
        ),
        (
            "RuntimeError: [/var/lib/jenkins/workspace/third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [172.17.0.2]:16786",
            "[172.17.0.2]:16786",
        ),
        # PyTorch docs, monitored_barrier example (IPv6)
        (
            "[gloo/transport/tcp/pair.cc:598] Connection closed by peer [2401:db00:eef0:1100:3560:0:1c05:25d]:8594",
            "[2401:db00:eef0:1100:3560:0:1c05:25d]:8594",
        ),
        # torch 2.13 on this machine: current gloo adds advice after the peer
        (
            "[rank0]: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection closed by peer [127.0.0.1]:15747. This is typically caused by a remote worker crashing. Check the logs of the remote worker before reporting an error. GLHF! 🏖️",
            "[127.0.0.1]:15747",
        ),
    ],
)
def test_peer_closed(line, peer):
    row = only(gloo_events([line]))
    assert (row["event"], row["severity"], row["peer"]) == ("peer_closed", "error", peer)


def test_peer_reset():
    # RVC-Project/Retrieval-based-Voice-Conversion-WebUI#1882
    line = "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:589] Read error [192.168.70.92]:25266: Connection reset by peer"
    row = only(gloo_events([line]))
    assert (row["event"], row["severity"], row["peer"]) == (
        "peer_reset",
        "error",
        "[192.168.70.92]:25266",
    )


def test_a_bare_broken_pipe_is_a_peer_that_closed():
    # pytorch/pytorch#11364 (torch 1.0): `ProcessGroupGloo(store, rank, world_size)` after rank
    # 0 had exited
    row = only(gloo_events(["RuntimeError: Broken pipe"]))
    assert (row["event"], row["severity"], row["peer"]) == ("peer_closed", "error", None)
    # Python's own EPIPE (a closed stdout pipe) is no peer of a collective
    assert gloo_events(["BrokenPipeError: [Errno 32] Broken pipe"]).is_empty()


def test_an_older_gloo_read_timeout_is_a_transport_timeout_with_its_peer():
    # NVIDIA/sentiment-discovery#43 (torch 0.4): the first all_reduce after an epoch timed out
    line = "RuntimeError: [/opt/conda/conda-bld/pytorch_1532579245307/work/third_party/gloo/gloo/transport/tcp/buffer.cc:76] Read timeout [127.0.0.1]:32444"
    row = only(gloo_events([line]))
    assert (row["event"], row["peer"], row["timeout_ms"]) == (
        "transport_timeout",
        "[127.0.0.1]:32444",
        None,
    )


def test_pair_closed():
    # torch 2.13 on this machine: the rank whose peer timed out first
    row = only(gloo_events(["[rank1]: RuntimeError: Application timeout caused pair closure"]))
    assert (row["event"], row["severity"], row["rank"]) == ("pair_closed", "error", 1)


@pytest.mark.parametrize(
    ("line", "sizes"),
    [
        # torch 2.13 on this machine (gloo with pytorch/gloo#456's wording): 8 floats sent, 4 expected
        (
            "  what():  [enforce fail at /__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:456] op.preamble.length <= op.nbytes. 32 vs 16. Received data size doesn't match expected size. Is there a distributed collective mismatch in your code?",
            [32, 16],
        ),
        # PrimeIntellect-ai/prime-diloco#68, pytorch/gloo#334 (before the wording was added)
        (
            "  what():  [enforce fail at ../third_party/gloo/gloo/transport/tcp/pair.cc:446] op.preamble.length <= op.nbytes. 1046204 vs 1040256",
            [1046204, 1040256],
        ),
        (
            "  what():  [enforce fail at ../third_party/gloo/gloo/transport/tcp/pair.cc:490] op.preamble.length <= op.nbytes. 881392472 vs 881392448",
            [881392472, 881392448],
        ),
        # pytorch/gloo#456 (the message before the fix, as a Python exception)
        (
            "gloo::EnforceNotMet: [enforce fail at fbcode/gloo/transport/tcp/pair.cc:456] op.preamble.length <= op.nbytes. 194478720 vs 4",
            [194478720, 4],
        ),
    ],
)
def test_size_mismatch_keeps_received_and_expected_bytes(line, sizes):
    row = only(gloo_events([line]))
    assert (row["event"], row["severity"], row["values"]) == ("size_mismatch", "error", sizes)


def test_connect_failed():
    # sgl-project/sglang#3226
    line = "RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error"
    row = only(gloo_events([line]))
    assert (row["event"], row["severity"]) == ("connect_failed", "error")


@pytest.mark.parametrize(
    "line",
    [
        # NCCL's own socket errors and service-thread notes are not gloo's (NVIDIA/nccl-tests#166, funasr-2006)
        "gpu004:2200689:2200706 [3] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer gpu004.ds-a4-r02.abc.com<55693>",
        "liangxianchen-funasr-15wh-train-lxc0-w-0:15325:16199 [2] NCCL INFO [Service thread] Connection closed by localRank 2",
        "a100-st-p4d24xlarge-22:183006:183181 [1] misc/socket.cc:538 NCCL WARN Net : Connection closed by remote peer a100-st-p4d24xlarge-22.luciodelelis-92732890-0458-4f76-8369-c4fee80b23e7.pcluster<47861>",
    ],
)
def test_nccl_socket_lines_are_not_gloo(line):
    assert gloo_events([line]).is_empty()


def test_a_pair_that_could_not_connect_is_a_connect_failure_with_its_peer():
    # pytorch/pytorch#15592, verbatim
    line = "  what():  [/opt/conda/conda-bld/pytorch_1544084119927/work/third_party/gloo/gloo/transport/tcp/pair.cc:724] connect [127.0.1.1]:3210: Connection refused"
    row = only(parsed_by("gloo", [line]))
    assert (row["event"], row["peer"]) == ("connect_failed", "[127.0.1.1]:3210")


# aws-samples/aws-do-eks#50 and #51, verbatim (the PR author's excerpts of vLLM's gloo world
# group on two EKS nodes): gloo falling back to the loopback, then told an NCCL-style exclusion
AWS_DO_EKS_50 = [
    "[rank8] Warning: Unable to resolve hostname to a (local) address. Using the loopback",
    "        address as fallback. Manually set the network interface with GLOO_SOCKET_IFNAME",
    "[rank8] Gloo connectFullMesh failed ... timed out connecting: SO_ERROR: Connection refused,",
    "        remote=[127.0.0.1]:14215",
]
AWS_DO_EKS_51 = [
    "RuntimeError: [enforce fail at .../gloo/transport/tcp/device.cc:84]",
    "  ifa != nullptr. Unable to find address for: ^lo",
]
# IAHispano/Applio#79, verbatim (Windows, where gloo's transport is libuv's): the device for the
# host made with no interface nor host name to bind to
APPLIO_79 = [
    "    backend_class = ProcessGroupGloo(backend_prefix_store, group_rank, group_size, timeout=timeout)",
    "RuntimeError: GlooDeviceFactory::makeUVDevice(): interface or hostname can't be empty",
]
# aws-samples/aws-do-eks#69, verbatim: the failed connect's detail line names its rank and group
AWS_DO_EKS_69_PAIR = "  (rank=8, size=16, local=[127.0.0.1])"


def test_gloo_s_loopback_fallback_and_its_refused_remote_are_read():
    rows = gloo_events(AWS_DO_EKS_50)
    assert rows.select("line", "event", "severity", "peer").rows() == [
        (1, "loopback_fallback", "warning", None),
        (3, "connect_failed", "error", None),
        (4, "connect_failed", "error", "[127.0.0.1]:14215"),
    ]


def test_an_interface_gloo_cannot_find_is_read_with_its_name():
    row = only(gloo_events(AWS_DO_EKS_51))
    assert (row["event"], row["device"]) == ("no_interface", "^lo")


def test_an_empty_interface_or_host_name_is_read_as_no_interface_with_none_named():
    row = only(gloo_events(APPLIO_79))
    assert (row["line"], row["event"], row["device"]) == (2, "no_interface", None)


def test_a_failed_pair_s_detail_line_gives_its_rank_group_size_and_address():
    row = only(gloo_events([AWS_DO_EKS_69_PAIR]))
    assert (row["event"], row["rank"], row["world_size"], row["peer"]) == (
        "connect_failed",
        8,
        16,
        "[127.0.0.1]",
    )


# pytorch/gloo#462, verbatim (blank lines between as posted): each rank's report once its
# full mesh is up, in a healthy 8-rank job
CONNECTED = [
    "[Gloo] Rank 5 is connected to 7 peer ranks. Expected number of connected peer ranks is : 7",
    "",
    "[Gloo] Rank 7 is connected to 7 peer ranks. Expected number of connected peer ranks is : 7",
    "",
    "[Gloo] Rank 0 is connected to 7 peer ranks. Expected number of connected peer ranks is : 7",
]


def test_a_rank_s_mesh_report_states_its_rank_and_the_world():
    found = parsed_by("gloo", CONNECTED).sort("line")
    assert found.get_column("event").to_list() == ["gloo_connected"] * 3
    assert found.get_column("rank").to_list() == [5, 7, 0]
    assert set(found.get_column("world_size").to_list()) == {8}
    assert set(found.get_column("severity").cast(str).to_list()) == {"info"}


def test_healthy_mesh_reports_are_a_job_with_no_failure(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": CONNECTED})
    assert analysis.verdict is None and analysis.unrecognised_lines == 0
    assert analysis.job.world_size is not None and analysis.job.world_size.value == 8


def test_a_rank_connected_to_fewer_peers_than_expected_is_warned():
    short = [CONNECTED[0].replace("connected to 7 peer", "connected to 5 peer")]
    (row,) = parsed_by("gloo", short).iter_rows(named=True)
    assert (row["severity"], row["value"]) == ("warning", 5)
