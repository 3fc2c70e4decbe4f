"""Peak memory of `forensics analyze` alone: a fresh process, so generating the test logs (done
by the benchmark itself) does not count."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path


def fresh_analyze(root: Path) -> tuple[float, float]:
    """Seconds and peak RSS (MiB) of `forensics analyze root` in a new process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "logforensics", "analyze", str(root), "-f", "json"]
        + ["-o", os.devnull, "-q"],
        check=True,
    )
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return seconds, max(peak, before) / 1024
