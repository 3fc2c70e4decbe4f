"""Hang dumps read beside the logs: `py-spy dump` stacks and PyTorch Flight Recorder traces
(`flight_recorder`, `pyspy`: the formats; `load`: the tables a job keeps)."""

from __future__ import annotations

import re

from logforensics.framing import (
    COMPOSE_SERVICE,
    CRI_ENVELOPE,
    MIN_COMMON_INDENT,
    MIN_INDENTED_LINES,
    PDSH_HOST,
    QUOTE,
    RFC3339,
)

# `kubectl logs --timestamps` and container runtimes put an RFC3339 stamp before every line (a
# node's CRI log its stream and tag too), `docker compose logs` the container's name and `| `,
# pdsh the host it ran a command on (`pdsh -w node[1-4] py-spy dump ...`), a Markdown paste
# `> ` (the same prefixes framing peels off log lines); a dump saved that way is still the dump
CONTAINER_STAMP = re.compile(
    f"^(?:{CRI_ENVELOPE}|{RFC3339} |{COMPOSE_SERVICE}|{PDSH_HOST}|{QUOTE})".encode(), re.MULTILINE
)


# blanks a paste or a padded terminal left at the ends of lines
TRAILING_BLANKS = re.compile(rb"[ \t]+$", re.MULTILINE)


def unstamped(data: bytes) -> bytes:
    """`data` without a container's stamp or name before each line (unchanged when its first
    line has none), without blanks after them, and without the indentation a paste gave the
    whole of it (a dump quoted in a Markdown list: see `framing.MIN_COMMON_INDENT`)."""
    if b" \n" in data or b"\t\n" in data:  # (a scan far cheaper than the substitution)
        data = TRAILING_BLANKS.sub(b"", data)
    if CONTAINER_STAMP.match(data) is not None:
        data = CONTAINER_STAMP.sub(b"", data)
    return _dedented(data)


def _dedented(data: bytes) -> bytes:
    """`data` without the spaces every line with text opens with, when they are
    MIN_COMMON_INDENT or more over MIN_INDENTED_LINES lines or more."""
    if not data.lstrip(b"\r\n").startswith(b" " * MIN_COMMON_INDENT):  # (most texts: at once)
        return data
    lines = data.split(b"\n")
    filled = [line for line in lines if line.strip()]
    if len(filled) < MIN_INDENTED_LINES:
        return data
    indent = min(len(line) - len(line.lstrip(b" ")) for line in filled)
    if indent < MIN_COMMON_INDENT:
        return data
    return b"\n".join(line[indent:] if line.strip() else line for line in lines)
