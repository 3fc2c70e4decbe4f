# ruff: noqa: E501 -- test data are verbatim log lines
"""torch_xla's `xmp.spawn` report of a process's failure (parsers/xla.py), verbatim from the
public threads named at each."""

from __future__ import annotations

from tests.builders import analyze_files, parse, parsed_by

# pytorch/xla#3122 (a comment's Colab TPU console, from its start to the launcher's report):
# only TPU:0 fails, its traceback after the launcher's line
SESSION_LOST = [
    "Process 0 is using TPU:0",
    "Process 2 is using TPU:2",
    "Epoch 1 train begin 16:10:28",
    "Process 7 is using TPU:7",
    "Process 4 is using TPU:4",
    "Process 1 is using TPU:1",
    "Process 3 is using TPU:3",
    "Process 6 is using TPU:6",
    "Process 5 is using TPU:5",
    "Exception in device=TPU:0: Aborted: Session 1a625b17752b2794 is not found.",
    "Traceback (most recent call last):",
    '  File "/usr/local/lib/python3.7/dist-packages/torch_xla/distributed/xla_multiprocessing.py", line 329, in _mp_start_fn',
    "    _start_fn(index, pf_cfg, fn, args)",
    '  File "/usr/local/lib/python3.7/dist-packages/torch_xla/distributed/xla_multiprocessing.py", line 323, in _start_fn',
    "    fn(gindex, *args)",
    '  File "<ipython-input-9-dbc82064644c>", line 87, in _mp_fn',
    "    train_mnist(index, {})",
    '  File "<ipython-input-9-dbc82064644c>", line 71, in train_mnist',
    "    total_loss = train_loop_fn(train_device_loader)",
    '  File "<ipython-input-9-dbc82064644c>", line 48, in train_loop_fn',
    "    total_loss += loss.item()",
    "RuntimeError: Aborted: Session 1a625b17752b2794 is not found.",
]

# pytorch/xla#2387 (a Kaggle TPU v3-8, the description's console): TPU:6 and TPU:5 fail the
# `loss_reduce` rendezvous, their tracebacks interleaved; the process that left is not in it
RENDEZVOUS_CLOSED = [
    "Exception in device=TPU:6: tensorflow/compiler/xla/xla_client/mesh_service.cc:294 : Failed to meet rendezvous 'loss_reduce': Socket closed (14)",
    "Traceback (most recent call last):",
    '  File "/opt/conda/lib/python3.7/site-packages/torch_xla/distributed/xla_multiprocessing.py", line 231, in _start_fn',
    "    fn(gindex, *args)",
    '  File "<ipython-input-4-7212b5ecb6e6>", line 6, in _mp_fn',
    "    training(model, config)",
    '  File "../input/common-20200730-2043/common/siim_isic_training.py", line 74, in training',
    "    result = epoch(m_o_s, dataloaders, device, criterion)",
    "Exception in device=TPU:5: tensorflow/compiler/xla/xla_client/mesh_service.cc:294 : Failed to meet rendezvous 'loss_reduce': Socket closed (14)",
    '  File "../input/common-20200730-2043/common/siim_isic_epoch.py", line 35, in epoch',
    "    train_result = train_step(config_step)",
    "Traceback (most recent call last):",
    '  File "/opt/conda/lib/python3.7/site-packages/torch_xla/distributed/xla_multiprocessing.py", line 231, in _start_fn',
    "    fn(gindex, *args)",
    '  File "<ipython-input-4-7212b5ecb6e6>", line 6, in _mp_fn',
    "    training(model, config)",
    '  File "../input/common-20200730-2043/common/siim_isic_train_step.py", line 72, in train_step',
]


def test_the_device_s_ordinal_is_the_rank_and_the_traceback_gives_the_type():
    report = parsed_by("xla", SESSION_LOST).row(0, named=True)
    assert (report["event"], report["rank"], report["device"]) == ("exception", 0, "TPU:0")
    assert (report["exc_type"], report["exc_message"]) == (
        "RuntimeError",
        "Aborted: Session 1a625b17752b2794 is not found.",
    )


def test_the_failing_device_is_the_verdict(tmp_path):
    verdict = analyze_files(tmp_path, {"console.log": SESSION_LOST}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [0])
    assert "RuntimeError" in verdict.finding.summary


def test_a_rendezvous_whose_socket_closed_is_a_lost_peer_not_the_cause(tmp_path):
    reports = parsed_by("xla", RENDEZVOUS_CLOSED)
    assert reports.select("event", "rank").rows() == [("peer_closed", 6), ("peer_closed", 5)]
    analysis = analyze_files(tmp_path, {"console.log": RENDEZVOUS_CLOSED})
    assert (analysis.verdict.finding.kind, analysis.verdict.finding.ranks) == ("peer_lost", [5, 6])
    assert analysis.verdict.ranks == []


