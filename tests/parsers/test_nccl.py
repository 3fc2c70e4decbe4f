"""NCCL_DEBUG lines and PyTorch's NCCL error wrappers, one test per format variant.

Lines are verbatim from public reports (the source is named above each group); a few built from
NCCL's own format strings say so.
"""

from __future__ import annotations

import json
from datetime import datetime

import polars as pl
import pytest

from tests.builders import analyze_files, parse, parsed_by


def only(events: pl.DataFrame, event: str) -> dict:
    rows = events.filter(pl.col("event") == event)
    assert rows.height == 1, events.select("line", "event")
    return rows.row(0, named=True)


def extra(row: dict) -> dict:
    return json.loads(row["extra"]) if row["extra"] else {}


def recognised(lines: list[str]) -> int:
    from logforensics.events import build_events

    frame = pl.DataFrame(
        {"file": ["job.log"] * len(lines), "line": range(1, len(lines) + 1), "text": lines},
        schema={"file": pl.String, "line": pl.UInt32, "text": pl.String},
    )
    return build_events(frame).recognised_lines


# --- 2.1 the line grammar ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "host", "pid", "tid", "cuda_dev"),
    [
        # NVIDIA/nccl#1038
        (
            "host-2:38610:38610 [0] NCCL INFO NCCL version 2.18.3+cuda12.2",
            "host-2",
            38610,
            38610,
            0,
        ),
        # NVIDIA/nccl#629: upper case, digits and dashes in the host name
        (
            "A03-R28-I49-3-9000018:193027:193119 [7] NCCL INFO comm 0x7fdf08000d00 rank 15 nranks 16 cudaDev 7 busId e7000 - Init COMPLETE",
            "A03-R28-I49-3-9000018",
            193027,
            193119,
            7,
        ),
        # horovod/horovod#3929: Open MPI --tag-output prefix, not peeled by framing
        (
            "[1,3]<stdout>:smc-gpu-03:29881:30401 [0] NCCL INFO init.cc:903 -> 5",
            "smc-gpu-03",
            29881,
            30401,
            0,
        ),
        # NVIDIA/nccl#957: Open MPI --timestamp-output --tag-output
        (
            "Fri Aug 11 12:31:45 2023[1,0]<stdout>:tomte401:1850301:1881341 [0] transport.cc:154 NCCL WARN Cuda failure 'invalid argument'",
            "tomte401",
            1850301,
            1881341,
            0,
        ),
        # NVIDIA/nccl#1672: Ray worker prefix and dedup suffix
        (
            "(WorkerDict pid=3569860) degamts15:3569860:3571297 [0] NCCL INFO ncclCommInitRank comm 0x7edae6dc2fd0 rank 0 nranks 8 cudaDev 0 nvmlDev 0 busId 4000 commId 0x4e52464bbe9f9659 - Init COMPLETE [repeated 8x across cluster]",
            "degamts15",
            3569860,
            3571297,
            0,
        ),
        # NVIDIA/nccl#795: a host name with dots (in the message) and dashes
        (
            "a100-st-p4d24xlarge-22:183006:183181 [1] misc/socket.cc:538 NCCL WARN Net : Connection closed by remote peer a100-st-p4d24xlarge-22.luciodelelis-92732890-0458-4f76-8369-c4fee80b23e7.pcluster<47861>",
            "a100-st-p4d24xlarge-22",
            183006,
            183181,
            1,
        ),
        # facebookresearch/fairseq#1700: YARN container host names
        (
            "container-e28-1580189644036-2850-02-000003:105:185 [0] init.cc:1247 NCCL WARN Mismatched collective detected, please check your collective calls at and around rank 11. You can use NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=COLL to see the collective logs",
            "container-e28-1580189644036-2850-02-000003",
            105,
            185,
            0,
        ),
    ],
)
def test_reads_host_pid_tid_and_device_wherever_the_identity_stands(line, host, pid, tid, cuda_dev):
    row = parse([line]).row(0, named=True)
    assert (row["host"], row["pid"], row["tid"], row["cuda_dev"]) == (host, pid, tid, cuda_dev)
    assert row["family"] == "nccl"


def test_the_optional_timestamp_prefix_of_nccl_2_26_is_the_event_time():
    # NVIDIA/nccl#1647
    line = "[2025-03-18 21:25:51] nickelpie-job-0:1:1 [0] NCCL INFO NCCL version 2.26.2+cuda12.8"
    row = only(parse([line]), "nccl_version")
    assert row["timestamp"] == datetime(2025, 3, 18, 21, 25, 51)
    assert (row["host"], row["pid"], row["nccl_version"]) == (
        "nickelpie-job-0",
        1,
        "2.26.2+cuda12.8",
    )


def test_a_warn_line_names_its_source_and_the_blank_line_before_it_stays_blank():
    # horovod/horovod#3929 (the `[1,2]<stdout>:` tag before the blank line is the launcher's)
    lines = [
        "",
        "smc-gpu-03:29880:30398 [0] init.cc:497 NCCL WARN Duplicate GPU detected : rank 2 and rank 0 both on CUDA device 1000",
    ]
    events = parse(lines)
    assert events.height == 1
    row = events.row(0, named=True)
    assert (row["line"], row["frame"], row["severity"]) == (2, "init.cc:497", "error")


def test_a_warn_with_its_function_names_it_in_the_frame():
    # format string of NVIDIA/nccl src/debug.cc (2.30): "[%d] %s:%d (%s) NCCL WARN %s"
    line = "gpu-7:4242:4250 [3] proxy.cc:1905 (proxyServiceInitOp) NCCL WARN [Proxy Service 3] Failed to execute operation Connect from rank 3, retcode 6"
    row = only(parse([line]), "nccl_error")
    assert row["frame"] == "proxy.cc:1905 in proxyServiceInitOp"
    assert (row["comm_rank"], row["error_code"]) == (3, "6")


def test_trace_lines_are_recognised_without_events():
    # format string of NVIDIA/nccl src/debug.cc: "[%d] %f %s:%d NCCL TRACE %s"
    line = "gpu-7:4242:4250 [3] 1520.341003 ncclProxyProgress:912 NCCL TRACE Received data"
    assert parse([line]).is_empty()
    assert recognised([line]) == 1


# --- 2.2 version -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "version", "host"),
    [
        ("NCCL version 2.10.3+cuda11.3", "2.10.3+cuda11.3", None),  # NVIDIA/nccl#834, bare printf
        (
            "host-2:38610:38610 [0] NCCL INFO NCCL version 2.18.3+cuda12.2",
            "2.18.3+cuda12.2",
            "host-2",
        ),
        (
            "[2025-03-18 21:25:51] nickelpie-job-0:1:1 [0] NCCL INFO NCCL version 2.26.2+cuda12.8",
            "2.26.2+cuda12.8",
            "nickelpie-job-0",
        ),
    ],
)
def test_version_lines(line, version, host):
    row = only(parse([line]), "nccl_version")
    assert (row["nccl_version"], row["host"], row["severity"]) == (version, host, "info")


# --- 2.3 communicator init -----------------------------------------------------------------


