"""Open MPI's report of the first process to end (parsers/mpirun.py)."""

from __future__ import annotations

import polars as pl
import pytest

from logforensics.i18n import translate, translate_headline
from tests.builders import analyze_files, only, parsed_by
from tests.test_i18n import english_runs

# horovod/horovod#1421, verbatim (mpirun under horovodrun, a process of rank 0 exited with 1)
FIRST_EXIT = [
    "Primary job  terminated normally, but 1 process returned",
    "a non-zero exit code. Per user-direction, the job has been aborted.",
    "-------------------------------------------------------",
    "--------------------------------------------------------------------------",
    "mpirun detected that one or more processes exited with non-zero status, thus causing",
    "the job to be terminated. The first process to do so was:",
    "",
    "  Process name: [[29973,1],0]",
    "  Exit code:    1",
]


def test_the_first_process_to_exit_is_a_failed_worker_of_that_rank():
    failed = only(parsed_by("mpirun", FIRST_EXIT).filter(event="worker_failed"))
    assert (failed["rank"], failed["exitcode"], failed["line"]) == (0, 1, 8)


def test_mpiexec_names_a_rank_past_zero():
    # E3SM-Project/scream#1762, verbatim: mpiexec's words, rank 3
    lines = [
        "mpiexec detected that one or more processes exited with non-zero status, thus causing",
        "the job to be terminated. The first process to do so was:",
        "",
        "  Process name: [[2663,1],3]",
        "  Exit code:    1",
    ]
    failed = only(parsed_by("mpirun", lines).filter(event="worker_failed"))
    assert (failed["rank"], failed["exitcode"]) == (3, 1)


def test_a_process_name_without_its_exit_code_is_no_failure():
    assert parsed_by("mpirun", FIRST_EXIT[:-1]).filter(event="worker_failed").is_empty()


