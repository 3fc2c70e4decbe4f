"""PyTorch Flight Recorder dumps: each rank's ring buffer of the collectives it issued.

A rank writes its dump to `<prefix><rank>` (TORCH_FR_DUMP_TEMP_FILE, or
TORCH_NCCL_DEBUG_INFO_TEMP_FILE) when the watchdog times out, or when code calls
`torch._C._distributed_c10d._dump_fr_trace()` (pickle) / `_dump_fr_trace_json()` (JSON).
Both hold one dict: `version`, `pg_config` (process group -> name, desc, ranks), `pg_status`
(process group -> last enqueued / started / completed collective), `entries` (one per
collective: `collective_seq_id`, `p2p_seq_id`, `pg_id`, `process_group` [id, name],
`profiling_name` such as `gloo:all_reduce`, `input_sizes`, `input_dtypes`, `output_sizes`,
`state`, `retired`, `record_id`, `time_created_ns`, `timeout_ms`, ...).

The pickle form is read by an unpickler that refuses every global (`find_class` raises): the
dump holds only builtin containers and scalars, so a file that needs anything else is not a
dump and is refused unread. torch 2.13's gloo dumps key `pg_config` by `''` with empty names:
group membership is rebuilt from the entries and `pg_status`, never from `pg_config` alone.
"""

from __future__ import annotations

import io
import json
import pickle
import re
from dataclasses import dataclass
from datetime import UTC, datetime

import polars as pl

from logforensics.dumps.faulthandler import LIBRARY_PREFIX
from logforensics.dumps.pyspy import is_user_frame

ENTRY_SCHEMA: dict[str, pl.DataType] = {
    "file": pl.String(),
    "rank": pl.Int32(),
    "index": pl.Int32(),  # place in the dump's entries, from 0
    "pg": pl.String(),  # process group id as the dump names it ("0", "1", ...)
    "pg_name": pl.String(),
    "seq": pl.Int64(),  # collective_seq_id (0 for a p2p op)
    "p2p_seq": pl.Int64(),
    "is_p2p": pl.Boolean(),
    "op": pl.String(),  # all_reduce, broadcast, ... (backend prefix dropped)
    "backend": pl.String(),
    "input_sizes": pl.String(),
    "input_dtypes": pl.String(),
    "output_sizes": pl.String(),
    "state": pl.String(),  # scheduled, started, completed
    "retired": pl.Boolean(),
    "record_id": pl.Int64(),
    "time_created": pl.Datetime("us"),
    "timeout_ms": pl.Int64(),
    # `function (file:line)` of the innermost frame of the job's own code that issued it
    # (pickle dumps record Python stacks; JSON ones do not)
    "user_frame": pl.String(),
}
STATUS_SCHEMA: dict[str, pl.DataType] = {
    "file": pl.String(),
    "rank": pl.Int32(),
    "pg": pl.String(),
    "last_enqueued": pl.Int64(),
    "last_started": pl.Int64(),
    "last_completed": pl.Int64(),
}
MAX_ENTRIES = 100_000  # per dump: a ring buffer holds a few thousand
MAX_FRAMES = 200  # per entry


class RefusedPickleError(Exception):
    """A pickle that asks for a class or a function: not a Flight Recorder dump."""


