"""Open MPI's error reports from inside a process (parsers/mpi_errors.py)."""

from __future__ import annotations

from pathlib import Path

from tests.builders import analyze_files, only, parsed_by

# deepspeedai/DeepSpeed#935, verbatim (mpirun --tag-output on Azure ML): rank 3 alone fails to
# join the MPI job while ranks 4 and 8 start
RANK_3_NEVER_JOINED = [
    "2021-04-07 22:13:55 [1,4]<stdout>:[2021-04-07 22:13:53,125] [INFO] [distributed.py:37:init_distributed] Not using the DeepSpeed or torch.distributed launchers, attempting to detect MPI environment...",
    "2021-04-07 22:13:55 [1,3]<stderr>:[az-wus2-v100-32gb-2-worker-cbfqfc:04757] PMIX ERROR: ERROR STRING NOT FOUND in file ptl_tcp.c at line 790",
    "2021-04-07 22:13:55 [1,3]<stderr>:[az-wus2-v100-32gb-2-worker-cbfqfc:04757] OPAL ERROR: Unreachable in file pmix3x_client.c at line 113",
    "2021-04-07 22:13:55 [1,3]<stderr>:*** An error occurred in MPI_Init_thread",
    "2021-04-07 22:13:55 [1,3]<stderr>:*** on a NULL communicator",
    "2021-04-07 22:13:55 [1,3]<stderr>:*** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,",
    "2021-04-07 22:13:55 [1,3]<stderr>:***    and potentially your MPI job)",
    "2021-04-07 22:13:55 [1,3]<stderr>:[az-wus2-v100-32gb-2-worker-cbfqfc:04757] Local abort before MPI_INIT completed completed successfully, but am not able to aggregate error messages, and not able to guarantee that all other processes were killed!",
    "2021-04-07 22:13:55 [1,8]<stdout>:Starting the daemon thread to refresh tokens in background for process with pid = 383",
]

# horovod/horovod#465, verbatim: the same banner from three untagged processes of one host
BANNER_OF = [
    "*** An error occurred in MPI_Init_thread",
    "*** on a NULL communicator",
    "*** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,",
    "***    and potentially your MPI job)",
    "[host1:{pid}] Local abort before MPI_INIT completed completed successfully,",
    " but am not able to aggregate error messages, and not able to guarantee that all other processes",
    " were killed!",
]

# Xilinx/ACCL#104, verbatim: every rank's tests failed, then rank 1 called MPI_Abort
ABORT_NOTICE = [
    "[1,7]<stdout>:3 tests failed on rank 7 (skipped 1 tests).",
    "[1,1]<stdout>:3 tests failed on rank 1 (skipped 1 tests).",
    "[1,0]<stdout>:3 tests failed on rank 0 (skipped 1 tests).",
    "--------------------------------------------------------------------------",
    "MPI_ABORT was invoked on rank 1 in communicator MPI_COMM_WORLD",
    "with errorcode 1.",
    "",
    "NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.",
    "You may or may not see output from other processes, depending on",
    "exactly when Open MPI kills them.",
    "--------------------------------------------------------------------------",
]


def test_the_fatal_error_banner_is_an_mpi_error_of_the_process_with_its_host_and_pid():
    error = only(parsed_by("mpi_errors", RANK_3_NEVER_JOINED).filter(event="exception"))
    assert (error["line"], error["exc_type"]) == (4, "MPI error")
    assert error["exc_message"] == "An error occurred in MPI_Init_thread"
    assert (error["host"], error["pid"]) == ("az-wus2-v100-32gb-2-worker-cbfqfc", 4757)


def test_the_rank_whose_mpi_init_failed_is_the_verdict_with_a_fix_for_mpi_start_up(tmp_path):
    analysis = analyze_files(tmp_path, {"output.log": RANK_3_NEVER_JOINED})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [3])
    assert "MPI_Init" in verdict.finding.fix and "relaunch" in verdict.finding.fix
    # the banner's lines are read, and rank 8's word of its own pid (AzureML's token refresher)
    assert analysis.unrecognised_lines == 0


def test_banners_of_untagged_processes_name_their_host_and_blame_no_rank(tmp_path):
    lines = [line.format(pid=pid) for pid in (71142, 71144, 71141) for line in BANNER_OF]
    errors = parsed_by("mpi_errors", lines).filter(event="exception")
    assert errors.get_column("pid").to_list() == [71142, 71144, 71141]
    analysis = analyze_files(tmp_path, {"output.log": lines})
    assert analysis.verdict.finding.kind == "rank_exception" and analysis.verdict.ranks == []
    assert "host1" in analysis.verdict.finding.summary
    assert analysis.unrecognised_lines == 0


def test_the_rank_that_invoked_mpi_abort_failed_first(tmp_path):
    aborted = only(parsed_by("mpi_errors", ABORT_NOTICE).filter(event="exception"))
    assert (aborted["rank"], aborted["exitcode"], aborted["exc_type"]) == (1, 1, "MPI_ABORT")
    analysis = analyze_files(tmp_path, {"output.log": ABORT_NOTICE})
    assert analysis.verdict.ranks == [1]


def test_an_abort_notice_cut_before_its_error_code_still_names_the_rank():
    aborted = only(parsed_by("mpi_errors", ABORT_NOTICE[4:5]).filter(event="exception"))
    assert aborted["rank"] == 1 and aborted["exitcode"] is None


# sparticlesteve/pytorch-cuda-mpi-error@3f4f8bd, slurm-422332.out: the banner tagged with its
# process (`[cgpu17:53890] *** ...`) under `srun -l`'s rank prefix, after UCX's DEBUG output
TAGGED_BANNER = (
    (
        (Path(__file__).resolve().parent.parent / "data" / "threads")
        / "pytorch_cuda_mpi_error_slurm422332_tail.log"
    )
    .read_text()
    .splitlines()
)


