"""The ROCm runtime's own fatal report: a GPU kernel touched memory it may not, and the HSA
runtime aborts the process (a core dump follows):

    Memory access fault by GPU node-6 (Agent handle: 0x501def90) on address 0x7f5e50c00000. Reason: Unknown.
    GPU coredump: handler exited with error (status: 1)

(ROCm/aiter#5192: eight vLLM workers on MI355X, each printing one, after the faulty `top_k`
kernel was built.) The ROCm counterpart of CUDA's `an illegal memory access was encountered`:
an `exception` of type `Memory access fault` in the process that printed it, the runtime's
reason its message, the GPU's HSA node and the address in `extra`. `node-N` numbers the host's
HSA agents, CPUs first: it is no rank. The core dump handler's lines are read, no event of
their own.
"""  # noqa: E501 -- verbatim lines

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

FAULT = (
    r"Memory access fault by GPU (?P<node>node-\d+) \(Agent handle: 0x[0-9a-fA-F]+\) on address "
    r"(?P<address>0x[0-9a-fA-F]+)\. Reason: (?P<reason>.*?)\.?\s*$"
)
COREDUMP = r"^GPU coredump: "
KIND = "Memory access fault"


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    fault = message.str.extract_groups(FAULT)
    found = fault.struct.field("node").is_not_null()
    return lines.filter(found | message.str.contains(COREDUMP)).select(
        "file",
        "line",
        pl.when(found).then(pl.lit("exception")).alias("event"),
        pl.when(found).then(pl.lit("error")).alias("severity"),
        pl.when(found).then(pl.lit(KIND)).alias("exc_type"),
        # the reason alone: the same fault on several GPUs reads as one error (the node and
        # the address differ from process to process; the evidence line keeps them)
        pl.when(found)
        .then(pl.format("reason: {}", fault.struct.field("reason")))
        .alias("exc_message"),
        pl.when(found)
        .then(
            pl.format(
                '{{"gpu_node":"{}","address":"{}"}}',
                fault.struct.field("node"),
                fault.struct.field("address"),
            )
        )
        .alias("extra"),
    )


PARSER = LineParser(
    name="rocm_runtime",
    literals=("Memory access fault by GPU ", "GPU coredump: "),
    parse=parse,
)
