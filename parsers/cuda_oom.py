# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""CUDA's out-of-memory sentence wherever a line quotes it, when nothing else on the line is a
shape another family reads (a paste that cut a warning's head, a library's own wrapper):

    ayers.39.mlp.gate_proj.weight on rank 1. This may mean that this state_dict entry could point to invalid memory regions after returning from state_dict() call if this parameter is managed by FSDP. Please check clone implementation of _fsdp_wrapped_module.model.layers.39.mlp.gate_proj.weight. Error: CUDA out of memory. Tried to allocate 270.00 MiB (GPU 1; 79.35 GiB total capacity; 76.93 GiB already allocated; 72.19 MiB free; 77.38 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF

(lm-sys/FastChat#256: FSDP's state-dict gather at the final save, its warning's head cut by the
paste.) The caching allocator's words (`Tried to allocate` and the GPU), or the CUDA driver's
own error name (`CUDA_ERROR_OUT_OF_MEMORY`), are the GPU running out, whatever the code around
it did next: an `oom` event, its rank the one the line names (`on rank
1`, FSDP's state-dict warnings) or its writer's.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser
from parsers.log_levels import LEVEL, ooms_in
from parsers.python_warnings import WARNING
from parsers.traceback import BARE_EXCEPTION

ALLOCATOR = "CUDA out of memory. Tried to allocate"
# the same from PyTorch's ROCm build (salesforce/CodeGen2#3)
HIP_ALLOCATOR = "HIP out of memory. Tried to allocate"
# the driver API's own error name, which frameworks other than PyTorch's allocator report
# (horovod/horovod#1350, TensorFlow under Horovod: `[1,1]<stderr>:2019-08-26 18:41:15.943905: E
# tensorflow/stream_executor/cuda/cuda_driver.cc:828] failed to allocate 2.96G (3173555200
# bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory`)
DRIVER_ERROR = "CUDA_ERROR_OUT_OF_MEMORY"
# a rank the message names itself (FSDP: `Failed to clone() tensor with name ... on rank 1.`)
ON_RANK = r"\bon rank (\d+)\b"


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    # lines another family reads whole: an exception, a warning, C++'s `what():`, a logged error
    others = (
        message.str.contains(BARE_EXCEPTION)
        | message.str.contains(WARNING)
        | message.str.contains(r"^\s*what\(\):")
    )
    quoted = lines.filter(~others & ~message.str.contains(LEVEL))
    return ooms_in(
        quoted, message.str.extract(ON_RANK, 1).cast(pl.Int32, strict=False).alias("rank")
    )


PARSER = LineParser(name="cuda_oom", literals=(ALLOCATOR, HIP_ALLOCATOR, DRIVER_ERROR), parse=parse)