def test_a_banner_tagged_with_its_process_is_that_process_s_error(tmp_path):
    error = only(parsed_by("mpi_errors", TAGGED_BANNER).filter(event="exception"))
    assert (error["exc_message"], error["host"], error["pid"]) == (
        "An error occurred in MPI_Bcast",
        "cgpu17",
        53890,
    )
    analysis = analyze_files(tmp_path, {"slurm-422332.out": TAGGED_BANNER})
    # UCX, MPI's transport, said first what failed on that rank (`ibv_reg_mr(...) failed: Bad
    # address`, GPU memory it could not register): the banner relays it (tests/parsers/test_ucx.py)
    assert (analysis.verdict.finding.kind, analysis.verdict.ranks) == ("nccl_error", [0])
    assert analysis.verdict.headline == "UCX failed on rank 0"
    # UCX's listing of its setup (`allocation method[0]` ... and the like) is no progress
    assert analysis.job.events.filter(event="stage").is_empty()


# pytorch/pytorch#54097, verbatim: the MPI backend's test, the banner's first line after the
# test runner's own words on its line; the process that reported it is MPI_COMM_WORLD's rank 2
BANNER_AFTER_A_TEST_NAME = [
    "Mar 16 01:30:00   test_destroy_group (__main__.TestMPIWithFork) ... [a34ceb6576ba:611] *** An error occurred in MPI_Comm_create",
    "Mar 16 01:30:00 [a34ceb6576ba:611] *** reported by process [3044540417,2]",
    "Mar 16 01:30:00 [a34ceb6576ba:611] *** on communicator MPI_COMM_WORLD",
    "Mar 16 01:30:00 [a34ceb6576ba:611] *** MPI_ERR_IN_STATUS: error code in status",
    "Mar 16 01:30:00 [a34ceb6576ba:611] *** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,",
    "Mar 16 01:30:00 [a34ceb6576ba:611] ***    and potentially your MPI job)",
    "Mar 16 01:30:00 Traceback (most recent call last):",
    'Mar 16 01:30:00   File "test/run_test.py", line 1075, in <module>',
    "Mar 16 01:30:00     main()",
    'Mar 16 01:30:00   File "test/run_test.py", line 1054, in main',
    "Mar 16 01:30:00     raise RuntimeError(err_message)",
    "Mar 16 01:30:00 RuntimeError: distributed/test_distributed_fork failed!",
]


def test_a_banner_after_other_words_is_read_with_the_rank_that_reported_it(tmp_path):
    error = only(parsed_by("mpi_errors", BANNER_AFTER_A_TEST_NAME).filter(event="exception"))
    assert (error["exc_message"], error["rank"]) == ("An error occurred in MPI_Comm_create", 2)
    analysis = analyze_files(tmp_path, {"test.log": BANNER_AFTER_A_TEST_NAME})
    assert analysis.verdict.ranks == [2]
    assert analysis.verdict.headline == "Rank 2 died of an MPI error"


# olcf/olcf-user-docs, software/analytics/pytorch_frontier.rst @0252320 ("MPICH mpi4py Errors"),
# verbatim: Cray MPICH's MPI_Init fails on Frontier (mpi4py imported after torch)
CRAY_MPI_INIT = [
    "MPICH ERROR: Unable to use a NIC_POLICY of 'NUMA'. Rank 4 is not confined to a single NUMA node.  There are 4 numa_nodes detected (rc=0).",
    "MPICH ERROR [Rank 0] [job id 2853270.0] [Fri Dec 13 13:41:36 2024] [frontier05084] - Abort(2665871) (rank 0 in comm 0): Fatal error in PMPI_Init_thread: Other MPI error, error stack:",
    "MPIR_Init_thread(170).................:",
    "MPID_Init(501)........................:",
    "MPIDI_OFI_mpi_init_hook(580)..........:",
    "open_fabric(1519).....................:",
    "MPIDI_CRAY_ofi_nic_assign_policy(3548):",
    "MPIDI_CRAY_ofi_get_nic_index(1801)....: OFI invalid value for environment variable",
    "MPICH ERROR: Unable to use a NIC_POLICY of 'NUMA'. Rank 4 is not confined to a single NUMA node.  There are 4 numa_nodes detected (rc=0).",
]


def test_mpich_s_abort_is_the_mpi_error_of_its_rank_with_the_stack_s_innermost_words(tmp_path):
    error = only(parsed_by("mpi_errors", CRAY_MPI_INIT).filter(event="exception"))
    assert (error["line"], error["rank"], error["exc_type"]) == (2, 0, "MPI error")
    assert error["exc_message"] == (
        "Fatal error in PMPI_Init_thread: Other MPI error: OFI invalid value for environment variable"
    )
    analysis = analyze_files(tmp_path, {"train.log": CRAY_MPI_INIT})
    assert analysis.unrecognised_lines == 0
    assert (analysis.verdict.finding.kind, analysis.verdict.ranks) == ("rank_exception", [0])
    assert "MPICH_OFI_NIC_POLICY" in analysis.verdict.finding.fix
    assert "import it before torch" in analysis.verdict.finding.fix


def test_cray_mpich_s_complaint_alone_is_an_error_of_no_rank():
    error = only(parsed_by("mpi_errors", CRAY_MPI_INIT[:1]).filter(event="exception"))
    assert error["rank"] is None and error["exc_message"].startswith("Unable to use a NIC_POLICY")
