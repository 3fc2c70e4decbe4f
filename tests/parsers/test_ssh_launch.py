# ruff: noqa: E501 -- test data are verbatim log lines
"""A launcher that could not reach a node over ssh (parsers/ssh_launch.py)."""

from __future__ import annotations

import polars as pl
import pytest

from logforensics.i18n import translate, translate_headline
from tests.builders import analyze_files, kinds, parsed_by
from tests.test_i18n import english_runs

# BAAI-WuDao/EVA#3, verbatim: DeepSpeed's runner checking the hostfile's hosts
NO_ROUTE = [
    "ssh: connect to host 175.24.121.148 port 22: No route to host",
    "Traceback (most recent call last):",
    '  File "/opt/conda/bin/deepspeed", line 6, in <module>',
    "    main()",
    '  File "/opt/conda/lib/python3.8/site-packages/deepspeed/launcher/runner.py", line 281, in main',
    "    result = subprocess.check_output(hostname_cmd, shell=True)",
    '  File "/opt/conda/lib/python3.8/subprocess.py", line 411, in check_output',
    "    return run(*popenargs, stdout=PIPE, timeout=timeout, check=True,",
    '  File "/opt/conda/lib/python3.8/subprocess.py", line 512, in run',
    "    raise CalledProcessError(retcode, process.args,",
    "subprocess.CalledProcessError: Command '['ssh 175.24.121.148 hostname -I']' returned non-zero exit status 255.",
]
# hpcac/2023-APAC-HPC-AI#1, verbatim: the runner's own words for it, after its check's error
NOT_REACHABLE = [
    "subprocess.CalledProcessError: Command 'ssh -o PasswordAuthentication=no gadi-gpu-v100-0011 hostname' returned non-zero exit status 255.",
    "",
    "During handling of the above exception, another exception occurred:",
    "",
    "Traceback (most recent call last):",
    '  File "/scratch/zs99/dz9214/BLOOM/deepspeed073/p38/bin/deepspeed", line 6, in <module>',
    "    main()",
    '  File "/scratch/zs99/dz9214/BLOOM/deepspeed073/p38/lib/python3.8/site-packages/deepspeed/launcher/runner.py", line 407, in main',
    "    raise RuntimeError(",
    "RuntimeError: Using hostfile at /home/552/dz9214/hostfile but host=gadi-gpu-v100-0011 was not reachable via ssh. If you are running with a single node please remove /home/552/dz9214/hostfile or setup passwordless ssh.",
]

# deepspeedai/DeepSpeed#4907, verbatim: the check alone, its command a string, not a list
CHECK_ALONE = [
    "[2024-01-06 11:41:34,489] [INFO] [real_accelerator.py:161:get_accelerator] Setting ds_accelerator to cuda (auto detect)",
    "Traceback (most recent call last):",
    '  File "/root/anaconda3/envs/DS/lib/python3.9/site-packages/deepspeed/launcher/runner.py", line 437, in main',
    "    subprocess.check_call(ssh_check_cmd, stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL, shell=True)",
    '  File "/root/anaconda3/envs/DS/lib/python3.9/subprocess.py", line 373, in check_call',
    "    raise CalledProcessError(retcode, cmd)",
    "subprocess.CalledProcessError: Command 'ssh -o PasswordAuthentication=no 192.168.3.100 hostname' returned non-zero exit status 255.",
]


@pytest.mark.parametrize(
    ("lines", "host"),
    [
        (NO_ROUTE, "175.24.121.148"),
        (NOT_REACHABLE, "gadi-gpu-v100-0011"),
        (CHECK_ALONE, "192.168.3.100"),
    ],
    ids=["no-route", "not-reachable", "check-alone"],
)
def test_a_node_the_launcher_could_not_reach_is_named(tmp_path, lines, host):
    unreachable = parsed_by("ssh_launch", lines).filter(pl.col("event") == "node_unreachable")
    assert set(unreachable.get_column("host").to_list()) == {host}
    analysis = analyze_files(tmp_path, {"launch.log": lines})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("missing_rank", [])
    assert verdict.headline == f"The launcher could not reach {host} over ssh; the job never formed"
    # the runner's exception is how it reported the failed check, no rank's own failure
    assert kinds(analysis) == ["missing_rank"]
    for english in (verdict.finding.summary, verdict.finding.fix):
        assert english_runs(translate(english, "zh")) == []
    assert english_runs(translate_headline(verdict.headline, "zh")) == []


def test_a_remote_command_s_own_status_is_no_unreachable_node():
    # ssh passes the remote command's status through: 1 is the command's, 255 ssh's own
    line = "subprocess.CalledProcessError: Command '['ssh node2 hostname -I']' returned non-zero exit status 1."
    assert parsed_by("ssh_launch", [line]).is_empty()


def test_a_job_that_trained_after_an_ssh_warning_never_failed_to_form(tmp_path):
    lines = [NO_ROUTE[0], "rank=0 step=0 stage=forward", "rank=0 step=1 stage=forward"]
    assert "missing_rank" not in kinds(analyze_files(tmp_path, {"launch.log": lines}))


def test_a_hostfile_s_host_and_slots_taken_for_a_name_is_the_unreachable_host():
    # zhijian-liu/torchpack#24, verbatim: Open MPI's rsh launcher given `localhost:3`
    line = "ssh: Could not resolve hostname localhost:3: Name or service not known"
    (found,) = parsed_by("ssh_launch", [line]).to_dicts()
    assert (found["host"], found["exc_message"]) == ("localhost:3", "Name or service not known")
