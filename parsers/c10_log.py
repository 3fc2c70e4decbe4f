"""PyTorch's own log lines, whatever they say: c10's C++ logging and torchrun's Python logger
print a severity letter, a date, a time and the source line before the message (torch 2.2/2.3's
C++ lines only the letter and the source line; an older torchrun, Python's
`INFO:torch.distributed.elastic...:` form).

    [rank1]:[W326 09:37:44.752383442 ProcessGroupNCCL.cpp:1487] Warning: WARNING: destroy_process_group() was not called before program exit, which can leak resources. ...
    [rank0]:[W515 07:06:42.829549331 ProcessGroupNCCL.cpp:1117] WARNING: process group has NOT been destroyed before it is being destructed. ...
    3: [rank24]:[W ProcessGroupNCCL.cpp:2302] Warning: 0TORCH_NCCL_AVOID_RECORD_STREAMS=1 has no effect for point-to-point collectives. (function operator())
    W0219 17:36:15.776000 1903 torch/distributed/elastic/multiprocessing/api.py:897] Sending process 1922 closing signal SIGTERM

(NVIDIA/Megatron-LM#1541, pytorch/pytorch#126275, NVIDIA/nccl#1176; the last shape in
formats.md.) The families that know a message (watchdog, elastic, reducer, ...) turn it into an
event; this one only counts every other such line as a line of the job, so that a healthy run's
shutdown noise is read as a job's log ("no failure found") and not refused as something else.
"""  # noqa: E501 -- verbatim lines

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

# `[W326 09:37:44.752383442 ProcessGroupNCCL.cpp:1487] ` (c10 leaves the month unpadded),
# `E0801 13:23:20.000000 32974 x.py:874] `, and torch 2.2/2.3's header without date or time,
# `[W ProcessGroupNCCL.cpp:2302] ` (NVIDIA/nccl#1176)
GLOG_HEADER = (
    r"^(?:\[?[IWEF]\d{3,4} \d{2}:\d{2}:\d{2}(?:\.\d+)?(?: +\d+)? +|\[[IWEF] )[\w./<>-]+"
    r"\.(?:cpp|cc|h|hpp|py):\d+\]"
)


# torchrun's agent under Python's default logging format (torch < 2.2):
# `INFO:torch.distributed.elastic.agent.server.api:[default] Starting worker group`
# (kubeflow/trainer#2041)
PYTHON_LOGGER = r"^(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):torch\.distributed\.[\w.]+:"


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    ours = message.str.contains(GLOG_HEADER) | message.str.contains(PYTHON_LOGGER)
    return lines.filter(ours).select("file", "line", pl.lit(None, dtype=pl.String).alias("event"))


PARSER = LineParser(
    name="c10_log",
    literals=(".cpp:", ".cc:", ".h:", ".hpp:", ".py:", ":torch.distributed."),
    parse=parse,
)