INIT_RECORDS = [
    # NCCL 2.4.8 [src]: "comm %p rank %d nranks %d cudaDev %d nvmlDev %d - Init COMPLETE"
    (
        "node-a:7001:7001 [1] NCCL INFO comm 0x7f5e3c001f30 rank 1 nranks 4 cudaDev 1 nvmlDev 1 - Init COMPLETE",
        {"comm": "0x7f5e3c001f30", "comm_rank": 1, "nranks": 4, "cuda_dev": 1, "nvml_dev": 1},
        {"phase": "complete"},
    ),
    # 2.7-2.15 busId, no commId (NVIDIA/nccl#629)
    (
        "A03-R28-I49-3-9000018:193027:193119 [7] NCCL INFO comm 0x7fdf08000d00 rank 15 nranks 16 cudaDev 7 busId e7000 - Init COMPLETE",
        {"comm_rank": 15, "nranks": 16, "cuda_dev": 7, "bus_id": "e7000", "comm_id": None},
        {"phase": "complete"},
    ),
    # 2.18.3 Init START with nvmlDev and commId (NVIDIA/nccl#1038)
    (
        "host-2:38610:38610 [0] NCCL INFO comm 0x1277bf60 rank 0 nranks 1 cudaDev 0 nvmlDev 0 busId 65000 commId 0xbd10cc2bcb56e132 - Init START",
        {
            "comm_rank": 0,
            "nranks": 1,
            "nvml_dev": 0,
            "bus_id": "65000",
            "comm_id": "0xbd10cc2bcb56e132",
        },
        {"phase": "start"},
    ),
    # 2.21+ API prefix (NVIDIA/nccl-tests#252)
    (
        "kolyoz2:25146:25827 [0] NCCL INFO ncclCommInitRank comm 0x559d5aa8ca00 rank 4 nranks 8 cudaDev 0 nvmlDev 0 busId 42000 commId 0x996ee6f117cb8e1e - Init START",
        {"comm": "0x559d5aa8ca00", "comm_rank": 4, "nranks": 8, "bus_id": "42000"},
        {"phase": "start", "api": "ncclCommInitRank"},
    ),
    # NVIDIA/nccl#1814
    (
        "hostname-test:984:1257 [4] NCCL INFO comm 0x557fe785f7a0 rank 36 nranks 64 cudaDev 4 nvmlDev 4 busId 9b000 commId 0x5ae77eb5ea4ec1ee - Init COMPLETE",
        {"comm_rank": 36, "nranks": 64, "cuda_dev": 4, "nvml_dev": 4, "bus_id": "9b000"},
        {"phase": "complete"},
    ),
    # 2.26 timestamp prefix (NVIDIA/nccl#1647)
    (
        "[2025-03-18 21:25:51] nickelpie-job-0:1:1 [0] NCCL INFO ncclCommInitRank comm 0x222431b0 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1901000 commId 0x470f96b16d11fb71 - Init START",
        {"comm_rank": 0, "nranks": 2, "bus_id": "1901000", "comm_id": "0x470f96b16d11fb71"},
        {"phase": "start", "api": "ncclCommInitRank"},
    ),
    # Ray (NVIDIA/nccl#1672)
    (
        "(WorkerDict pid=3569860) degamts15:3569860:3571297 [0] NCCL INFO ncclCommInitRank comm 0x7edae6dc2fd0 rank 0 nranks 8 cudaDev 0 nvmlDev 0 busId 4000 commId 0x4e52464bbe9f9659 - Init COMPLETE [repeated 8x across cluster]",
        {"comm_rank": 0, "nranks": 8, "bus_id": "4000", "comm_id": "0x4e52464bbe9f9659"},
        {"phase": "complete", "api": "ncclCommInitRank"},
    ),
    # 2.23-2.26 split [src]: "%s comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx parent %p
    # splitCount %d color %d key %d- Init START" (no space before the dash)
    (
        "gpu-3:5511:5602 [2] NCCL INFO ncclCommSplit comm 0x55d0c0201000 rank 2 nranks 8 cudaDev 2 nvmlDev 2 busId 3a000 parent 0x55d0c0200000 splitCount 1 color 0 key 2- Init START",
        {"comm_rank": 2, "nranks": 8, "bus_id": "3a000", "comm_id": None},
        {
            "phase": "start",
            "api": "ncclCommSplit",
            "parent": "0x55d0c0200000",
            "color": 0,
            "key": 2,
        },
    ),
    # 2.30 [src]: "[Rank %d] %s comm %p rank %d nranks %d ... commId 0x%llx - Init START"
    (
        "gpu-3:5511:5602 [2] NCCL INFO [Rank 2] ncclCommInitRank comm 0x55d0c0200000 rank 2 nranks 8 cudaDev 2 nvmlDev 2 busId 3a000 commId 0x5ae77eb5ea4ec1ee - Init START",
        {"comm_rank": 2, "nranks": 8, "bus_id": "3a000", "comm_id": "0x5ae77eb5ea4ec1ee"},
        {"phase": "start", "api": "ncclCommInitRank"},
    ),
    # nRanks/nNodes/localRanks line, 2.20+ (NVIDIA/nccl#1357)
    (
        "qh100-gpu20:39634:39692 [5] NCCL INFO comm 0x5558e3c10180 rank 13 nRanks 16 nNodes 2 localRanks 8 localRank 5 MNNVL 0",
        {"comm": "0x5558e3c10180", "comm_rank": 13, "nranks": 16, "cuda_dev": 5},
        {"phase": "layout", "nnodes": 2, "local_ranks": 8, "local_rank": 5},
    ),
]


@pytest.mark.parametrize(("line", "columns", "details"), INIT_RECORDS)
def test_init_records_of_every_version(line, columns, details):
    row = only(parse([line]), "nccl_init")
    assert {name: row[name] for name in columns} == columns
    assert extra(row) == details
    assert row["severity"] == "info"


def test_the_world_communicator_init_gives_the_process_its_rank():
    lines = [
        "hostname-test:984:1257 [4] NCCL INFO comm 0x557fe785f7a0 rank 36 nranks 64 cudaDev 4 nvmlDev 4 busId 9b000 commId 0x5ae77eb5ea4ec1ee - Init COMPLETE",
        "hostname-test:984:1257 [4] NCCL INFO init.cc:903 -> 5",
    ]
    unwind = only(parse(lines), "nccl_unwind")
    assert (unwind["rank"], unwind["rank_from"]) == (36, "process")


@pytest.mark.parametrize(
    "line",
    [
        # NVIDIA/nccl#1647
        "[2025-03-18 21:25:52] nickelpie-job-0:1:1 [0] NCCL INFO RAS client listening socket at ::1<28028>",
        # 2.4 topology: NVIDIA/nccl#875, #1189, NVIDIA/nccl#1232 (ring lists name no own rank)
        "xxx-xxx-xxx-xxx:172719:172823 [0] NCCL INFO Channel 00/02 :    0   1",
        "H20-GPU-06:4015540:4015653 [1] NCCL INFO Tree 1 : 1 -> 3 -> 2/-1/-1",
        "09677202c889:6253:6644 [2] NCCL INFO Connected all rings",
        "tj5-sc-ai-h800r-dev01:533:1765 [2] NCCL INFO 16 coll channels, 0 collnet channels, 16 nvls channels, 16 p2p channels, 2 p2p channels per peer",
        "[1] node2:22555:22555 [0] NCCL INFO Connected all rings",
        # 2.5 (pytorch/pytorch#22834)
        "dlciwpwqw7kd1h3y-master-0:301:382 [3] NCCL INFO [Service thread] Connection closed by localRank 3",
        # Lightning-AI/pytorch-lightning#19487 (nccl-rank-6.log)
        "pbg-dgx-1:1243335:1243335 [6] NCCL INFO cudaDriverVersion 12020",
        "pbg-dgx-1:1243335:1244249 [6] NCCL INFO NVLS multicast support is not available on dev 6",
    ],
)
def test_topology_and_chatter_are_recognised_without_events(line):
    assert parse([line]).is_empty()
    assert recognised([line]) == 1


