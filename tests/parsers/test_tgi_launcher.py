# ruff: noqa: E501 -- test data are verbatim log lines
"""Text Generation Inference's launcher waiting for its shards, on verbatim lines."""

from __future__ import annotations

from tests.builders import parsed_by

# huggingface/text-generation-inference#1838, verbatim (the shard's rank in the span field)
WAITING = "2024-05-01T01:17:02.618817Z  INFO shard-manager: text_generation_launcher: Waiting for shard to be ready... rank=1"
# huggingface/ms-build-mi300's README, verbatim: TGI's launcher on two MI300 GPUs
READY = "2024-05-07T12:39:20.593317Z  INFO shard-manager: text_generation_launcher: Shard ready in 10.308899699s rank=0"
# huggingface/text-generation-inference#81, verbatim: before the shard manager had a span
OLD_WAITING = (
    "2023-02-20T16:45:24.091665Z  INFO text_generation_launcher: Waiting for shard 0 to be ready..."
)


def test_the_waits_and_the_readiness_name_their_shard():
    rows = parsed_by("tgi_launcher", [WAITING, READY, OLD_WAITING]).sort("line").to_dicts()
    assert [(row["event"], row["rank"]) for row in rows] == [
        ("shard_waiting", 1),
        ("shard_ready", 0),
        ("shard_waiting", 0),
    ]
    assert {row["severity"] for row in rows} == {"info"}
