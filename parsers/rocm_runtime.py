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

The runtime's report of a GPU that stopped answering, before it aborts the process
(ROCm/ROCm#4021: eight MI300X ranks 5 h into an axolotl run, one line per process, then
`Aborted (core dumped)`; the node's dmesg showed an uncorrectable hardware error):

    HW Exception by GPU node-9 (Agent handle: 0x64ff272d8ab0) reason :GPU Hang

an `exception` of type `HW Exception`, its reason the message: a hardware fault.
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
HW_EXCEPTION = (
    r"HW Exception by GPU (?P<node>node-\d+) \(Agent handle: 0x[0-9a-fA-F]+\) reason ?:"
    r" ?(?P<reason>.*?)\s*$"
)
HW_KIND = "HW Exception"


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    return pl.concat([_faults(lines), _hardware_exceptions(lines)], how="diagonal_relaxed")


def _hardware_exceptions(lines: pl.DataFrame) -> pl.DataFrame:
    said = pl.col("message").str.extract_groups(HW_EXCEPTION)
    return (
        lines.with_columns(said.alias("_said"))
        .filter(pl.col("_said").struct.field("node").is_not_null())
        .select(
            "file",
            "line",
            pl.lit("exception").alias("event"),
            pl.lit("error").alias("severity"),
            pl.lit(HW_KIND).alias("exc_type"),
            pl.col("_said").struct.field("reason").alias("exc_message"),
            pl.format('{{"gpu_node":"{}"}}', pl.col("_said").struct.field("node")).alias("extra"),
        )
    )


def _faults(lines: pl.DataFrame) -> pl.DataFrame:
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
    literals=("Memory access fault by GPU ", "GPU coredump: ", "HW Exception by GPU "),
    parse=parse,
)
