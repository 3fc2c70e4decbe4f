"""The event table's declared schema holds what parsers and attribution produce."""

from __future__ import annotations

import polars as pl
import pytest

from logforensics.api import analyze
from logforensics.errors import ImplementationError
from logforensics.schema import EVENT_SCHEMA, RANK_SOURCES, conform
from tests.conftest import SAMPLE_LOGS


def test_a_column_outside_the_schema_is_a_developer_error():
    with pytest.raises(ImplementationError, match="not in the event schema"):
        conform(pl.DataFrame({"file": ["a"], "line": [1], "surprise": [1]}))


def test_conform_adds_typed_nulls_in_schema_order():
    table = conform(pl.DataFrame({"line": [3], "file": ["a"]})).collect()
    assert table.schema == pl.Schema(EVENT_SCHEMA)
    assert table.item(0, "rank") is None


def test_a_number_its_column_cannot_hold_becomes_null_not_a_failure():
    # a GPU index as a parser read it from a log, past what an Int32 holds
    raw = pl.DataFrame({"event": ["ras_rank", "ras_rank"], "cuda_dev": ["4", "4294967296"]})
    conformed = conform(raw).collect()
    assert conformed.get_column("cuda_dev").to_list() == [4, None]


@pytest.mark.parametrize("scenario", ["two_node_slurm", "skip_backward_hang", "detail_mismatch"])
def test_every_rank_source_is_declared(scenario):
    events = analyze(SAMPLE_LOGS / scenario / "logs").job.events
    used = set(events.get_column("rank_from").drop_nulls().unique().to_list())
    assert used and used <= set(RANK_SOURCES)
