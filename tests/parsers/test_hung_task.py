"""The kernel's hung-task report, from dmesg (parsers/hung_task.py)."""
# ruff: noqa: E501 -- verbatim log lines

from __future__ import annotations

import json

from logforensics.registry import diagnosis
from tests.builders import analyze_files, only, parsed_by

# huggingface/m4-logs, tr_141-hanging (try3's dmesg.txt), verbatim: the one process of a 64-GPU
# job whose write to GPFS never returned, its whole report
PYTHON_IN_GPFS = [
    "[Sat Mar  4 04:10:52 2023] INFO: task python:280058 blocked for more than 120 seconds.",
    "[Sat Mar  4 04:10:52 2023]       Tainted: P           OE    --------- -  - 4.18.0-372.36.1.el8_6.x86_64 #1",
    '[Sat Mar  4 04:10:52 2023] "echo 0 > /proc/sys/kernel/hung_task_timeout_secs" disables this message.',
    "[Sat Mar  4 04:10:52 2023] task:python          state:D stack:    0 pid:280058 ppid:279966 flags:0x00000080",
    "[Sat Mar  4 04:10:52 2023] Call Trace:",
    "[Sat Mar  4 04:10:52 2023]  __schedule+0x2d1/0x860",
    "[Sat Mar  4 04:10:52 2023]  ? try_to_wake_up+0x1b4/0x4e0",
    "[Sat Mar  4 04:10:52 2023]  schedule+0x35/0xa0",
    "[Sat Mar  4 04:10:52 2023]  cxiWaitEventWait+0x208/0x330 [mmfslinux]",
    "[Sat Mar  4 04:10:52 2023]  ? wake_up_q+0x70/0x70",
    "[Sat Mar  4 04:10:52 2023]  _ZN6ThCond12internalWaitEP16KernelSynchStatejPv+0x58/0x250 [mmfs26]",
    "[Sat Mar  4 04:10:52 2023]  _ZN6ThCond5kWaitEiPKc+0x1d3/0x410 [mmfs26]",
    "[Sat Mar  4 04:10:52 2023]  _ZN13KernelMailbox21sendToDaemonWithReplyEv+0x250/0x3e0 [mmfs26]",
    "[Sat Mar  4 04:10:52 2023]  _Z19kSFSExpandLastBlockP15KernelOperationP9MMFSVInfoxP10ext_cred_t+0x9e/0x130 [mmfs26]",
    "[Sat Mar  4 04:10:52 2023]  _Z9kSFSWriteP15KernelOperationP13gpfsVfsData_tP10gpfsNode_tP9MMFSVInfoiP8cxiUio_ti7FileUIDP8OpenFileP10ext_cred_tP10WhatLockedj+0x158a/0x56b0 [mmfs26]",
    "[Sat Mar  4 04:10:52 2023]  _Z9gpfsWriteP13gpfsVfsData_tP15KernelOperationP9cxiNode_tiP8cxiUio_tP9MMFSVInfoP10cxiVattr_tSA_P10ext_cred_tP14cxiPageLists_tiP+0x1d91/0x6dd0 [mmfs26]",
    "[Sat Mar  4 04:10:52 2023]  ? _Z9gpfsWriteP13gpfsVfsData_tP15KernelOperationP9cxiNode_tiP8cxiUio_tP9MMFSVInfoP10cxiVattr_tSA_P10ext_cred_tP14cxiPageLists_tiP+0x1b57/0x6dd0 [mmfs26]",
    "[Sat Mar  4 04:10:52 2023]  ? up+0x12/0x50",
    "[Sat Mar  4 04:10:52 2023]  ? cxiBlockingMutexRelease+0xdc/0xe0 [mmfslinux]",
    "[Sat Mar  4 04:10:52 2023]  ? recalibrate_cpu_khz+0x10/0x10",
    "[Sat Mar  4 04:10:52 2023]  ? up+0x12/0x50",
    "[Sat Mar  4 04:10:52 2023]  ? cxiBlockingMutexRelease+0xdc/0xe0 [mmfslinux]",
    "[Sat Mar  4 04:10:52 2023]  ? down+0x12/0x50",
    "[Sat Mar  4 04:10:52 2023]  ? cxiBlockingMutexAcquire+0x151/0x1f0 [mmfslinux]",
    "[Sat Mar  4 04:10:52 2023]  ? up+0x12/0x50",
    "[Sat Mar  4 04:10:52 2023]  ? cxiBlockingMutexRelease+0xdc/0xe0 [mmfslinux]",
    "[Sat Mar  4 04:10:52 2023]  ? _ZN15KernelOperationD1Ev+0x56/0xb0 [mmfs26]",
    "[Sat Mar  4 04:10:52 2023]  ? _Z33gpfsIsCifsBypassTraversalCheckingv+0xa8/0xc0 [mmfs26]",
    "[Sat Mar  4 04:10:52 2023]  rdwrInternal+0x44c/0x5f0 [mmfslinux]",
    "[Sat Mar  4 04:10:52 2023]  ? _Z11lockGetattrP15KernelOperationP13gpfsVfsData_tP10gpfsNode_tR7FileUIDiR13LookupDetailsR10WhatLockedPP8OpenFileP10cxiVattr_t+0xcb6/0x19c0 [mmfs26]",
    "[Sat Mar  4 04:10:52 2023]  gpfs_f_aio_write_internal+0x11d/0x390 [mmfslinux]",
    "[Sat Mar  4 04:10:52 2023]  ? down+0x12/0x50",
    "[Sat Mar  4 04:10:52 2023]  ? _ZL12gpfsGetattrxP13gpfsVfsData_tP9cxiNode_tP10cxiVattr_tP12gpfs_iattr64i+0x1eb/0x3a0 [mmfs26]",
    "[Sat Mar  4 04:10:52 2023]  ? kfree+0x1b4/0x200",
    "[Sat Mar  4 04:10:52 2023]  ? gpfs_f_rdwr_iter+0x217/0x300 [mmfslinux]",
    "[Sat Mar  4 04:10:52 2023]  gpfs_f_rdwr_iter+0x217/0x300 [mmfslinux]",
    "[Sat Mar  4 04:10:52 2023]  ? gpfs_i_getattr_internal+0x80/0x110 [mmfslinux]",
    "[Sat Mar  4 04:10:52 2023]  new_sync_write+0x112/0x160",
    "[Sat Mar  4 04:10:52 2023]  vfs_write+0xa5/0x1b0",
    "[Sat Mar  4 04:10:52 2023]  ksys_write+0x4f/0xb0",
    "[Sat Mar  4 04:10:52 2023]  do_syscall_64+0x5b/0x1b0",
    "[Sat Mar  4 04:10:52 2023]  entry_SYSCALL_64_after_hwframe+0x61/0xc6",
    "[Sat Mar  4 04:10:52 2023] RIP: 0033:0x14f7d0d9da07",
    "[Sat Mar  4 04:10:52 2023] Code: Unable to access opcode bytes at RIP 0x14f7d0d9d9dd.",
    "[Sat Mar  4 04:10:52 2023] RSP: 002b:00007fff14b5a9d0 EFLAGS: 00000293 ORIG_RAX: 0000000000000001",
    "[Sat Mar  4 04:10:52 2023] RAX: ffffffffffffffda RBX: 000000000000006c RCX: 000014f7d0d9da07",
    "[Sat Mar  4 04:10:52 2023] RDX: 0000000000000988 RSI: 000004b15348c010 RDI: 000000000000006c",
    "[Sat Mar  4 04:10:52 2023] RBP: 000004b15348c010 R08: 0000000000000000 R09: 0000000000000000",
    "[Sat Mar  4 04:10:52 2023] R10: 0000000000000000 R11: 0000000000000293 R12: 0000000000000988",
    "[Sat Mar  4 04:10:52 2023] R13: 000004b15348c010 R14: 000000000000006c R15: 000000000151b860",
]