@pytest.mark.parametrize(
    ("line", "interface", "address"),
    [
        # NVIDIA/nccl#834 (newer NCCL: no `[0]` before the interface)
        (
            "SH-IDC1-10-142-5-42:40544:40544 [0] NCCL INFO Bootstrap : Using ib0:10.142.205.42<0>",
            "ib0",
            "10.142.205.42",
        ),
        # Lightning-AI/pytorch-lightning#19487 (nccl-rank-6.log): the first of four is taken
        (
            "pbg-dgx-1:1243335:1244249 [6] NCCL INFO NET/Socket : Using [0]enp226s0:10.148.54.242<0> [1]vethe42dbfb:fe80::a0ec:26ff:fe84:f001%vethe42dbfb<0> [2]vethd8013ee:fe80::f8e4:5dff:febd:1409%vethd8013ee<0> [3]vethfa79788:fe80::6813:94ff:fe9a:17e4%vethfa79788<0>",
            "enp226s0",
            "10.148.54.242",
        ),
    ],
)
def test_the_interface_nccl_took_is_an_info_event(line, interface, address):
    taken = only(parse([line]), "nccl_interface")
    assert (taken["device"], taken["peer"], taken["severity"]) == (interface, address, "info")


@pytest.mark.parametrize(
    ("line", "host", "own_rank"),
    [
        # NVIDIA/nccl#875: a tree line names the process between its two arrows
        (
            "xxx-xxx-xxx-xxx:172719:172823 [0] NCCL INFO Trees [0] 1/-1/-1->0->-1 [1] -1/-1/-1->0->1",
            "xxx-xxx-xxx-xxx",
            0,
        ),
        # NVIDIA/nccl#302 (NCCL 2.5: up and down trees on one line)
        (
            "[155] crow-ib-new-nccl-256-info-19:5330:5499 [3] NCCL INFO Trees [0] 154/-1/-1->155->153|153->155->154/-1/-1 [1] 153/-1/-1->155->154|154->155->153/-1/-1 [2] 154/-1/-1->155->153|153->155->154/-1/-1 [3] 153/146/162->155->154|154->155->153/146/162",
            "crow-ib-new-nccl-256-info-19",
            155,
        ),
        # NVIDIA/nccl#1189: prev -> rank -> next
        ("H20-GPU-05:1789224:1789735 [0] NCCL INFO Ring 02 : 2 -> 0 -> 1", "H20-GPU-05", 0),
        # NVIDIA/nccl#226 (NCCL 2.4): the sender prints itself first, the receiver second
        (
            "ip-172-31-10-82:45236:45241 [0] NCCL INFO Ring 00 : 30 -> 28 [send] via NET/Socket/0",
            "ip-172-31-10-82",
            30,
        ),
        (
            "ip-172-31-12-210:45305:45310 [0] NCCL INFO Ring 00 : 46 -> 44 [receive] via NET/Socket/0",
            "ip-172-31-12-210",
            44,
        ),
        # NVIDIA/nccl#302: a P2P ring line with bus ids
        (
            "[155] crow-ib-new-nccl-256-info-19:5330:5499 [3] NCCL INFO Ring 00 : 155[3d000] -> 157[b2000] via P2P/IPC",
            "crow-ib-new-nccl-256-info-19",
            155,
        ),
        # NVIDIA/nccl#952, NVIDIA/Megatron-LM#516, NVIDIA/nccl#1412: channel lines
        (
            "<cluster_name>:919:1150 [0] NCCL INFO Channel 01/0 : 8[0] -> 15[7] via P2P/IPC/read",
            "<cluster_name>",
            8,
        ),
        (
            "<cluster_name>:926:1151 [7] NCCL INFO Channel 03/0 : 15[7] -> 6[6] [send] via NET/Socket/3",
            "<cluster_name>",
            15,
        ),
        (
            "09677202c889:6253:6644 [2] NCCL INFO Channel 23/0 : 2[201c0] -> 3[201d0] via P2P/IPC/read",
            "09677202c889",
            2,
        ),
        (
            "swat1-04:2017630:2017700 [4] NCCL INFO Channel 03/0 : 13[5] -> 4[4] [receive] via NET/IB/3",
            "swat1-04",
            4,
        ),
    ],
)
def test_a_topology_line_states_the_process_s_own_rank(line, host, own_rank):
    row = only(parse([line]), "nccl_topology")
    assert (row["host"], row["comm_rank"], row["severity"]) == (host, own_rank, "info")
    assert recognised([line]) == 1


def test_one_topology_event_per_process_and_rank_the_other_lines_counted():
    # NVIDIA/nccl#302: one process's tree line and its three P2P ring lines
    lines = [
        "[155] crow-ib-new-nccl-256-info-19:5330:5499 [3] NCCL INFO Trees [0] 154/-1/-1->155->153|153->155->154/-1/-1 [1] 153/-1/-1->155->154|154->155->153/-1/-1 [2] 154/-1/-1->155->153|153->155->154/-1/-1 [3] 153/146/162->155->154|154->155->153/146/162",
        "[155] crow-ib-new-nccl-256-info-19:5330:5499 [3] NCCL INFO Ring 00 : 155[3d000] -> 157[b2000] via P2P/IPC",
        "[155] crow-ib-new-nccl-256-info-19:5330:5499 [3] NCCL INFO Ring 00 : 155[3d000] -> 153[1b000] via P2P/IPC",
        "[155] crow-ib-new-nccl-256-info-19:5330:5499 [3] NCCL INFO Ring 00 : 155[3d000] -> 154[3e000] via P2P/IPC",
    ]
    assert only(parse(lines), "nccl_topology")["line"] == 1
    assert recognised(lines) == 4


def test_a_process_without_its_own_init_record_is_placed_by_its_topology_lines(tmp_path):
    # vllm-project/vllm#9920, verbatim: rank 0's init record and rank 1's channel lines in one
    # excerpt; pid 23541 is rank 1 by its channels, not a rank missing from the logs
    lines = [
        "HP-Z8-Fury-G5-Workstation-Desktop-PC:23458:23665 [0] NCCL INFO comm 0x23ba7ea0 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 47000 commId 0x47dc53f08cbcda96 - Init COMPLETE",
        "HP-Z8-Fury-G5-Workstation-Desktop-PC:23541:23673 [1] NCCL INFO Channel 00 : 1[1] -> 0[0] via SHM/direct/direct",
        "HP-Z8-Fury-G5-Workstation-Desktop-PC:23541:23673 [1] NCCL INFO Channel 01 : 1[1] -> 0[0] via SHM/direct/direct",
    ]
    placed = only(parse(lines), "nccl_topology")
    assert (placed["line"], placed["pid"], placed["comm_rank"]) == (2, 23541, 1)
    analysis = analyze_files(tmp_path, {"console.log": lines})
    assert analysis.job.ranks_seen == (0, 1)


def test_teardown_records():
    # pytorch/pytorch#22834
    line = "dlciwpwqw7kd1h3y-master-0:301:315 [3] NCCL INFO comm 0x12fd4c240 rank 3 nranks 4 cudaDev 3 busId 70 - Abort COMPLETE"
    row = only(parse([line]), "nccl_abort")
    assert (row["comm_rank"], row["nranks"], row["bus_id"], row["severity"]) == (3, 4, "70", "info")
    assert extra(row) == {"phase": "abort"}
    destroy = line.replace("Abort", "Destroy")  # same format string, `%s` = Destroy
    assert extra(only(parse([destroy]), "nccl_abort")) == {"phase": "destroy"}


def test_a_record_whose_process_identity_was_cut_off_is_still_read():
    # InternLM/xtuner#251, verbatim: the paste starts each NCCL line at `NCCL INFO`
    line = "NCCL INFO comm 0x24a37dd0 rank 1 nranks 2 cudaDev 0 busId 2010 - Abort COMPLETE"
    row = only(parse([line]), "nccl_abort")
    assert (row["comm_rank"], row["nranks"], row["host"], row["pid"]) == (1, 2, None, None)
    assert recognised([line, "NCCL INFO [Service thread] Connection closed by localRank 0"]) == 2


