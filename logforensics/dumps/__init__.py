"""Hang dumps read beside the logs: `py-spy dump` stacks and PyTorch Flight Recorder traces
(`flight_recorder`, `pyspy`: the formats; `load`: the tables a job keeps)."""

from __future__ import annotations

import re

from logforensics.framing import COMPOSE_SERVICE, CRI_ENVELOPE, PDSH_HOST, QUOTE, RFC3339

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
    line has none) and without blanks after them."""
    if b" \n" in data or b"\t\n" in data:  # (a scan far cheaper than the substitution)
        data = TRAILING_BLANKS.sub(b"", data)
    if CONTAINER_STAMP.match(data) is None:
        return data
    return CONTAINER_STAMP.sub(b"", data)
