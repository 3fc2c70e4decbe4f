# ruff: noqa: E501 -- test data are verbatim log lines
"""An inference server's shards its launcher still waited for when the log ends."""

from __future__ import annotations

from logforensics.i18n import translate, translate_headline
from tests.builders import analyze_files
from tests.test_i18n import english_runs

# huggingface/text-generation-inference#1838, verbatim: four shards waited on every ten
# seconds until the paste ends, no shard's output, no error
FOUR_WAITING = [
    "2024-05-01T01:17:02.618817Z  INFO shard-manager: text_generation_launcher: Waiting for shard to be ready... rank=1",
    "2024-05-01T01:17:02.619736Z  INFO shard-manager: text_generation_launcher: Waiting for shard to be ready... rank=0",
    "2024-05-01T01:17:02.625374Z  INFO shard-manager: text_generation_launcher: Waiting for shard to be ready... rank=2",
    "2024-05-01T01:17:02.625374Z  INFO shard-manager: text_generation_launcher: Waiting for shard to be ready... rank=3",
    "2024-05-01T01:17:12.629043Z  INFO shard-manager: text_generation_launcher: Waiting for shard to be ready... rank=1",
    "2024-05-01T01:17:12.634459Z  INFO shard-manager: text_generation_launcher: Waiting for shard to be ready... rank=3",
    "2024-05-01T01:17:12.634665Z  INFO shard-manager: text_generation_launcher: Waiting for shard to be ready... rank=2",
    "2024-05-01T01:17:12.638963Z  INFO shard-manager: text_generation_launcher: Waiting for shard to be ready... rank=0",
]
# huggingface/ms-build-mi300's README, verbatim: two shards that loaded
TWO_READY = [
    "2024-05-07T12:39:20.293016Z  INFO shard-manager: text_generation_launcher: Waiting for shard to be ready... rank=0",
    "2024-05-07T12:39:20.298136Z  INFO shard-manager: text_generation_launcher: Waiting for shard to be ready... rank=1",
    "2024-05-07T12:39:20.565722Z  INFO text_generation_launcher: Server started at unix:///tmp/text-generation-server-0",
    "",
    "2024-05-07T12:39:20.593317Z  INFO shard-manager: text_generation_launcher: Shard ready in 10.308899699s rank=0",
    "2024-05-07T12:39:20.645430Z  INFO text_generation_launcher: Server started at unix:///tmp/text-generation-server-1",
    "",
    "2024-05-07T12:39:20.698556Z  INFO shard-manager: text_generation_launcher: Shard ready in 10.413843187s rank=1",
]


def test_shards_all_waited_on_until_the_log_ends_are_a_start_up_that_hung(tmp_path):
    verdict = analyze_files(tmp_path, {"tgi.log": FOUR_WAITING}).verdict
    assert (verdict.finding.kind, verdict.finding.ranks) == ("last_common_stage", [0, 1, 2, 3])
    assert verdict.finding.blames_nobody
    assert verdict.headline == "Shards 0-3 never finished loading; the server's start-up hung"
    assert english_runs(translate(verdict.finding.summary, "zh")) == []
    assert english_runs(translate(verdict.finding.fix, "zh")) == []
    assert english_runs(translate_headline(verdict.headline, "zh")) == []


def test_shards_that_loaded_are_no_finding(tmp_path):
    assert analyze_files(tmp_path, {"tgi.log": TWO_READY}).verdict is None


def test_the_shard_still_waited_on_beside_a_ready_one_held_the_start_up(tmp_path):
    # the README's shard 0 ready, its shard 1 then waited on twice more (its later waits made
    # up for this test by repeating its own line at later times)
    later = [
        TWO_READY[1].replace("12:39:20.298136", stamp) for stamp in ("12:39:30.3", "12:41:30.3")
    ]
    lines = [*TWO_READY[:5], *later]
    verdict = analyze_files(tmp_path, {"tgi.log": lines}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("missing_rank", [1])
    assert verdict.headline == "Shard 1 never finished loading; shard 0 did"
    assert english_runs(translate_headline(verdict.headline, "zh")) == []


def test_a_shard_s_error_is_its_own_rule_s(tmp_path):
    # (the shard's error record made up for this test, in the launcher's shape)
    lines = [
        *FOUR_WAITING,
        "2024-05-01T01:17:14.638963Z ERROR shard-manager: text_generation_launcher: Shard complete standard error output:",
        "RuntimeError: boom",
        " rank=0",
    ]
    findings = analyze_files(tmp_path, {"tgi.log": lines}).findings
    assert not [f for f in findings if "never_ready" in f.details]