# --- 3.1 duplicate GPU ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "host", "rank_a", "rank_b", "bus"),
    [
        # horovod/horovod#3929, #3949
        (
            "[1,2]<stdout>:smc-gpu-03:29880:30398 [0] init.cc:497 NCCL WARN Duplicate GPU detected : rank 2 and rank 0 both on CUDA device 1000",
            "smc-gpu-03",
            2,
            0,
            "1000",
        ),
        (
            "[1,0]<stdout>:chifflot-7:67917:67949 [0] init.cc:748 NCCL WARN Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 3b000",
            "chifflot-7",
            0,
            1,
            "3b000",
        ),
        # NVIDIA/Megatron-LM#661: PyTorch's `Last error:` copy, no host
        ("Duplicate GPU detected : rank 3 and rank 0 both on CUDA device f000", None, 3, 0, "f000"),
        # NCCL 2.30.3 [src] INFO, `%lX`: "Detected ranks %d and %d sharing GPU with bus %lX on this node"
        (
            "gpu-3:5511:5511 [2] NCCL INFO Detected ranks 2 and 5 sharing GPU with bus 3A000 on this node",
            "gpu-3",
            2,
            5,
            "3a000",
        ),
    ],
)
def test_duplicate_gpu_names_both_ranks_and_the_bus(line, host, rank_a, rank_b, bus):
    row = only(parse([line]), "duplicate_gpu")
    assert (row["host"], row["comm_rank"], row["peer_rank"], row["bus_id"]) == (
        host,
        rank_a,
        rank_b,
        bus,
    )
    assert row["severity"] == "error"


def test_the_ranks_a_duplicate_warning_names_are_not_taken_as_the_line_s_rank():
    # horovod/horovod#3929 without the launcher tag: the numbers are communicator ranks
    line = "smc-gpu-03:29880:30398 [0] init.cc:497 NCCL WARN Duplicate GPU detected : rank 2 and rank 0 both on CUDA device 1000"
    assert only(parse([line]), "duplicate_gpu")["rank"] is None


@pytest.mark.parametrize(
    "line",
    [
        # NCCL 2.30.3 [src] src/graph/topo.cc, 2.30.7 [src] src/init.cc: no rank numbers
        "gpu-3:5511:5511 [2] graph/topo.cc:1977 NCCL WARN Multiple ranks detected using the same GPU on this node. Set NCCL_MULTI_RANK_GPU_ENABLE=1 to enable this configuration.",
        "gpu-3:5511:5511 [2] init.cc:1057 NCCL WARN Multiple Ranks are using the same GPU/Partition. Set NCCL_MULTI_RANK_GPU_ENABLE=1 to enable this configuration.",
    ],
)
def test_duplicate_gpu_wordings_without_ranks(line):
    row = only(parse([line]), "duplicate_gpu")
    assert (row["host"], row["pid"], row["comm_rank"], row["severity"]) == (
        "gpu-3",
        5511,
        None,
        "error",
    )


def test_sharing_allowed_by_the_environment_is_information():
    # NCCL 2.30.3 [src]: INFO "Multiple ranks on the same GPU detected and allowed. Disabling NVLS."
    line = "gpu-3:5511:5511 [2] NCCL INFO Multiple ranks on the same GPU detected and allowed. Disabling NVLS."
    row = only(parse([line]), "duplicate_gpu")
    assert row["severity"] == "info" and extra(row) == {"allowed": True}


# --- 3.2 network, system and CUDA failures ---------------------------------------------------


@pytest.mark.parametrize(
    ("line", "peer", "error_code"),
    [
        # NVIDIA/nccl#795
        (
            "a100-st-p4d24xlarge-22:183006:183220 [1] misc/socket.cc:518 NCCL WARN Net : Call to recv from 10.200.84.247<58355> failed : Broken pipe",
            "10.200.84.247<58355>",
            "Broken pipe",
        ),
        (
            "a100-st-p4d24xlarge-22:183006:183220 [1] proxy.cc:1119 NCCL WARN [Proxy Service 9] Failed to execute operation Connect from rank 9, retcode 6",
            None,
            "6",
        ),
        # NVIDIA/nccl-tests#166, #252
        (
            "gpu004:2200689:2200706 [3] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer gpu004.ds-a4-r02.abc.com<55693>",
            "gpu004.ds-a4-r02.abc.com<55693>",
            None,
        ),
        (
            "kolyoz2:25146:25854 [0] ib_plugin.c:1105 NCCL WARN NET/IB : Got completion from peer 10.0.35.1<49189> with error 4, opcode 5327, len 5327, vendor err 81 (Send)",
            "10.0.35.1<49189>",
            "4",
        ),
        # NVIDIA/nccl#1528, #957
        (
            "c76d92cccb6e:72:457 [1] enqueue.cc:58 NCCL WARN Cuda failure 'named symbol not found'",
            None,
            "named symbol not found",
        ),
        (
            "Fri Aug 11 12:31:45 2023[1,0]<stdout>:tomte401:1850301:1881341 [0] transport.cc:154 NCCL WARN Cuda failure 'invalid argument'",
            None,
            "invalid argument",
        ),
        # NCCL 2.26.2 [src] transport/net_ib.cc: "NET/IB: Got completion from peer %s with status=%d ..."
        (
            "gpu-h100-064.pod-a.example.net:219129:219517 [5] transport/net_ib.cc:2358 NCCL WARN NET/IB: Got completion from peer 10.42.0.75<43109> with status=12 opcode=129 len=0 vendor err 129 (Recv) hca mlx5_5",
            "10.42.0.75<43109>",
            "12",
        ),
        # aws/aws-ofi-nccl#156 (EFA blocked by the security group): the network plugin's request
        (
            "[1,13]<stdout>:nccl-tests-worker-1:35:89 [5] ofi_process_cq:1039 NCCL WARN NET/OFI Request 0x7fbb944701b8 completed with error. RC: 20. Error: unknown error. Completed length: 0, Request: { buffer_index: 255, dev: 1, size: 0, state: CREATED, direction: SEND }",
            None,
            "unknown error",
        ),
        # awslabs/awsome-distributed-ai#312 (the peer's container was OOM-killed): names the peer
        (
            "[1,2]<stdout>:test-nccl-worker-0:199:263 [2] process_err_completion:1562 NCCL WARN NET/OFI Request 0x7f08c0001d30 completed with error. RC: 5. Error: Invalid receiver queue pair number (QPN) My EFA addr: fi_addr_efa://[fe80::30:43ff:fe60:456b]:0:657145598 My host id: i-00ee91ea93e985ee0 Peer EFA addr: fi_addr_efa://[fe80::ed:61ff:fe1d:a3b3]:0:229342137 Peer host id: i-08d8a345a75ab52a0. Completed length: 0, Request: { dev: 2, size: 0, state: CREATED, type: SEND_CTRL }",
            "i-08d8a345a75ab52a0",
            "Invalid receiver queue pair number (QPN)",
        ),
        # aws/aws-ofi-nccl#584 (Libfabric too old for NCCL 2.19): an operation that did not
        # succeed, with its return code, whatever its words
        (
            "register_mr_buffers:544 NCCL WARN NET/OFI Unable to register memory (type = 2) for device 0. RC: -22, Error: Invalid argument",
            None,
            "Invalid argument",
        ),
        # aws/aws-ofi-nccl#24 (Horovod on EFA; the job hung): any call the plugin reports with
        # its code and the error's name, in capitals too
        (
            "[1,23]<stdout>:ip-172-32-45-165:72593:73427 [7] create_nccl_ofi_component:459 NCCL WARN NET/OFI Couldn't open AV. RC: -22, ERROR: Invalid argument",
            None,
            "Invalid argument",
        ),
        # nanochat's two-node notes (NCCL 2.28.9): a verbs call's strerror, whole
        (
            "NCCL WARN Call to ibv_create_cq failed with error Cannot allocate memory",
            None,
            "Cannot allocate memory",
        ),
    ],
)
def test_network_system_and_cuda_warnings_are_errors(line, peer, error_code):
    row = only(parse([line]), "nccl_error")
    assert (row["peer"], row["error_code"], row["severity"]) == (peer, error_code, "error")
    assert line.endswith(row["exc_message"])


