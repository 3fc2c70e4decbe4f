# ruff: noqa: E501 -- test data are verbatim log lines
"""UCX's errors under Open MPI (parsers/ucx.py)."""

from __future__ import annotations

from tests.builders import analyze_files, parsed_by

# mlcommons/training_results_v3.0#5, verbatim: HugeCTR's DLRM on two nodes; the RoCE address
# handle to the other node timed out, then MPI_Bcast failed in the Python caller
HUGECTR_TWO_NODES = [
    "[HCTR][17:28:15.456][WARNING][RK0][main]: The model name is not specified when creating the solver.",
    "[1695144496.484294] [hpci5201:103648:0]       ib_device.c:1250 UCX  ERROR   ibv_create_ah(dlid=49152 sl=0 port=1 src_path_bits=0 dgid=::ffff:192.160.0.55 sgid_index=3 traffic_class=106) for UD verbs connect on bnxt_re0 failed: Connection timed out",
    "[hpci5201:103648] pml_ucx.c:419  Error: ucp_ep_create(proc=1) failed: Endpoint timeout",
    "[hpci5201:103648] pml_ucx.c:472  Error: Failed to resolve UCX endpoint for rank 1",
    "Traceback (most recent call last):",
    '  File "/dev/shm/data/hugectl/train.py", line 344, in <module>',
    "    model = hugectr.Model(solver, reader, optimizer)",
    "RuntimeError: Runtime error: MPI_ERR_OTHER: known error not in list",
]

# open-mpi/ompi#8003, verbatim: a socket connect timed out, then Open MPI's fatal banner
ALLGATHER_UNREACHABLE = [
    "[1597410401.208990] [node6116:69399:0]           sock.c:116  UCX  ERROR connect(fd=34, dest_addr=INFINIBAND-IP:35892) failed: Connection timed out",
    "[node6116:69399] pml_ucx.c:383  Error: ucp_ep_create(proc=95) failed: Destination is unreachable",
    "[node6116:69399] pml_ucx.c:453  Error: Failed to resolve UCX endpoint for rank 95",
    "[node6116:69399] *** An error occurred in MPI_Allgather",
    "[node6116:69399] *** reported by process [2361982977,159]",
    "[node6116:69399] *** on communicator MPI_COMM_WORLD",
    "[node6116:69399] *** MPI_ERR_OTHER: known error not in list",
    "[node6116:69399] *** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,",
    "[node6116:69399] ***    and potentially your MPI job)",
]

# openucx/ucx#9908, verbatim: the same lines as the text shows them, single-spaced
SINGLE_SPACED = [
    "[1716594409.541480] [gpu1:1581047:0] sock.c:323 UCX ERROR connect(fd=87, dest_addr=172.17.0.1:47133) failed: Connection refused",
    "[gpu1:1581048] pml_ucx.c:419 Error: ucp_ep_create(proc=9) failed: Destination is unreachable",
]


def test_ucx_s_errors_are_transport_failures_of_the_process_they_name():
    errors = parsed_by("ucx", HUGECTR_TWO_NODES).filter(event="nccl_error")
    assert errors.get_column("line").to_list() == [2, 3, 4]
    assert set(errors.get_column("host")) == {"hpci5201"}
    assert set(errors.get_column("pid")) == {103648}
    assert errors.get_column("exc_message")[0].endswith("on bnxt_re0 failed: Connection timed out")


def test_single_spaced_lines_are_read_alike():
    errors = parsed_by("ucx", SINGLE_SPACED).filter(event="nccl_error")
    assert errors.get_column("pid").to_list() == [1581047, 1581048]


def test_the_transport_s_failure_is_the_verdict_not_the_mpi_code_the_caller_raised(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": HUGECTR_TWO_NODES})
    verdict = analysis.verdict
    assert verdict.finding.kind == "nccl_error"
    assert verdict.headline == "UCX failed on a process on host hpci5201"
    assert "UCX_NET_DEVICES" in verdict.finding.fix
    assert not any(f.kind == "rank_exception" for f in analysis.findings)


def test_open_mpi_s_banner_after_ucx_s_error_is_no_failure_of_its_own(tmp_path):
    analysis = analyze_files(tmp_path, {"job.out": ALLGATHER_UNREACHABLE})
    assert analysis.verdict.finding.kind == "nccl_error"
    assert "Connection timed out" in analysis.verdict.finding.summary
    assert analysis.unrecognised_lines == 0