# the same dmesg two days earlier: SLURM's epilog script, no process of the job, cut after its
# first frames
EPILOG = [
    "[Thu Mar  2 15:59:56 2023] INFO: task epilog.sh:76609 blocked for more than 120 seconds.",
    "[Thu Mar  2 15:59:56 2023]       Tainted: P           OE    --------- -  - 4.18.0-372.36.1.el8_6.x86_64 #1",
    '[Thu Mar  2 15:59:56 2023] "echo 0 > /proc/sys/kernel/hung_task_timeout_secs" disables this message.',
    "[Thu Mar  2 15:59:56 2023] task:epilog.sh       state:D stack:    0 pid:76609 ppid: 76603 flags:0x00000080",
    "[Thu Mar  2 15:59:56 2023] Call Trace:",
    "[Thu Mar  2 15:59:56 2023]  __schedule+0x2d1/0x860",
    "[Thu Mar  2 15:59:56 2023]  ? cxiUiomove+0x326/0x3c0 [mmfslinux]",
    "[Thu Mar  2 15:59:56 2023]  schedule+0x35/0xa0",
]


def test_a_hung_task_is_read_with_its_process_and_what_it_waited_in():
    hung = only(parsed_by("hung_task", PYTHON_IN_GPFS).filter(event="hung_task"))
    assert (hung["pid"], hung["exc_message"], hung["elapsed_ms"]) == (280058, "python", 120_000)
    assert json.loads(hung["extra"]) == {"call": "write", "waited_in": "GPFS"}


def test_every_line_of_the_report_is_recognised(tmp_path):
    analysis = analyze_files(tmp_path, {"dmesg.txt": PYTHON_IN_GPFS})
    assert analysis.unrecognised_lines == 0


def test_a_job_process_hung_in_the_kernel_is_why_the_others_waited(tmp_path):
    analysis = analyze_files(tmp_path, {"dmesg.txt": PYTHON_IN_GPFS})
    hung = analysis.verdict.finding
    assert (hung.kind, hung.details["pids"]) == ("peer_lost", [280058])
    assert diagnosis(hung) == "stage_divergence"  # alive, stuck off the others' path
    assert "in a write to GPFS" in hung.summary and "uninterruptible sleep" in hung.summary
    assert analysis.verdict.headline == "Process 280058 hung in the kernel, in a write to GPFS"


def test_a_hung_task_of_no_process_of_the_job_is_no_finding(tmp_path):
    analysis = analyze_files(tmp_path, {"dmesg.txt": EPILOG})
    assert not [f for f in analysis.findings if f.details.get("hung_task")]