def test_the_proxy_warning_states_the_process_rank_in_the_communicator():
    line = "a100-st-p4d24xlarge-22:183006:183220 [1] proxy.cc:1119 NCCL WARN [Proxy Service 9] Failed to execute operation Connect from rank 9, retcode 6"
    assert only(parse([line]), "nccl_error")["comm_rank"] == 9


@pytest.mark.parametrize(
    ("line", "code", "frame"),
    [
        # NVIDIA/nccl#795, horovod/horovod#3929
        (
            "a100-st-p4d24xlarge-22:183006:183220 [1] NCCL INFO misc/socket.cc:535 -> 6",
            "6",
            "misc/socket.cc:535",
        ),
        (
            "a100-st-p4d24xlarge-22:183006:183220 [1] NCCL INFO transport/net_socket.cc:368 -> 6",
            "6",
            "transport/net_socket.cc:368",
        ),
        (
            "a100-st-p4d24xlarge-22:183006:183220 [1] NCCL INFO include/net.h:26 -> 6",
            "6",
            "include/net.h:26",
        ),
        ("[1,2]<stdout>:smc-gpu-03:29880:30398 [0] NCCL INFO init.cc:867 -> 5", "5", "init.cc:867"),
        # NCCL 2.30 [src] INFO_LOC: "%s:%d (%s) -> %d [Async thread]"
        (
            "gpu-3:5511:5602 [2] NCCL INFO group.cc:79 (ncclAsyncJobMain) -> 3 [Async thread]",
            "3",
            "group.cc:79 in ncclAsyncJobMain",
        ),
    ],
)
def test_error_unwinding_lines_carry_the_nccl_result(line, code, frame):
    row = only(parse([line]), "nccl_unwind")
    assert (row["error_code"], row["frame"], row["severity"]) == (code, frame, "warning")


def test_other_warnings_are_generic():
    # HongxinXiang/pytorch-multi-GPU-training-tutorial's RUN.md (a healthy 2-node run): no
    # InfiniBand library, NCCL goes on over sockets
    line = "tesla-105:1475:1475 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]"
    row = only(parse([line]), "nccl_warn")
    assert row["severity"] == "warning" and row["exc_message"] == "Failed to open libibverbs.so[.1]"


def test_a_warning_that_says_it_is_an_error_is_one():
    # format string of NVIDIA/nccl src/graph/rings.cc, which returns ncclInternalError after it:
    # "Error : ring %d does not loop back to start (%d != %d)"
    line = "gpu-3:5511:5602 [2] rings.cc:38 NCCL WARN Error : ring 0 does not loop back to start (3 != 2)"
    row = only(parse([line]), "nccl_error")
    assert row["severity"] == "error" and row["exc_message"].startswith("Error : ring 0")


@pytest.mark.parametrize(
    ("lines", "result", "subsystem"),
    [
        # NVIDIA/nccl#1176 (NCCL 2.19.4, srun --label): plain words, `-> 3` internal error
        (
            [
                "0: compute-st-p4de24xlarge-1:34639:36718 [5] bootstrap.cc:77 NCCL WARN Message truncated : received 256 bytes instead of 4",
                "0: compute-st-p4de24xlarge-1:34639:36718 [5] NCCL INFO bootstrap.cc:554 -> 3",
                "0: compute-st-p4de24xlarge-1:34639:36718 [5] NCCL INFO transport.cc:250 -> 3",
            ],
            3,
            "bootstrap",
        ),
        # NVIDIA/nccl#969 (pdsh host prefix): `NET/IB :` is not the phrase list's `Net :`
        (
            [
                "10.10.23.10: so-ucloud-10-10-23-10:1307367:1307586 [0] transport/net_ib.cc:1038 NCCL WARN NET/IB : req 0/1 tag 0 peer 10.10.23.6<58683> collective mismatch error, local size 496640 remote size 65536",
                "10.10.23.10: so-ucloud-10-10-23-10:1307367:1307586 [0] NCCL INFO include/net.h:32 -> 5",
            ],
            5,
            "infiniband",
        ),
        # NVIDIA/nccl-tests#166
        (
            [
                "ubuntu:39964:40075 [0] misc/socket.cc:483 NCCL WARN socketStartConnect: Connect to 10.0.0.2<45763> failed : Software caused connection abort",
                "ubuntu:39964:40075 [0] NCCL INFO misc/socket.cc:564 -> 2",
                "ubuntu:39964:40075 [0] NCCL INFO misc/socket.cc:586 -> 2",
            ],
            2,
            "socket",
        ),
        # NVIDIA/nccl#573 (NCCL 2.7.8)
        (
            [
                "SHJS-PF4ZKYLL:92777:92889 [0] graph/xml.cc:332 NCCL WARN Could not find real path of /sys/class/pci_bus/0000:01/../../0000:01:00.0",
                "SHJS-PF4ZKYLL:92777:92889 [0] NCCL INFO graph/xml.cc:469 -> 2",
                "SHJS-PF4ZKYLL:92777:92889 [0] NCCL INFO graph/xml.cc:660 -> 2",
            ],
            2,
            "topology",
        ),
    ],
)
def test_a_warn_its_return_code_chain_follows_is_an_error_of_that_result(lines, result, subsystem):
    row = only(parse(lines), "nccl_error")
    assert (row["line"], row["severity"]) == (1, "error")
    assert extra(row) == {"result": result, "subsystem": subsystem}


@pytest.mark.parametrize(
    ("lines", "result", "subsystem"),
    [
        # NVIDIA/nccl#1612, verbatim: lines that kept only their device, not host:pid:tid
        (
            [
                "[0] misc/socket.cc:71 NCCL WARN socketProgress: Connection closed by remote peer 10.10.1.3<36138>",
                "[0] NCCL INFO misc/socket.cc:80 -> 6",
                "[0] NCCL INFO misc/socket.cc:474 -> 6",
            ],
            6,
            "socket",
        ),
        # NVIDIA/nccl#525, verbatim (a Kubeflow pod's log)
        (
            [
                "[3] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device",
                "[3] NCCL INFO include/shm.h:41 -> 2",
            ],
            2,
            "shared memory",
        ),
    ],
)
def test_a_line_that_kept_only_its_device_is_read_as_nccl_output(lines, result, subsystem):
    row = only(parse(lines), "nccl_error")
    assert (row["line"], row["cuda_dev"], row["host"]) == (1, int(lines[0][1]), None)
    assert extra(row) == {"result": result, "subsystem": subsystem}
    unwinds = parse(lines).filter(event="nccl_unwind")
    assert unwinds.get_column("error_code").to_list() == [str(result)] * (len(lines) - 1)