# huggingface/transformers#22328 (PyTorch/XLA FSDP on a TPU v3-8 VM, the description's console,
# from its excerpt's first line): XLA's allocator refuses, then the launcher's report of TPU:6
OUT_OF_HBM = [
    "2023-03-23 02:02:25.057202: E tensorflow/compiler/xla/xla_client/xla_util.cc:90]   OP_REQUIRES failed at tpu_execute_op.cc:266 : RESOURCE_EXHAUSTED: Attempting to reserve 10.51G at the bottom of memory. That was not possible. There are 8.97G free, 0B reserved, and 8.97G reservable.",
    "2023-03-23 02:02:25.057209: E tensorflow/compiler/xla/xla_client/xla_util.cc:90]   OP_REQUIRES failed at tpu_execute_op.cc:266 : RESOURCE_EXHAUSTED: Attempting to reserve 10.51G at the bottom of memory. That was not possible. There are 8.97G free, 0B reserved, and 8.97G reservable.",
    "/home/vitor_jeronymo/miniconda3/envs/torch-xla/lib/python3.8/site-packages/transformers/optimization.py:391: FutureWarning: This implementation of AdamW is deprecated and will be removed in a future version. Use the PyTorch implementation torch.optim.AdamW instead, or set `no_deprecation_warning=True` to disable this warning",
    "  warnings.warn(",
    "Exception in device=TPU:6: RESOURCE_EXHAUSTED: From /job:localservice/replica:0/task:0:",
    "2 root error(s) found.",
    "  (0) RESOURCE_EXHAUSTED: Attempting to reserve 10.51G at the bottom of memory. That was not possible. There are 8.97G free, 0B reserved, and 8.97G reservable.",
]


def test_a_device_that_ran_out_of_memory_is_that_rank_s_oom_on_its_tpu(tmp_path):
    ooms = parsed_by("xla", OUT_OF_HBM)
    assert ooms.get_column("event").to_list() == ["oom"] * 4
    assert ooms.filter(line=5).select("rank", "device").row(0) == (6, "TPU:6")
    verdict = analyze_files(tmp_path, {"console.log": OUT_OF_HBM}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("oom", [6])
    assert verdict.headline == "Rank 6 ran out of TPU memory"


def test_xla_s_status_in_a_python_exception_is_an_oom_of_device_memory(tmp_path):
    # pytorch/xla#9524's title, the exception `xm.mark_step()` raised
    line = (
        "RuntimeError: Bad StatusOr access: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. "
        "Ran out of memory in memory space vmem."
    )
    events = parse([line])
    assert events.filter(event="oom").get_column("parser").to_list() == ["traceback"]
    verdict = analyze_files(tmp_path, {"console.log": [line]}).verdict
    assert verdict.finding.kind == "oom"
    assert verdict.headline == "A rank ran out of device memory"


# pytorch/xla#7974, verbatim: two processes under `xmp.spawn` on PJRT's CPU devices; rank 0 hit
# an assertion before its AllReduce (its output is not in the paste), rank 1 waits forever
STUCK_AT_RENDEZVOUS = [
    "(pt25dev_env) ubuntu@ip-10-3-206-226:~$ PJRT_DEVICE=CPU CPU_NUM_DEVICES=2 python test_assert_hang.py ",
    "Rank 1 continues to rendezvous.",
    "E0000 00:00:1725834192.702937  625990 collective_ops_utils.h:310] This thread has been waiting for 5000ms for and may be stuck: participant AllReduceParticipantData{rank=1, element_count=7840, type=F32, rendezvous_key=RendezvousKey{run_id=RunId: 0, global_devices=[0,1], num_local_participants=2, collective_op_kind=cross_replica, op_id=0}} waiting for all participants to arrive at rendezvous RendezvousKey{run_id=RunId: 0, global_devices=[0,1], num_local_participants=2, collective_op_kind=cross_replica, op_id=0}",
]


def test_a_participant_stuck_at_a_rendezvous_is_its_rank_s_wait_in_that_collective():
    (wait,) = parsed_by("xla", STUCK_AT_RENDEZVOUS).to_dicts()
    assert (wait["event"], wait["rank"], wait["op"]) == ("collective_timeout", 1, "ALLREDUCE")
    assert (wait["elapsed_ms"], wait["world_size"]) == (5000, 2)


def test_the_other_participant_of_the_rendezvous_is_the_one_it_waited_for(tmp_path):
    verdict = analyze_files(tmp_path, {"console.log": STUCK_AT_RENDEZVOUS}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("collective_timeout", [0])


# pytorch/xla#2604, verbatim from the end of the stack dump on (XRT_TPU_CONFIG unset: the
# processes' mesh client could not reach the mesh master; xmp.spawn then exits with code 17)
MESH_MASTER_UNREACHABLE = [
    "*** End stack trace ***",
    "Failed to connect to client mesh master: d7c1c93dfe8c:56419",
    "Traceback (most recent call last):",
    '  File "xla_spawn.py", line 73, in <module>',
    "    app.run(main, flags_parser=parse_args)",
    '  File "/root/anaconda3/envs/pytorch/lib/python3.6/site-packages/absl/app.py", line 300, in run',
    "    _run_main(main, args)",
    '  File "/root/anaconda3/envs/pytorch/lib/python3.6/site-packages/absl/app.py", line 251, in _run_main',
    "    sys.exit(main(argv))",
    '  File "xla_spawn.py", line 69, in main',
    "    xmp.spawn(mod._mp_fn, args=(), nprocs=args.num_cores, start_method='fork')",
    '  File "/root/anaconda3/envs/pytorch/lib/python3.6/site-packages/torch_xla/distributed/xla_multiprocessing.py", line 395, in spawn',
    "    start_method=start_method)",
    '  File "/root/anaconda3/envs/pytorch/lib/python3.6/site-packages/torch/multiprocessing/spawn.py", line 157, in start_processes',
    "    while not context.join():",
    '  File "/root/anaconda3/envs/pytorch/lib/python3.6/site-packages/torch/multiprocessing/spawn.py", line 112, in join',
    "    (error_index, exitcode)",
    "Exception: process 1 terminated with exit code 17",
]


def test_a_mesh_client_that_cannot_reach_the_master_is_a_job_that_never_formed(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": MESH_MASTER_UNREACHABLE})
    verdict = analysis.verdict
    assert verdict.finding.kind == "missing_rank"
    assert "d7c1c93dfe8c:56419" in verdict.headline
