"""torchrun `--tee` `[<role><local_rank>]:` (torch/distributed/elastic/multiprocessing/
tail_log.py), TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE shapes, and PyTorch's own `[rankN]:`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.framing import frame, frame_one


@pytest.mark.parametrize(
    ("text", "message", "rank", "local_rank"),
    [
        # sample_logs/skip_backward_hang/logs/launcher.log (torch 2.13, --tee 3)
        (
            "[default2]:2026-11-30 15:04:29,001 INFO {'rank': 2, 'local_rank': 2, 'device': 2, "
            "'world_size': 4}",
            "2026-11-30 15:04:29,001 INFO {'rank': 2, 'local_rank': 2, 'device': 2, "
            "'world_size': 4}",
            None,
            2,
        ),
        (  # the indentation after the prefix is the message's
            '[default3]:  cpu = _conversion_method_template(device=torch.device("cpu"))',
            '  cpu = _conversion_method_template(device=torch.device("cpu"))',
            None,
            3,
        ),
        (
            '[default2]:[rank2]:   File "/work/main/sample_logs/skip_backward_hang/../'
            'ddp_train.py", line 214, in <module>',
            '  File "/work/main/sample_logs/skip_backward_hang/../ddp_train.py", line 214, '
            "in <module>",
            2,
            2,
        ),
        ("[trainer0]:log_line1", "log_line1", None, 0),  # tail_log.py docstring
        # torch >= 2.3 excepthook (bghira/SimpleTuner#2712) and c10 logging (llama-cookbook#543)
        (
            "[rank7]: Traceback (most recent call last):",
            "Traceback (most recent call last):",
            7,
            None,
        ),
        ("[rank1]:[E ProcessGroupNCCL.cpp:523] …", "[E ProcessGroupNCCL.cpp:523] …", 1, None),
        (  # ecosystem.md, PyTorch C++ line inside a rank, stacked under torchrun --tee
            "[default0]:[rank0]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank 0] "
            "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST, "
            "NumelIn=131072000, NumelOut=131072000, Timeout(ms)=600000) ran for 600081 "
            "milliseconds before timing out.",
            "[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank 0] Watchdog caught "
            "collective operation timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST, "
            "NumelIn=131072000, NumelOut=131072000, Timeout(ms)=600000) ran for 600081 "
            "milliseconds before timing out.",
            0,
            0,
        ),
        # glog lines and `[Rank N]` inside messages are no prefixes
        (
            "[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] x",
            "[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] x",
            None,
            None,
        ),
        ("[Rank 0] Watchdog caught", "[Rank 0] Watchdog caught", None, None),
    ],
)
def test_tee_and_rank_prefixes(text, message, rank, local_rank):
    row = frame_one(text)
    assert (row["message"], row.get("prefix_rank"), row.get("prefix_local_rank")) == (
        message,
        rank,
        local_rank,
    )


# tests/data/launchers/torchrun/template_rank.log: TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE='[${rank}]:'
# (the global-rank example in torch/distributed/elastic/agent/server/local_elastic_agent.py)
def test_rank_template_states_the_global_rank():
    rows = frame(["[1]:rank=1 local_rank=1 attempt=0 hello", "[0]:warning from local rank 0"])
    assert [(row["prefix_rank"], row["message"]) for row in rows] == [
        (1, "rank=1 local_rank=1 attempt=0 hello"),
        (0, "warning from local rank 0"),
    ]


def test_child_failed_entry_numbers_are_not_rank_prefixes():
    # sample_logs/two_node_slurm: torchrun's ChildFailedError summary numbers its failures
    rows = frame(["Failures:", "[1]:", "  time      : 2026-11-30_15:24:23"])
    assert rows[1]["message"] == "[1]:" and "prefix_rank" not in rows[1]


# TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE='[rank${rank}]: ' (template_rank_word.log) looks like
# PyTorch's own prefix and states the same global rank.
def test_rank_word_template():
    assert frame_one("[rank1]: rank=1 local_rank=1 attempt=0 hello")["prefix_rank"] == 1


def test_role_rank_template_in_front_of_torch_prefix_is_the_local_rank():
    # TorchTitan runs torchrun with `--role rank --tee 3`: `[rank<local>]:` in front of
    # PyTorch's `[rank<global>]:`; in such a file a lone outer tag is a local rank too.
    rows = frame(
        [
            "[rank1]:[rank5]: Traceback (most recent call last):",
            "[rank1]:step 3 loss 0.1",
        ]
    )
    assert [(row.get("prefix_rank"), row["prefix_local_rank"]) for row in rows] == [
        (5, 1),
        (None, 1),
    ]
    assert rows[0]["message"] == "Traceback (most recent call last):"


LAUNCHER_DATA = Path(__file__).parent.parent / "data" / "launchers" / "torchrun"


# what worker.py prints: `rank=1 local_rank=1 attempt=0 hello`, `warning from local rank 1`
WORKER_SAYS = re.compile(r"^(?:rank=(?P<rank>\d+) |warning from local rank (?P<local>\d+)$)")


@pytest.mark.parametrize(
    ("log", "column", "said"),
    [
        ("restart/console.log", "prefix_local_rank", "local"),
        ("template_rank.log", "prefix_rank", "rank"),
        ("template_rank_word.log", "prefix_rank", "rank"),
    ],
)
def test_real_torchrun_consoles(log, column, said):
    rows = frame((LAUNCHER_DATA / log).read_text().splitlines(), log)
    checked = 0
    for row in rows:
        found = WORKER_SAYS.match(row["message"])
        if found and found[said] is not None:
            assert row[column] == int(found[said])
            checked += 1
        if "torch/distributed/" in row["message"]:  # the agent's own lines have no prefix
            assert column not in row
    assert checked >= 2


def test_lightnings_rank_prefix_carries_the_rank():
    # Lightning-AI/pytorch-lightning#19606, verbatim
    (row,) = frame(["[rank: 0] Seed set to 42"])
    assert (row["prefix_rank"], row["message"]) == (0, "Seed set to 42")


def test_a_script_s_rank_and_host_tag_carries_both():
    # argonne-lcf/conda_install_scripts, alcf_polaris/tests/job-2026-09-17.run1-fa-segv.out
    (row,) = frame(
        [
            "[rank 7 x3200c0s19b1n0] torch.distributed NCCL OK nccl (2, 30, 7) allreduce over 8 ranks ok"
        ]
    )
    assert (row["prefix_rank"], row["prefix_host"]) == (7, "x3200c0s19b1n0")
    assert row["message"] == "torch.distributed NCCL OK nccl (2, 30, 7) allreduce over 8 ranks ok"


def test_a_script_s_own_rank_tag_without_a_colon_carries_the_rank():
    # aws-samples/aws-do-eks#50, verbatim (vLLM workers' lines as the PR quotes them)
    (row,) = frame(
        ["[rank8] Warning: Unable to resolve hostname to a (local) address. Using the loopback"]
    )
    assert (row["prefix_rank"], row["message"]) == (
        8,
        "Warning: Unable to resolve hostname to a (local) address. Using the loopback",
    )


def test_a_torchx_label_with_a_second_number_keeps_the_first_as_the_local_rank():
    # NVIDIA/nccl#1837, verbatim (a torchx console)
    row = frame_one("[trainer0|0]:ncclInternalError: Internal check failed.")
    assert (row["prefix_local_rank"], row["message"]) == (
        0,
        "ncclInternalError: Internal check failed.",
    )


# aws-solutions-library-samples/accelerated-intelligent-document-processing-on-aws#7, verbatim:
# SageMaker's failure report quotes the process's stderr in one string, its opening quote in
# front of the first `[rank3]:` line
QUOTED_STDERR = [
    "AlgorithmError: ExecuteUserScriptError: ExitCode 1 ErrorMessage ",
    '"[rank3]: ValueError: Caught ValueError in DataLoader worker process 0.',
    "[rank3]: Original Traceback (most recent call last)",
]


def test_a_quote_opening_a_platforms_report_is_no_part_of_the_rank_tag():
    _, first, second = frame(QUOTED_STDERR)
    assert (first["prefix_rank"], second["prefix_rank"]) == (3, 3)
    assert first["message"] == "ValueError: Caught ValueError in DataLoader worker process 0."