def test_the_chain_belongs_to_the_warn_of_its_own_thread():
    # NVIDIA/nccl-tests#166: one process, the proxy thread's WARN is followed by another
    # thread's lines; only the socket WARN has its chain after it
    lines = [
        "ubuntu:39964:40075 [0] proxy.cc:1519 NCCL WARN [Proxy Service 0] Failed to execute operation Connect from rank 0, retcode 2",
        "ubuntu:39964:40049 [5] NCCL INFO Channel 20 : 5[5] -> 4[4] via SHM/direct/direct",
        "ubuntu:39964:40049 [5] NCCL INFO Channel 21 : 5[5] -> 4[4] via SHM/direct/direct",
        "",
        "ubuntu:39964:40044 [0] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer node1<57557>",
        "ubuntu:39964:40044 [0] NCCL INFO misc/socket.cc:749 -> 6",
    ]
    errors = parse(lines).filter(pl.col("event") == "nccl_error").sort("line")
    assert [extra(row) for row in errors.iter_rows(named=True)] == [
        {"subsystem": "proxy"},
        {"result": 6, "subsystem": "socket"},
    ]


def test_nccl_s_own_out_of_memory_is_an_oom_and_the_warn_after_it_an_error():
    # NVIDIA/nccl#1235
    lines = [
        "ng30903:3063028:3066152 [3] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'",
        "",
        "ng30903:3063028:3066152 [3] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 6291456 bytes",
        "ng30903:3063028:3066152 [3] NCCL INFO transport/p2p.cc:204 -> 1",
    ]
    events = parse(lines)
    oom = only(events, "oom")
    assert (oom["host"], oom["pid"], oom["family"], oom["severity"]) == (
        "ng30903",
        3063028,
        "nccl",
        "error",
    )
    assert extra(only(events, "nccl_error")) == {"result": 1, "subsystem": "cuda"}


def test_the_bootstrap_root_names_the_rank_that_checked_in_twice():
    # ROCm/rccl#876 (RCCL under NCCL_DEBUG=WARN: a path, no host:pid:tid)
    line = "/long_pathname_so_that_rpms_can_package_the_debug_info/src/extlibs/rccl/build/src/bootstrap.cpp:132 NCCL WARN Bootstrap Root : rank 1 of 2 ranks has already checked in"
    row = only(parse([line]), "nccl_error")
    assert (row["peer_rank"], row["nranks"], row["severity"]) == (1, 2, "error")
    assert row["rank"] is None  # the line names the duplicate, not who printed it
    assert extra(row) == {"subsystem": "bootstrap"}
    assert recognised([line]) == 1


def test_a_rank_past_the_communicator_s_size_is_an_error_naming_the_rank_asked():
    # jeffffffli/HybrIK#47: a script launched on 8 GPUs with `--world-size 4`
    line = "ued37c44e4ea65b:6861:6861 [7] init.cc:981 NCCL WARN Invalid rank requested : 7/4"
    row = only(parse([line]), "nccl_error")
    assert (row["comm_rank"], row["nranks"], row["severity"]) == (7, 4, "error")
    assert row["exc_message"] == "Invalid rank requested : 7/4"


def test_nccl_2_4_mismatch_warning_names_the_reporting_rank():
    # facebookresearch/fairseq#1700
    line = "container-e28-1580189644036-2850-02-000003:107:189 [0] init.cc:1247 NCCL WARN Mismatched collective detected, please check your collective calls at and around rank 13. You can use NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=COLL to see the collective logs"
    row = only(parse([line]), "nccl_mismatch")
    assert (row["comm_rank"], row["severity"]) == (13, "error")


def test_nccl_2_9_suspected_mismatch_warning_names_the_reporting_rank():
    # Lightning-AI/pytorch-lightning#8214: the device-side check's other wording, posted with
    # only the device left of the identity
    line = "[0] init.cc:1256 NCCL WARN Your program may be hanging, this may be caused by a collective mismatch around rank 1. Please check your collective calls at and around this rank. You can use NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=COLL to see the collective logs"
    row = only(parse([line]), "nccl_mismatch")
    assert (row["comm_rank"], row["severity"]) == (1, "error")


def test_a_transfer_truncated_between_peers_is_an_error():
    # NVIDIA/nccl#626 (the poster's paste wraps the line before `receiving`)
    line = "transport/net_socket.cc:424 NCCL WARN NET/Socket : peer 192.168.161.30<59210> message truncated :"
    row = only(parse([line]), "nccl_error")
    assert (row["peer"], row["severity"]) == ("192.168.161.30<59210>", "error")
    assert extra(row) == {"subsystem": "socket"}


# --- 3.3 PyTorch's wrappers -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "code", "version", "exc_type"),
    [
        # vllm-project/vllm#10523
        (
            "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1333, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1",
            "unhandled system error",
            "2.18.1",
            "torch.distributed.DistBackendError",
        ),
        # NVIDIA/nccl#1029, behind a pdsh host prefix
        (
            "rdma-test-gpu-worker-1: torch.distributed.DistBackendError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1197, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.3",
            "unhandled cuda error",
            "2.18.3",
            "torch.distributed.DistBackendError",
        ),
        # NVIDIA/nccl#1241: two ranks' writes interleaved on one line
        (
            "torch.distributedtorch.distributed.DistBackendError.: DistBackendErrorNCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1287, invalid usage, NCCL version 2.17.1",
            "invalid usage",
            "2.17.1",
            None,
        ),
        # NVIDIA/Megatron-LM#661: interleaved with another rank's traceback
        (
            ".DistBackendError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1727, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.19.3",
            "invalid usage",
            "2.19.3",
            "DistBackendError",
        ),
    ],
)
def test_pytorch_wrapper_lines(line, code, version, exc_type):
    row = only(parse([line]), "nccl_error")
    assert (row["error_code"], row["nccl_version"], row["exc_type"]) == (code, version, exc_type)
    assert row["frame"].endswith(
        "ProcessGroupNCCL.cpp:" + line.split("ProcessGroupNCCL.cpp:")[1].split(",")[0]
    )


def test_the_last_error_line_becomes_the_wrapper_message():
    # NVIDIA/Megatron-LM#661
    lines = [
        "torch.distributed.DistBackendError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1727, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.19.3",
        "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.",
        "Last error:",
        "Duplicate GPU detected : rank 3 and rank 0 both on CUDA device f000",
    ]
    events = parse(lines)
    wrapper = only(events, "nccl_error")
    assert wrapper["exc_message"] == lines[3]
    assert only(events, "duplicate_gpu")["line"] == 4
    assert recognised(lines) == 4


def test_the_async_form_names_the_collective_and_an_empty_last_error_is_not_read():
    # pytorch/pytorch#149984 (torch 2.7 RC): "Last error:" is followed by the C++ frame header
    lines = [
        "Collective WorkNCCL(SeqNum=2, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1000000) raised the following async exception: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.25.1",
        "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. ",
        "Last error:",
        "Exception raised from checkForNCCLErrorsInternal at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:2501 (most recent call first):",
    ]
    row = only(parse(lines), "nccl_error")
    assert (row["seq"], row["op"], row["timeout_ms"]) == (2, "ALLREDUCE", 1000000)
    assert (row["error_code"], row["nccl_version"]) == ("unhandled system error", "2.25.1")
    assert row["exc_message"] == "unhandled system error"


def test_the_one_line_form_keeps_the_inline_last_error_and_its_peer():
    # tatsu-lab/stanford_alpaca#207 (newlines lost in the issue)
    line = "terminate called after throwing an instance of 'std::runtime_error' what(): NCCL error: remote process exited or there was a network error, NCCL version 2.14.3 ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely. Last error: NET/IB : Got completion from peer 11.214.147.122<39138> with error 12, opcode 0, len 0, vendor err 129"
    row = only(parse([line]), "nccl_error")
    assert row["error_code"] == "remote process exited or there was a network error"
    assert row["exc_message"].startswith("NET/IB : Got completion from peer 11.214.147.122<39138>")
    assert (row["peer"], row["nccl_version"]) == ("11.214.147.122<39138>", "2.14.3")


