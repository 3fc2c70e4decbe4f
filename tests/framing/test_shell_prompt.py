# ruff: noqa: E501 -- test data are verbatim log lines
"""A shell's prompt the job's processes went on writing after, once the launcher had returned:
peeled where a rank's tag follows it."""

from __future__ import annotations

from tests.framing import frame

# ROCm/ROCm#4021, verbatim: the prompt (conda env, last exit status) then rank 2's watchdog line
AFTER_PROMPT = "(axolotl) 134 hotaisle@ENC1-CLS01-SVR14:~/shisa-v2/train/ablations$ [rank2]:[E1109 16:13:20.222288244 ProcessGroupNCCL.cpp:616] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=500045, OpType=_REDUCE_SCATTER_BASE, NumelIn=67108864, NumelOut=8388608, Timeout(ms)=600000) ran for 600038 milliseconds before timing out."


def test_a_prompt_before_a_ranks_tag_is_peeled_and_the_tag_read():
    row = frame([AFTER_PROMPT])[0]
    assert row["prefix_rank"] == 2
    assert row["message"].startswith(
        "[E1109 16:13:20.222288244 ProcessGroupNCCL.cpp:616] [Rank 2] Watchdog caught"
    )


def test_a_prompt_before_a_command_stays_for_the_launch_reader():
    # kyegomez/Andromeda FailureAnalysis/CPU_MEMORY.md at 50a1f73, verbatim: typed at a prompt
    line = "commune@r1n2a6000bittensor:~/Andromeda$ accelerate launch train.py"
    assert frame([line])[0]["message"] == line
