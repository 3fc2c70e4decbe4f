"""Flight Recorder dumps: the real per-rank dumps of the `flight_recorder_mismatch` job
(sample_logs/, torch 2.13 CPU/gloo, written by `_dump_fr_trace` and `_dump_fr_trace_json`),
and pickles that are not dumps."""

from __future__ import annotations

import pickle
import pickletools
import shutil
from pathlib import Path

import polars as pl
import pytest

from logforensics.api import analyze
from logforensics.dumps import flight_recorder
from logforensics.intake import dump_kind
from tests.conftest import SAMPLE_LOGS

FR = SAMPLE_LOGS / "flight_recorder_mismatch" / "logs"


def job_logs(tmp_path: Path) -> Path:
    root = tmp_path / "logs"
    root.mkdir()
    for name in ("rank0.log", "rank1.log", "rank2.log", "rank3.log", "launcher.log"):
        shutil.copy(FR / name, root / name)
    return root


def malicious_pickle(marker: Path) -> bytes:
    """A pickle that would run `touch marker` when loaded, dressed as a dump: its payload
    names `entries` and `pg_status`."""

    class Payload:
        def __reduce__(self):
            import os

            return (os.system, (f"touch {marker}",))

    return pickle.dumps({"entries": [Payload()], "pg_status": {}, "version": "2.10"}, protocol=2)


def test_pickle_and_json_dumps_hold_the_same_entries():
    pickled = flight_recorder.read_dump((FR / "fr" / "rank_3").read_bytes(), "pickle")
    written = flight_recorder.read_dump((FR / "fr-json" / "rank_3.json").read_bytes(), "json")
    from_pickle = flight_recorder.dump_tables(pickled, "p", 3).entries
    from_json = flight_recorder.dump_tables(written, "j", 3).entries
    columns = ["seq", "op", "input_sizes", "input_dtypes", "state", "retired"]
    assert from_pickle.select(columns).equals(from_json.select(columns))
    # {"collective_seq_id": 19, "profiling_name": "gloo:all_reduce", "input_sizes": [[3]], ...}
    row = from_json.filter(pl.col("seq") == 19).row(0, named=True)
    assert (row["op"], row["backend"], row["input_sizes"]) == ("all_reduce", "gloo", "[[3]]")


def test_the_gloo_dump_with_an_empty_group_name_still_gives_its_groups():
    # torch 2.13 + gloo: `pg_config` is keyed '' with empty names (fr_trace: KeyError)
    record = flight_recorder.read_dump((FR / "fr" / "rank_0").read_bytes(), "pickle")
    assert "" in record["pg_config"]
    tables = flight_recorder.dump_tables(record, "rank_0", 0)
    assert tables.entries.get_column("pg").unique().to_list() == ["0"]
    assert tables.status.select("pg", "last_completed").row(0) == ("0", 20)


def test_a_malicious_pickle_is_refused_without_running_anything(tmp_path):
    marker = tmp_path / "pwned"
    data = malicious_pickle(marker)
    ops = {op.name for op, _, _ in pickletools.genops(data)}
    assert ops & {"GLOBAL", "STACK_GLOBAL"} and "REDUCE" in ops  # it really asks for os.system
    assert dump_kind(data[:4096]) == "fr_pickle"
    with pytest.raises(ValueError, match="no Flight Recorder dump"):
        flight_recorder.read_dump(data, "pickle")
    root = job_logs(tmp_path)
    (root / "fr").mkdir()
    (root / "fr" / "rank_3").write_bytes(data)
    before = (root / "fr" / "rank_3").read_bytes()
    analysis = analyze(root)
    assert not marker.exists()
    assert (root / "fr" / "rank_3").read_bytes() == before
    refused = [skip for skip in analysis.job.dumps.refused if skip.name == "fr/rank_3"]
    assert len(refused) == 1 and "posix.system" in refused[0].reason
    assert analysis.job.dumps.flight.is_empty()


def test_a_truncated_pickle_is_unreadable_not_a_crash(tmp_path):
    data = (FR / "fr" / "rank_1").read_bytes()
    with pytest.raises(ValueError, match="not a readable Flight Recorder dump"):
        flight_recorder.read_dump(data[: len(data) // 2], "pickle")


def deeply_nested_pickle(depth: int) -> bytes:
    """A dump whose `input_sizes` is a list nested `depth` deep (built opcode by opcode: the
    pickler itself would recurse), a bomb for any code that walks it recursively."""
    nested = b"]" * depth + b"a" * (depth - 1)  # EMPTY_LIST x depth, then APPEND each inward
    entry = (
        b"}(X\x11\x00\x00\x00collective_seq_idK\x01"  # {"collective_seq_id": 1,
        b"X\x0b\x00\x00\x00input_sizes" + nested + b"u"  # "input_sizes": [[[...]]]}
    )
    return b"\x80\x02}(X\x07\x00\x00\x00entries]" + entry + b"aX\t\x00\x00\x00pg_status}u."


def test_a_deeply_nested_pickle_is_read_without_recursing(tmp_path):
    data = deeply_nested_pickle(200_000)
    assert dump_kind(data[:4096]) == "fr_pickle"
    record = flight_recorder.read_dump(data, "pickle")
    tables = flight_recorder.dump_tables(record, "rank_0", 0)
    assert tables.entries.item(0, "seq") == 1
    assert tables.entries.item(0, "input_sizes") == "(unreadable)"
    root = job_logs(tmp_path)
    (root / "fr").mkdir()
    (root / "fr" / "rank_0").write_bytes(data)
    assert analyze(root).job.world_size.value == 4  # the run goes on