@pytest.mark.parametrize(
    "line",
    [
        "NCCL_DEBUG=INFO python train.py",
        "Using NCCL_SOCKET_IFNAME=eth0 for the NCCL backend",
        "node-a:1234:1234 [0] something else INFO entirely",
    ],
)
def test_lines_that_only_mention_nccl_are_not_events(line):
    assert parse([line]).filter(pl.col("family") == "nccl").is_empty()


def test_a_result_line_without_pytorch_s_header_is_the_error_with_its_last_error():
    # NVIDIA/nccl#1837, verbatim (a torchx console; NCCL_SOCKET_IFNAME named a missing interface)
    lines = [
        "[trainer0|0]:ncclInternalError: Internal check failed.",
        "[trainer0|0]:Last error:",
        "[trainer0|0]:ncclSocketInit: connecting to address  with family 59936 is neither AF_INET(2) nor AF_INET6(10)",
    ]
    row = only(parse(lines), "nccl_error")
    assert (row["line"], row["error_code"], row["local_rank"]) == (1, "internal error", 0)
    assert row["exc_message"].startswith("ncclSocketInit: connecting to address")
    assert extra(row) == {"subsystem": "socket"}


def test_the_network_plugin_s_errors_name_it_as_their_subsystem():
    # aws/aws-ofi-nccl#156, verbatim
    line = "nccl-tests-worker-1:35:89 [5] ofi_process_cq:1039 NCCL WARN NET/OFI Request 0x7fbb944701b8 completed with error. RC: 20. Error: unknown error. Completed length: 0, Request: { buffer_index: 255, dev: 1, size: 0, state: CREATED, direction: SEND }"
    assert extra(only(parse([line]), "nccl_error"))["subsystem"] == "network plugin"


@pytest.mark.parametrize(
    ("line", "subsystem"),
    [
        # NVIDIA/nccl#1488: NVLink SHARP set-up after a fabric manager restart
        (
            "node23:12098:12141 [2] transport/nvls.cc:244 NCCL WARN Cuda failure 1 'invalid argument'",
            "nvls",
        ),
        ("NCCL WARN Call to ibv_create_cq failed with error Cannot allocate memory", "infiniband"),
    ],
)
def test_a_warn_s_source_and_call_name_its_subsystem(line, subsystem):
    assert extra(only(parse([line]), "nccl_error"))["subsystem"] == subsystem


def test_a_probe_that_found_nothing_is_no_error():
    # a SageMaker data-parallel tutorial's expected output: the plugin looks for a symbol
    line = "configure_nvls_option:287 NCCL WARN NET/OFI Could not find ncclGetVersion symbol"
    assert only(parse([line]), "nccl_warn")["severity"] == "warning"


def test_an_init_s_timings_record_its_completion():
    # NVIDIA/nccl#1646, verbatim (NCCL 2.25)
    line = "d5618706-01:1106802:1106870 [3] NCCL INFO Init timings - ncclCommInitRankConfig: rank 3 nranks 8 total 55.01 (kernels 52.45, alloc 0.41, bootstrap 0.57, allgathers 0.08, topo 1.10, graphs 0.01, connections 0.39, rest 0.00)"  # noqa: E501
    init = only(parsed_by("nccl", [line]), "nccl_init")
    assert (init["event"], init["comm_rank"], init["nranks"]) == ("nccl_init", 3, 8)
    assert json.loads(init["extra"]) == {"phase": "complete", "api": "ncclCommInitRankConfig"}


def test_torch_s_own_nccl_check_names_the_result_by_its_number():
    # the exception line as a DataParallel user's traceback ends (a blog post in the code
    # index on `RuntimeError: NCCL Error 2: unhandled system error`, verbatim)
    error = parsed_by("nccl", ["RuntimeError: NCCL Error 2: unhandled system error"])
    row = error.filter(pl.col("event") == "nccl_error").row(0, named=True)
    assert (row["error_code"], row["exc_type"]) == ("unhandled system error", "RuntimeError")


# littlemex/distributed-ai, 2026-07-19-miles-training-inference-mismatch/experiment/
# h200_results/EFA_rail_asymmetry.md (commit 1fad448), verbatim: PyTorch's wrapper shortened by
# its author, the result's name kept, NCCL's last error on the lines after it
SHORTENED_WRAPPER = [
    "torch.distributed.DistBackendError: NCCL error ... ncclInternalError: Internal check failed.",
    "Last error:",
    "NET/OFI Unexpected number of remote rails for dev 4. Expected 1 but got 2",
    "NET/OFI Unexpected number of remote rails for dev 0. Expected 2 but got 1",
]


def test_a_shortened_wrapper_that_names_the_result_is_an_nccl_error():
    error = only(parsed_by("nccl", SHORTENED_WRAPPER), "nccl_error")
    assert error["line"] == 1 and error["error_code"] == "internal error"
    assert error["exc_type"] == "torch.distributed.DistBackendError"
    assert error["exc_message"] == (
        "NET/OFI Unexpected number of remote rails for dev 4. Expected 1 but got 2"
    )


# pytorch/pytorch#188567, verbatim: the wrapper as the poster's console wrapped it after its
# source location, the result's words on the next line (symmetric memory's rendezvous before
# the NCCL communicator existed)
WRAPPED_WRAPPER = [
    "torch.distributed.DistBackendError: NCCL error in: .../torch/csrc/distributed/c10d/symm_mem/NCCLSymmetricMemory.cu:174,",
    "invalid argument (run with NCCL_DEBUG=WARN for details), NCCL version 2.29.7",
    "Failed to window register segment with ptr 0x..., size 20971520 on rank 0",
]


def test_a_wrapper_wrapped_after_its_source_takes_its_result_from_the_next_line(tmp_path):
    error = only(parsed_by("nccl", WRAPPED_WRAPPER), "nccl_error")
    assert (error["line"], error["error_code"], error["nccl_version"]) == (
        1,
        "invalid argument",
        "2.29.7",
    )
    assert error["frame"].endswith("NCCLSymmetricMemory.cu:174")
    analysis = analyze_files(tmp_path, {"train.log": WRAPPED_WRAPPER})
    assert analysis.verdict.finding.kind == "nccl_error"
    assert "`invalid argument`" in analysis.verdict.finding.summary
    assert analysis.unrecognised_lines == 1  # the detail line, which no parser reads


def test_a_wrapper_cut_at_its_source_with_no_result_after_it_is_left_alone():
    cut = [WRAPPED_WRAPPER[0], "Traceback (most recent call last):"]
    assert parsed_by("nccl", cut).filter(event="nccl_error").height == 0


# NVIDIA/nccl#1664, verbatim: all the reporter quoted, the WARN's words without `NCCL WARN`
BARE_COMPLETION = "NET/IBP:Got completion from peer 7.6.13.83<36315> with status=12 opcode=32698 len=32696 vendor err 129 (Send)"


def test_an_infiniband_completion_error_quoted_by_its_words_alone_is_read(tmp_path):
    (warned,) = (
        parsed_by("nccl", [BARE_COMPLETION]).filter(pl.col("event").is_not_null()).to_dicts()
    )
    assert warned["severity"] == "error" and warned["host"] is None
    verdict = analyze_files(tmp_path, {"issue.txt": [BARE_COMPLETION]}).verdict
    assert verdict.finding.kind == "nccl_error"
    assert "7.6.13.83<36315>" in verdict.finding.summary


