# ruff: noqa: E501 -- verbatim log lines are quoted whole in the docstring
"""A multi-node launcher that could not reach a node over ssh before starting anything there:
DeepSpeed's runner checks every host of its hostfile first (BAAI-WuDao/EVA#3, hpcac/2023-APAC-HPC-AI#1),
pdsh and mpirun start their remote side through ssh:

    ssh: connect to host 175.24.121.148 port 22: No route to host
    subprocess.CalledProcessError: Command '['ssh 175.24.121.148 hostname -I']' returned non-zero exit status 255.
    RuntimeError: Using hostfile at /home/552/dz9214/hostfile but host=gadi-gpu-v100-0011 was not reachable via ssh. If you are running with a single node please remove /home/552/dz9214/hostfile or setup passwordless ssh.

Each is a `node_unreachable` event with the node in `host` and, where the line says it, ssh's
reason in `exc_message`. ssh's own exit status for its failures is 255; a remote command's
status passes through it and is no such failure.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser

# ssh: connect to host 175.24.121.148 port 22: No route to host
SSH_CONNECT = r"\bssh: connect to host (?P<host>\S+) port \d+: (?P<reason>.+?)\s*$"
# ssh: Could not resolve hostname node7: Name or service not known
# (a hostfile's `host:slots` taken whole for a name: zhijian-liu/torchpack#24's `localhost:3`)
SSH_RESOLVE = r"\bssh: Could not resolve hostname (?P<host>\S+?): (?P<reason>.+?)\s*$"
# DeepSpeed's runner: `... but host=gadi-gpu-v100-0011 was not reachable via ssh.`
NOT_REACHABLE = r"\bhost=(?P<host>\S+?) was not reachable via ssh"
# its check, raised as it ran it: `Command '['ssh 175.24.121.148 hostname -I']' returned
# non-zero exit status 255.` (options before the host allowed: `ssh -o ... node hostname`), the
# command a string rather than a list in later releases (deepspeedai/DeepSpeed#4907: `Command
# 'ssh -o PasswordAuthentication=no 192.168.3.100 hostname' returned non-zero exit status 255.`)
CHECK_FAILED = (
    r"Command '\[?'?ssh (?:-\S+ \S+ )*(?P<host>[^\s'-]\S*) hostname\b[^']*'(?:\]')? "
    r"returned non-zero exit status 255\b"
)
PATTERNS = (SSH_CONNECT, SSH_RESOLVE, NOT_REACHABLE, CHECK_FAILED)


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    found = [message.str.extract_groups(pattern) for pattern in PATTERNS]
    host = pl.coalesce(*(groups.struct.field("host") for groups in found))
    reason = pl.coalesce(found[0].struct.field("reason"), found[1].struct.field("reason"))
    return (
        lines.filter(pl.col("candidate"))
        .with_columns(host.alias("host"), reason.alias("exc_message"))
        .filter(pl.col("host").is_not_null())
        .select(
            "file",
            "line",
            pl.lit("node_unreachable").alias("event"),
            pl.lit("error").alias("severity"),
            "host",
            "exc_message",
        )
    )


PARSER = LineParser(
    name="ssh_launch",
    literals=(
        "ssh: connect to host",
        "ssh: Could not resolve hostname",
        "reachable via ssh",
        "'ssh ",
    ),
    parse=parse,
)
