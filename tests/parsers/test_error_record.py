# ruff: noqa: E501 -- test data are verbatim log lines
"""torchelastic's error record on the console (parsers/error_record.py), verbatim from the
public threads named at each."""

from __future__ import annotations

from tests.builders import analyze_files, parsed_by

# pytorch/pytorch#64926, verbatim (after the shell prompt): torchrun's start-up print and the
# agent's error record of a rendezvous that could not reach its store
RENDEZVOUS_FAILED = [
    "[INFO] 2021-09-13 22:17:26,651 run: Running torch.distributed.run with args: ['/home/yczhong/.conda/envs/yczhong/lib/python3.6/site-packages/torch/distributed/run.py', '--nnodes=2', '--nproc_per_node=2', '--rdzv_id=1234', '--rdzv_backend=c10d', '--rdzv_endpoint=10.28.1.16', 'main.py']",
    "[INFO] 2021-09-13 22:17:26,653 run: Using nproc_per_node=2.",
    "*****************************************",
    "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed.",
    "*****************************************",
    "[INFO] 2021-09-13 22:17:26,653 api: Starting elastic_operator with launch configs:",
    "  entrypoint       : main.py",
    "  min_nodes        : 2",
    "  max_nodes        : 2",
    "  nproc_per_node   : 2",
    "  run_id           : 1234",
    "  rdzv_backend     : c10d",
    "  rdzv_endpoint    : 10.28.1.16",
    "  rdzv_configs     : {'timeout': 900}",
    "  max_restarts     : 3",
    "  monitor_interval : 5",
    "  log_dir          : None",
    "  metrics_cfg      : {}",
    "",
    "[ERROR] 2021-09-13 22:18:26,678 error_handler: {",
    '  "message": {',
    '    "message": "RendezvousConnectionError: The connection to the C10d store has failed. See inner exception for details.",',
]
# facebookresearch/av_hubert#19, verbatim: the older logger's form of the record
TIMEOUT_RECORD = [
    "ERROR:torch.distributed.elastic.multiprocessing.errors.error_handler:{",
    '  "message": {',
    '    "message": "RendezvousTimeoutError: ",',
    '    "extraInfo": {',
]


def test_the_record_s_message_is_the_exception(tmp_path):
    found = parsed_by("error_record", TIMEOUT_RECORD)
    exception = found.filter(found["event"] == "exception").row(0, named=True)
    assert (exception["line"], exception["exc_type"], exception["exc_message"]) == (
        3,
        "RendezvousTimeoutError",
        None,
    )
    # the record's other lines are read too
    assert analyze_files(tmp_path, {"agent.log": TIMEOUT_RECORD}).unrecognised_lines == 0


def test_a_rendezvous_that_never_reached_its_store_is_a_start_up_failure(tmp_path):
    analysis = analyze_files(tmp_path, {"node.log": RENDEZVOUS_FAILED})
    failure = analysis.verdict.finding
    assert failure.kind == "missing_rank" and failure.details["phase"] == "rendezvous"
    assert "The connection to the C10d store has failed" in failure.summary
    assert analysis.verdict.ranks == []
    # torchrun's own start-up print is read too, not counted as unrecognised
    assert analysis.unrecognised_lines == 0