# foundation-model-stack/fms-fsdp#94, verbatim: the excerpt of the console the reporter posted
# starts at NCCL's words about its segment (the `Last error:` above them left out); ranks 0 and
# 7 follow with tracebacks cut in FSDP's backward
SHM_SEGMENT_WORDS = [
    "[rank3]: Error while creating shared memory segment /dev/shm/nccl-aqMV6n (size 5767520)",
    "[rank7]: Traceback (most recent call last):",
    '[rank7]:   File "/workspace/fms-fsdp/main_training.py", line 164, in <module>',
    "[rank7]:     fire.Fire(main)",
]


def test_nccl_s_shared_memory_words_quoted_alone_are_its_error(tmp_path):
    (error,) = parsed_by("nccl", SHM_SEGMENT_WORDS).filter(pl.col("event").is_not_null()).to_dicts()
    assert (error["event"], error["rank"], error["line"]) == ("nccl_error", 3, 1)
    analysis = analyze_files(tmp_path, {"console.log": SHM_SEGMENT_WORDS})
    assert analysis.verdict.finding.kind == "nccl_error"
    assert analysis.verdict.headline == "NCCL could not get shared memory (/dev/shm) on rank 3"


def test_the_words_pytorch_quotes_after_last_error_stay_that_error_s_message():
    lines = [
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, remote process exited or there was a network error, NCCL version 2.14.3",
        "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
        "Last error:",
        BARE_COMPLETION,
    ]
    (error,) = parsed_by("nccl", lines).filter(pl.col("event").is_not_null()).to_dicts()
    assert error["line"] == 1 and error["exc_message"] == BARE_COMPLETION


def test_a_warn_of_nccl_before_2_3_without_its_name_is_read(tmp_path):
    # Horovod's troubleshooting guide (docs/troubleshooting.rst), verbatim: NCCL 2.0-2.2 put no
    # `NCCL` before the level; the CUDA IPC open failing is an error, not a notice
    line = "node1:22671:22795 [1] transport/p2p.cu:431 WARN failed to open CUDA IPC handle : 30 unknown error"
    (warned,) = parsed_by("nccl", [line]).filter(pl.col("event").is_not_null()).to_dicts()
    assert (warned["host"], warned["pid"]) == ("node1", 22671)
    assert warned["exc_message"] == "failed to open CUDA IPC handle : 30 unknown error"
    verdict = analyze_files(tmp_path, {"horovod.log": [line]}).verdict
    assert verdict.finding.kind == "nccl_error"


def test_a_warn_of_old_nccl_from_a_header_is_read(tmp_path):
    # NVIDIA/nccl-tests#15, verbatim (NCCL 2.2.13, two servers): the bootstrap's connect,
    # whose source is a header
    line = "gpu-bql-144-103:18553:18611 [0] include/socket.h:360 WARN Call to connect failed : Connection timed out"
    (warned,) = parsed_by("nccl", [line]).filter(pl.col("event").is_not_null()).to_dicts()
    assert (warned["host"], warned["pid"]) == ("gpu-bql-144-103", 18553)
    assert warned["exc_message"] == "Call to connect failed : Connection timed out"
    verdict = analyze_files(tmp_path, {"rank0.log": [line]}).verdict
    assert verdict.finding.kind == "nccl_error"


def test_a_cuda_kernel_s_source_line_is_no_old_nccl_warn():
    line = "/pytorch/aten/src/ATen/native/cuda/TensorCompare.cu:112: _assert_async_cuda_kernel: block: [0,0,0], thread: [0,0,0] Assertion `probability tensor contains either `inf`, `nan` or element < 0` failed."
    assert parsed_by("nccl", [line]).filter(pl.col("event").is_not_null()).is_empty()


def test_a_warn_under_a_job_s_own_logger_keeps_its_source_and_process():
    # NVIDIA/nccl#1618's job logs, verbatim: the job's logger puts NCCL's source and the
    # process in brackets of its own before the level
    line = "[0604/1024][2025-02-16 22:31:34,422] [misc/socket.cc:586] [s12gn3064:pid=3942408] NCCL WARN socketPollConnect poll() returned 1, no POLLOUT events"
    (warned,) = parsed_by("nccl", [line]).filter(pl.col("event").is_not_null()).to_dicts()
    assert (warned["host"], warned["pid"]) == ("s12gn3064", 3942408)
    assert warned["exc_message"] == "socketPollConnect poll() returned 1, no POLLOUT events"
    assert warned["frame"].startswith("misc/socket.cc:586")


# OpenRLHF/OpenRLHF#795, verbatim: an ACCL build's identity all in brackets, under Ray's prefix
ALL_BRACKETED_LINES = [
    "(ActorModelRayActor pid=16101) [dlc1f0bnd3uip696-master-0][16101:17880][0][init.cc:1815] NCCL WARN init.cc:1815 -> 5",
    "(ActorModelRayActor pid=16101) [dlc1f0bnd3uip696-master-0][16101:17880][0][group.cc:74] NCCL INFO /ACCL-P/src/group.cc:74 -> 5 [Async thread]",
    "(ActorModelRayActor pid=16101) ",
    "(ActorModelRayActor pid=16101) [dlc1f0bnd3uip696-master-0][16101:16101][0][group.cc:585] NCCL WARN group.cc:585 -> 3",
]


def test_an_identity_all_in_brackets_is_read_as_the_process_s(tmp_path):
    rows = parsed_by("nccl", ALL_BRACKETED_LINES).filter(pl.col("event").is_not_null())
    first = rows.row(0, named=True)
    assert (first["host"], first["pid"], first["tid"], first["cuda_dev"]) == (
        "dlc1f0bnd3uip696-master-0",
        16101,
        17880,
        0,
    )
    assert first["event"] == "nccl_error" and first["frame"].startswith("init.cc:1815")
    verdict = analyze_files(tmp_path, {"actor.log": ALL_BRACKETED_LINES}).verdict
    assert verdict.finding.kind == "nccl_error"
    assert "dlc1f0bnd3uip696-master-0" in verdict.headline


@pytest.mark.parametrize(
    ("line", "network"),
    [
        # NVIDIA/nccl#1634 (tests/rules/test_nccl_error.py), verbatim
        (
            "HGX-H100-11:18226:18274 [5] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.",
            "internal plugin",
        ),
        (
            "HGX-H100-04:589474:589541 [0] NCCL INFO Plugin Path : /opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so",
            "plugin /opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so",
        ),
        # tests/data/nccl/nccl-857-rank1-stops-calling, verbatim (an older NCCL)
        (
            "ai:487637:487637 [3] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using internal implementation",
            "internal plugin",
        ),
        ("ai:487637:487637 [3] NCCL INFO Using network Socket", "network Socket"),
        # NVIDIA/nccl#226, verbatim (older still: no word of the internal one)
        (
            "ip-172-31-8-153:45343:45343 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so).",
            "internal plugin",
        ),
        # NVIDIA/nccl#1267 (tests/rules/test_nccl_error.py), verbatim
        (
            "instance-8g-96c-1:525765:525765 [0] NCCL INFO NET/Plugin: Loaded net plugin FastSocket (v4)",
            "plugin FastSocket",
        ),
    ],
)
def test_the_network_a_process_s_nccl_set_up_is_read(line, network):
    assert only(parsed_by("nccl", [line]), "nccl_network")["device"] == network


def test_a_plugin_symbol_nccl_did_not_find_says_nothing_of_the_network():
    # NVIDIA/nccl#1267, verbatim: a probe of the plugin's interface versions, not a choice
    line = "instance-8g-96c-1:525765:525765 [0] NCCL INFO NET/Plugin: Failed to find ncclNetPlugin_v6 symbol."
    assert parsed_by("nccl", [line]).filter(pl.col("event") == "nccl_network").is_empty()
