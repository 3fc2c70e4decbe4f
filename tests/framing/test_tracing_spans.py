# ruff: noqa: E501 -- test data are verbatim log lines
"""Text Generation Inference's `tracing` records: the span field `rank=N` closes the record."""

from __future__ import annotations

from tests.builders import analyze_files, finding
from tests.framing import frame

# huggingface/text-generation-inference#1354, verbatim: the paste begins inside shard 0's
# stderr record, which its span field closes on a line of its own
SHARD_0_FAILED = [
    '  File "/opt/conda/lib/python3.10/site-packages/text_generation_server/models/custom_modeling/flash_rw_modeling.py", line 385, in __init__',
    "    self.self_attention = FlashRWAttention(",
    "",
    '  File "/opt/conda/lib/python3.10/site-packages/text_generation_server/models/custom_modeling/flash_rw_modeling.py", line 138, in __init__',
    "    raise ValueError(",
    "",
    "ValueError: `num_heads` must be divisible by `num_shards` (got `num_heads`: 71 and `num_shards`: 2",
    " rank=0",
    "2023-12-16T09:36:24.632149Z ERROR text_generation_launcher: Shard 0 failed to start",
    "2023-12-16T09:36:24.632181Z  INFO text_generation_launcher: Shutting down shards",
    "2023-12-16T09:36:24.652173Z  INFO shard-manager: text_generation_launcher: Shard terminated rank=1",
    "Error: ShardCannotStart",
]

# huggingface/text-generation-inference#1627, verbatim: an empty stderr record, then a one-line one
SHARD_SIGNALLED = [
    "2024-03-06T17:53:22.335714Z  INFO download: text_generation_launcher: Successfully downloaded weights.",
    "2024-03-06T17:53:22.336246Z  INFO shard-manager: text_generation_launcher: Starting shard rank=0",
    "2024-03-06T17:53:31.052367Z ERROR shard-manager: text_generation_launcher: Shard complete standard error output:",
    " rank=0",
    "2024-03-06T17:53:31.052444Z ERROR shard-manager: text_generation_launcher: Shard process was signaled to shutdown with signal 4 rank=0",
    "Error: ShardCannotStart",
    "2024-03-06T17:53:31.149443Z ERROR text_generation_launcher: Shard 0 failed to start",
]


def test_a_record_s_closing_field_names_the_rank_of_every_line_before_it():
    ranks = [row.get("prefix_rank") for row in frame(SHARD_0_FAILED)]
    assert ranks == [0, 0, 0, 0, 0, 0, 0, 0, None, None, 1, None]


def test_one_line_records_and_the_launcher_s_own_lines():
    ranks = [row.get("prefix_rank") for row in frame(SHARD_SIGNALLED)]
    assert ranks == [None, 0, 0, 0, 0, None, None]


def test_the_shard_whose_stderr_held_the_exception_is_blamed(tmp_path):
    analysis = analyze_files(tmp_path, {"tgi.log": SHARD_0_FAILED})
    assert finding(analysis, "rank_exception").ranks == [0]


def test_a_trailing_rank_field_outside_span_records_names_no_rank():
    rows = frame(
        [
            "2024-03-06T17:53:22.335714Z epoch 3 loss 0.41",
            "Traceback (most recent call last):",
            "ValueError: bad batch",
            " rank=0",
            "2024-03-06T17:53:23.000000Z step 7 done rank=1",
        ]
    )
    assert [row.get("prefix_rank") for row in rows] == [None] * 5


def test_a_shard_a_signal_ended_is_that_rank_s_death(tmp_path):
    analysis = analyze_files(tmp_path, {"tgi.log": SHARD_SIGNALLED})
    death = finding(analysis, "rank_exception")
    assert death.ranks == [0]
    assert "SIGILL" in death.summary


def test_a_record_under_kubectl_timestamps_keeps_its_rank_and_its_own_time():
    # the same lines as `kubectl logs --timestamps` prints them: two stamps on the launcher's
    rows = frame([f"2023-12-16T09:36:25.000000Z {line}" for line in SHARD_0_FAILED])
    assert [row.get("prefix_rank") for row in rows] == [0, 0, 0, 0, 0, 0, 0, 0, None, None, 1, None]
    assert rows[8]["message"] == "ERROR text_generation_launcher: Shard 0 failed to start"
    assert rows[8]["prefix_time"].isoformat() == "2023-12-16T09:36:24.632149"
