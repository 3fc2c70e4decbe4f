"""The shell's word for how a process ended (parsers/process_exit.py)."""

from __future__ import annotations

import pytest

from tests.builders import only, parsed_by


@pytest.mark.parametrize(
    ("line", "signal"),
    [
        # horovod/horovod#2907, verbatim (under horovodrun's rank tags)
        ("[0]<stderr>:Killed", "SIGKILL"),
        ("[1]<stderr>:Terminated", "SIGTERM"),
        ("[3]<stderr>:Aborted (core dumped)", "SIGABRT"),
    ],
)
def test_the_shells_words_are_the_signal(line, signal):
    death = only(parsed_by("process_exit", [line], file="horovodrun_stderr.log"))
    assert (death["event"], death["signal"]) == ("fatal_signal", signal)
    assert death["rank"] == int(line[1])


def test_words_inside_a_sentence_are_not_a_death():
    # sentences that merely hold the word (made up for this test: none is a report of a death)
    lines = ["Killed the process group", "INFO Terminated workers: 3", "[rank0]: Aborted step 5"]
    assert parsed_by("process_exit", lines).is_empty()


def test_a_bar_with_killed_glued_to_it_is_a_death():
    # he-dhamo/simsg#3, verbatim: the shell's word lands right after a tqdm bar
    line = "  6%|██████                                                                                               | 3787/62565 [04:47<1:10:53, 13.82it/s]Killed"
    death = only(parsed_by("process_exit", [line]))
    assert death["signal"] == "SIGKILL"


def test_the_kernels_oom_kill_report_names_the_pid():
    # pcyin/tranX#41, verbatim (the first physical line of a wrapped dmesg paste)
    line = "[2059991.491542] Out of memory: Killed process 25315 (python3) total-vm:53312244"
    kill = only(parsed_by("process_exit", [line]))
    assert (kill["event"], kill["pid"]) == ("host_oom", 25315)


@pytest.mark.parametrize(
    ("line", "signal"),
    [
        # huggingface/text-generation-inference#1627, verbatim
        (
            "2024-03-06T17:53:31.052444Z ERROR shard-manager: text_generation_launcher: Shard process was signaled to shutdown with signal 4 rank=0",  # noqa: E501
            "SIGILL",
        ),
        # huggingface/text-generation-inference#446, its title: the weights' download, no shm
        ("Error: Download process was signaled to shutdown with signal 7", "SIGBUS"),
    ],
)
def test_the_inference_launcher_s_signal_number_is_the_signal(line, signal):
    death = only(parsed_by("process_exit", [line]))
    assert (death["event"], death["signal"]) == ("fatal_signal", signal)