def test_the_report_alone_names_the_rank_that_exited(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": FIRST_EXIT})
    assert analysis.verdict is not None and analysis.verdict.ranks == [0]
    assert "first process to exit, with code 1" in analysis.verdict.finding.summary
    # every line is read but the two rules of dashes (and the blank line)
    assert (analysis.recognised_lines, analysis.unrecognised_lines) == (6, 2)


def test_a_signal_death_names_its_rank_and_host():
    # Kay1794/Aware-of-the-history#2, verbatim (PID and node redacted by the reporter)
    line = "mpirun noticed that process rank 1 with PID xxxxxx on node xxxxxxxx exited on signal 9 (Killed)."
    death = only(parsed_by("mpirun", [line]))
    assert (death["event"], death["rank"], death["signal"]) == ("fatal_signal", 1, "SIGKILL")
    assert (death["host"], death["pid"], death["exc_message"]) == ("xxxxxxxx", None, "Killed")


def test_an_unknown_pid_and_node_are_left_empty():
    # horovod/horovod#926, verbatim: Open MPI prints PID 0 and no node name when it has none
    line = "mpirun noticed that process rank 0 with PID 0 on node exited on signal 4 (Illegal instruction)."
    death = only(parsed_by("mpirun", [line]))
    assert (death["rank"], death["signal"], death["pid"], death["host"]) == (
        0,
        "SIGILL",
        None,
        None,
    )


def test_prterun_s_sentence_wrapped_onto_the_next_line_is_read_whole(tmp_path):
    # NVIDIA/nccl-tests#295 (Open MPI 5), verbatim: the sentence breaks after `exited on`
    lines = [
        "prterun noticed that process rank 1 with PID 820212 on node neutron-nvidia exited on",
        "signal 6 (Aborted).",
    ]
    events = parsed_by("mpirun", lines)
    death = only(events.filter(pl.col("event") == "fatal_signal"))
    assert (death["rank"], death["pid"], death["host"], death["signal"]) == (
        1,
        820212,
        "neutron-nvidia",
        "SIGABRT",
    )
    # the wrapped line is recognised with it
    assert analyze_files(tmp_path, {"mpirun.log": lines}).recognised_lines == 2


# openai/jukebox#155, verbatim: MPICH's `mpiexec -n 2` on one workstation, a process killed
HYDRA_KILLED = [
    "===================================================================================",
    "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES",
    "=   PID 9665 RUNNING AT NeuroRTX6000",
    "=   EXIT CODE: 9",
    "=   CLEANING UP REMAINING PROCESSES",
    "=   YOU CAN IGNORE THE BELOW CLEANUP MESSAGES",
    "===================================================================================",
    "YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)",
    "This typically refers to a problem with your application.",
    "Please see the FAQ page for debugging suggestions",
]


def test_hydra_s_banner_names_the_pid_host_and_signal_that_ended_a_process(tmp_path):
    death = only(parsed_by("mpirun", HYDRA_KILLED))
    assert (death["event"], death["pid"], death["host"], death["signal"]) == (
        "fatal_signal",
        9665,
        "NeuroRTX6000",
        "SIGKILL",
    )
    analysis = analyze_files(tmp_path, {"train.log": HYDRA_KILLED})
    assert analysis.verdict is not None and "pid 9665" in analysis.verdict.finding.summary
    assert analysis.unrecognised_lines <= 2  # at most the banner's two rules of `=`


def test_without_its_exit_string_a_code_past_128_is_the_signal():
    # an Intel MPI run's banner (the code index's file 36709440416, an MKL ScaLAPACK test)
    banner = [
        "===================================================================================",
        "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES",
        "=   PID 31907 RUNNING AT **************************",
        "=   EXIT CODE: 139",
        "=   CLEANING UP REMAINING PROCESSES",
        "=   YOU CAN IGNORE THE BELOW CLEANUP MESSAGES",
        "===================================================================================",
    ]
    death = only(parsed_by("mpirun", banner))
    assert (death["event"], death["pid"], death["signal"]) == ("fatal_signal", 31907, "SIGSEGV")


# mpi4py/mpi4py#573, verbatim: Open MPI 5's prterun could not start rank 1 (the conda env's
# python missing on gpu2); the paste joined the notice's `Node:` and `Executable:` lines
NOT_LAUNCHED = [
    "--------------------------------------------------------------------------",
    "prterun was unable to find the specified executable file, and therefore did",
    "not launch the job.  This error was first reported for process rank",
    "1; it may have occurred for other processes as well.",
    "",
    "NOTE: A common cause for this error is misspelling a prterun command",
    "   line parameter option (remember that prterun interprets the first",
    "   unrecognized command line token as the executable).",
    "",
    "Node:       gpu2 Executable: /home/mpi/.conda/envs/mpi/bin/python",
]
# QEF/q-e#32, verbatim: mpirun's wording of the same notice, wrapped before `rank 0`
NOT_LAUNCHED_OLDER = [
    "mpirun was unable to find the specified executable file, and therefore",
    "did not launch the job.  This error was first reported for process",
    "rank 0; it may have occurred for other processes as well.",
    "",
    "NOTE: A common cause for this error is misspelling a mpirun command",
    "      line parameter option (remember that mpirun interprets the first",
    "      unrecognized command line token as the executable).",
    "",
    "Node:       731-sc",
    "Executable: pw.x",
]
# fastpm/fastpm#101, verbatim: an executable it could not run
NOT_EXECUTABLE = [
    "mpirun was unable to launch the specified application as it could not access",
    "or execute an executable:",
    "",
    "Executable: ../src/fastpm",
    "Node: cori16",
    "",
    "while attempting to start process rank 0.",
]


@pytest.mark.parametrize(
    ("lines", "rank", "node", "executable"),
    [
        (NOT_LAUNCHED, 1, "gpu2", "/home/mpi/.conda/envs/mpi/bin/python"),
        (NOT_LAUNCHED_OLDER, 0, "731-sc", "pw.x"),
        (NOT_EXECUTABLE, 0, "cori16", "../src/fastpm"),
    ],
    ids=["prterun", "mpirun", "not-executable"],
)
def test_a_process_the_launcher_could_not_start_is_named_with_its_node(
    lines, rank, node, executable
):
    failed = only(parsed_by("mpirun", lines).filter(pl.col("event") == "launch_failed"))
    assert (failed["rank"], failed["host"], failed["exc_message"]) == (rank, node, executable)


def test_the_job_never_started_and_the_verdict_says_where(tmp_path):
    analysis = analyze_files(tmp_path, {"mpirun.log": NOT_LAUNCHED})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("missing_rank", [1])
    assert verdict.headline == (
        "The launcher could not start rank 1 on gpu2; its executable was not found there"
    )
    assert analysis.unrecognised_lines == 1  # the notice's top border
    for english in (verdict.finding.summary, verdict.finding.fix):
        assert english_runs(translate(english, "zh")) == []
    assert english_runs(translate_headline(verdict.headline, "zh")) == []


# horovod/horovod#760, verbatim (the notice's list of causes left out): the remote node's
# non-interactive shell found no Open MPI
NO_DAEMON = [
    "bash: orted: command not found",
    "--------------------------------------------------------------------------",
    "ORTE was unable to reliably start one or more daemons.",
    "This usually is caused by:",
]


def test_a_daemon_the_remote_shell_could_not_find_is_a_launch_that_failed(tmp_path):
    failed = parsed_by("mpirun", NO_DAEMON).filter(pl.col("event") == "launch_failed")
    assert failed.get_column("exc_message").to_list() == ["orted", None]
    verdict = analyze_files(tmp_path, {"mpirun.log": NO_DAEMON}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("missing_rank", [])
    assert "no executable `orted`" in verdict.finding.summary
    assert "mpirun --prefix" in verdict.finding.fix
    for english in (verdict.finding.summary, verdict.finding.fix):
        assert english_runs(translate(english, "zh")) == []


def test_daemons_that_did_not_start_for_no_reason_given_say_so(tmp_path):
    verdict = analyze_files(tmp_path, {"mpirun.log": NO_DAEMON[1:]}).verdict
    assert verdict.headline == "The launcher could not start its daemons on one or more nodes"
    assert english_runs(translate_headline(verdict.headline, "zh")) == []