class _DataOnly(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> object:
        raise RefusedPickleError(f"it asks for {module}.{name}")


@dataclass(frozen=True, slots=True)
class Dump:
    entries: pl.DataFrame  # ENTRY_SCHEMA
    status: pl.DataFrame  # STATUS_SCHEMA


def looks_like_dump(head: bytes) -> str | None:
    """'json' or 'pickle' when a file's first bytes are those of a Flight Recorder dump."""
    if head.startswith(b"\x80") and (b"entries" in head or b"pg_status" in head):
        return "pickle"
    text = head.lstrip()[:4096]
    if (
        text.startswith(b"{")
        and b'"entries"' in text
        and (b'"pg_config"' in text or b'"pg_status"' in text or b'"comm_lib_version"' in text)
    ):
        return "json"
    return None


def read_dump(data: bytes, form: str) -> dict[str, object]:
    """The dump's dict; raises ValueError (with the reason) when it is not one."""
    try:
        if form == "pickle":
            record = _DataOnly(io.BytesIO(data)).load()
        else:
            record = json.loads(data.decode("utf-8", "replace"))
    except RefusedPickleError as refusal:
        raise ValueError(
            f"a pickle that is no Flight Recorder dump ({refusal}): not loaded"
        ) from None
    except (pickle.UnpicklingError, EOFError, json.JSONDecodeError, RecursionError) as error:
        raise ValueError(f"not a readable Flight Recorder dump ({type(error).__name__})") from None
    except (ValueError, TypeError, IndexError, KeyError, AttributeError, MemoryError) as error:
        raise ValueError(f"not a readable Flight Recorder dump ({type(error).__name__})") from None
    if not isinstance(record, dict) or not isinstance(record.get("entries"), list):
        raise ValueError("not a Flight Recorder dump (no list of entries)")
    return record


def dump_tables(record: dict[str, object], file: str, rank: int | None) -> Dump:
    """The entries and the per-group status of one rank's dump."""
    entries = [entry for entry in record["entries"][:MAX_ENTRIES] if isinstance(entry, dict)]
    rows = [_entry_row(entry, index, file, rank) for index, entry in enumerate(entries)]
    status_rows = []
    status = record.get("pg_status")
    if isinstance(status, dict):
        for pg, values in status.items():
            if isinstance(values, dict):
                status_rows.append(
                    {
                        "file": file,
                        "rank": rank,
                        "pg": _scalar(pg),
                        "last_enqueued": _number(values.get("last_enqueued_collective")),
                        "last_started": _number(values.get("last_started_collective")),
                        "last_completed": _number(values.get("last_completed_collective")),
                    }
                )
    return Dump(
        pl.DataFrame(rows, schema=ENTRY_SCHEMA, orient="row")
        if rows
        else pl.DataFrame(schema=ENTRY_SCHEMA),
        pl.DataFrame(status_rows, schema=STATUS_SCHEMA)
        if status_rows
        else pl.DataFrame(schema=STATUS_SCHEMA),
    )


def _entry_row(entry: dict[str, object], index: int, file: str, rank: int | None) -> dict:
    group = entry.get("process_group")
    named = isinstance(group, list | tuple) and bool(group)
    pg = _scalar(group[0]) if named else _scalar(entry.get("pg_id"))  # type: ignore[index]
    pg_name = _scalar(group[1]) if named and len(group) > 1 else None  # type: ignore[arg-type,index]
    profiling = entry.get("profiling_name")
    backend, _, op = (profiling[:200] if isinstance(profiling, str) else "").rpartition(":")
    created = _number(entry.get("time_created_ns"))
    return {
        "file": file,
        "rank": rank,
        "index": index,
        "pg": pg,
        "pg_name": pg_name,
        "seq": _number(entry.get("collective_seq_id")),
        "p2p_seq": _number(entry.get("p2p_seq_id")),
        "is_p2p": bool(entry.get("is_p2p")),
        "op": op or None,
        "backend": backend or None,
        "input_sizes": _shape(entry.get("input_sizes")),
        "input_dtypes": _shape(entry.get("input_dtypes")),
        "output_sizes": _shape(entry.get("output_sizes")),
        "state": entry["state"][:40] if isinstance(entry.get("state"), str) else None,
        "retired": bool(entry.get("retired")),
        "record_id": _number(entry.get("record_id")),
        "time_created": _time(created),
        "timeout_ms": _number(entry.get("timeout_ms")),
        "user_frame": _user_frame(entry.get("frames")),
    }


def _scalar(value: object) -> str | None:
    return str(value)[:200] if isinstance(value, int | str | float) else None


def _user_frame(frames: object) -> str | None:
    """The innermost frame of the job's own code among an entry's `frames` (innermost first:
    `{"name": "train", "filename": "/job/train.py", "line": 259}`)."""
    if not isinstance(frames, list):
        return None
    for frame in frames[:MAX_FRAMES]:
        if not isinstance(frame, dict):
            continue
        name, filename, line = frame.get("name"), frame.get("filename"), _number(frame.get("line"))
        if not isinstance(name, str) or not isinstance(filename, str):
            continue
        short = re.sub(LIBRARY_PREFIX, "", filename)
        if is_user_frame(short, line):
            return f"{name[:200]} ({short.rsplit('/', 1)[-1][:200]}:{line})"
    return None


def _number(value: object) -> int | None:
    # only scalars: str() of a hostile, deeply nested list would recurse without end
    if not isinstance(value, int | str | float) or isinstance(value, bool):
        return None
    try:
        number = int(value if not isinstance(value, str) else value[:40])
    except (ValueError, OverflowError):
        return None
    return number if -(2**62) < number < 2**62 else None


def _shape(value: object) -> str | None:
    if value is None:
        return None
    try:
        return json.dumps(value, separators=(",", ":"))[:200]
    except (RecursionError, TypeError, ValueError):
        return "(unreadable)"


def _time(nanoseconds: int | None) -> datetime | None:
    if nanoseconds is None or nanoseconds <= 0:
        return None
    try:
        return datetime.fromtimestamp(nanoseconds / 1e9, tz=UTC).replace(tzinfo=None)
    except (ValueError, OverflowError, OSError):
        return None
