"""A process that died of a DistBackendError whose words the logs do not hold.

PyTorch raises `torch.distributed.DistBackendError` for what its communication backend
reports: an NCCL error, an aborted communicator, a collective the watchdog gave up on. A
relay that names the type alone (Ray's `ray.exceptions.RayTaskError(DistBackendError):
ray::_RayTrainWorker__execute.get_next() (pid=192, ip=10.0.0.19, ...)` with the worker's own
traceback cut: ray-project/ray#40758) still shows that failure, never a healthy run. The
nccl_error rule says so, at low confidence, where the logs hold no other error."""

from __future__ import annotations

import polars as pl

from logforensics.findings import Finding
from logforensics.job import Job
from logforensics.text import rank_list
from logforensics.watchdog_abort import failure_said_by_its_echo

BACKEND_ERROR = "DistBackendError"
UNSAID_FIX = (
    "Read the failed worker's own output for the DistBackendError's message (under Ray, the "
    "worker's log: `ray logs` or /tmp/ray/session_latest/logs on its node): it names the NCCL "
    "error (a transport, a proxy or a set-up fault) or the collective that timed out. Run "
    "again with NCCL_DEBUG=WARN to have NCCL say which connection failed and why."
)


def backend_error_unsaid(job: Job) -> list[Finding]:
    """DistBackendErrors with no message, where the logs hold no other error but tracebacks
    cut before their exception line."""
    events = job.events
    unsaid = (
        (pl.col("event") == "exception")
        & pl.col("exc_type").fill_null("").str.ends_with(BACKEND_ERROR)
        & (pl.col("exc_message").fill_null("").str.strip_chars() == "")
    )
    failed = events.filter(unsaid)
    if failed.is_empty():
        return []
    cut = (pl.col("event") == "exception") & pl.col("exc_type").is_null()
    if not events.filter((pl.col("severity") == "error") & ~unsaid & ~cut).is_empty():
        return []
    ranks = sorted(failed.get_column("rank").drop_nulls().unique().to_list())
    first = failed.sort("file", "line").row(0, named=True)
    where = [f"host {first['host']}"] if first.get("host") else []
    if first.get("pid") is not None:
        where.append(f"pid {first['pid']}")
    who = rank_list(ranks).capitalize() if ranks else "A process"
    who += f" ({', '.join(where)})" if where and len(ranks) <= 1 else ""
    return [
        failure_said_by_its_echo(
            job,
            failed,
            summary=(
                f"{who} died of a DistBackendError, which PyTorch raises for what its "
                "communication backend reports (an NCCL error, an aborted communicator, a "
                "collective that timed out); its message is not in these logs."
            ),
            fix=UNSAID_FIX,
            ranks=ranks,
            details={"backend_error_unsaid": True},
        )
    ]
