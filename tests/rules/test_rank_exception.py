from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from logforensics.headline import verdict_headline
from logforensics.i18n import translate, translate_headline
from tests.builders import analyze, analyze_files, finding, kinds, marks
from tests.parsers.test_elastic import SUMMARY as ELASTIC_SUMMARY
from tests.parsers.test_traceback import ACE_346
from tests.test_i18n import english_runs

THREADS = Path(__file__).parents[1] / "data" / "threads"

TRACEBACK = [
    "Traceback (most recent call last):",
    '  File "/work/train.py", line 120, in main',
    "    batch = transform(sample)",
    '  File "/work/data.py", line 33, in transform',
    '    raise ValueError("corrupt sample 1731")',
    "ValueError: corrupt sample 1731",
]


def test_a_swallowed_exception_is_where_the_rank_left_the_path(tmp_path):
    files = {f"rank{r}.log": marks(r, range(8)) for r in (0, 2, 3)}
    before = marks(1, range(4)) + marks(1, [4], stages=("before_forward",))
    files["rank1.log"] = before + TRACEBACK + marks(1, range(5, 8))
    analysis = analyze_files(tmp_path, files)
    exception = finding(analysis, "rank_exception")
    assert exception.ranks == [1] and exception.step == 4
    assert exception.details["swallowed"] is True
    assert "caught it and kept going" in exception.summary
    assert exception.details["frame"].startswith("/work/data.py:33")
    assert analysis.verdict.finding is exception  # before the stage divergence it causes


def test_a_rank_that_died_of_it_is_the_one_waited_for(tmp_path):
    files = {f"rank{r}.log": marks(r, range(6)) for r in (0, 1)}
    files["rank2.log"] = marks(2, range(3)) + TRACEBACK
    exception = finding(analyze_files(tmp_path, files), "rank_exception")
    assert exception.ranks == [2] and exception.details["swallowed"] is False


def test_communication_errors_are_not_rank_exceptions(tmp_path):
    lines = [
        "Traceback (most recent call last):",
        '  File "/work/train.py", line 186, in main',
        "    loss.backward()",
        "RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting 20000ms for recv operation to complete",
    ]
    assert "rank_exception" not in kinds(analyze_files(tmp_path, {"rank0.log": lines}))


def test_traceback_in_stderr_of_a_rank_whose_marks_go_on_was_swallowed(tmp_path):
    files = {f"run/attempt_0/{r}/stdout.log": marks(r, range(6)) for r in (0, 2)}
    files["run/attempt_0/1/stdout.log"] = marks(
        1, range(6), skip={2: ("after_backward", "after_step")}
    )
    files["run/attempt_0/1/stderr.log"] = TRACEBACK
    analysis = analyze_files(tmp_path, files)
    exception = finding(analysis, "rank_exception")
    assert exception.ranks == [1] and exception.details["swallowed"] is True
    # another file than the marks does not place it; the rank's own departure does: a caught
    # exception on the rank that left the path is why it left (principle 8)
    assert analysis.verdict.finding is exception
    assert exception.step == 2 and "It left the others' path there" in exception.summary
    assert finding(analysis, "stage_divergence").role == "context"
    assert analysis.verdict.chain[:2] == (exception, finding(analysis, "stage_divergence"))


# facebookresearch/fairseq#708, verbatim: a hung job's traceback after Ctrl-C, pasted up to
# its last frame; the exception line is not in the excerpt
CUT_TRACEBACK = [
    "Traceback (most recent call last):",
    '  File "/usr/lib/python3.6/runpy.py", line 193, in _run_module_as_main',
    '    "__main__", mod_spec)',
    '  File "/usr/lib/python3.6/runpy.py", line 85, in _run_code',
    "    exec(code, run_globals)",
    '  File "/usr/local/lib/python3.6/dist-packages/torch/distributed/launch.py", line 219, in <module>',
    "    main()",
    '  File "/usr/local/lib/python3.6/dist-packages/torch/distributed/launch.py", line 215, in main',
    "    process.wait()",
    '  File "/usr/lib/python3.6/subprocess.py", line 1477, in wait',
    "    (pid, sts) = self._try_wait(0)",
    '  File "/usr/lib/python3.6/subprocess.py", line 1424, in _try_wait',
    "    (pid, sts) = os.waitpid(self.pid, wait_flags)",
]


def test_a_traceback_cut_before_its_exception_line_is_no_cause(tmp_path):
    files = {f"rank{r}.log": marks(r, range(6)) for r in (0, 2, 3)}
    files["rank1.log"] = marks(1, range(3)) + CUT_TRACEBACK
    analysis = analyze_files(tmp_path, files)
    assert "rank_exception" not in kinds(analysis)
    # it only shows where the rank was; the departure it ends is the verdict
    assert analysis.verdict.finding.kind == "stage_divergence"
    assert analysis.verdict.ranks == [1]


# hpcaitech/ColossalAI#3514, verbatim: torchrun stops the survivors after rank 3 was killed
COLOSSAL_KILLED = [
    "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 812914 closing signal SIGTERM",
    "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 812915 closing signal SIGTERM",
    "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 812916 closing signal SIGTERM",
    "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 3 (pid: 812917) of binary: /data/chenhao/anaconda3/envs/ColossalAI-Chat/bin/python",
]
# lzhxmu/CPPO#6, verbatim: torchrun's summary of a rank killed by SIGKILL
CPPO_SUMMARY = [
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
    "============================================================",
    "src/open_r1/grpo_gsm.py FAILED",
    "------------------------------------------------------------",
    "Failures:",
    "  <NO_OTHER_FAILURES>",
    "------------------------------------------------------------",
    "Root Cause (first observed failure):",
    "[0]:",
    "  time      : 2025-05-21_15:43:03",
    "  host      : mlxlab115rp2n7682d40d9-20250521025625-6dyyd3-8nir8b-worker",
    "  rank      : 0 (local_rank: 0)",
    "  exitcode  : -9 (pid: 14750)",
    "  error_file: <N/A>",
    "  traceback : Signal 9 (SIGKILL) received by PID 14750",
    "============================================================",
]


def test_a_rank_killed_by_sigkill_most_likely_ran_out_of_host_memory(tmp_path):
    analysis = analyze_files(tmp_path, {"launcher.log": COLOSSAL_KILLED})
    assert "rank_exception" not in kinds(analysis)
    killed = finding(analysis, "oom")
    assert killed.ranks == [3] and killed.details["signal"] == "SIGKILL"
    assert killed.details["host_memory"] and killed.confidence == "medium"
    assert killed.summary.startswith("Rank 3 was killed by SIGKILL (exit code -9)")
    assert "OOM killer" in killed.fix
    assert analysis.verdict.ranks == [3]
    assert analysis.verdict.headline.startswith("Rank 3 was killed: most likely out of host memory")


def test_a_kill_where_the_scheduler_ended_the_step_is_not_read_as_memory(tmp_path):
    # the same report beside SLURM's cancellation of the step (tests/parsers/test_slurm.py)
    cancelled = (
        "slurmstepd: error: *** STEP 440575.0 ON nid001277 CANCELLED AT 2023-12-05T07:16:01 ***"
    )
    analysis = analyze_files(tmp_path, {"launcher.log": [*COLOSSAL_KILLED, cancelled]})
    assert "oom" not in kinds(analysis)
    assert finding(analysis, "rank_exception").ranks == [3]


def test_torchruns_summary_alone_tells_the_rank_that_was_killed(tmp_path):
    analysis = analyze_files(tmp_path, {"launcher.log": CPPO_SUMMARY})
    assert analysis.verdict.finding.kind == "oom"  # SIGKILL: most likely host memory
    assert analysis.verdict.ranks == [0]
    # the entry's bare `[0]:` is quoted with the field that says how the rank died
    quoted = [line.text for line in analysis.verdict.finding.evidence]
    assert "  traceback : Signal 9 (SIGKILL) received by PID 14750" in quoted


# horovod/horovod#2907, verbatim: rank 0 raised and was killed; ranks 1-3 aborted after losing it
HOROVOD_KILLED = [
    "[0]<stderr>:RuntimeError: check_rank and exit epoch=1 batch=0 start_rank=0 rank=0",
    "[0]<stderr>:Killed",
    "[1]<stderr>:Terminated",
    "[1]<stderr>:terminate called after throwing an instance of 'gloo::IoException'",
    "[1]<stderr>:  what():  [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:589] Read error [127.0.0.1]:3977: Connection reset by peer",
    "[1]<stderr>:Aborted (core dumped)",
    "[2]<stderr>:terminate called after throwing an instance of 'gloo::IoException'",
    "[2]<stderr>:  what():  [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:54168",
    "[2]<stderr>:Aborted (core dumped)",
]


def test_ranks_that_aborted_after_losing_a_peer_are_not_causes(tmp_path):
    analysis = analyze_files(tmp_path, {"horovodrun_stderr.log": HOROVOD_KILLED})
    causes = [f for f in analysis.findings if f.kind == "rank_exception"]
    assert [f.ranks for f in causes] == [[0]]
    assert analysis.verdict.ranks == [0]


# open-mmlab/mmsegmentation#3106 (formats.md 9.2; tests/parsers/test_elastic.py's SUMMARY):
# every rank aborted, the watchdog's teardown after a timeout, so no one rank's death
EVERY_RANK_ABORTED = ELASTIC_SUMMARY


def test_an_abort_on_every_rank_is_no_one_ranks_death(tmp_path):
    analysis = analyze_files(tmp_path, {"launcher.log": EVERY_RANK_ABORTED})
    assert "rank_exception" not in kinds(analysis)


# hpcaitech/Open-Sora#815, verbatim: rank 0's DataLoader worker died and took the rank with it
WORKER_DIED = [
    '[rank0]:   File "/opt/conda/lib/python3.11/site-packages/torch/utils/data/dataloader.py", line 1144, in _try_get_data',
    "[rank0]:     raise RuntimeError(f'DataLoader worker (pid(s) {pids_str}) exited unexpectedly') from e",
    "[rank0]: RuntimeError: DataLoader worker (pid(s) 8864) exited unexpectedly",
    "W0617 03:17:51.687000 140319081027392 torch/distributed/elastic/multiprocessing/api.py:858] Sending process 44 closing signal SIGTERM",
]


def test_a_dead_dataloader_worker_gets_the_workers_fix(tmp_path):
    died = finding(analyze_files(tmp_path, {"console.log": WORKER_DIED}), "rank_exception")
    assert died.ranks == [0]
    assert "DataLoader worker process of rank 0 died" in died.fix and "--shm-size" in died.fix


def test_a_worker_killed_by_a_signal_gets_the_workers_fix_too(tmp_path):
    # chenyuntc/pytorch-book#62, verbatim (the message of torch's worker signal handler)
    lines = ["[rank1]: RuntimeError: DataLoader worker (pid 8544) is killed by signal: Killed."]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    died = finding(analysis, "oom")  # a worker SIGKILLed: most likely host memory
    assert died.ranks == [1] and "DataLoader worker process of rank 1 died" in died.fix
    assert analysis.verdict.headline.startswith("Rank 1 lost a worker process to a kill")


# deepspeedai/DeepSpeedExamples#626, verbatim: DeepSpeed's launcher kills the other workers and
# names the one that ended first (local rank 1, SIGSEGV)
DEEPSPEED_SEGFAULT = [
    "[2023-07-10 04:26:05,876] [INFO] [launch.py:318:sigkill_handler] Killing subprocess 94984",
    "[2023-07-10 04:26:05,876] [INFO] [launch.py:318:sigkill_handler] Killing subprocess 94985",
    "[2023-07-10 04:26:35,999] [ERROR] [launch.py:324:sigkill_handler] ['/global/D1/homes/sushant/sushanta/venv/bin/python3.10', '-u', 'trainCLM.py', '--local_rank=1', '--deepspeed', '/home/sushant/D1/sushanta/try/nepaligpt/clm/config/deepspeed_config.json'] exits with return code = -11",
]


# deepspeedai/DeepSpeedExamples#380, verbatim (a second excerpt of the description): the
# launcher's own exit report, written at its logger's ERROR level
DEEPSPEED_EXIT_CODE = [
    "[2023-04-21 03:07:23,960] [INFO] [launch.py:428:sigkill_handler] Killing subprocess 22610",
    "[2023-04-21 03:07:25,713] [ERROR] [launch.py:434:sigkill_handler] ['/opt/conda/envs/ftchat/bin/python3.9', '-u', 'main.py', '--local_rank=1', '--data_path', 'Dahoas/rm-static', 'Dahoas/full-hh-rlhf', 'Dahoas/synthetic-instruct-gptj-pairwise', 'yitingxie/rlhf-reward-datasets', 'openai/webgpt_comparisons', 'stanfordnlp/SHP', '--data_split', '2,4,4', '--model_name_or_path', 'facebook/opt-350m', '--num_padding_at_beginning', '1', '--per_device_train_batch_size', '8', '--per_device_eval_batch_size', '8', '--max_seq_len', '512', '--learning_rate', '5e-5', '--weight_decay', '0.1', '--num_train_epochs', '1', '--gradient_accumulation_steps', '1', '--lr_scheduler_type', 'cosine', '--num_warmup_steps', '0', '--seed', '1234', '--zero_stage', '0', '--deepspeed', '--output_dir', '/mnt/disks/data-1/marvin/DeepSpeedExamples/applications/DeepSpeed-Chat/output/reward-models/350m'] exits with return code = 1",
]


def test_a_launcher_s_exit_report_on_its_own_error_line_is_still_a_failure(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": DEEPSPEED_EXIT_CODE})
    exited = analysis.verdict.finding
    assert (exited.kind, analysis.verdict.ranks) == ("rank_exception", [])
    assert exited.summary.startswith("A worker exited with code 1 (the launcher's report)")


# databrickslabs/dolly#166, verbatim: the launcher's only worker on a one-GPU node, killed
DEEPSPEED_ONLY_WORKER = "[2023-05-15 13:14:32,960] [ERROR] [launch.py:434:sigkill_handler] ['/local_disk0/.ephemeral_nfs/envs/pythonEnv-c66e8a02-c787-4491-88b1-1fdcfab3b412/bin/python', '-u', '-m', 'training.trainer', '--local_rank=0', '--input-model', 'EleutherAI/pythia-2.8b', '--deepspeed', '/Workspace/Repos/dinesh/dolly/config/ds_z3_bf16_config.json', '--epochs', '2', '--local-output-dir', '/local_disk0/dolly_training/dolly__2023-05-15T13:11:26', '--dbfs-output-dir', '/dbfs/FileStore/tables/dolly_training/dolly__2023-05-15T13:11:26', '--per-device-train-batch-size', '1', '--per-device-eval-batch-size', '1', '--logging-steps', '10', '--save-steps', '100', '--save-total-limit', '20', '--eval-steps', '25', '--warmup-steps', '25', '--test-size', '200', '--lr', '5e-6'] exits with return code = -9"


def test_a_last_spawned_worker_of_local_rank_0_was_the_launcher_s_only_one(tmp_path):
    # the last command the launcher spawned is local rank 0: it spawned no other worker
    analysis = analyze_files(tmp_path, {"deepspeed.log": [DEEPSPEED_ONLY_WORKER]})
    assert (analysis.verdict.finding.kind, analysis.verdict.ranks) == ("oom", [0])


def test_deepspeeds_launcher_tells_the_signal_not_which_worker_crashed(tmp_path):
    # its command line is the last worker it spawned, whichever ended (DeepSpeed's launch.py
    # logs the spawning loop's `cmd`): `--local_rank=1` names no rank
    analysis = analyze_files(tmp_path, {"deepspeed.log": DEEPSPEED_SEGFAULT})
    crashed = finding(analysis, "rank_exception")
    assert crashed.ranks == [] and analysis.verdict.ranks == []
    assert crashed.details["signal"] == "SIGSEGV"
    assert crashed.summary.startswith("A process whose rank the logs do not say crashed on SIGSEGV")


# rwth-i6/returnn#1621, verbatim: three processes share one console; rank 0 ran the dev eval
# alone and the others' TCPStore waits timed out. One `[Rank 0]` line is no reason to give
# every line of the file to rank 0.
RETURNN_CONSOLE = [
    "ep 1 dev eval, step 99, min_wer 0.083, ce 0.286, fer 0.969, mem_usage:cuda:0 1.6GB",
    "[I ProcessGroupWrapper.cpp:562] [Rank 0] Running collective: CollectiveFingerPrint("
    "SequenceNumber=1, OpType=BROADCAST, TensorShape=[1], TensorDtypes=Char, "
    "TensorDeviceTypes=TensorOptions(dtype=float (default), device=cpu, layout=Strided "
    "(default), requires_grad=false (default), pinned_memory=false (default), memory_format="
    "(nullopt)))",
    "Unhandled exception <class 'RuntimeError'> in thread <_MainThread(MainThread, started "
    "129187316453376)>, proc 25928.",
    "Unhandled exception <class 'RuntimeError'> in thread <_MainThread(MainThread, started "
    "123955313799168)>, proc 25927.",
    "Unhandled exception <class 'RuntimeError'> in thread <_MainThread(MainThread, started "
    "135265771380736)>, proc 25926.",
    "RuntimeError: Socket Timeout",
    "Exception raised from doWait at ../torch/csrc/distributed/c10d/TCPStore.cpp:445 (most "
    "recent call first):",
]


def test_processes_sharing_a_console_are_not_given_the_one_rank_it_names(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": RETURNN_CONSOLE})
    assert not any(f.kind == "rank_exception" and f.blamed == [0] for f in analysis.findings)


def test_unattributed_store_timeouts_are_a_wait_that_blames_nobody(tmp_path):
    # an exception that only says a wait for the others timed out is a timeout's report
    analysis = analyze_files(tmp_path, {"console.log": RETURNN_CONSOLE})
    waited = finding(analysis, "collective_timeout")
    assert waited.part == "consequence" and waited.blamed == [] and waited.ranks == []
    assert "Socket Timeout" in waited.summary and waited.details["waiting"] is True
    assert analysis.verdict is not None and analysis.verdict.ranks == []
    assert analysis.verdict.headline.startswith("A process timed out waiting for other ranks")


def test_an_unattributed_exception_is_still_a_failure(tmp_path):
    # a bare traceback in a console no rank prefix marks: never "no failure found"
    analysis = analyze_files(tmp_path, {"console.log": TRACEBACK})
    failed = finding(analysis, "rank_exception")
    assert failed.blamed == [] and "ValueError" in failed.summary
    assert analysis.verdict is not None and analysis.verdict.finding is failed


# horovod/horovod#1834, verbatim: rank 0's traceback, cut in the paste before its exception,
# ends in `broadcast_parameters`; rank 3 (no line here) failed on its copy of the data
HOROVOD_CUT = [
    "[1,4]<stdout>:Extracting data-4/MNIST/raw/train-images-idx3-ubyte.gz to data-4/MNIST/raw",
    "[1,0]<stderr>:Traceback (most recent call last):",
    '[1,0]<stderr>:  File "pytorch_mnist.py", line 127, in <module>',
    "[1,0]<stderr>:    hvd.broadcast_parameters(model.state_dict(), root_rank=0)",
    '[1,0]<stderr>:  File "/home/mas/20/cdsanwesk/miniconda3/envs/fresh_env/lib/python3.7/'
    'site-packages/horovod/torch/__init__.py", line 470, in broadcast_parameters',
]


def test_a_cut_traceback_inside_a_collective_is_a_waiting_rank(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": HOROVOD_CUT})
    cut = finding(analysis, "rank_exception")
    assert cut.ranks == [0] and cut.part == "consequence" and cut.blamed == []
    assert analysis.verdict.headline.startswith(
        "Rank 0 was waiting in broadcast_parameters when its log ends"
    )


# bigscience-workshop/bigscience, train/tr11-176B-ml/chronicles.md (2022-03-21), verbatim: a
# GPU died under local rank 3 (torchrun's `[default3]:` tag names no global rank)
DEAD_GPU = [
    "[default3]:terminate called after throwing an instance of 'c10::CUDAError'",
    "[default3]:  what():  CUDA error: unknown error",
    "[default3]:Exception raised from query at ../aten/src/ATen/cuda/CUDAEvent.h:95 (most "
    "recent call first):",
]


def test_a_process_killed_by_a_cpp_exception_is_a_failure_with_the_hardware_fix(tmp_path):
    analysis = analyze_files(tmp_path, {"main_log.txt": DEAD_GPU})
    died = finding(analysis, "rank_exception")
    assert "CUDA error: unknown error" in died.summary and died.blamed == []
    assert "dmesg -T | grep -i xid" in died.fix
    assert analysis.verdict is not None and analysis.verdict.finding is died


# pytorch/pytorch#147064, verbatim: torchrun's agent reports its worker's exit; the worker's own
# output is not in the paste
WORKER_EXITED = [
    "E0213 12:07:20.086000 870572 torch/distributed/elastic/multiprocessing/api.py:869] failed "
    "(exitcode: 1) local_rank: 0 (pid: 876053) of binary: /usr/local/google/home/kiuk/.pyenv/"
    "versions/3.11.4/envs/venv311/bin/python3.1",
    "I0213 12:07:20.086000 870572 torch/distributed/elastic/agent/server/api.py:889] [default] "
    "Worker group FAILED. 3/3 attempts left; will restart worker group",
]


def test_a_worker_torchrun_saw_exit_with_an_error_is_a_failure(tmp_path):
    analysis = analyze_files(tmp_path, {"agent.log": WORKER_EXITED})
    exited = finding(analysis, "rank_exception")
    assert exited.details["exit_code"] == 1 and "not in these logs" in exited.summary
    assert analysis.verdict.headline.endswith("exited with code 1")
    assert exited.blamed == []  # nothing shows it failed before anything else did


# KellerJordan/modded-nanogpt#61, verbatim: eight workers on a four-GPU machine; the agent stops
# seven of them and reports local rank 7 failed (`invalid device ordinal` in the thread)
STOPPED_THE_OTHERS = [
    "using device: cuda:3",
    "using device: cuda:1",
    *(
        f"W1226 16:52:43.{ms}000 7 site-packages/torch/distributed/elastic/multiprocessing/"
        f"api.py:897] Sending process {pid} closing signal SIGTERM"
        for ms, pid in ((205, 74), (216, 75), (226, 76), (234, 77), (243, 78), (250, 79), (255, 80))
    ),
    "E1226 16:52:45.454000 7 site-packages/torch/distributed/elastic/multiprocessing/api.py:869] "
    "failed (exitcode: 1) local_rank: 7 (pid: 81) of binary: /usr/local/bin/python",
]


def test_the_one_worker_that_failed_while_the_agent_stopped_the_others_is_blamed(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": STOPPED_THE_OTHERS})
    exited = analysis.verdict.finding
    assert (exited.kind, analysis.verdict.ranks, exited.confidence) == (
        "rank_exception",
        [7],
        "low",
    )
    assert "while the other workers still ran" in exited.summary
    # without the agent's stops it is the launcher's bare report again: nobody blamed
    alone = analyze_files(tmp_path / "bare", {"console.log": STOPPED_THE_OTHERS[-1:]})
    assert alone.verdict.ranks == []


def test_a_workers_exit_is_no_finding_of_its_own_beside_its_exception(tmp_path):
    lines = [f"[rank0]: {line}" for line in TRACEBACK] + WORKER_EXITED
    found = [f for f in analyze_files(tmp_path, {"agent.log": lines}).findings]
    assert not any(f.details.get("exit_code") for f in found)


# NVIDIA-NeMo/Automodel PR #3686, verbatim as its thread quotes it: rank 8's stack in the
# checkpoint save down to `os.makedirs`, the `FileExistsError` line cut off in the excerpt
CUT_AT_BOTH_ENDS = [
    '[rank8]:   File "nemo_automodel/components/launcher/interactive.py", line 93, in _run_recipe_in_process',
    "[rank8]:     return recipe.run_train_validation_loop()",
    "[rank8]:            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
    '[rank8]:   File "nemo_automodel/recipes/llm/train_ft.py", line 981, in run_train_validation_loop',
    "[rank8]:     self.save_checkpoint(",
    '[rank8]:   File "nemo_automodel/recipes/base_recipe.py", line 310, in save_checkpoint',
    "[rank8]:     self.checkpointer.save_on_global_ranks(getattr(self, key), key, path)",
    '[rank8]:   File "nemo_automodel/components/checkpoint/checkpointing.py", line 1397, in save_on_global_ranks',
    "[rank8]:     _ensure_dirs(state_dir, process_group=self.process_group)",
    '[rank8]:   File "nemo_automodel/components/checkpoint/checkpointing.py", line 2022, in _ensure_dirs',
    "[rank8]:     _create_dirs(*dirs)",
    '[rank8]:   File "nemo_automodel/components/checkpoint/checkpointing.py", line 2011, in _create_dirs',
    "[rank8]:     os.makedirs(directory, exist_ok=True)",
    '[rank8]:   File "<frozen os>", line 225, in makedirs',
]


def test_frames_with_neither_header_nor_exception_line_are_a_cut_traceback(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": CUT_AT_BOTH_ENDS})
    crash = finding(analysis, "rank_exception")
    assert crash.ranks == [8] and crash.confidence == "low" and not crash.blames_nobody
    assert crash.details["frame"] == "<frozen os>:225 in makedirs"
    assert analysis.verdict.ranks == [8]
    assert analysis.unrecognised_lines == 0


def test_loose_frames_ending_in_a_wait_are_no_crash(tmp_path):
    # fairseq#708's Ctrl-C frames (verbatim) without their header, on rank 1: a hang's
    # interruption in `waitpid`, not a failure of rank 1
    files = {f"rank{r}.log": marks(r, range(6)) for r in (0, 2, 3)}
    files["rank1.log"] = marks(1, range(3)) + CUT_TRACEBACK[1:]
    analysis = analyze_files(tmp_path, files)
    assert "rank_exception" not in kinds(analysis)


def test_a_cut_traceback_of_a_rank_torchrun_reports_failed_is_its_crash(tmp_path):
    # hiyouga/LlamaFactory#9194, verbatim excerpts of one block: rank 5's DeepSpeed frames (its
    # `ValueError` line not retrieved) and torchrun's summary naming rank 5, exit code 1
    log = (
        Path(__file__).parents[1] / "data" / "threads" / "llamafactory9194_rank5_cut_traceback.log"
    )
    analysis = analyze_files(tmp_path, {"console.log": log.read_text().splitlines()})
    crash = analysis.verdict.finding
    assert (crash.kind, crash.ranks, crash.confidence) == ("rank_exception", [5], "medium")
    assert crash.details["exited_with_error"] is True
    # one finding for rank 5: the exit code is part of it, not a second failure
    assert [f.kind for f in analysis.findings if f.severity == "error"] == ["rank_exception"]


# karpathy/nanochat#554, verbatim: rank 6's download failed at step 2000 (its error is not in
# the paste); its NCCL sockets fail and its process group's abort hangs
ABORT_HUNG = [
    "step 01997/07226 (27.64%) | loss: 2.804653 | lrm: 1.00 | dt: 5535.97ms | tok/sec: 189,411 | bf16_mfu: 46.94 | epoch: 1 | total time: 183.94m | eta: 484.1m",
    "hippo-033099186168:804528:1095928 [6] NCCL INFO misc/socket.cc:81 -> 3",
    "hippo-033099186168:804528:1095928 [6] NCCL INFO misc/socket.cc:863 -> 3",
    "hippo-033099186168:804528:805225 [6] NCCL INFO misc/socket.cc:915 -> 3",
    "hippo-033099186168:804528:1095928 [6] NCCL INFO misc/socket.cc:64 -> 3",
    "hippo-033099186168:804528:1095928 [6] NCCL INFO misc/socket.cc:81 -> 3",
    "hippo-033099186168:804528:1095928 [6] NCCL INFO misc/socket.cc:863 -> 3",
    "[rank6]:[E222 18:40:45.627415948 ProcessGroupNCCL.cpp:1362] [PG ID 0 PG GUID 0(default_pg) Rank 6] Future for ProcessGroup abort timed out after 600000 ms",
    "Downloaded to /home/admin/.cache/nanochat/eval_bundle.zip",
]


def test_a_rank_whose_process_group_abort_hung_first_went_down_first(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": ABORT_HUNG})
    aborted = analysis.verdict.finding
    assert (aborted.kind, aborted.ranks, aborted.confidence) == ("rank_exception", [6], "low")
    assert "the abort timed out after 10 min" in aborted.summary
    assert analysis.verdict.headline == "Rank 6 went down first: its process group's abort hung"


def test_an_abort_after_a_timeout_is_not_the_first_to_go_down(tmp_path):
    # the same abort after another rank's watchdog timeout (DeepDeWedge#22's line, verbatim)
    timeout = "[rank1]:[E ProcessGroupNCCL.cpp:523] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=44, OpType=ALLREDUCE, NumelIn=6832129, NumelOut=6832129, Timeout(ms)=1800000) ran for 1800772 milliseconds before timing out."
    analysis = analyze_files(tmp_path, {"console.log": [timeout, ABORT_HUNG[7]]})
    assert not [f for f in analysis.findings if f.details.get("aborted")]


def test_the_watchdog_s_abort_after_its_timeout_is_part_of_the_timeout(tmp_path):
    # ultralytics/yolov5#4409: ranks 1-3 time out in BROADCAST while rank 0 validates; the
    # bare `terminate called ... 'std::runtime_error'` is the watchdog taking a process down
    log = Path(__file__).parents[1] / "data" / "threads" / "yolov5_4409_rank0_validation.log"
    analysis = analyze_files(tmp_path, {"console.log": log.read_text().splitlines()})
    assert "rank_exception" not in kinds(analysis)
    # rank 0's validation bar was still running: the busy rank, the timeout's cause, not a rank
    # that crashed
    assert analysis.verdict.finding.kind == "collective_timeout"
    assert analysis.verdict.ranks == [0]


# gpustack/gpustack#6019, verbatim (vLLM TP=16 over two nodes, cut): worker TP11's ZMQError is
# the first failure; worker TP6's gloo `Connection closed by peer` follows from it
VLLM_WORKERS = [
    "(Worker_TP11 pid=113) ERROR 08-10 23:02:36 [multiproc_executor.py:898]     ^^^^^^^^^^^",
    "(Worker_TP11 pid=113) ERROR 08-10 23:02:36 [multiproc_executor.py:898] zmq.error.ZMQError: Address already in use (addr='tcp://10.0.0.58:40043')",
    '(Worker_TP6 pid=160) ERROR 08-10 23:02:41 [multiproc_executor.py:898]   File "/usr/local/lib/python3.12/dist-packages/torch/distributed/distributed_c10d.py", line 4086, in all_gather',
    "(Worker_TP6 pid=160) ERROR 08-10 23:02:41 [multiproc_executor.py:898]     work.wait()",
    "(Worker_TP6 pid=160) ERROR 08-10 23:02:41 [multiproc_executor.py:898] RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:547] Connection closed by peer [10.0.0.64]:30890",
]


def test_a_worker_s_logged_error_is_its_rank_s_and_the_lost_peer_after_it_a_symptom(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": VLLM_WORKERS})
    error = analysis.verdict.finding
    assert (error.kind, analysis.verdict.ranks) == ("rank_exception", [11])
    # the message is whole, and nothing claims the worker went on after it
    assert error.details["message"] == "Address already in use (addr='tcp://10.0.0.58:40043')"
    assert "kept going" not in error.summary
    assert analysis.verdict.headline == (
        "Rank 11 logged a ZMQError; rank 6 then lost its connection to it"
    )


def test_a_native_crash_no_line_ties_to_a_rank_is_a_failure_blaming_nobody(tmp_path):
    # ai2cm/ace#346, verbatim: UCX's banner for a SIGSEGV, its backtrace in the C library
    analysis = analyze_files(tmp_path, {"console.log": ACE_346})
    crash = analysis.verdict.finding
    assert (crash.kind, analysis.verdict.ranks) == ("rank_exception", [])
    assert "crashed on SIGSEGV (host 92c90024c028, pid 157)" in crash.summary


def test_a_segfault_banner_with_native_frames_is_a_crash_where_its_first_frame_is(tmp_path):
    # Project-HAMi/HAMi#1853, verbatim: vLLM's two TP workers crash in the vGPU layer as NCCL
    # starts; the banner names no process
    lines = [
        "(Worker pid=2245) INFO 05-11 15:34:02 [parallel_state.py:1402] world_size=2 rank=1 local_rank=1 distributed_init_method=tcp://127.0.0.1:51949 backend=nccl",
        "(Worker pid=2244) INFO 05-11 15:34:02 [parallel_state.py:1402] world_size=2 rank=0 local_rank=0 distributed_init_method=tcp://127.0.0.1:51949 backend=nccl",
        "(Worker pid=2244) INFO 05-11 15:34:02 [pynccl.py:111] vLLM is using nccl==2.28.9",
        "[HAMI-core ERROR (pid:2244 thread=133445224001088 multiprocess_memory_limit.c:1255)]: Illegal device id: 31069",
        "[HAMI-core ERROR (pid:2245 thread=123595670289984 multiprocess_memory_limit.c:1255)]: Illegal device id: 28776",
        "!!!!!!! Segfault encountered !!!!!!!",
        '  File "/libvgpu/src/multiprocess/multiprocess_memory_limit.c", line 469, in add_gpu_device_memory_usage',
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    crash = analysis.verdict.finding
    assert crash.kind == "rank_exception"
    assert "crashed on SIGSEGV, innermost in /libvgpu/src/multiprocess/" in crash.summary
    assert "in add_gpu_device_memory_usage" in crash.summary


def test_a_bare_traceback_header_an_error_record_opened_is_a_failure(tmp_path):
    # ray-project/ray#49260, verbatim (the paste stops at the header): Ray Tune's controller
    # logs the trial's failure with its stack
    lines = [
        "(RayTrainWorker pid=1262281) Setting up process group for: env:// [rank=0, world_size=4]",
        "(RayTrainWorker pid=1262281) Moving model to device: cuda:0",
        "2024-12-13 11:12:48,791\tERROR tune_controller.py:1331 -- Trial task failed for trial TorchTrainer_35947_00000",
        "Traceback (most recent call last):",
    ]
    analysis = analyze_files(tmp_path, {"driver.log": lines})
    assert analysis.verdict is not None
    assert analysis.verdict.finding.kind == "rank_exception"
    assert "cut before its first frame" in analysis.verdict.finding.summary
    # the same header after an informational line is no failure the logs show
    quiet = [*lines[:2], "2024-12-13 11:12:48,791\tINFO tune.py:1 -- Trial started", lines[3]]
    assert analyze_files(tmp_path / "quiet", {"driver.log": quiet}).verdict is None


def test_a_traceback_cut_before_its_exception_takes_the_same_call_s_exception(tmp_path):
    # tdrussell/diffusion-pipe#397, verbatim (DeepSpeed's pdsh prefix; the reporter's paste cuts
    # rank 22's traceback): both ranks of the second node set the device by global rank
    lines = [
        "xxx1: [rank18]: Traceback (most recent call last):",
        'xxx1: [rank18]:   File "/root/workspace/diffusion-pipe/train.py", line 283, in <module>',
        "xxx1: [rank18]:     torch.cuda.set_device(dist.get_rank())",
        'xxx1: [rank18]:   File "/root/workspace/conda/miniforge3/envs/diff-pipe/lib/python3.12/site-packages/torch/cuda/__init__.py", line 529, in set_device',
        "xxx1: [rank18]:     torch._C._cuda_setDevice(device)",
        "xxx1: [rank18]: RuntimeError: CUDA error: invalid device ordinal",
        "xxx1: [rank18]: CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
        "xxx1: ",
        "xxx1: [2025-08-25 15:04:24,444] [INFO] [comm.py:675:init_distributed] cdb=None",
        "xxx1: [rank22]: Traceback (most recent call last):",
        'xxx1: [rank22]:   File "/root/workspace/diffusion-pipe/train.py", line 283, in <module>',
        "xxx1: [rank22]:     torch.cuda.set_device(dist.get_rank())",
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    error = analysis.verdict.finding
    assert (error.kind, analysis.verdict.ranks) == ("rank_exception", [18, 22])
    assert "LOCAL_RANK" in error.fix and "hung" not in error.fix


def test_a_worker_the_launcher_says_was_killed_is_a_failure_even_with_its_rank_cut_off(tmp_path):
    # tatsu-lab/stanford_alpaca#183, verbatim (the paste garbles the launcher's tails): one
    # worker was SIGKILLed (the host ran out of RAM), torchrun stopped the other three; the
    # stops leave out pid 53040, local rank 2 of the one node
    lines = [
        "Parameter Offload: Total persistent parameters: 414720 in 81 params",
        "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 53038 closing",
        "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 53039 closing",
        "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 53041 closing",
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rankroot/anaconda3/envs/faster/bin/python",
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    killed = analysis.verdict.finding
    assert (killed.kind, analysis.verdict.ranks) == ("oom", [2])
    assert "was killed (SIGKILL)" in killed.summary and "OOM killer" in killed.fix
    assert "pid 53040" in killed.summary
    stopped = analysis.job.events.filter(pl.col("event") == "worker_sigterm")
    assert sorted(stopped.get_column("pid").to_list()) == [53038, 53039, 53041]


def test_an_exception_that_names_running_out_of_memory_as_a_possible_cause_is_no_oom(tmp_path):
    # facebookresearch/fairseq#1088, verbatim (cut): the wrapper's own diagnosis of a desync
    # (the reporter's: padded empty batches at the epoch's end skipped on some workers), read as
    # the ranks out of step (logforensics/garbled.py), no one blamed, and no OOM
    lines = [
        'File "~/fairseq/fairseq/distributed_utils.py", line 178, in all_gather_list',
        "'Unable to unpickle data from other workers. all_gather_list requires all '",
        "Exception: Unable to unpickle data from other workers. all_gather_list requires all workers to enter the function together, so this error usually indicates that the workers have fallen out of sync somehow. Workers can fall out of sync if one of them runs out of memory, or if there are other conditions in your training script that can cause one worker to finish an epoch while other workers are still iterating over their portions of the data.",
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    assert analysis.verdict is not None  # never "no failure found" over an exception
    assert (analysis.verdict.finding.kind, analysis.verdict.ranks) == ("collective_mismatch", [])
    assert "oom" not in kinds(analysis)


# ROCm/ROCm#5788, verbatim (the whole paste): torchrun's summary of a two-rank job whose ranks
# both died of SIGSEGV in the same second (the container lacked the GPU's kernels)
BOTH_SEGFAULTED = [
    "E0115 05:44:28.210000 6139 torch/distributed/elastic/multiprocessing/api.py:882] failed (exitcode: -11) local_rank: 0 (pid: 6174) of binary: /venv/bin/python",
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",
    "======================================================",
    "run.py FAILED",
    "------------------------------------------------------",
    "Failures:",
    "[1]:",
    "  time      : 2026-01-15_05:44:28",
    "  host      : xdit",
    "  rank      : 1 (local_rank: 1)",
    "  exitcode  : -11 (pid: 6175)",
    "  error_file: <N/A>",
    "  traceback : Signal 11 (SIGSEGV) received by PID 6175",
    "------------------------------------------------------",
    "Root Cause (first observed failure):",
    "[0]:",
    "  time      : 2026-01-15_05:44:28",
    "  host      : xdit",
    "  rank      : 0 (local_rank: 0)",
    "  exitcode  : -11 (pid: 6174)",
    "  error_file: <N/A>",
    "  traceback : Signal 11 (SIGSEGV) received by PID 6174",
    "======================================================",
]


def test_every_rank_crashing_alike_is_a_shared_cause_not_one_rank_s(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": BOTH_SEGFAULTED})
    crash = analysis.verdict.finding
    assert (crash.kind, crash.ranks, analysis.verdict.ranks) == ("rank_exception", [0, 1], [])
    assert "every rank the logs show died so" in crash.summary
    assert "not for one bad node" in crash.fix and "healthy node" not in crash.fix


def test_one_of_two_ranks_crashing_is_still_that_rank_s(tmp_path):
    # the same summary with rank 0's entry cut: rank 1 alone died, rank 0 is seen waiting
    lines = BOTH_SEGFAULTED[2:14] + [
        "[rank0]:[E115 05:44:28.000000000 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600011 milliseconds before timing out.",
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    assert analysis.verdict.ranks == [1]


def test_the_same_exception_on_every_rank_shown_blames_the_one_torchrun_saw_fail_first(tmp_path):
    # WilsonCWu/build_nanogpt's README (tests/data/threads): a torch.compile error in the
    # evaluation forward on ranks 0 and 3-5, rank 2's tail of the same error and torchrun's
    # summary of ranks 0 and 2 exiting with code 1, rank 0 its root cause
    lines = (THREADS / "build_nanogpt_compile_all_ranks.log").read_text(encoding="utf-8")
    analysis = analyze_files(tmp_path, {"console.log": lines.splitlines()})
    error = analysis.verdict.finding
    assert (error.kind, error.ranks, analysis.verdict.ranks) == (
        "rank_exception",
        [0, 3, 4, 5],
        [0],
    )
    assert "Every rank raised an exception like it" in error.summary
    assert error.summary.endswith("torchrun saw rank 0 fail first.")
    # without torchrun's word, none of them is blamed
    unreported = [line for line in lines.splitlines() if "multiprocessing" not in line]
    unreported = unreported[: unreported.index("Root Cause (first observed failure):")]
    analysis = analyze_files(tmp_path / "unreported", {"console.log": unreported})
    assert analysis.verdict.ranks == []
    assert error.fix.startswith("Every rank named raised the same exception")
    assert "could only wait" not in error.fix


def test_a_worker_killed_by_a_bus_error_in_a_cut_chain_is_shared_memory_running_out(tmp_path):
    # bigscience tr1's chronicles (tests/data/threads): two processes' tracebacks interleaved
    # in the main log, `RuntimeError: DataLoader worker (pid 30882) is killed by signal: Bus
    # error...` and the chain that follows it cut before its last exception line
    lines = (THREADS / "bigscience_tr1_shm_bus_error.log").read_text(encoding="utf-8")
    analysis = analyze_files(tmp_path, {"main_log.txt": lines.splitlines()})
    died = analysis.verdict.finding
    assert (died.kind, analysis.verdict.ranks) == ("oom", [])
    assert analysis.verdict.headline.startswith("The job ran out of shared memory (/dev/shm)")
    assert "DataLoader worker (pid 30882) is killed by signal: Bus error" in died.summary
    assert died.summary.endswith("…") and len(died.summary) < 260
    assert "--shm-size" in died.fix


def test_training_numbers_that_diverged_get_the_numerics_fix(tmp_path):
    # hiyouga/LlamaFactory#251 (DeepSpeed's fp16 loss scaler at its floor) and
    # alibaba/Pai-Megatron-Patch#680 (Megatron's NaN check), verbatim
    # (Megatron's check names the rank that found the NaN: the verdict does too)
    for line, ranks in (
        (
            "Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.",
            [],
        ),
        (
            " AssertionError: Rank 114: found NaN in local forward loss calculation. Device: 2,",
            [114],
        ),
    ):
        analysis = analyze_files(tmp_path, {"train.log": [line]})
        error = analysis.verdict.finding
        assert error.kind == "rank_exception" and analysis.verdict.ranks == ranks
        assert "Train in bf16" in error.fix and "not one rank's path" in error.fix
        assert not error.summary.endswith("..")


def test_spawn_s_report_of_a_child_s_exit_code_is_the_launcher_s_word_not_an_exception(tmp_path):
    # Plachtaa/VITS-fast-fine-tuning#353, verbatim: torch.multiprocessing.spawn's parent on a
    # child that exited with code 1; the child's own error is not in the paste
    lines = [
        "Traceback (most recent call last):",
        '  File "/home/ft/.conda/envs/VIST/lib/python3.8/site-packages/torch/multiprocessing/spawn.py", line 149, in join',
        "    raise ProcessExitedException(",
        "torch.multiprocessing.spawn.ProcessExitedException: process 0 terminated with exit code 1",
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    exited = analysis.verdict.finding
    assert (exited.kind, analysis.verdict.ranks) == ("rank_exception", [])
    assert exited.confidence == "low" and exited.details["exit_code"] == 1
    assert exited.summary.startswith("Rank 0 exited with code 1 (the launcher's report)")


def test_a_spawn_parent_s_cut_traceback_is_a_worker_s_failure_and_says_why(tmp_path):
    # k2-fsa/icefall#1463 (tests/data/threads): two ranks warn `Grad scale is small`, then the
    # mp.spawn parent's traceback, cut in its join
    lines = (THREADS / "icefall1463_grad_scale_small.log").read_text(encoding="utf-8")
    analysis = analyze_files(tmp_path, {"console.log": lines.splitlines()})
    failed = analysis.verdict.finding
    assert (failed.kind, analysis.verdict.ranks) == ("rank_exception", [])
    assert analysis.verdict.headline == "A spawned worker failed: the training's numbers diverged"
    assert "(`Grad scale is small: 1.2924697071141057e-26`)" in failed.summary
    assert "Train in bf16" in failed.fix


# roboflow/rf-detr#316, verbatim: rank 1's traceback down to its `torch.load` of the checkpoint
# only rank 0 writes (its FileNotFoundError line is not in the retrieved excerpt)
RFDETR_CUT = [
    "[rank1]: Traceback (most recent call last):",
    '[rank1]:   File "/home/hehao/桌面/rf-detr/train.py", line 5, in <module>',
    "[rank1]:     model.train(",
    '[rank1]:   File "/home/hehao/桌面/rf-detr/rfdetr/detr.py", line 81, in train',
    "[rank1]:     self.train_from_config(config, **kwargs)",
    '[rank1]:   File "/home/hehao/桌面/rf-detr/rfdetr/detr.py", line 187, in train_from_config',
    "[rank1]:     self.model.train(",
    '[rank1]:   File "/home/hehao/桌面/rf-detr/rfdetr/main.py", line 483, in train',
    "[rank1]:     best_state_dict = torch.load(output_dir / 'checkpoint_best_total.pth', map_location='cpu', weights_only=False)['model']",
]


def test_a_cut_traceback_is_a_failure_when_the_logs_hold_no_other_error(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": RFDETR_CUT})
    crash = analysis.verdict.finding
    assert (crash.kind, crash.ranks, crash.confidence) == ("rank_exception", [1], "low")
    assert crash.details["frame"].endswith("rfdetr/main.py:483 in train")


# Lightning-AI/litgpt#2020, verbatim (four ranks under Lightning): rank 1's traceback cut at
# its header while verifying settings; the IndexError the reporter names is not in the paste
LITGPT_HEADER_ONLY = [
    "Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/4",
    "Initializing distributed: GLOBAL_RANK: 3, MEMBER: 4/4",
    "Initializing distributed: GLOBAL_RANK: 2, MEMBER: 3/4",
    "[rank: 0] Seed set to 1337",
    "[rank: 1] Seed set to 1337",
    "Verifying settings ...",
    "[rank1]: Traceback (most recent call last):",
]


def test_a_ranks_traceback_cut_at_its_header_is_the_failure_logs_with_no_other_error_show(
    tmp_path,
):
    analysis = analyze_files(tmp_path, {"train.log": LITGPT_HEADER_ONLY})
    crash = analysis.verdict.finding
    assert (crash.kind, crash.ranks, crash.confidence) == ("rank_exception", [1], "low")
    assert analysis.verdict.headline == "Rank 1 failed, its exception line cut off"
    assert "cut before its first frame" in crash.summary


# ChenRocks/UNITER#31, verbatim excerpts (horovodrun, two ranks): rank 1's traceback ends in
# Horovod's shut-down; mpirun's summary names rank 0 as the first process to exit. The CUDA
# out-of-memory error the reporter then found is not among the lines retrieved.
HOROVOD_SHUT_DOWN = [
    '[1,1]<stderr>:  File "/opt/conda/lib/python3.6/site-packages/horovod/torch/mpi_ops.py", line 436, in synchronize',
    "[1,1]<stderr>:    mpi_lib.horovod_torch_wait_and_clear(handle)",
    "[1,1]<stderr>:RuntimeError: Horovod has been shut down. This was caused by an exception on one of the ranks or an attempt to allreduce, allgather or broadcast a tensor after one of the ranks finished execution. If the shutdown was caused by an except",
]
MPIRUN_FIRST_EXIT = [
    "mpirun detected that one or more processes exited with non-zero status, thus causing",
    "the job to be terminated. The first process to do so was:",
    "",
    "  Process name: [[50371,1],0]",
    "  Exit code:    1",
]


def test_horovods_shut_down_is_a_consequence_of_the_rank_that_exited_first(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": HOROVOD_SHUT_DOWN + MPIRUN_FIRST_EXIT})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [0])
    assert "first process to exit" in verdict.finding.summary
    shut_down = [f for f in analysis.findings if f.ranks == [1]]
    assert [f.part for f in shut_down] == ["consequence"] and shut_down[0].blamed == []


def test_horovods_shut_down_alone_is_a_failure_whose_cause_is_elsewhere(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": HOROVOD_SHUT_DOWN})
    verdict = analysis.verdict
    assert verdict is not None and verdict.ranks == []
    assert "stopped because Horovod had shut down" in verdict.finding.summary
    # read alone, the headline names the rank that stopped, not an unknown process, and no
    # timeout: Horovod stopped it because another rank failed or finished first
    assert verdict_headline(verdict) == "Rank 1 stopped because Horovod had shut down"
    unranked = [line.removeprefix("[1,1]<stderr>:") for line in HOROVOD_SHUT_DOWN]
    alone = analyze_files(tmp_path / "unranked", {"console.log": unranked}).verdict
    # horovod/horovod#1407: the shut-down's line alone, the batch counts above it untagged
    assert alone.headline == (
        "A process stopped because Horovod had shut down; the logs do not say which rank "
        "failed or finished first"
    )
    for headline in (verdict.headline, alone.headline):
        assert english_runs(translate_headline(headline, "zh")) == []


# RVC-Project/Retrieval-based-Voice-Conversion-WebUI#99, verbatim: the training script ends its
# worker with os._exit(2333333) once training is done; mp.spawn's parent reports the code
SPAWN_CHOSEN_EXIT = [
    "Traceback (most recent call last):",
    '  File "train_nsf_sim_cache_sid_load_pretrain.py", line 684, in <module>',
    "    main()",
    '  File "train_nsf_sim_cache_sid_load_pretrain.py", line 50, in main',
    "    mp.spawn(",
    '  File "E:\\User\\Voice\\VoiceEnv\\lib\\site-packages\\torch\\multiprocessing\\spawn.py", line 239, in spawn',
    "    return start_processes(fn, args, nprocs, join, daemon, start_method='spawn')",
    '  File "E:\\User\\Voice\\VoiceEnv\\lib\\site-packages\\torch\\multiprocessing\\spawn.py", line 197, in start_processes',
    "    while not context.join():",
    '  File "E:\\User\\Voice\\VoiceEnv\\lib\\site-packages\\torch\\multiprocessing\\spawn.py", line 149, in join',
    "    raise ProcessExitedException(",
    "torch.multiprocessing.spawn.ProcessExitedException: process 0 terminated with exit code 2333333",
]


def test_an_exit_code_the_program_chose_is_no_failure_of_its_own(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": SPAWN_CHOSEN_EXIT})
    assert analysis.verdict is None
    exited = finding(analysis, "rank_exception")
    assert (exited.severity, exited.ranks) == ("warning", [0])
    assert "a code the program chose itself" in exited.summary


# HRNet/HRNet-Semantic-Segmentation#171, verbatim: `--nproc_per_node` above the node's three
# GPUs; two processes fail in `torch.cuda.set_device(args.local_rank)`
NPROC_ABOVE_GPUS = [
    "RuntimeError: cuda runtime error (10) : invalid device ordinal at /pytorch/torch/csrc/cuda/Module.cpp:33",
    "THCudaCheck FAIL file=/pytorch/torch/csrc/cuda/Module.cpp line=33 error=10 : invalid device ordinal",
    "Traceback (most recent call last):",
    '  File "tools/train.py", line 289, in <module>',
    "    main()",
    '  File "tools/train.py", line 98, in main',
    "    torch.cuda.set_device(args.local_rank)",
    '  File "/home/qfy/.conda/envs/HRnets-torch1.1/lib/python3.6/site-packages/torch/cuda/__init__.py", line 265, in set_device',
    "    torch._C._cuda_setDevice(device)",
]


def test_an_invalid_device_ordinal_is_more_processes_than_gpus(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": NPROC_ABOVE_GPUS})
    fix = analysis.verdict.finding.fix
    assert analysis.verdict.finding.kind == "rank_exception"
    assert "more processes were started on the node than it has GPUs" in fix


def test_a_sigabrt_the_launcher_reports_after_a_watchdog_timeout_is_that_watchdog_s_abort(tmp_path):
    # KaiqiangXiong/CL-MVSNet#14, verbatim: rank 0's watchdog at 17:24:49, rank 1 taken down and
    # torchrun's `exitcode: -6` at 17:25:50 (its local rank 0 not tied to a global rank)
    lines = [
        "[rank0]:[E1213 17:24:49.082111648 ProcessGroupNCCL.cpp:2241] [PG ID 0 PG GUID 0(default_pg) Rank 0]  failure detected by watchdog at work sequence id: 716 PG status: last enqueued work: 747, last completed work: 715",
        "[rank0]:[E1213 17:24:49.082246429 ProcessGroupNCCL.cpp:2573] [PG ID 0 PG GUID 0(default_pg) Rank 0] First PG on this rank to signal dumping.",
        "[rank1]:[E1213 17:25:50.849797607 ProcessGroupNCCL.cpp:744] [Rank 1] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
        "[rank1]:[E1213 17:25:50.849853448 ProcessGroupNCCL.cpp:758] [Rank 1] To avoid data inconsistency, we are taking the entire process down.",
        "E1213 17:25:50.704000 1497962 site-packages/torch/distributed/elastic/multiprocessing/api.py:882] failed (exitcode: -6) local_rank: 0 (pid: 1498377) of binary: /home/zhengyifei24/miniconda3/envs/ZYF312/bin/python",
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    assert "rank_exception" not in kinds(analysis)
    assert analysis.verdict.finding.kind == "collective_timeout"


def test_a_sigabrt_before_the_first_timeout_is_still_a_crash(tmp_path):
    # the same lines, the exit written a minute before the watchdog's report: it came first
    lines = [
        "E1213 17:23:48.704000 1497962 site-packages/torch/distributed/elastic/multiprocessing/api.py:882] failed (exitcode: -6) local_rank: 0 (pid: 1498377) of binary: /home/zhengyifei24/miniconda3/envs/ZYF312/bin/python",
        "[rank1]:[E1213 17:24:49.082111648 ProcessGroupNCCL.cpp:2241] [PG ID 0 PG GUID 0(default_pg) Rank 1]  failure detected by watchdog at work sequence id: 716 PG status: last enqueued work: 747, last completed work: 715",
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    assert analysis.verdict.finding.kind == "rank_exception"
    assert analysis.verdict.finding.details["signal"] == "SIGABRT"


def test_a_cut_traceback_after_its_rank_s_own_timeout_is_that_timeout_raised_in_python(tmp_path):
    # OpenRLHF/OpenRLHF#1135, verbatim (the paste stops inside the stack): with blocking wait
    # the timed-out all-gather raises in rank 6's own thread
    lines = [
        "[rank6]:[E928 16:16:22.196124891 ProcessGroupNCCL.cpp:817] [Rank 6] Work WorkNCCL(SeqNum=43379, OpType=_ALLGATHER_BASE, NumelIn=8069120, NumelOut=64552960, Timeout(ms)=600000) timed out in blocking wait.",
        "[rank6]: Traceback (most recent call last):",
        '[rank6]:   File "/usr/lib/python3.10/runpy.py", line 196, in _run_module_as_main',
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    assert "rank_exception" not in kinds(analysis)
    assert analysis.verdict.finding.kind == "collective_timeout"


def test_aborts_the_watchdog_reports_are_the_timeout_not_a_crash():
    # argonne-lcf/alcf-nccl-tests pytests/README.md (tests/data/threads): the paste opens with
    # rank 1's `terminate called ...` whose `what():` is the watchdog's report, and the shell's
    # `191644 Aborted (core dumped)` stands below both ranks' reports, with no clock. Both had
    # been told as crashes, the SIGABRT as the cause; the timeout is all the logs show.
    analysis = analyze(THREADS / "alcf_first_allreduce_two_node.log")
    assert "rank_exception" not in kinds(analysis)
    assert analysis.verdict.finding.kind == "collective_timeout"
    assert analysis.verdict.ranks == []


# QwenLM/Qwen#852, verbatim: an allocation error no line ties to a rank, then torchrun stops
# five workers whose pids run 86503-86508 but for 86505
HOST_ALLOCATION_THEN_STOPS = [
    "RuntimeError: [enforce fail at alloc_cpu.cpp:83] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to allocate 268435456 bytes. Error code 12 (Cannot allocate memory)",
    "[2023-12-22 07:10:38,757] torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process 86503 closing signal SIGTERM",
    "[2023-12-22 07:10:38,763] torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process 86504 closing signal SIGTERM",
    "[2023-12-22 07:10:38,764] torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process 86506 closing signal SIGTERM",
    "[2023-12-22 07:10:38,765] torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process 86507 closing signal SIGTERM",
    "[2023-12-22 07:10:38,766] torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process 86508 closing signal SIGTERM",
]


def test_the_worker_torchrun_did_not_stop_is_the_rank_that_raised(tmp_path):
    # the allocator's words say the host's memory ran out, whoever raised them: an OOM
    verdict = analyze_files(tmp_path, {"console.log": HOST_ALLOCATION_THEN_STOPS}).verdict
    assert verdict.finding.kind == "oom" and verdict.ranks == [2]
    assert verdict.finding.confidence == "medium"
    assert "pid 86505" in verdict.finding.summary
    assert "DefaultCPUAllocator" in verdict.finding.summary
    assert any(e.line == 2 for e in verdict.finding.evidence)  # the stops are its evidence


def test_stopped_pids_without_one_gap_name_no_rank(tmp_path):
    # the same stops with 86506 as 86509: two pids left out of the run, so no rank is guessed
    stops = [line.replace("86506", "86509") for line in HOST_ALLOCATION_THEN_STOPS]
    verdict = analyze_files(tmp_path, {"console.log": stops}).verdict
    assert verdict.ranks == []


def test_ranks_whose_traceback_was_cut_or_whose_exit_the_launcher_reports_failed_alike(tmp_path):
    # meta-llama/llama-cookbook#540, verbatim lines: ranks 2 and 3 raise the same start-up
    # ValueError, rank 6's traceback is cut after its first line, and torchrun reports local
    # rank 0 exited with 1: every rank the logs show failed, so no one rank is blamed
    error = "[rank{r}]: ValueError: The eval set size is too small for dataloader to load even one batch. Please increase the size of eval set."
    lines = [
        '[rank3]:     raise ValueError("The eval set size is too small for dataloader to load even one batch. Please increase the size of eval set.")',
        error.format(r=3),
        "[rank6]: Traceback (most recent call last):",
        '[rank2]:     raise ValueError("The eval set size is too small for dataloader to load even one batch. Please increase the size of eval set.")',
        error.format(r=2),
        "E0523 10:41:14.260000 139842235315200 torch/distributed/elastic/multiprocessing/api.py:826] failed (exitcode: 1) local_rank: 0 (pid: 280537) of binary: /home/kaiwu/miniconda3/envs/llama/bin/python",
    ]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    verdict = analysis.verdict
    assert verdict.finding.kind == "rank_exception" and verdict.ranks == []
    assert verdict.finding.ranks == [2, 3]
    assert "Every rank raised an exception like it" in verdict.finding.summary


def test_a_rank_that_did_not_fail_keeps_the_exception_one_rank_s(tmp_path):
    # the same lines without the launcher's exit of local rank 0: rank 0 is not seen failing
    error = "[rank{r}]: ValueError: The eval set size is too small for dataloader to load even one batch. Please increase the size of eval set."
    lines = [error.format(r=3), "[rank6]: Traceback (most recent call last):", error.format(r=2)]
    verdict = analyze_files(tmp_path, {"console.log": lines}).verdict
    assert verdict.ranks == [2, 3]


# ChenRocks/UNITER#42, verbatim (horovodrun tags): ranks 1-3 die of the same KeyError while
# rank 0 goes on to log its evaluation's results, then begins a traceback the paste cuts
KEY_ERROR_OF = [
    "[1,{r}]<stderr>:Traceback (most recent call last):",
    '[1,{r}]<stderr>:  File "train_itm.py", line 410, in <module>',
    "[1,{r}]<stderr>:    main(args)",
    '[1,{r}]<stderr>:  File "train_itm.py", line 221, in main',
    '[1,{r}]<stderr>:    LOGGER.info(f"image retrieval R1: "',
    "[1,{r}]<stderr>:KeyError: 'img_r1'",
]
RANK_0_WENT_ON = [
    "[1,0]<stderr>:10/24/2020 15:08:26 - INFO - __main__ -   evaluation finished in 565 seconds",
    "[1,0]<stderr>:10/24/2020 15:08:26 - INFO - __main__ -   image retrieval R1: 63.73,",
    "[1,0]<stderr>:Traceback (most recent call last):",
]


def test_a_rank_that_went_on_after_the_others_failed_did_not_fail_alike(tmp_path):
    lines = [line.format(r=r) for r in (2, 1, 3) for line in KEY_ERROR_OF] + RANK_0_WENT_ON
    verdict = analyze_files(tmp_path, {"output.log": lines}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [1, 2, 3])
    assert "Every rank raised" not in verdict.finding.summary


def test_a_cut_traceback_before_any_other_line_of_its_rank_still_fails_alike(tmp_path):
    # the same paste with rank 0's results left out: its cut traceback is all it shows
    lines = [line.format(r=r) for r in (2, 1, 3) for line in KEY_ERROR_OF] + RANK_0_WENT_ON[2:]
    verdict = analyze_files(tmp_path, {"output.log": lines}).verdict
    assert verdict.ranks == [] and "Every rank raised" in verdict.finding.summary


# huggingface/accelerate#1519, verbatim: two agents' summaries in one SLURM log, rank 4's
# failure 51 s before rank 0's
def summary_entry(rank: int, local_rank: int, time: str, pid: int) -> list[str]:
    return [
        "Root Cause (first observed failure):",
        "[0]:",
        f"  time      : 2023-06-03_{time}",
        "  host      : gpu187.cluster.local",
        f"  rank      : {rank} (local_rank: {local_rank})",
        f"  exitcode  : 1 (pid: {pid})",
        "  error_file: <N/A>",
        "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
    ]


TWO_AGENTS_SUMMARIES = [
    *summary_entry(0, 0, "22:45:52", 19414),
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
    "============================================================",
    "v2-1_mgpus_train_enc_dec.py FAILED",
    "------------------------------------------------------------",
    "Failures:",
    "  <NO_OTHER_FAILURES>",
    "------------------------------------------------------------",
    *summary_entry(4, 0, "22:45:01", 19401),
    "============================================================",
]


def test_the_exit_the_launchers_time_clearly_first_is_the_first_failure(tmp_path):
    verdict = analyze_files(tmp_path, {"output.log": TWO_AGENTS_SUMMARIES}).verdict
    assert verdict.ranks == [4]
    assert "51 s before any other rank" in verdict.finding.summary


def test_exits_the_launchers_time_alike_blame_no_one_rank(tmp_path):
    lines = [line.replace("22:45:01", "22:45:52") for line in TWO_AGENTS_SUMMARIES]
    verdict = analyze_files(tmp_path, {"output.log": lines}).verdict
    assert verdict.ranks == []


# modelscope/ms-swift#8193, verbatim: training and validation done, then the agent is sent
# SIGTERM from outside (the host ran out of memory while saving) and stops its four workers
STOPPED_FROM_OUTSIDE = [
    "Train: 100%|██████████| 7/7 [1:01:03<00:00, 433.95s/it]",
    "Val: 100%|██████████| 9/9 [09:26<00:00, 67.91s/it]",
    "Train: 100%|██████████| 7/7 [1:01:03<00:00, 433.95s/it]",
    "Val: 100%|██████████| 9/9 [09:26<00:00, 62.92s/it]",
    "W0304 01:00:36.891000 3535919 site-packages/torch/distributed/elastic/agent/server/api.py:725] Received Signals.SIGTERM death signal, shutting down workers",
    *(
        f"W0304 01:00:37.{ms}000 3535919 site-packages/torch/distributed/elastic/"
        f"multiprocessing/api.py:908] Sending process {pid} closing signal SIGTERM"
        for ms, pid in ((92, 3536001), (93, 3536002), (94, 3536003), (94, 3536004))
    ),
    "Traceback (most recent call last):",
]


def test_a_launcher_signalled_from_outside_ended_the_job_and_no_rank_is_blamed(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": STOPPED_FROM_OUTSIDE})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [])
    assert verdict.headline == "The launcher was sent SIGTERM from outside and stopped the job"
    assert "sacct" in verdict.finding.fix and analysis.unrecognised_lines == 0


def test_a_worker_failing_first_is_the_failure_not_the_agent_s_signal(tmp_path):
    lines = [*STOPPED_FROM_OUTSIDE[4:-1], *STOPPED_THE_OTHERS[-1:]]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    assert "from_outside" not in analysis.verdict.finding.details


# hiyouga/LLaMA-Factory#2206 (srun + torchrun on one host), verbatim excerpt: the paste starts
# inside torchrun's summary, below its `Failures:` heading; every worker died of SIGBUS in the
# same second (the maintainer: GPU or host memory ran out)
SIGBUS_ALL = [
    "  traceback : Signal 7 (SIGBUS) received by PID 16614",
    "[5]:",
    "  time      : 2024-01-16_18:04:01",
    "  host      : lexun-1",
    "  rank      : 6 (local_rank: 6)",
    "  exitcode  : -7 (pid: 16615)",
    "  error_file: <N/A>",
    "  traceback : Signal 7 (SIGBUS) received by PID 16615",
    "[6]:",
    "  time      : 2024-01-16_18:04:01",
    "  host      : lexun-1",
    "  rank      : 7 (local_rank: 7)",
    "  exitcode  : -7 (pid: 16616)",
    "  error_file: <N/A>",
    "  traceback : Signal 7 (SIGBUS) received by PID 16616",
    "------------------------------------------------------------",
    "Root Cause (first observed failure):",
    "[0]:",
    "  time      : 2024-01-16_18:04:01",
    "  host      : lexun-1",
    "  rank      : 0 (local_rank: 0)",
    "  exitcode  : -7 (pid: 16609)",
    "  error_file: <N/A>",
    "  traceback : Signal 7 (SIGBUS) received by PID 16609",
    "============================================================",
    "srun: error: lexun-1: task 0: Exited with exit code 1",
]


def test_workers_dying_of_one_signal_at_once_share_a_cause_not_the_first_listed(tmp_path):
    # SIGBUS on every rank at once: the node's shared memory ran out under all of them
    analysis = analyze_files(tmp_path, {"output.log": SIGBUS_ALL})
    died = analysis.verdict.finding
    assert (died.kind, died.ranks, analysis.verdict.ranks) == ("oom", [0, 6, 7], [])
    assert "every rank the logs show died so" in died.summary
    assert "shared memory (/dev/shm) ran out" in died.summary
    assert "--shm-size" in died.fix and "on that rank" not in died.fix


# deepspeedai/DeepSpeed#2946 (T5-11B on one 8-GPU host; the thread: host memory ran out),
# verbatim: the launcher kills its eight workers and reports the one that ended, the report cut
# before its return code
DEEPSPEED_CUT_REPORT = [
    "[2023-03-05 06:40:25,173] [INFO] [launch.py:318:sigkill_handler] Killing subprocess 3698707",
    "[2023-03-05 06:40:27,249] [INFO] [launch.py:318:sigkill_handler] Killing subprocess 3698708",
    "[2023-03-05 06:40:27,250] [INFO] [launch.py:318:sigkill_handler] Killing subprocess 3698709",
    "[2023-03-05 06:40:28,626] [INFO] [launch.py:318:sigkill_handler] Killing subprocess 3698710",
    "[2023-03-05 06:40:30,045] [INFO] [launch.py:318:sigkill_handler] Killing subprocess 3698711",
    "[2023-03-05 06:40:31,498] [INFO] [launch.py:318:sigkill_handler] Killing subprocess 3698712",
    "[2023-03-05 06:40:32,912] [INFO] [launch.py:318:sigkill_handler] Killing subprocess 3698713",
    "[2023-03-05 06:40:34,370] [INFO] [launch.py:318:sigkill_handler] Killing subprocess 3698714",
    "[2023-03-05 06:40:35,705] [ERROR] [launch.py:324:sigkill_handler] ['/home/lizhi/anaconda3/envs/tk-instruct/bin/python', '-u', 'src/run_s2s.py', '--local_rank=7', '--do_train', '--do_predict', '--predict_with_generate', '--model_name_or_path', '/home/lizhi/Tk-Instruct-main/google/t5-xxl-lm-adapt', '--max_source_length', '1024', '--max_target_length', '128', '--generation_max_length', '128', '--max_num_instances_per_task', '1', '--max_num_instances_pe",
]


def test_deepspeed_s_exit_report_cut_before_its_code_is_still_a_failure(tmp_path):
    analysis = analyze_files(tmp_path, {"output.log": DEEPSPEED_CUT_REPORT})
    exited = analysis.verdict.finding
    assert (exited.kind, analysis.verdict.ranks) == ("rank_exception", [])
    assert exited.summary.startswith("A worker exited with an error, and the launcher then")
    assert analysis.verdict.headline.startswith("A worker exited with an error")


# vllm-project/speculators#1115 (torchrun on one host), verbatim: torchrun's summary lists
# ranks 3 and 1 exiting with code 1 at 13:02:58 (rank 1's entry cut after its rank), then ranks
# 0 and 2 ending by SIGKILL and SIGTERM 31 s later, the agent stopping them
FAILED_BEFORE_THE_STOP = [
    "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
    '  File "/usr/local/python3.12.13/lib/python3.12/site-packages/torch/distributed/launcher/api.py", line 317, in launch_agent',
    "    raise ChildFailedError(",
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
    "============================================================",
    "/root/speculators/scripts/train.py FAILED",
    "------------------------------------------------------------",
    "Failures:",
    "[1]:",
    "  time      : 2026-09-07_13:02:58",
    "  host      : localhost",
    "  rank      : 3 (local_rank: 3)",
    "  exitcode  : 1 (pid: 14692)",
    "  error_file: <N/A>",
    "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
    "[2]:",
    "  time      : 2026-09-07_13:03:29",
    "  host      : localhost",
    "  rank      : 0 (local_rank: 0)",
    "  exitcode  : -9 (pid: 14689)",
    "  error_file: <N/A>",
    "  traceback : Signal 9 (SIGKILL) received by PID 14689",
    "[3]:",
    "  time      : 2026-09-07_13:03:29",
    "  host      : localhost",
    "  rank      : 2 (local_rank: 2)",
    "  exitcode  : -15 (pid: 14691)",
    "  error_file: <N/A>",
    "  traceback : Signal 15 (SIGTERM) received by PID 14691",
    "------------------------------------------------------------",
    "Root Cause (first observed failure):",
    "[0]:",
    "  time      : 2026-09-07_13:02:58",
    "  host      : localhost",
    "  rank      : 1 (local_rank: 1)",
]


def test_workers_that_exited_before_the_agent_stopped_the_rest_failed_first(tmp_path):
    analysis = analyze_files(tmp_path, {"output.log": FAILED_BEFORE_THE_STOP})
    exited = analysis.verdict.finding
    assert (exited.kind, analysis.verdict.ranks) == ("rank_exception", [1, 3])
    assert "the launcher then stopped ranks 0 and 2 (SIGTERM, then SIGKILL)" in exited.summary
    # rank 0's SIGKILL is the agent's stop, not the host running out of memory
    assert "oom" not in kinds(analysis)


# Azure/azureml-assets#302, verbatim: a two-node DeepSpeed job's console (`10.0.0.6: ` and
# `10.0.0.7: ` host prefixes, no rank anywhere); both stacks cut by the paste before
# `RuntimeError: CUDA error: no kernel image is available for execution on the device`
TWO_HOSTS_CUT = [
    '10.0.0.6:   File "/opt/conda/envs/ptca/lib/python3.9/site-packages/deepspeed/runtime/engine.py", line 1162, in _configure_optimizer',
    "10.0.0.6:     self.optimizer = self._configure_fp16_optimizer(basic_optimizer)",
    '10.0.0.6:   File "/opt/conda/envs/ptca/lib/python3.9/site-packages/deepspeed/runtime/fp16/fused_optimizer.py", line 126, in initialize_optimizer_states',
    "10.0.0.6:     self.optimizer.step()",
    '10.0.0.6:   File "/opt/conda/envs/ptca/lib/python3.9/site-packages/deepspeed/ops/adam/fused_adam.py", line 169, in step',
    "10.0.0.7: Traceback (most recent call last):",
    '10.0.0.7:   File "/mnt/azureml/cr/j/ec39bdadbe7d4062acf9f19c950cb39a/exe/wd/train.py", line 98, in <module>',
    "10.0.0.7:     model_engine, optimizer, trainloader, __ = deepspeed.initialize(",
]


def test_cut_tracebacks_no_line_ties_to_a_rank_are_still_a_failure(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": TWO_HOSTS_CUT})
    crash = analysis.verdict.finding
    assert (crash.kind, crash.ranks, crash.blamed) == ("rank_exception", [], [])
    assert crash.details["hosts"] == ["10.0.0.6", "10.0.0.7"]
    assert crash.details["frame"].endswith("deepspeed/ops/adam/fused_adam.py:169 in step")
    assert crash.summary.startswith("2 processes on hosts 10.0.0.6, 10.0.0.7 ended in tracebacks")


def test_an_unranked_stack_cut_inside_a_collective_is_a_wait_not_a_failure(tmp_path):
    # Horovod's cut stack of NVIDIA's shape with its rank prefix taken off (made for this
    # test): waiting in `broadcast_parameters` is no failure of that process
    waiting = [line.split(">:", 1)[1] for line in HOROVOD_CUT if ">:" in line][1:]
    analysis = analyze_files(tmp_path, {"console.log": waiting})
    assert not [f for f in analysis.findings if f.details.get("hosts") is not None]


# tdrussell/diffusion-pipe#243, verbatim (DeepSpeed launcher): rank 1's RuntimeError at the
# initial evaluation, then rank 0's traceback, cut by the paste after its first frame
RANK1_ERROR_RANK0_CUT = [
    '[rank1]:   File "/home/CambridgeComputing/miniconda3/envs/diffusion-pipe/lib/python3.12/site-packages/torch/nn/modules/module.py", line 1762, in _call_impl',
    "[rank1]:     return forward_call(*args, **kwargs)",
    "[rank1]:            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
    '[rank1]:   File "/home/CambridgeComputing/miniconda3/envs/diffusion-pipe/lib/python3.12/site-packages/torch/nn/modules/sparse.py", line 190, in forward',
    "[rank1]:     return F.embedding(",
    "[rank1]:            ^^^^^^^^^^^^",
    '[rank1]:   File "/home/CambridgeComputing/miniconda3/envs/diffusion-pipe/lib/python3.12/site-packages/torch/nn/functional.py", line 2551, in embedding',
    "[rank1]:     return torch.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)",
    "[rank1]:            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
    "[rank1]: RuntimeError: Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got torch.cuda.FloatTensor instead (while checking arguments for embedding)",
    "[rank0]: Traceback (most recent call last):",
    '[rank0]:   File "/mnt/sdnas/Training/diffusion-pipe/train.py", line 690, in <module>',
    "[rank0]:     evaluate(model, model_engine, eval_dataloaders, tb_writer, 0, config['eval_gradient_accumulation_steps'], disable_block_swap_for_eval)",
]


def test_a_whole_exception_outranks_another_rank_s_stack_cut_high_in_the_job_s_code(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": RANK1_ERROR_RANK0_CUT})
    verdict = analysis.verdict.finding
    assert (verdict.kind, verdict.ranks) == ("rank_exception", [1])
    assert "RuntimeError" in verdict.summary
    # rank 0's cut stack, at `evaluate(...)` in train.py, is no crash of its own beside it
    assert not [f for f in analysis.findings if f.details.get("cut")]


# JingyunLiang/VRT#47, verbatim: the launcher got a hang-up from its terminal; its own stack
# (torch/distributed/launch.py) cut by the paste; no worker failed
LAUNCHER_HUNG_UP = [
    "WARNING:torch.distributed.elastic.agent.server.api:Received 1 death signal, shutting down workers",
    "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 2704351 closing signal SIGHUP",
    "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 2704352 closing signal SIGHUP",
    "Traceback (most recent call last):",
    '  File "/home/ET/huiyuxiang/miniconda3/envs/deblur/lib/python3.7/runpy.py", line 193, in _run_module_as_main',
    '    "__main__", mod_spec)',
    '  File "/home/ET/huiyuxiang/miniconda3/envs/deblur/lib/python3.7/runpy.py", line 85, in _run_code',
    "    exec(code, run_globals)",
    '  File "/home/ET/huiyuxiang/miniconda3/envs/deblur/lib/python3.7/site-packages/torch/distributed/launch.py", line 193, in <module>',
    "    main()",
]


def test_the_launcher_s_own_cut_stack_after_a_signal_from_outside_is_no_worker_failure(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": LAUNCHER_HUNG_UP})
    assert not [f for f in analysis.findings if f.details.get("cut")]
    assert analysis.verdict.finding.details.get("signal") == "SIGHUP"
    assert analysis.verdict.ranks == []


# pytorch/pytorch#91378, verbatim: two spawned gloo workers; one aborts on gloo's size check
# (`op.preamble.length <= op.nbytes. 1007960 vs 701784`), then the parent's traceback, cut
SPAWNED_GLOO_ABORT = [
    "Measuring option: DDPOption.PYTHON_DDP_SYNC_REDUCTION ...",
    "Invoked run_ddp rank 0",
    "setting up ...",
    "Invoked run_ddp rank 1",
    "setting up ...",
    "setup done",
    "setup done",
    "_build_buckets_for_params called",
    "len(param_to_bucket)=161, len(buckets)=11",
    "Epoch 0/120 ...",
    "_build_buckets_for_params called",
    "len(param_to_bucket)=161, len(buckets)=11",
    "Epoch 0/120 ...",
    "terminate called after throwing an instance of 'gloo::EnforceNotMet'",
    "  what():  [enforce fail at /opt/conda/conda-bld/pytorch_1634272168290/work/third_party/gloo/gloo/transport/tcp/pair.cc:510] op.preamble.length <= op.nbytes. 1007960 vs 701784",
    "Traceback (most recent call last):",
    '  File "compare_ddp.py", line 257, in <module>',
    "    main()",
    '  File "compare_ddp.py", line 250, in main',
    "    join=True)",
    '  File "/opt/conda/lib/python3.7/site-packages/torch/multiprocessing/spawn.py", line 230, in spawn',
    "    return start_processes(fn, args, nprocs, join, daemon, start_method='spawn')",
]


def test_a_spawn_parent_s_cut_stack_under_a_worker_s_own_abort_is_its_echo(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": SPAWNED_GLOO_ABORT})
    assert analysis.verdict.finding.kind == "collective_mismatch"
    assert analysis.verdict.headline.startswith("gloo aborted a rank")
    (parent,) = [f for f in analysis.findings if f.details.get("spawn_cut")]
    assert (parent.part, parent.severity) == ("consequence", "warning")
    assert parent.summary.endswith("A worker's own error is printed above it.")


def test_a_bare_traceback_header_a_host_ends_in_is_a_failure_of_no_known_rank(tmp_path):
    # EleutherAI/gpt-neox#919, verbatim (pdsh host prefixes): node ML-01 builds the index maps,
    # then node ML-02 begins a traceback the paste cuts after its first line
    lines = [
        "ML-01:  > WARNING: could not find index map files, building the indices on rank 0 ...",
        "ML-01:  > elapsed time to build and save doc-idx mapping (seconds): 840.129082",
        "ML-01:  > elapsed time to build and save sample-idx mapping (seconds): 39.764219",
        "ML-01:  > elapsed time to build and save shuffle-idx mapping (seconds): 27.045912",
        "ML-02: Traceback (most recent call last):",
    ]
    verdict = analyze_files(tmp_path, {"output.log": lines}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [])
    assert "host ML-02 began a traceback" in verdict.finding.summary
    assert verdict.finding.confidence == "low"


# jingyaogong/minimind#462, verbatim: the launcher's terminal closed an hour into training; the
# workers went on printing until torchrun killed them
TERMINAL_CLOSED = [
    "Epoch:[1/3](61900/106257) loss:1.716 lr:0.000000605887 epoch_Time:135.0min:",
    "W0712 21:41:30.388961 61592 site-packages/torch/distributed/elastic/agent/server/api.py:704] Received Signals.SIGHUP death signal, shutting down workers",
    "W0712 21:41:30.391399 61592 site-packages/torch/distributed/elastic/multiprocessing/api.py:897] Sending process 61660 closing signal SIGHUP",
    "W0712 21:41:30.391720 61592 site-packages/torch/distributed/elastic/multiprocessing/api.py:897] Sending process 61661 closing signal SIGHUP",
    "Epoch:[1/3](62000/106257) loss:1.959 lr:0.000000605717 epoch_Time:134.0min:",
    "W0712 21:42:00.392091 61592 site-packages/torch/distributed/elastic/multiprocessing/api.py:916] Unable to shutdown process 61660 via Signals.SIGHUP, forcefully exiting via Signals.SIGKILL",
    "Traceback (most recent call last):",
    '  File "/public/home/a/anaconda3/envs/rag/bin/torchrun", line 8, in <module>',
    "    sys.exit(main())",
]

# pytorch/pytorch#67538, verbatim: only the launcher's stops say what it received, then its own
# traceback, cut inside the launcher's code
STOPS_WITH_SIGHUP = [
    "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 102241 closing signal SIGHUP",
    "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 102242 closing signal SIGHUP",
    "Traceback (most recent call last):",
    '  File "/home/wuwanjie/miniconda3/envs/rc_server/lib/python3.8/runpy.py", line 194, in _run_module_as_main',
    "    return _run_code(code, main_globals, None,",
    '  File "/home/wuwanjie/miniconda3/envs/rc_server/lib/python3.8/site-packages/torch/distributed/run.py", line 710, in run',
    "    elastic_launch(",
    '  File "/home/wuwanjie/miniconda3/envs/rc_server/lib/python3.8/site-packages/torch/distributed/launcher/api.py", line 131, in __call__',
    "    return launch_agent(self._config, self._entrypoint, list(args))",
]


# zai-org/ChatGLM2-6B#238, verbatim: all the reporter quoted; `nohup` with `disown` fixed it
AGENT_HUNG_UP = [
    "torch.distributed.elastic.multiprocessing.api.SignalException: Process 8665 got signal: 1",
]


@pytest.mark.parametrize(
    "lines",
    [TERMINAL_CLOSED, STOPS_WITH_SIGHUP, AGENT_HUNG_UP],
    ids=["said", "forwarded", "raised"],
)
def test_a_job_whose_terminal_session_closed_went_with_it(tmp_path, lines):
    # nobody chose to stop it: the verdict says why it ended, and blames no rank
    analysis = analyze_files(tmp_path, {"console.log": lines})
    stopped = analysis.verdict.finding
    assert stopped.details.get("from_outside") and stopped.blames_nobody
    assert (stopped.severity, analysis.verdict.ranks) == ("error", [])
    assert analysis.verdict.headline == (
        "The launcher's terminal session closed (SIGHUP) and the job went with it"
    )
    assert "`nohup ... &`, `tmux` or `screen`" in stopped.fix
    for english in (stopped.summary, stopped.fix):
        assert english_runs(translate(english, "zh")) == []
    assert english_runs(translate_headline(analysis.verdict.headline, "zh")) == []


def test_ctrl_c_to_the_launcher_is_no_failure_but_says_so(tmp_path):
    lines = [line.replace("SIGHUP", "SIGINT") for line in TERMINAL_CLOSED]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    assert analysis.verdict is None
    (stopped,) = [f for f in analysis.findings if f.details.get("from_outside")]
    assert stopped.severity == "warning" and "Ctrl-C" in stopped.summary
    assert "stopped from its terminal, by no error of its own" in stopped.summary


def test_a_lone_rank_s_abort_with_no_timeout_is_its_own_death(tmp_path):
    # pytorch/torchtitan#1066, verbatim: rank 0's steps, then the interpreter's fatal error
    lines = [
        "[rank0]:[titan] 2025-04-07 08:16:18,295 - root - INFO - step: 3830  loss:  4.8417  memory:  4.99GiB(6.30%)  tps: 60,377  tflops: 26.52  mfu: 2.68%",
        "[rank0]:[titan] 2025-04-07 08:16:19,053 - root - INFO - step: 3840  loss:  4.7878  memory:  4.99GiB(6.30%)  tps: 108,206  tflops: 47.53  mfu: 4.81%",
        "[rank0]:Fatal Python error: none_dealloc: deallocating None",
        "[rank0]:Python runtime state: initialized",
        "[rank0]:",
        "[rank0]:Thread 0x00007f975c95b640 (most recent call first):",
        "[rank0]:  <no Python frame>",
    ]
    analysis = analyze_files(tmp_path, {"output.log": lines})
    assert analysis.verdict.finding.kind == "rank_exception"
    assert analysis.verdict.ranks == [0]
    assert "SIGABRT" in analysis.verdict.finding.summary


# KellerJordan/modded-nanogpt#15, verbatim (rank 0 and 7 of the eight setup lines): every rank set
# up NCCL, then torchrun's ChildFailedError, the paste ending at its summary's header
SUMMARY_CUT = [
    "[rank0]:[I1107 01:20:21.159238472 ProcessGroupNCCL.cpp:2262] [PG ID 0 PG GUID 0 Rank 0] ProcessGroupNCCL broadcast unique ID through store took 0.039149 ms",
    "192-222-52-234:8043:8043 [0] NCCL INFO cudaDriverVersion 12040",
    "NCCL version 2.21.5+cuda12.4",
    "[rank7]:[I1107 01:20:21.159378611 ProcessGroupNCCL.cpp:2262] [PG ID 0 PG GUID 0 Rank 7] ProcessGroupNCCL broadcast unique ID through store took 13.4969 ms",
    "[rank3]:[I1107 01:20:21.159466617 ProcessGroupNCCL.cpp:2262] [PG ID 0 PG GUID 0 Rank 3] ProcessGroupNCCL broadcast unique ID through store took 13.4963 ms",
    "I1107 01:20:28.501000 7974 torch/distributed/elastic/multiprocessing/errors/__init__.py:368] ('local_rank %s FAILED with no error file. Decorate your entrypoint fn with @record for traceback info. See: https://pytorch.org/docs/stable/elastic/errors.html', 0)",
    "Traceback (most recent call last):",
    '  File "/home/ubuntu/envs/nanogpt/bin/torchrun", line 8, in <module>',
    "    sys.exit(main())",
    '  File "/home/ubuntu/envs/nanogpt/lib/python3.10/site-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 355, in wrapper',
    "    return f(*args, **kwargs)",
    '  File "/home/ubuntu/envs/nanogpt/lib/python3.10/site-packages/torch/distributed/run.py", line 919, in main',
    "    run(args)",
    '  File "/home/ubuntu/envs/nanogpt/lib/python3.10/site-packages/torch/distributed/run.py", line 910, in run',
    "    elastic_launch(",
    '  File "/home/ubuntu/envs/nanogpt/lib/python3.10/site-packages/torch/distributed/launcher/api.py", line 138, in __call__',
    "    return launch_agent(self._config, self._entrypoint, list(args))",
    '  File "/home/ubuntu/envs/nanogpt/lib/python3.10/site-packages/torch/distributed/launcher/api.py", line 269, in launch_agent',
    "    raise ChildFailedError(",
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
    "======================================================",
    "train_gpt2.py FAILED",
    "------------------------------------------------------",
]


def test_torchrun_s_failure_with_its_summary_cut_is_a_failure_blaming_nobody(tmp_path):
    analysis = analyze_files(tmp_path, {"output.log": SUMMARY_CUT})
    failed = analysis.verdict.finding
    assert failed.kind == "rank_exception" and failed.blames_nobody
    assert analysis.verdict.ranks == []
    assert "`@record`" in failed.fix


# ultralytics/ultralytics#15701, verbatim (the paste's last line cut as posted): gloo given the
# Apple GPU's tensors while DDP checks the parameters' shapes
GLOO_GIVEN_MPS = [
    "[rank1]:     self._setup_train(world_size)",
    '[rank1]:   File "/Users/morris/.pyenv/versions/3.11.9/lib/python3.11/site-packages/ultralytics/engine/trainer.py", line 276, in _setup_train',
    "[rank1]:     self.model = nn.parallel.DistributedDataParallel(self.model, device_ids=[RANK], find_unused_parameters=True)",
    "[rank1]:                  ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
    '[rank1]:   File "/Users/morris/.pyenv/versions/3.11.9/lib/python3.11/site-packages/torch/nn/parallel/distributed.py", line 822, in __init__',
    "[rank1]:     _verify_param_shape_across_processes(self.process_group, parameters)",
    '[rank1]:   File "/Users/morris/.pyenv/versions/3.11.9/lib/python3.11/site-packages/torch/distributed/utils.py", line 286, in _verify_param_shape_across_processes',
    "[rank1]:     return dist._verify_params_across_processes(process_group, tensors, logger)",
    "[rank1]:            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
    "[rank1]: RuntimeError: ProcessGroupGloo::allgather: invalid tensor type at index 0 (expected TensorOptions(dtype=long long, device=cpu, layout=Strided, requires_grad=false (default), pinned_memory=false (default), memory_form",
]


def test_a_collective_called_with_what_its_backend_cannot_take_is_the_rank_s_own_error(tmp_path):
    analysis = analyze_files(tmp_path, {"rank1.log": GLOO_GIVEN_MPS})
    failed = analysis.verdict.finding
    assert (failed.kind, analysis.verdict.ranks) == ("rank_exception", [1])
    assert "ProcessGroupGloo::allgather: invalid tensor type" in failed.summary


# pytorch/pytorch#45338, verbatim (one file per machine): rank 1's log ends at its traceback's
# first line; rank 0's gloo pair is reset by rank 1's host
PS_MASTER = [
    "(pytorch_p36) ubuntu@ip-172-31-67-172:~/examples/_pytorch/examples/distributed/rpc/parameter_server$ python rpc_parameter_server.py --world_size 2 --rank 0 --num_gpus 2 --master_addr 172.31.67.172",
    "PS master initializing RPC",
    "RPC initialized! Running parameter server...",
    "Using 2 GPUs to train",
    "Putting first 2 convs on cuda:0",
    "Putting rest of layers on cuda:1",
    "terminate called after throwing an instance of 'gloo::IoException'",
    "  what():  [/opt/conda/conda-bld/pytorch_1579022034529/work/third_party/gloo/gloo/transport/tcp/pair.cc:563] Read error [172.31.78.254]:13001: Connection reset by peer",
]
PS_WORKER = [
    "(pytorch_p36) ubuntu@ip-172-31-78-254:~/examples/_pytorch/examples/distributed/rpc/parameter_server$ python rpc_parameter_server.py --world_size 2 --rank 1 --num_gpus 2 --master_addr 172.31.67.172",
    "Worker rank 1 initializing RPC",
    "Worker 1 done initializing RPC",
    "Rank 1 training batch 0 loss 2.3232274055480957",
    "Process Process-1:",
    "Traceback (most recent call last):",
]


def test_the_rank_whose_log_ends_in_a_cut_traceback_is_the_peer_the_others_lost(tmp_path):
    analysis = analyze_files(tmp_path, {"rank0.log": PS_MASTER, "rank1.log": PS_WORKER})
    failed = analysis.verdict.finding
    assert (failed.kind, analysis.verdict.ranks) == ("rank_exception", [1])
    assert "Rank 1's log ends in a traceback cut before its exception" in failed.summary
    assert "peer_lost" in kinds(analysis)


def test_a_cut_traceback_the_log_goes_on_after_is_no_departure(tmp_path):
    # the worker's log made to go on past its traceback (made up for this test)
    went_on = [
        *PS_WORKER,
        "Rank 1 training batch 1 loss 2.2904",
        "terminate called without an active exception",
    ]
    analysis = analyze_files(tmp_path, {"rank0.log": PS_MASTER, "rank1.log": went_on})
    assert not any("ends in a traceback" in f.summary for f in analysis.findings)


def test_a_paste_of_several_ranks_ends_where_it_was_cut_not_where_a_rank_went(tmp_path):
    # the two machines' lines in one paste under torchrun's rank prefixes (made up for this
    # test): its last line ends the paste, not rank 1's log
    paste = [f"[0]:{line}" for line in PS_MASTER] + [f"[1]:{line}" for line in PS_WORKER]
    analysis = analyze_files(tmp_path, {"console.log": paste})
    assert not any("ends in a traceback" in f.summary for f in analysis.findings)


def test_a_bare_abort_after_the_watchdog_s_report_is_the_timeout_s_teardown(tmp_path):
    # Alpha-VLLM/LLaMA2-Accessory#147: the watchdog's report, its abort, and the C++ terminate
    # whose `what():` line the paste left out
    lines = [
        "[E ProcessGroupNCCL.cpp:828] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=65265, OpType=_ALLGATHER_BASE, Timeout(ms)=1800000) ran for 1804787 milliseconds before timing out.",
        "[E ProcessGroupNCCL.cpp:455] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
        "[E ProcessGroupNCCL.cpp:460] To avoid data inconsistency, we are taking the entire process down.",
        "terminate called after throwing an instance of 'std::runtime_error'",
    ]
    analysis = analyze_files(tmp_path, {"rank2.log": lines})
    assert (analysis.verdict.finding.kind, analysis.verdict.finding.ranks) == (
        "collective_timeout",
        [2],
    )
    assert "rank_exception" not in kinds(analysis)


def test_the_one_failure_torchrun_lists_is_blamed_at_low_confidence(tmp_path):
    # allenai/OLMo#706, verbatim: the end of the paste, the summary naming rank 5 alone
    lines = [
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",
        "============================================================",
        "scripts/train.py FAILED",
        "------------------------------------------------------------",
        "Failures:",
        "  <NO_OTHER_FAILURES>",
        "------------------------------------------------------------",
        "Root Cause (first observed failure):",
        "[0]:",
        "  time      : 2024-08-18_12:33:57",
        "  host      : ubuntu",
        "  rank      : 5 (local_rank: 5)",
        "  exitcode  : 1 (pid: 1227467)",
        "  error_file: <N/A>",
        "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
        "============================================================",
    ]
    verdict = analyze_files(tmp_path, {"console.log": lines}).verdict
    assert (verdict.finding.kind, verdict.ranks, verdict.finding.confidence) == (
        "rank_exception",
        [5],
        "low",
    )
    assert "the only failure torchrun's summary lists" in verdict.finding.summary


# zai-org/GLM-130B#100, verbatim: two of a node's eight workers in torchrun's summary, the same
# exit code in the same second
TWO_OF_A_NODE = [
    "    raise ChildFailedError(",
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
    "============================================================",
    "/home/edcuser/models/glm/GLM-130B-main/generate.py FAILED",
    "------------------------------------------------------------",
    "Failures:",
    "[1]:",
    "  time      : 2023-03-14_11:22:52",
    "  host      : localhost.localdomain",
    "  rank      : 7 (local_rank: 7)",
    "  exitcode  : 1 (pid: 160925)",
    "  error_file: <N/A>",
    "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
    "------------------------------------------------------------",
    "Root Cause (first observed failure):",
    "[0]:",
    "  time      : 2023-03-14_11:22:52",
    "  host      : localhost.localdomain",
    "  rank      : 6 (local_rank: 6)",
    "  exitcode  : 1 (pid: 160924)",
    "  error_file: <N/A>",
    "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
]


def test_some_of_a_node_s_workers_failing_alike_are_named_together(tmp_path):
    # the summary's `Root Cause` is only the earlier of two at the same second: both are named
    # (the failure was theirs, not the node's), none picked
    analysis = analyze_files(tmp_path, {"console.log": TWO_OF_A_NODE})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks, verdict.finding.confidence) == (
        "rank_exception",
        [6, 7],
        "low",
    )
    assert "(it ran at least 8) are not listed as failed" in verdict.finding.summary
    assert english_runs(translate(verdict.finding.summary, "zh")) == []
    # all of a node's workers failing alike may be the node's or a peer's doing: nobody named
    whole = [
        line.replace("rank      : 7 (local_rank: 7)", "rank      : 1 (local_rank: 1)").replace(
            "rank      : 6 (local_rank: 6)", "rank      : 0 (local_rank: 0)"
        )
        for line in TWO_OF_A_NODE
    ]
    assert analyze_files(tmp_path / "whole", {"console.log": whole}).verdict.ranks == []


# facebookresearch/deit#102, verbatim: srun's report of task 5's exit, then SLURM cancelling
# the step and srun's word on every other task it killed
SRUN_ONE_TASK_THEN_TEARDOWN = [
    "srun: error: learnfair0824: task 5: Exited with exit code 1",
    "srun: launch/slurm: _step_signal: Terminating StepId=43575862.0",
    "slurmstepd: error: *** STEP 43575862.0 ON learnfair0824 CANCELLED AT 2021-07-14T08:00:36 ***",
    "srun: error: learnfair0824: tasks 3,7: Killed",
    "srun: error: learnfair0833: task 8: Killed",
    "srun: error: learnfair0824: task 1: Killed",
    "srun: error: learnfair0824: tasks 0,2,6: Killed",
    "srun: error: learnfair0833: tasks 9-10,12-15: Killed",
    "srun: error: learnfair0824: task 4: Killed",
    "srun: error: learnfair0833: task 11: Killed",
    "srun: Force Terminated StepId=43575862.0",
]


def test_srun_s_kills_after_the_cancellation_leave_the_task_that_exited_first(tmp_path):
    verdict = analyze_files(tmp_path, {"slurm.out": SRUN_ONE_TASK_THEN_TEARDOWN}).verdict
    assert verdict is not None
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [5])
    assert verdict.headline == "Rank 5 exited with code 1"
    # without SLURM's cancellation, a task srun reports killed is no teardown: not one failure
    uncancelled = [line for line in SRUN_ONE_TASK_THEN_TEARDOWN if "CANCELLED" not in line]
    verdict = analyze_files(tmp_path / "uncancelled", {"slurm.out": uncancelled}).verdict
    assert verdict is None or verdict.ranks != [5]


# alibaba/ROLL#193, verbatim: a Ray actor whose repr names it (`ActorWorker(actor_train-1)`),
# its logger's error record ending in the traceback's header, the stack cut in Megatron's step
ACTOR_RECORD_OPENS_A_CUT_STACK = [
    "(ActorWorker(actor_train-1) pid=18175, ip=33.199.184.82) [2025-10-11 11:16:52] [decorator.py (306)] [ERROR] [actor_train-1 1 / 8][PID 18175] Traceback (most recent call last):",
    '(ActorWorker(actor_train-1) pid=18175, ip=33.199.184.82)   File "/checkpoint/binary/train_package/roll/distributed/scheduler/decorator.py", line 295, in inner',
    "(ActorWorker(actor_train-1) pid=18175, ip=33.199.184.82)     result = func(*args, **kwargs)",
    '(ActorWorker(actor_train-1) pid=18175, ip=33.199.184.82)   File "/checkpoint/binary/train_package/roll/pipeline/base_worker.py", line 104, in train_step',
    "(ActorWorker(actor_train-1) pid=18175, ip=33.199.184.82)     pg_metrics = self.strategy.train_step(batch=data, loss_func=self.loss_func)",
    '(ActorWorker(actor_train-1) pid=18175, ip=33.199.184.82)   File "/checkpoint/binary/train_package/roll/distributed/strategy/megatron_strategy.py", line 454, in train_step',
    '(ActorWorker(actor_train-1) pid=18175, ip=33.199.184.82)     metrics_tensors: List[Dict[str, "torch.Tensor"]] = self.forward_backward_func(',
]


def test_a_record_ending_in_the_header_opens_a_cut_traceback_that_is_a_failure(tmp_path):
    verdict = analyze_files(tmp_path, {"train.log": ACTOR_RECORD_OPENS_A_CUT_STACK}).verdict
    assert verdict is not None and verdict.finding.kind == "rank_exception"
    # the actor's prefix is peeled (its host is read), the stack's innermost frame named
    assert verdict.headline.startswith("A process on 33.199.184.82 failed, its traceback cut")
    assert "megatron_strategy.py:454 in train_step" in verdict.finding.summary


def test_an_internal_assert_naming_a_process_group_file_is_the_rank_s_own_failure(tmp_path):
    # awslabs/keys_values (Lightning Fabric, ring attention on 3 GPUs), verbatim but for the
    # frames between the header and the call
    lines = [
        "[Rank 2]: Created driver",
        "[Rank 1]: Created driver",
        *(
            line
            for rank in (2, 1)
            for line in (
                f"[rank{rank}]: Traceback (most recent call last):",
                f'[rank{rank}]:   File "/home/ubuntu/virtenvs/keys_values/lib/python3.12/site-packages/torch/distributed/distributed_c10d.py", line 2491, in isend',
                f"[rank{rank}]:     return group.send([tensor], group_dst, tag)",
                f'[rank{rank}]: RuntimeError: ncclComm != nullptr INTERNAL ASSERT FAILED at "/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp":4043, please report a bug to PyTorch. Parent communicator missing in eager initialization mode.',
            )
        ),
    ]
    verdict = analyze_files(tmp_path, {"output.log": lines}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [1, 2])


# deepmodeling/deepmd-kit#4594, verbatim: the paste ends at torchrun's `raise ChildFailedError(`
AGENT_RAISING_CUT = [
    "py child error file (/tmp/torchelastic_mkfvemdy/none_9h49vpn4/attempt_0/4/error.json)",
    "Traceback (most recent call last):",
    '  File "/root/deepmd-kit/bin/torchrun", line 10, in <module>',
    "    sys.exit(main())",
    "             ^^^^^^",
    '  File "/root/deepmd-kit/lib/python3.12/site-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 348, in wrapper',
    "    return f(*args, **kwargs)",
    "           ^^^^^^^^^^^^^^^^^^",
    '  File "/root/deepmd-kit/lib/python3.12/site-packages/torch/distributed/run.py", line 901, in main',
    "    run(args)",
    '  File "/root/deepmd-kit/lib/python3.12/site-packages/torch/distributed/run.py", line 892, in run',
    "    elastic_launch(",
    '  File "/root/deepmd-kit/lib/python3.12/site-packages/torch/distributed/launcher/api.py", line 133, in __call__',
    "    return launch_agent(self._config, self._entrypoint, list(args))",
    "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
    '  File "/root/deepmd-kit/lib/python3.12/site-packages/torch/distributed/launcher/api.py", line 264, in launch_agent',
    "    raise ChildFailedError(",
]


def test_torchrun_s_traceback_cut_while_it_raises_is_its_report_of_a_failed_worker(tmp_path):
    analysis = analyze_files(tmp_path, {"output.log": AGENT_RAISING_CUT})
    failed = analysis.verdict.finding  # it had been "no failure found"
    assert failed.kind == "rank_exception" and failed.details.get("summary_cut")
    assert analysis.verdict.ranks == []


def test_a_spawned_child_killed_by_a_signal_is_that_rank_s_death_not_an_exception(tmp_path):
    # a run here (torch 2.13.0+cpu, gloo): torch.multiprocessing.spawn of 3 processes, process 1
    # killed with SIGKILL at step 5; the end of the console (the parent's traceback)
    lines = [
        "epoch 0 step 4 loss 14.4060",
        "epoch 0 step 4 loss 4.5260",
        "epoch 0 step 4 loss 3.0922",
        "W1204 05:16:20.853000 30234 torch/multiprocessing/spawn.py:165] Terminating process 30237 via signal SIGTERM",
        "W1204 05:16:20.854000 30234 torch/multiprocessing/spawn.py:165] Terminating process 30239 via signal SIGTERM",
        "Traceback (most recent call last):",
        '  File "/tmp/rr/f.py", line 40, in <module>',
        "    mp.spawn(main, args=(3,), nprocs=3)",
        '  File "/tmp/torchenv/lib/python3.11/site-packages/torch/multiprocessing/spawn.py", line 340, in spawn',
        '    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")',
        "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        '  File "/tmp/torchenv/lib/python3.11/site-packages/torch/multiprocessing/spawn.py", line 296, in start_processes',
        "    while not context.join():",
        "              ^^^^^^^^^^^^^^",
        '  File "/tmp/torchenv/lib/python3.11/site-packages/torch/multiprocessing/spawn.py", line 192, in join',
        "    raise ProcessExitedException(",
        "torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with signal SIGKILL",
    ]
    analysis = analyze_files(tmp_path, {"spawn.log": lines})
    killed = analysis.verdict.finding
    assert (killed.kind, killed.ranks) == ("oom", [1])
    assert "SIGKILL" in killed.summary and "OOM killer" in killed.fix
    assert not [
        f for f in analysis.findings if f.details.get("exception") == "ProcessExitedException"
    ]


# aws/amazon-sagemaker-examples#3444, verbatim: the SageMaker SDK's report, in the notebook
# that launched the job, that the training job failed
SAGEMAKER_FAILED = [
    "2022-06-02 17:28:14 Failed - Training job failed",
    "Traceback (most recent call last):",
    '  File "/opt/conda/lib/python3.6/site-packages/sagemaker/session.py", line 3245, in _check_job_status',
    "    actual_status=status,",
    "sagemaker.exceptions.UnexpectedStatusException: Error for Training job cluster-eames-: Failed. Reason: AlgorithmError: ExecuteUserScriptError:",
]


def test_a_training_service_s_report_alone_is_a_failure_of_no_process(tmp_path):
    analysis = analyze_files(tmp_path, {"notebook.log": SAGEMAKER_FAILED})
    failed = analysis.verdict.finding
    assert failed.kind == "rank_exception" and failed.ranks == [] and failed.blames_nobody
    assert failed.summary.startswith("The training service reports that the job failed")
    assert "CloudWatch" in failed.fix
    assert analysis.verdict.headline.startswith("The training job failed")


def test_the_error_a_service_s_report_quotes_is_the_verdict_not_the_report(tmp_path):
    # philschmid/llm-sagemaker-sample#28, verbatim, under a collector's timestamps: the SDK's
    # report first, then the job's own out-of-memory error it quotes
    lines = [
        "UnexpectedStatusException: Error for Training job gemma-9b-test-2024-09-29-13-03-11-642: Failed. Reason: AlgorithmError: ExecuteUserScriptError:",
        "ExitCode 1",
        'ErrorMessage "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 7.81 GiB. GPU 7 has a total capacty of 22.19 GiB of which 5.32 GiB is free. Process 55370 has 16.85 GiB memory in use. Of the allocated memory 16.09 GiB is allocated by PyTorch, and 377.60 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF',
    ]
    stamped = [f"2025-03-01T12:00:00.{i:06d}000Z {line}" for i, line in enumerate(lines)]
    for name, text in (("plain.log", lines), ("stamped.log", stamped)):
        analysis = analyze_files(tmp_path / name, {name: text})
        assert analysis.verdict.finding.kind == "oom", name


def test_a_cut_traceback_a_logger_opened_with_an_error_record_is_the_failure(tmp_path):
    # OpenRLHF/OpenRLHF#1193, verbatim lines: the paste stops inside the logged stack
    prefix = (
        "(LLMRayActor pid=585804) (EngineCore_DP0 pid=586112) ERROR 03-05 00:25:45 [core.py:1094]"
    )
    lines = [
        f"{prefix} Invocation of collective_rpc method failed",
        f"{prefix} Traceback (most recent call last):",
        f'{prefix}   File "/home/jianh/.local/lib/python3.12/site-packages/vllm/v1/engine/core.py", '
        "line 1091, in _handle_client_request",
        f"{prefix}     result = method(*self._convert_msgspec_args(method, args))",
        f'{prefix}   File "/home/jianh/.local/lib/python3.12/site-packages/vllm/v1/engine/core.py", '
        "line 657, in collective_rpc",
        f"{prefix}     return self.model_executor.collective_rpc(method, timeout, args, kwargs)",
    ]
    analysis = analyze_files(tmp_path, {"log.txt": lines})
    assert analysis.verdict is not None
    found = analysis.verdict.finding
    assert found.kind == "rank_exception"
    assert "core.py:657 in collective_rpc" in found.summary


LOGGED_EXIT = Path(__file__).parents[1] / "data" / "launchers" / "torchrun" / "logged_exit"


def test_an_exception_raised_between_two_steps_is_told_after_the_step_it_finished():
    # a real run here (torchrun/logged_worker.py): rank 1 logs its ValueError before step 3's
    # all_reduce, its last progress line step 2's, and exits
    analysis = analyze(LOGGED_EXIT)
    assert (analysis.verdict.finding.kind, analysis.verdict.ranks) == ("rank_exception", [1])
    assert analysis.verdict.headline == (
        "Rank 1 died of a ValueError after step 2; ranks 0 and 2 then lost their connection to it"
    )


DSCHAT_16 = Path(__file__).parents[1] / "data" / "threads" / "dschat585_llama7b_16_processes.log"


def test_one_error_on_every_process_is_a_fault_in_what_they_all_run(tmp_path):
    # DeepSpeedExamples' committed log (the run behind #585): 16 unprefixed processes raise one
    # RuntimeError told apart only by their GPU's number (`cuda:9 and cpu!`, `cuda:15 and
    # cpu!`); the DeepSpeed launcher says `dist_world_size=16`
    analysis = analyze_files(tmp_path, {"training.log": DSCHAT_16.read_text().splitlines()})
    assert analysis.verdict.headline == (
        "Every process died of the same RuntimeError; a fault in what they all run"
    )
    found = analysis.verdict.finding
    assert (found.kind, found.ranks, found.blames_nobody) == ("rank_exception", [], True)
    assert found.summary.startswith("16 processes whose rank the logs do not say raised the same")
    assert "modeling_llama.py:136 in apply_rotary_pos_emb" in found.summary
    assert found.summary.count("Expected all tensors") == 1
    assert "not in one rank's data" in found.fix


def test_one_error_on_some_processes_is_counted_not_called_every_rank(tmp_path):
    # the same log cut after its second traceback: two of the 16 processes
    lines = DSCHAT_16.read_text().splitlines()
    second = [i for i, line in enumerate(lines) if line.startswith("RuntimeError: ")][1]
    analysis = analyze_files(tmp_path, {"training.log": lines[: second + 1]})
    assert analysis.verdict.headline.startswith("2 processes died of the same RuntimeError")
    assert "every process" not in analysis.verdict.finding.summary


RICH_RUN = Path(__file__).parents[1] / "data" / "launchers" / "torchrun" / "rich_traceback"


def test_a_rank_s_exception_drawn_by_rich_is_the_cause_not_the_others_lost_peers():
    # a real run here (torchrun/rich_worker.py): rank 1's ValueError and ranks 0 and 2's gloo
    # `Connection closed by peer`, all in rich's boxes
    analysis = analyze(RICH_RUN)
    assert analysis.verdict.headline == (
        "Rank 1 died of a ValueError after step 2; ranks 0 and 2 then lost their connection to it"
    )


RAY_MINIO = Path(__file__).parents[1] / "data" / "threads" / "ray_train_minio_restart.log"


def test_an_error_ray_relays_is_the_rank_of_the_worker_it_names_not_a_wait(tmp_path):
    # malaysia-ai/jupyter-gpu's Ray Train notebook (tests/data/threads): the driver prints
    # `RayTaskError(ConnectTimeoutError): ray::_RayTrainWorker__execute.get_next() (pid=3653,
    # ...)`, pid 3653 set up its group as rank 0, and the timeout is MinIO's, not a wait for
    # other ranks; the worker group then restarts, rank 0 announced again on the same node
    lines = RAY_MINIO.read_text().splitlines()
    analysis = analyze_files(tmp_path, {"driver.log": lines})
    assert analysis.verdict.headline == "Rank 0 died of a ConnectTimeoutError"
    assert not [f for f in analysis.findings if "announced by two processes" in f.summary]


def test_a_timeout_of_a_service_outside_the_job_is_no_wait_for_other_ranks():
    from logforensics.rules.rank_exception import _a_consequence

    said = pl.DataFrame(
        {
            "what": [
                # the shape of requests' timeout reaching the Hugging Face Hub
                "requests.exceptions.ConnectTimeout: HTTPSConnectionPool(host='huggingface.co', "
                "port=443): Max retries exceeded (connect timeout=10)",
                'botocore.exceptions.ConnectTimeoutError: Connect timeout on endpoint URL: "http://minio:9000/x"',
                # TCPStore's wait for the other ranks (returnn#1621)
                "RuntimeError: Socket Timeout",
            ]
        }
    )
    assert said.select(_a_consequence(pl.col("what"))).to_series().to_list() == [False, False, True]


def test_a_kernel_s_assertion_lines_and_its_host_error_are_one_process(tmp_path):
    # huggingface/pytorch-image-models#1077 up to the RuntimeError (rank 0's own line
    # naming it left out): two GPU threads' assertions, then the host's
    # `device-side assert triggered`, printed by one process
    path = THREADS / "timm1077_device_assert_pg_destroyed.log"
    lines = path.read_text().splitlines()
    ended = next(at for at, line in enumerate(lines) if "device-side assert triggered" in line)
    analysis = analyze_files(tmp_path, {"train.log": lines[: ended + 1]})
    found = analysis.verdict.finding
    assert found.kind == "rank_exception" and found.ranks == []
    assert found.summary.startswith("A process whose rank the logs do not say raised")


def test_an_unranked_error_is_not_hidden_by_a_ranked_wait(tmp_path):
    # open-mmlab/mmdetection#6779: a DataLoader worker's FileNotFoundError no line ties to a
    # rank, then, after torchrun restarted the workers, rank 1's store barrier timing out
    # rank 1's store barrier timing out; posted as three excerpts (20, 20 and 8 lines)
    lines = (THREADS / "mmdet6779_loader_error_then_restart.log").read_text().splitlines()
    parts = {"part1.log": lines[:20], "part2.log": lines[20:40], "part3.log": lines[40:]}
    analysis = analyze_files(tmp_path, parts)
    found = analysis.verdict.finding
    assert found.kind == "rank_exception"
    assert "FileNotFoundError" in found.summary


# NVIDIA/nccl#2213, verbatim (excerpts of the reporter's debug log): a crash line no rank
# prefix names, rank 0's timeout thirty minutes later, and the desync report naming rank 1
CRASH_OF_THE_LAGGING_RANK = [
    "Connected all rings, use ring PXN 0 GDR 0",
    "",
    "*** SIGSEGV received at time=1775734074 on cpu 19 ***",
    "PC: @     0xe1e2567f5014  (unknown)  ncclLocalOpAppend()",
    "",
    "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1155874, OpType=ALLREDUCE, NumelIn=9445376, NumelOut=9445376, Timeout(ms)=1800000) ran for 1800002 milliseconds before timing out.",
    "",
    "[1] finished collective #1155873, but didn't join collective #1155874",
]


def test_a_crash_before_a_rank_s_own_timeout_is_the_lagging_rank_s_not_that_one_s(tmp_path):
    analysis = analyze_files(tmp_path, {"debug.log": CRASH_OF_THE_LAGGING_RANK})
    crash = analysis.verdict.finding
    assert (crash.kind, crash.ranks, crash.details["signal"]) == ("rank_exception", [1], "SIGSEGV")
    assert crash.confidence == "medium" and "desync report names rank 1" in crash.summary


# facebookresearch/detectron2#3953, verbatim: detectron2's train loop logs the exception and its
# stack, which the paste cuts in the DataLoader's wait for its workers (`Too many open files`
# in the thread)
OPENED_BY_A_RECORD = [
    "ERROR [02/12 06:57:59 d2.engine.train_loop]: Exception during training:",
    "Traceback (most recent call last):",
    '  File "/data/detectron2/aaa/lib/python3.6/site-packages/detectron2/engine/train_loop.py", line 150, in train',
    '  File "/data/detectron2/aaa/lib/python3.6/site-packages/detectron2/engine/train_loop.py", line 180, in after_step',
    '  File "/data/detectron2/detectron2_training_scripts/lossEvalHook.py", line 70, in after_step',
    '  File "/data/detectron2/detectron2_training_scripts/lossEvalHook.py", line 28, in _do_loss_eval',
    '  File "/data/detectron2/aaa/lib/python3.6/site-packages/torch/utils/data/dataloader.py", line 521, in __next__',
    '  File "/data/detectron2/aaa/lib/python3.6/site-packages/torch/utils/data/dataloader.py", line 1186, in _next_data',
    '  File "/data/detectron2/aaa/lib/python3.6/site-packages/torch/utils/data/dataloader.py", line 1152, in _get_data',
]


def test_a_stack_an_error_record_opened_is_a_failure_even_cut_in_a_wait(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": OPENED_BY_A_RECORD})
    cut = analysis.verdict.finding
    assert cut.kind == "rank_exception" and cut.details["cut"] is True
    assert cut.details["frame"].endswith("in _get_data")


def test_a_kernel_stopped_by_the_gpu_s_watchdog_is_no_wait_for_other_ranks(tmp_path):
    # facebookresearch/unbiased-teacher#80, verbatim (the whole paste, two K80s): "timed out"
    # names the GPU driver's kernel time limit, not a collective's
    lines = [
        "RuntimeError: CUDA error: the launch timed out and was terminated",
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
        "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.",
    ]
    analysis = analyze_files(tmp_path, {"train.log": lines})
    crash = analysis.verdict.finding
    assert crash.kind == "rank_exception" and not crash.details.get("waiting")
    assert "waiting" not in verdict_headline(analysis.verdict)
    assert "cudaErrorLaunchTimeout" in crash.fix


def test_an_argument_the_backend_does_not_take_is_the_caller_s_error(tmp_path):
    # huawei-noah/Efficient-Computing#90, verbatim (the whole paste, Windows, so gloo): the
    # message names gloo, but no peer failed; the process passed an NCCL-only argument
    lines = [
        "RuntimeError: Function argument device_ids not supported for the selected backend gloo",
        r"ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 23812) of binary: E:\Conda\envs\GoldYolo\python.exe",
    ]
    analysis = analyze_files(tmp_path, {"train.log": lines})
    assert analysis.verdict.finding.kind == "rank_exception"
    assert "device_ids" in analysis.verdict.finding.summary
    # one machine, and the agent reports one worker failed: its local rank is the rank
    assert analysis.verdict.ranks == [0]
    assert "torchrun's agent lists rank 0 alone as failed (exit code 1)" in (
        analysis.verdict.finding.summary
    )


def test_the_abort_after_an_uncaught_cpp_exception_is_that_exception_s(tmp_path):
    # mit-han-lab/distrifuser#13 (tests/data/threads): both processes throw `NCCL Error 5:
    # invalid usage` under CUDA graph capture; torchrun's exit code -6 is C++'s abort of it
    lines = (THREADS / "distrifuser13_graph_capture.log").read_text(encoding="utf-8")
    analysis = analyze_files(tmp_path, {"train.log": lines.splitlines()})
    assert analysis.verdict.finding.kind == "nccl_error"
    assert "invalid usage" in analysis.verdict.finding.summary
    assert "rank_exception" not in kinds(analysis)


def test_a_host_name_that_did_not_resolve_is_the_process_s_own_failure(tmp_path):
    # pytorch/elastic's kubernetes/TROUBLESHOOTING.md, verbatim (worker-0's log from `Rank [0]`
    # to the traceback's end; the rendezvous's `etcd-service` unknown in the cluster): a socket
    # error, but no peer went away
    lines = [
        "[INFO] 2020-03-23 00:47:29,745 main: Rank [0] running on GPU [0]",
        "Traceback (most recent call last):",
        '  File "/opt/conda/lib/python3.6/site-packages/urllib3/connection.py", line 159, in _new_conn',
        "    (self._dns_host, self.port), self.timeout, **extra_kw)",
        '  File "/opt/conda/lib/python3.6/site-packages/urllib3/util/connection.py", line 57, in create_connection',
        "    for res in socket.getaddrinfo(host, port, family, socket.SOCK_STREAM):",
        '  File "/opt/conda/lib/python3.6/socket.py", line 745, in getaddrinfo',
        "    for res in _socket.getaddrinfo(host, port, family, type, proto, flags):",
        "socket.gaierror: [Errno -2] Name or service not known",
    ]
    analysis = analyze_files(tmp_path, {"worker-0.log": lines})
    assert analysis.verdict.finding.kind == "rank_exception"
    assert "Name or service not known" in analysis.verdict.finding.summary


def test_an_invalid_device_ordinal_no_line_names_is_the_highest_local_rank(tmp_path):
    # cfzd/Ultra-Fast-Lane-Detection#193 (tests/data/threads): two processes started on a
    # machine that shows one GPU; the one that failed asked for device 1
    lines = (THREADS / "ufld193_invalid_ordinal.log").read_text(encoding="utf-8").splitlines()
    analysis = analyze_files(tmp_path, {"train.log": lines})
    crash = analysis.verdict.finding
    assert (crash.kind, analysis.verdict.ranks, crash.confidence) == (
        "rank_exception",
        [1],
        "medium",
    )
    assert "the highest local ranks (1 of 2 failed)" in crash.summary
    # without the launch command nothing says how many were started: no rank
    alone = analyze_files(tmp_path / "alone", {"train.log": lines[1:]})
    assert alone.verdict.ranks == []


# JHPark9090/Quantum-Hydra-Mamba, docs/8QUBIT_RESULTS_ANALYSIS.md, verbatim: a Lightning DDP
# job of four srun tasks on one node; every task downloaded the data into one folder, task 3
# met a folder another had just made, and SLURM ended the others
SRUN_ONE_TASK_FAILED = [
    "FileExistsError: [Errno 17] File exists:",
    "'/pscratch/sd/j/junghoon/quantum_hydra_mamba_repo/PhysioNet_EEG/MNE-eegbci-data/files/eegmmidb/1.0.0/S043'",
    "",
    "srun: error: nid008637: task 3: Exited with exit code 1",
    "slurmstepd: error: *** STEP 45380617.0 ON nid008637 CANCELLED AT 2025-11-19T12:13:27 ***",
    "srun: error: nid008637: tasks 0-2: Terminated",
]


def test_an_unranked_exception_is_the_one_srun_task_that_exited_with_an_error(tmp_path):
    verdict = analyze_files(tmp_path, {"slurm.out": SRUN_ONE_TASK_FAILED}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [3])
    assert verdict.finding.confidence == "medium"
    assert "srun reports task 3 alone exited with an error" in verdict.finding.summary


def test_a_task_alone_on_its_node_is_no_rank(tmp_path):
    # huggingface/accelerate#2960's srun line: one task on its node ran a launcher there
    lines = [
        SRUN_ONE_TASK_FAILED[0],
        "srun: error: SH-IDC1-10-140-24-95: task 0: Exited with exit code 1",
    ]
    verdict = analyze_files(tmp_path, {"slurm.out": lines}).verdict
    assert verdict.finding.kind == "rank_exception" and verdict.ranks == []


def test_the_dataloaders_rethrow_and_the_workers_own_exception_are_one_failure(tmp_path):
    # johnson7788/RLDecisionAgent's notes (tests/data/threads): the rethrow in the main process,
    # the worker's traceback in its message, no rank on either; torchrun's summary lists rank 1
    lines = (THREADS / "verl_sft_loader_rethrow.log").read_text(encoding="utf-8").splitlines()
    analysis = analyze_files(tmp_path, {"train.log": lines})
    failures = [f for f in analysis.findings if f.kind == "rank_exception"]
    assert len(failures) == 1 and analysis.verdict.ranks == [1]
    assert "Tools should either be a JSON schema" in analysis.verdict.finding.summary
    assert "Caught ValueError in DataLoader worker process" not in analysis.verdict.finding.summary


# horovod/horovod#2015, verbatim (Determined's trial log over horovodrun): rank 1 gave up at
# the gloo rendezvous store as 50 nodes joined, and nothing else is in the lines
RANKED_WAIT_ALONE = [
    "[2020-06-09T20:10:40Z] cf108822 [RUNNING] ||  Tue Jun  9 20:10:40 2020[1]<stderr>:terminate called after throwing an instance of 'gloo::IoException'",
    "[2020-06-09T20:10:40Z] cf108822 [RUNNING] ||  Tue Jun  9 20:10:40 2020[1]<stderr>:  what():  [horovod/common/gloo/http_store.cc:53] [horovod/common/gloo/http_store.cc:53] Wait timeout for key(s): 0",
    "[2020-06-09T20:10:40Z] cf108822 [RUNNING] ||  Tue Jun  9 20:10:40 2020[1]<stderr>:*** Received signal 6 ***",
    "[2020-06-09T20:10:40Z] cf108822 [RUNNING] ||  Tue Jun  9 20:10:40 2020[1]<stderr>:*** BEGIN MANGLED STACK TRACE ***",
    "[2020-06-09T20:10:40Z] cf108822 [RUNNING] ||  Tue Jun  9 20:10:40 2020[1]<stderr>:/opt/conda/lib/python3.6/site-packages/tensorflow/python/../libtensorflow_framework.so.1(+0xfed8db)[0x7f994dcc18db]",
]


def test_a_ranks_wait_that_timed_out_alone_is_a_consequence_not_no_failure(tmp_path):
    analysis = analyze_files(tmp_path, {"trial.log": RANKED_WAIT_ALONE})
    verdict = analysis.verdict
    assert verdict is not None and verdict.finding.kind == "collective_timeout"
    assert verdict.finding.ranks == [1] and verdict.finding.blames_nobody
    assert verdict.finding.part == "consequence"
    assert "Wait timeout for key(s): 0" in verdict.finding.summary
    # (the source places gloo puts before its words stay in the finding, not the headline)
    assert verdict_headline(verdict) == (
        "Rank 1 stopped waiting for other ranks (gloo::IoException: Wait timeout for key(s): 0)"
    )


def test_a_wait_s_headline_keeps_the_words_not_the_source_places_or_the_advice(tmp_path):
    # ray-project/ray#25866, verbatim (Horovod on Ray; the paste cuts the second `what():`)
    lines = [
        "terminate called after throwing an instance of 'gloo::IoException'",
        "  what():  [/tmp/pip-install-43a3uo3a/horovod_33a452dfb1f34b4e998a6265ba22cf83/horovod/common/gloo/http_store.cc:57] [/tmp/pip-install-43a3uo3a/horovod_33a452dfb1f34b4e998a6265ba22cf83/horovod/common/gloo/http_store.cc:57] Wait timeout after 30 seconds for key(s): 0. You may want to increase the timeout via HOROVOD_GLOO_TIMEOUT_SECONDS",
        "terminate called after throwing an instance of 'gloo::IoException'",
        "*** SIGABRT received at time=1655335369 on cpu 8 ***",
    ]
    verdict = analyze_files(tmp_path, {"driver.log": lines}).verdict
    assert verdict_headline(verdict) == (
        "A process timed out waiting for other ranks (gloo::IoException: Wait timeout after 30 "
        "seconds for key(s): 0); the logs do not say its rank"
    )


def test_ranks_that_raised_the_same_wrapped_error_are_named_together(tmp_path):
    # vllm-project/speculators#544, verbatim lines: rank 1's traceback header was drawn over by
    # the progress bar, rank 0's is whole; both ranks' compiler failed alike
    frame = '  File "/usr/local/lib/python3.12/site-packages/torch/_inductor/pattern_matcher.py", line 1425, in check_fn'
    wrapped = [
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:",
        "RuntimeError: Not all inputs to pattern found in match.kwargs. Perhaps one of the inputs is unused? argnames=['x', 'slice_shape'], match.kwargs={'x': squeeze}",
    ]
    lines = [
        "Epoch 0   0% ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━",
        f"[rank1]: {frame}",
        "[rank1]:     raise RuntimeError(",
        *(f"[rank1]: {line}" for line in wrapped),
        "",
        "[rank0]: Traceback (most recent call last):",
        f"[rank0]: {frame}",
        "[rank0]:     raise RuntimeError(",
        *(f"[rank0]: {line}" for line in wrapped),
        "E0525 14:43:32.923000 101623 site-packages/torch/distributed/elastic/multiprocessing/api.py:882] failed (exitcode: 1) local_rank: 1 (pid: 101714) of binary: /usr/local/bin/python3",
    ]
    analysis = analyze_files(tmp_path, {"train.log": lines})
    verdict = analysis.verdict.finding
    assert (verdict.kind, verdict.ranks) == ("rank_exception", [0, 1])
    assert verdict.details["exception"].endswith("BackendCompilerFailed")
    # torchrun's agent reports local rank 1's exit, the one worker of this node it saw fail
    assert analysis.verdict.ranks == [1]
    assert verdict.summary.endswith("torchrun saw rank 1 fail first.")


def test_as_many_alike_errors_as_the_summary_lists_failed_workers_are_those_workers(tmp_path):
    # searobbersduck/AIGC_Note (TextualInversion.md, verbatim lines): two processes' rich
    # tracebacks of one ImportError with no rank on them, then torchrun's summary of two
    # failed workers; the fix is the install both share
    error = [
        "ImportError: This example requires a source install from HuggingFace diffusers (see",
        "`https://huggingface.co/docs/diffusers/installation#install-from-source`), but the version found is 0.14.0.",
        "",
    ]
    summary = [
        "ChildFailedError:",
        "============================================================",
        "textual_inversion.py FAILED",
        "------------------------------------------------------------",
        "Failures:",
        "[1]:",
        "  time      : 2023-03-13_10:28:51",
        "  host      : rtxA6000",
        "  rank      : 1 (local_rank: 1)",
        "  exitcode  : 1 (pid: 8207)",
        "  error_file: <N/A>",
        "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
        "------------------------------------------------------------",
        "Root Cause (first observed failure):",
        "[0]:",
        "  time      : 2023-03-13_10:28:51",
        "  host      : rtxA6000",
        "  rank      : 0 (local_rank: 0)",
        "  exitcode  : 1 (pid: 8206)",
        "  error_file: <N/A>",
        "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
    ]
    analysis = analyze_files(tmp_path, {"train.log": error + error + summary})
    verdict = analysis.verdict.finding
    assert (verdict.kind, verdict.ranks) == ("rank_exception", [0, 1])
    assert "rank 0 first" in verdict.summary
    assert analysis.verdict.headline.startswith("Ranks 0 and 1 died of the same ImportError")
    # more errors than listed failures: the processes stay unnamed, the first one torchrun saw
    # fail is where to read first
    more = analyze_files(tmp_path / "three", {"train.log": error * 3 + summary}).verdict
    assert (more.finding.details["alike"], more.ranks) == (3, [0])
    assert more.finding.summary.endswith("torchrun saw rank 0 fail first.")
    assert "whose rank the logs do not say" in more.finding.summary


def test_the_abort_of_the_rank_that_timed_out_is_the_timeout_s_even_in_another_file(tmp_path):
    # QwenAudio/CosyVoice#517, verbatim: the paste's two windows, the watchdog's report in one
    # and torchrun's word on local rank 0's exit code -6 (a one-node job) in the other
    files = {
        "train.log": [
            "2024-10-18 20:48:27,683 DEBUG TRAIN Batch 15/37700 loss 1.543046 acc 0.267136 lr 0.00055927 grad_norm 0.190002 rank 0",
            "[E ProcessGroupNCCL.cpp:828] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=377286, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1805402 milliseconds before timing out.",
        ],
        "train_tail.log": [
            "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 146249 closing signal SIGTERM",
            "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -6) local_rank: 0 (pid: 146248) of binary: /home/lhw523/anaconda3/envs/cosyvoice/bin/python",
        ],
    }
    analysis = analyze_files(tmp_path, files)
    assert analysis.verdict.finding.kind == "collective_timeout"
    assert "rank_exception" not in kinds(analysis)


def test_every_rank_interrupted_is_a_warning_that_the_run_was_stopped_not_a_failure(tmp_path):
    # VirenLoka/GlueFormer's torchrun --log-dir run 606ed3b8 (verbatim lines): each rank's
    # KeyboardInterrupt in its forward pass, and rank 0's pin-memory thread reset as it went
    rank0 = [
        '[rank0]:   File "/home/jovyan/GlueFormer/model.py", line 162, in forward',
        "[rank0]:     positions = torch.arange(T, device=input_ids.device).unsqueeze(0)",
        "[rank0]: KeyboardInterrupt",
        "Exception in thread Thread-3 (_pin_memory_loop):",
        "Traceback (most recent call last):",
        '  File "/home/jovyan/.conda/envs/glueformer/lib/python3.14/multiprocessing/connection.py", line 412, in _recv',
        "    chunk = read(handle, to_read)",
        "ConnectionResetError: [Errno 104] Connection reset by peer",
    ]
    rank1 = [
        "[rank1]: Traceback (most recent call last):",
        '[rank1]:   File "/home/jovyan/GlueFormer/train.py", line 636, in <module>',
        "[rank1]:     main()",
        "[rank1]: KeyboardInterrupt",
    ]
    files = {"attempt_0/0/stderr.log": ["[rank0]: Traceback (most recent call last):", *rank0]}
    files["attempt_0/1/stderr.log"] = rank1
    analysis = analyze_files(tmp_path, files)
    assert analysis.verdict is None
    (stopped,) = [f for f in analysis.findings if f.kind == "rank_exception"]
    assert (stopped.severity, stopped.ranks, stopped.blamed) == ("warning", [0, 1], [])
    assert "KeyboardInterrupt" in stopped.summary and "Ctrl-C" in stopped.summary
    # an error of its own beside the interrupts is a failure, told as before
    files["attempt_0/1/stderr.log"] = [*rank1[:3], "[rank1]: ValueError: corrupt sample"]
    analysis = analyze_files(tmp_path / "failed", files)
    assert analysis.verdict.finding.kind == "rank_exception"
    assert analysis.verdict.finding.severity == "error"


def test_an_error_a_registry_raised_again_with_class_names_in_front_is_one_error(tmp_path):
    # CFINet's committed test log: one `FileNotFoundError ... '0'`, raised again by the model
    # registry as `FIRoIHead: ...` and `FasterRCNN: FIRoIHead: ...`; torchrun lists rank 1 alone
    console = (THREADS / "cfinet_rmtree_race_rank1.log").read_text().splitlines()
    verdict = analyze_files(tmp_path, {"test.log": console}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [1])
    assert "FileNotFoundError: [Errno 2] No such file or directory: '0'" in verdict.finding.summary
    assert "FasterRCNN" not in verdict.finding.summary


def test_an_unranked_error_of_several_failed_workers_is_blamed_on_the_first_observed(tmp_path):
    # a PanguWeather Slurm job's output: four workers' one FileNotFoundError interleaved beyond
    # reading; torchrun's summary lists ranks 2 and 3 failed and rank 0 as its root cause
    console = (THREADS / "pangu_stampede3_first_observed.log").read_text().splitlines()
    verdict = analyze_files(tmp_path, {"slurm.out": console}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [0])
    assert verdict.finding.summary.endswith("torchrun saw rank 0 fail first.")


def test_torchrun_s_record_decorator_is_advised_only_where_torchrun_ran_the_workers(tmp_path):
    # a 4-rank torchrun job (its ChildFailedError summary, see the README): `@record` applies
    torchrun = analyze(THREADS / "genetictrading_supervisor_tag.log").verdict.finding
    assert torchrun.fix.startswith("Fix the exception on rank 0")
    assert "errors.record` makes torchrun report it first" in torchrun.fix
    # pytorch/xla#3122's `xmp.spawn` console: no torchrun to report anything
    from tests.parsers.test_xla import SESSION_LOST

    spawned = analyze_files(tmp_path, {"console.log": SESSION_LOST}).verdict.finding
    assert spawned.fix.startswith("Fix the exception on rank 0")
    assert "torchrun" not in spawned.fix


# huggingface/m4-logs, tr_141-hanging/..._num_workers_02/README.md (at 7a31dce), verbatim: a
# process's abort in ProcessGroupNCCL's cleanup loop, then SLURM's word that a node failed
LOST_NODE_ABORT = [
    "terminate called after throwing an instance of 'c10::CUDAError'",
    "  what():  CUDA error: unknown error",
    "Exception raised from query at ../aten/src/ATen/cuda/CUDAEvent.h:91 (most recent call first):",
    "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x3e (0x14c5bad6d20e in /gpfswork/rech/cnw/commun/conda/shared-m4-2023-02-28/lib/python3.8/site-packages/torch/lib/libc10.so)",
    "frame #1: c10d::ProcessGroupNCCL::WorkNCCL::finishedGPUExecutionInternal() const + 0x13c (0x14c5fcb6d78c in /gpfswork/rech/cnw/commun/conda/shared-m4-2023-02-28/lib/python3.8/site-packages/torch/lib/libtorch_cuda_cpp.so)",
    "frame #2: c10d::ProcessGroupNCCL::WorkNCCL::isCompleted() + 0x58 (0x14c5fcb6f768 in /gpfswork/rech/cnw/commun/conda/shared-m4-2023-02-28/lib/python3.8/site-packages/torch/lib/libtorch_cuda_cpp.so)",
    "frame #3: c10d::ProcessGroupNCCL::workCleanupLoop() + 0x221 (0x14c5fcb70cf1 in /gpfswork/rech/cnw/commun/conda/shared-m4-2023-02-28/lib/python3.8/site-packages/torch/lib/libtorch_cuda_cpp.so)",
    "frame #4: <unknown function> + 0xc2ba3 (0x14c60c8f8ba3 in /lib64/libstdc++.so.6)",
    "frame #5: <unknown function> + 0x81cf (0x14c62b3941cf in /lib64/libpthread.so.0)",
    "frame #6: clone + 0x43 (0x14c62a876dd3 in /lib64/libc.so.6)",
    "",
    "srun: error: Node failure on jean-zay-iam49",
    "srun: Job step aborted: Waiting up to 62 seconds for job step to finish.",
]


def test_a_gpu_failure_of_no_rank_in_a_job_that_lost_a_node_is_the_node_failing(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": LOST_NODE_ABORT})
    assert analysis.verdict.finding.kind == "peer_lost"
    seen = finding(analysis, "rank_exception")
    assert seen.part == "consequence" and "most likely that node's failure" in seen.summary


def test_a_gpu_failure_of_no_rank_is_the_cause_where_no_node_was_lost(tmp_path):
    aborts = [line for line in LOST_NODE_ABORT if not line.startswith("srun:")]
    analysis = analyze_files(tmp_path, {"console.log": aborts})
    assert analysis.verdict.finding.kind == "rank_exception"
    assert analysis.verdict.finding.part == "explanation"


# bigscience-workshop/bigscience, experiments/gpt2-meg/meg_gpt2_base_n64_dp1_tp4_pp64-1809655.out
# (at 6980df2), verbatim lines: iterations at their usual pace, then SLURM's time limit
TIME_LIMIT = [
    " iteration       50/    1000 | consumed samples:          200 | elapsed time per iteration (ms): 6715.3 | learning rate: 1.497E-04 | global batch size:     4 | lm loss: 2.114738E+01 | loss scale: 16384.0 | grad norm: 13.290 | number of skipped iterations:   0 | number of nan iterations:   0 |",
    " iteration       60/    1000 | consumed samples:          240 | elapsed time per iteration (ms): 6703.7 | learning rate: 1.494E-04 | global batch size:     4 | lm loss: 1.696940E+01 | loss scale: 16384.0 | grad norm: 14.171 | number of skipped iterations:   0 | number of nan iterations:   0 |",
    "srun: Job step aborted: Waiting up to 62 seconds for job step to finish.",
    "Killing subprocess 43950",
    "slurmstepd: error: *** STEP 1809655.0 ON r6i4n3 CANCELLED AT 2021-05-24T09:50:34 DUE TO TIME LIMIT ***",
    "Main process received SIGTERM, exiting",
    "slurmstepd: error: *** JOB 1809655 ON r6i4n3 CANCELLED AT 2021-05-24T09:50:34 DUE TO TIME LIMIT ***",
]


def test_a_step_slurm_ended_at_its_time_limit_with_no_failure_before_says_so(tmp_path):
    analysis = analyze_files(tmp_path, {"job.out": TIME_LIMIT})
    verdict = analysis.verdict
    assert verdict.finding.kind == "rank_exception" and verdict.ranks == []
    assert verdict.headline.startswith("SLURM ended the job at its time limit")
    assert "#SBATCH --time" in verdict.finding.fix


def test_a_step_cancelled_for_no_stated_reason_is_not_a_time_limit(tmp_path):
    lines = [line.replace(" DUE TO TIME LIMIT", "") for line in TIME_LIMIT]
    analysis = analyze_files(tmp_path, {"job.out": lines})
    assert all("time limit" not in item.summary for item in analysis.findings)
    # bigscience's n8 run of the same benchmark (meg_gpt2_base_n8_dp1_tp4_pp8-1809562.out):
    # SLURM names no reason when a person or a workflow ran scancel
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [])
    assert verdict.headline == (
        "SLURM cancelled the job (no reason given: scancel), no rank having failed before"
    )
    assert "sacct -j" in verdict.finding.fix


def test_the_older_launchers_word_that_it_was_signalled_ends_a_healthy_run(tmp_path):
    # the same benchmark's lines without SLURM's: torch.distributed.launch's own handler
    lines = [line for line in TIME_LIMIT if "slurmstepd" not in line and "srun" not in line]
    verdict = analyze_files(tmp_path, {"job.out": lines}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [])
    assert verdict.finding.summary.startswith("The launcher received SIGTERM from outside")
    assert verdict.headline == "The launcher was sent SIGTERM from outside and stopped the job"


def test_slurm_s_reason_speaks_before_the_launcher_s_signal(tmp_path):
    verdict = analyze_files(tmp_path, {"job.out": TIME_LIMIT}).verdict
    assert "launcher" not in verdict.finding.summary


def test_a_step_slurm_preempted_says_so_and_how_to_resume(tmp_path):
    lines = [line.replace("TIME LIMIT", "PREEMPTION") for line in TIME_LIMIT]
    verdict = analyze_files(tmp_path, {"job.out": lines}).verdict
    assert verdict.headline == "SLURM preempted the job, no rank having failed before"
    assert "--requeue" in verdict.finding.fix


def test_a_cancelled_step_after_srun_told_a_task_s_end_is_not_said_again(tmp_path):
    # chrisknewman/tusas#149 (parsers/slurm.py): the cgroup's OOM killer, then the cancellation
    lines = [
        "slurmstepd: error: Detected 1 oom_kill event in StepId=440575.0. Some of the step tasks have been OOM Killed.",
        "srun: error: nid001277: tasks 1-3: Out Of Memory",
        "slurmstepd: error: *** STEP 440575.0 ON nid001277 CANCELLED AT 2023-12-05T07:16:01 ***",
    ]
    analysis = analyze_files(tmp_path, {"job.out": lines})
    assert analysis.verdict.finding.kind == "oom"
    assert all("SLURM cancelled" not in item.summary for item in analysis.findings)


# facebookincubator/submitit#1708 (verbatim): submitit caught the signal sent before the time
# limit and requeued the job; srun's report of two tasks' exits is the requeue's teardown
REQUEUED = [
    "submitit WARNING (2022-08-12 02:06:11,453) - Caught signal SIGUSR2 on SERVER_NAME: this job is preempted.",
    "slurmstepd: error: *** JOB 608 ON SERVER_NAME CANCELLED AT 2022-08-12T02:06:12 DUE TO JOB REQUEUE ***",
    "slurmstepd: error: *** STEP 608.0 ON SERVER_NAME CANCELLED AT 2022-08-12T02:06:12 DUE TO JOB REQUEUE ***",
    "submitit WARNING (2022-08-12 02:06:12,299) - Bypassing signal SIGCONT",
    "submitit WARNING (2022-08-12 02:06:12,301) - Bypassing signal SIGTERM",
    "slurmstepd: error: Failed to send MESSAGE_TASK_EXIT: Connection refused",
    "slurmstepd: error: Failed to send MESSAGE_TASK_EXIT: Connection refused",
    "srun: error: SERVER_NAME: tasks 2-3: Exited with exit code 1",
]


def test_a_requeued_job_whose_tasks_then_exit_was_ended_from_outside(tmp_path):
    verdict = analyze_files(tmp_path, {"job.out": REQUEUED}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [])
    assert verdict.headline == "SLURM requeued the job, no rank having failed before"
    assert "resumes from the last checkpoint" in verdict.finding.fix
    # why this verdict: the run's end came from outside, not "a failure as reported"
    assert verdict.reason.startswith("The run was ended from outside")


def test_srun_s_word_on_tasks_before_the_cancellation_still_speaks_for_the_step(tmp_path):
    # the same lines with srun's report moved above the cancellation: the tasks' exits came first
    lines = [REQUEUED[-1], *REQUEUED[:-1]]
    analysis = analyze_files(tmp_path, {"job.out": lines})
    assert all("requeued" not in item.summary for item in analysis.findings)


def test_srun_s_word_alone_that_tasks_exited_with_an_error_is_a_failure(tmp_path):
    # submitit#1708's srun line on its own: srun ran the processes (two tasks on the node), so
    # each task is a rank; what they printed is not here, so nobody is blamed
    verdict = analyze_files(tmp_path, {"job.out": REQUEUED[-1:]}).verdict
    assert (verdict.finding.kind, verdict.finding.ranks) == ("rank_exception", [2, 3])
    assert verdict.headline == "Ranks 2 and 3 exited with code 1"


def test_srun_s_one_task_per_node_is_a_launcher_not_a_rank(tmp_path):
    # srun started one launcher per node (its task ids are nodes): the exit names no rank
    lines = [
        "srun: error: node1: task 0: Exited with exit code 1",
        "srun: error: node2: task 1: Exited with exit code 1",
    ]
    verdict = analyze_files(tmp_path, {"job.out": lines}).verdict
    assert (verdict.finding.kind, verdict.finding.ranks) == ("rank_exception", [])
    assert verdict.finding.summary.startswith("2 workers exited with code 1")
    assert verdict.headline == "2 processes exited with code 1"


# ROCm/ROCm#5259, verbatim (the training's last progress line left out): the ROCm runtime's
# report of a GPU hang from four processes, then torchrun stopping two workers and reporting
# local rank 0's abort
GPU_HANG = [
    "HW Exception by GPU node-4 (Agent handle: 0x1ebc04e0) reason :GPU Hang",
    "HW Exception by GPU node-4 (Agent handle: 0x2df30600) reason :GPU Hang",
    "HW Exception by GPU node-4 (Agent handle: 0x33c245e0) reason :GPU Hang",
    "HW Exception by GPU node-4 (Agent handle: 0x462ca2e0) reason :GPU Hang",
    "W0902 15:10:48.626000 819010 torch/distributed/elastic/multiprocessing/api.py:900] Sending process 819027 closing signal SIGTERM",
    "W0902 15:10:48.632000 819010 torch/distributed/elastic/multiprocessing/api.py:900] Sending process 819028 closing signal SIGTERM",
    "E0902 15:10:49.013000 819010 torch/distributed/elastic/multiprocessing/api.py:874] failed (exitcode: -6) local_rank: 0 (pid: 819025) of binary: <masked_by_issue_reporter>/bin/python",
]


def test_an_error_of_several_unranked_processes_is_pinned_on_the_worker_torchrun_saw_fail(
    tmp_path,
):
    analysis = analyze_files(tmp_path, {"console.log": GPU_HANG})
    assert (analysis.verdict.finding.kind, analysis.verdict.ranks) == ("rank_exception", [0])
    assert analysis.verdict.headline == (
        "4 processes died of the same HW Exception; torchrun saw rank 0 fail first"
    )
    # the abort is that error's end, not a second, unexplained death
    assert not any("SIGABRT" in item.summary for item in analysis.findings)
    # the launcher's line that names rank 0 is quoted with the error
    quoted = [evidence.text for evidence in analysis.verdict.finding.evidence]
    assert any("failed (exitcode: -6) local_rank: 0" in text for text in quoted)


# microsoft/frameworkcontroller's PyTorch elastic example (its README at c612696, verbatim): a
# worker's own NCCL error after the operator removed two pods, then torchelastic's agent
# reporting the worker's exit status as the command's CalledProcessError
OLD_LAUNCHER_EXIT = [
    "Traceback (most recent call last):",
    '  File "/workspace/examples/imagenet/main.py", line 603, in <module>',
    "    main()",
    '  File "/workspace/examples/imagenet/main.py", line 188, in main',
    "    train(train_loader, model, criterion, optimizer, epoch, device_id, print_freq)",
    '  File "/workspace/examples/imagenet/main.py", line 471, in train',
    "    loss.backward()",
    '  File "/opt/conda/lib/python3.7/site-packages/torch/tensor.py", line 198, in backward',
    "    torch.autograd.backward(self, gradient, retain_graph, create_graph)",
    '  File "/opt/conda/lib/python3.7/site-packages/torch/autograd/__init__.py", line 100, in backward',
    "    allow_unreachable=True)  # allow_unreachable flag",
    "RuntimeError: NCCL error: unhandled system error, NCCL version 2.4.8",
    "[ERROR] 2020-07-31 07:15:34,783 local_elastic_agent: [default] Worker group failed",
    "Traceback (most recent call last):",
    '  File "/opt/conda/lib/python3.7/site-packages/torchelastic/agent/server/local_elastic_agent.py", line 190, in _monitor_workers',
    "    if self._process_context.join(timeout=-1):",
    '  File "/opt/conda/lib/python3.7/site-packages/torch/multiprocessing/spawn.py", line 119, in join',
    "    raise Exception(msg)",
    "Exception: ",
    "",
    "-- Process 0 terminated with the following error:",
    "Traceback (most recent call last):",
    '  File "/opt/conda/lib/python3.7/site-packages/torch/multiprocessing/spawn.py", line 20, in _wrap',
    "    fn(i, *args)",
    '  File "/opt/conda/lib/python3.7/site-packages/torchelastic/agent/server/local_elastic_agent.py", line 79, in _wrap',
    "    ret = fn(*args)",
    '  File "/opt/conda/lib/python3.7/site-packages/torchelastic/distributed/launch.py", line 392, in wrapper_fn',
    "    raise subprocess.CalledProcessError(returncode=process.returncode, cmd=cmd)",
    "subprocess.CalledProcessError: Command '['/opt/conda/bin/python', '-u', '/workspace/examples/imagenet/main.py', '--arch=resnet18', '--batch-size=32', '--epochs=2', '/workspace/data/tiny-imagenet-200']' returned non-zero exit status 1.",
]


def test_the_old_launchers_report_of_a_workers_exit_status_is_not_the_workers_error(tmp_path):
    analysis = analyze_files(tmp_path, {"worker.log": OLD_LAUNCHER_EXIT})
    assert not [f for f in analysis.findings if "CalledProcessError" in f.summary]
    assert analysis.verdict.finding.kind == "nccl_error"
    assert "unhandled system error" in analysis.verdict.finding.summary


# vllm-project/vllm#20670, verbatim (cut): worker rank 1 logs its traceback and exits; the engine
# then dies of an exception that points back at it
WORKER_LOGGED_THEN_ENGINE_DIED = [
    "(VllmWorker rank=1 pid=213) ERROR 07-09 00:57:28 [multiproc_executor.py:487] WorkerProc failed to start.",
    "(VllmWorker rank=1 pid=213) ERROR 07-09 00:57:28 [multiproc_executor.py:487] Traceback (most recent call last):",
    '(VllmWorker rank=1 pid=213) ERROR 07-09 00:57:28 [multiproc_executor.py:487]   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/executor/multiproc_executor.py", line 461, in worker_main',
    '(VllmWorker rank=1 pid=213) ERROR 07-09 00:57:28 [multiproc_executor.py:487]   File "/usr/local/lib/python3.12/dist-packages/vllm/model_executor/models/adapters.py", line 351, in load_weights_using_from_2_way_softmax',
    "(VllmWorker rank=1 pid=213) ERROR 07-09 00:57:28 [multiproc_executor.py:487]     model.score.weight.data.copy_(weight)",
    "(VllmWorker rank=1 pid=213) ERROR 07-09 00:57:28 [multiproc_executor.py:487] RuntimeError: The size of tensor a (1280) must match the size of tensor b (2560) at non-singleton dimension 1",
    "Process EngineCore_0:",
    "Traceback (most recent call last):",
    '  File "/usr/lib/python3.12/multiprocessing/process.py", line 314, in _bootstrap',
    "    self.run()",
    '  File "/usr/lib/python3.12/multiprocessing/process.py", line 108, in run',
    "    self._target(*self._args, **self._kwargs)",
    '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 590, in run_engine_core',
    "    raise e",
    "Exception: WorkerProc initialization failed due to an exception in a background process. See stack trace for root cause.",
]


def test_a_logged_error_the_exception_that_ended_the_job_points_back_at_is_the_cause(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": WORKER_LOGGED_THEN_ENGINE_DIED})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [1])
    assert verdict.finding.severity == "error"
    assert "the job then ended on it (`Exception: WorkerProc initialization failed" in (
        verdict.finding.summary
    )


def test_a_logged_error_with_nothing_pointing_back_at_it_stays_context(tmp_path):
    logged_alone = WORKER_LOGGED_THEN_ENGINE_DIED[:6]
    analysis = analyze_files(tmp_path, {"console.log": logged_alone})
    assert analysis.verdict is None


# HRNet/HigherHRNet-Human-Pose-Estimation#47, verbatim: torch 1.x's spawn parent raised a bare
# Exception in the words ProcessExitedException took later
OLD_SPAWN_KILLED = [
    "Epoch: [19][300/7922]\tTime: 0.630s (0.682s)\tSpeed: 12.7 samples/s\tData: 0.000s (0.173s)\tStage0-heatmaps: 1.333e-04 (2.700e-04)\tStage1-heatmaps: 5.821e-05 (1.006e-04)\tStage0-push: 1.250e-04 (2.166e-04)\tStage1-push: 0.000e+00 (0.000e+00)\tStage0-pull: 5.478e-10 (1.137e-09)\tStage1-pull: 0.000e+00 (0.000e+00)\t",
    "Traceback (most recent call last):",
    '  File "tools/dist_train.py", line 425, in <module>',
    "    main()",
    '  File "tools/dist_train.py", line 114, in main',
    "    args=(ngpus_per_node, args, final_output_dir, tb_log_dir)",
    '  File "/home/hiperdyne/.local/lib/python3.6/site-packages/torch/multiprocessing/spawn.py", line 171, in spawn',
    "    while not spawn_context.join():",
    '  File "/home/hiperdyne/.local/lib/python3.6/site-packages/torch/multiprocessing/spawn.py", line 107, in join',
    "    (error_index, name)",
    "Exception: process 1 terminated with signal SIGKILL",
]


def test_spawn_s_bare_exception_of_a_killed_child_is_its_death_before_torch_1_5(tmp_path):
    analysis = analyze_files(tmp_path, {"spawn.log": OLD_SPAWN_KILLED})
    killed = analysis.verdict.finding
    assert (killed.kind, killed.ranks) == ("oom", [1])
    assert "SIGKILL" in killed.summary
    assert not [f for f in analysis.findings if f.details.get("exception") == "Exception"]


ASSERTION_ABOVE_CUT = (THREADS / "msswift8378_assert_above_cut_traceback.log").read_text(
    encoding="utf-8"
)


def test_a_kernel_assertion_printed_past_the_rank_prefix_is_the_rank_whose_traceback_follows(
    tmp_path,
):
    # modelscope/ms-swift#8378: the kernel's assertion stands without a prefix, then rank 5's
    # traceback, which the paste cut before its exception line
    analysis = analyze_files(tmp_path, {"console.log": ASSERTION_ABOVE_CUT.splitlines()})
    died = analysis.verdict.finding
    assert (died.kind, died.ranks) == ("rank_exception", [5])
    assert "probability tensor contains either" in died.summary
    assert [line.line for line in died.evidence] == [2]


def test_a_kernel_assertion_far_above_a_rank_s_traceback_stays_unranked(tmp_path):
    # the same lines with other output between the assertion and the traceback: not one failure
    lines = ASSERTION_ABOVE_CUT.splitlines()
    apart = [*lines[:2], *(f"loading shard {n}" for n in range(10)), *lines[2:]]
    died = analyze_files(tmp_path, {"console.log": apart}).verdict.finding
    assert (died.kind, died.ranks) == ("rank_exception", [])


def test_an_exit_code_a_wrapper_passed_on_for_a_kill_is_that_kill(tmp_path):
    # Determined's wrapper under DeepSpeed's launcher: `sys.exit(-9)` leaves 247, which both
    # nodes' launchers report (dlrover reads 247 as an OOM kill too)
    lines = (THREADS / "determined_ds_offload_exit_247.log").read_text(encoding="utf-8")
    analysis = analyze_files(tmp_path, {"trial.log": lines.splitlines()})
    killed = analysis.verdict.finding
    assert killed.kind == "oom" and "SIGKILL" in killed.summary
    assert not [f for f in analysis.findings if "a code the program chose" in f.summary]


@pytest.mark.parametrize(("code", "signal"), [("137", "SIGKILL"), ("250", "SIGABRT")])
def test_a_shell_s_or_a_wrapper_s_code_for_a_signal_is_that_signal(tmp_path, code, signal):
    line = DEEPSPEED_ONLY_WORKER.replace("return code = -9", f"return code = {code}")
    died = analyze_files(tmp_path, {"deepspeed.log": [line]}).verdict.finding
    assert signal in died.summary and died.ranks == [0]


def test_a_code_past_the_signals_is_still_the_program_s_own(tmp_path):
    line = DEEPSPEED_ONLY_WORKER.replace("return code = -9", "return code = 2333")
    analysis = analyze_files(tmp_path, {"deepspeed.log": [line]})
    assert "a code the program chose" in analysis.findings[0].summary


TORCHRUN_RUNS = Path(__file__).parents[1] / "data" / "launchers" / "torchrun"


def test_a_wrapper_passing_on_its_child_s_kill_is_that_kill_not_an_exit_of_its_own():
    # a run here: rank 1's worker is killed by SIGKILL under a wrapper that exits with its
    # child's return code; torchrun reports exit code 247
    analysis = analyze(TORCHRUN_RUNS / "wrapped_kill" / "console.log")
    killed = analysis.verdict.finding
    assert (killed.kind, analysis.verdict.ranks) == ("oom", [1])
    assert "(exit code 247, which stands for SIGKILL)" in killed.summary
    # no second reading of the same exit as a `sys.exit` of the rank's own
    assert not [f for f in analysis.findings if "no error of its own" in f.summary]


def test_a_real_torchrun_whose_terminal_hung_up_went_with_it():
    # a run here: a healthy job's torchrun sent SIGHUP after 15 s
    analysis = analyze(TORCHRUN_RUNS / "hung_up" / "console.log")
    assert analysis.verdict.headline == (
        "The launcher's terminal session closed (SIGHUP) and the job went with it"
    )
    assert analysis.verdict.ranks == []


# IAHispano/Applio#1019, verbatim (Windows 10, an RTX 5070's PyTorch build): the training
# process's gloo has no transport device for the host as the group is made
APPLIO_1019 = [
    "Process Process-1:",
    "Traceback (most recent call last):",
    '  File "C:\\Applio\\Applio-main\\rvc\\train\\train.py", line 334, in run',
    "    dist.init_process_group(",
    '  File "C:\\Applio\\Applio-main\\env\\lib\\site-packages\\torch\\distributed\\distributed_c10d.py", line 1949, in _new_process_group_helper',
    "    backend_class = ProcessGroupGloo(",
    "RuntimeError: makeDeviceForHostname(): unsupported gloo device",
]


def test_a_backend_the_build_cannot_run_is_the_process_s_own_failure_not_a_symptom(tmp_path):
    verdict = analyze_files(tmp_path, {"console.log": APPLIO_1019}).verdict
    assert verdict is not None and verdict.finding.kind == "rank_exception"
    assert "unsupported gloo device" in verdict.finding.summary
    assert "is_gloo_available()" in verdict.finding.fix
    assert english_runs(translate(verdict.finding.fix, "zh")) == []


def test_a_package_built_without_nccl_gets_the_same_fix(tmp_path):
    # meta-llama/llama#1041, verbatim
    lines = ["RuntimeError: Distributed package doesn't have NCCL built in"]
    verdict = analyze_files(tmp_path, {"console.log": lines}).verdict
    assert verdict.finding.kind == "rank_exception"
    assert "a build without NCCL" in verdict.finding.fix


# torchmd/torchmd-net#324, verbatim (Lightning DDP; the reporter posted the traceback's tail):
# no line ties the RuntimeError to a rank, Lightning's launcher reports its child of rank 1
PIN_MEMORY_THREAD = [
    '    raise RuntimeError("Pin memory thread exited unexpectedly")',
    "RuntimeError: Pin memory thread exited unexpectedly",
    "[rank: 1] Child process with PID 224779 terminated with code 1. Forcefully terminating all "
    "other processes to avoid zombies :zombie:",
]


def test_an_unranked_exception_is_the_child_lightning_reports_failed(tmp_path):
    verdict = analyze_files(tmp_path, {"console.log": PIN_MEMORY_THREAD}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [1])
    assert "Lightning's launcher reports its worker of rank 1 alone ended with an error" in (
        verdict.finding.summary
    )


# kohya-ss/sd-scripts#1601, verbatim: rank 3's traceback, the paste cut after the code line of
# its innermost frame, the call into accelerate's barrier (rank 0 was still caching latents)
CUT_AT_THE_CALL = [
    "[rank3]: Traceback (most recent call last):",
    '[rank3]:   File "/home/project/sd-scripts_sd3/flux_train.py", line 905, in <module>',
    "[rank3]:     train(args)",
    '[rank3]:   File "/home/project/sd-scripts_sd3/flux_train.py", line 193, in train',
    "[rank3]:     accelerator.wait_for_everyone()",
]


def test_a_traceback_cut_at_the_code_line_calling_a_barrier_was_waiting_there(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": CUT_AT_THE_CALL})
    cut = analysis.verdict.finding
    assert (cut.kind, cut.part, analysis.verdict.ranks) == ("rank_exception", "consequence", [])
    assert analysis.verdict.headline == "Rank 3 was waiting in wait_for_everyone when its log ends"


def test_the_loss_scale_at_its_floor_on_several_processes_is_the_run_s_numbers(tmp_path):
    # ymcui/Chinese-LLaMA-Alpaca#534 (tests/data/threads): DeepSpeed's fp16 loss scale halving
    # on every step, then the same exception from several processes, their tracebacks
    # interleaved and no rank on any line (the maintainer: fp16 overflow, the scale's floor)
    lines = (THREADS / "chinese_llama_alpaca_534_loss_scale_floor.log").read_text(encoding="utf-8")
    analysis = analyze_files(tmp_path, {"console.log": lines.splitlines()})
    assert analysis.verdict.headline.startswith("The training's numbers diverged on ")
    assert analysis.verdict.finding.fix.startswith("The training's numbers diverged")


# pytorch/pytorch#186535, verbatim: mp.spawn's parent on Windows, its child 0 crashed in a gloo
# all_reduce of CUDA tensors (0xC0000005, past what an Int32 holds)
WINDOWS_CRASH = [
    "C:\\OneTrainer\\OneTrainer>venv\\scripts\\activate",
    "(venv) C:\\OneTrainer\\OneTrainer>python testScript.py",
    "Traceback (most recent call last):",
    '  File "C:\\OneTrainer\\OneTrainer\\testScript.py", line 17, in <module>',
    "    mp.spawn(run, nprocs=2)",
    '  File "C:\\OneTrainer\\OneTrainer\\venv\\Lib\\site-packages\\torch\\multiprocessing\\spawn.py", line 340, in spawn',
    '    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")',
    "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
    '  File "C:\\OneTrainer\\OneTrainer\\venv\\Lib\\site-packages\\torch\\multiprocessing\\spawn.py", line 296, in start_processes',
    "    while not context.join():",
    "              ^^^^^^^^^^^^^^",
    '  File "C:\\OneTrainer\\OneTrainer\\venv\\Lib\\site-packages\\torch\\multiprocessing\\spawn.py", line 200, in join',
    "    raise ProcessExitedException(",
    "torch.multiprocessing.spawn.ProcessExitedException: process 0 terminated with exit code 3221225477",
]


def test_a_windows_crash_code_is_a_failure_and_is_named(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": WINDOWS_CRASH})
    assert not analysis.rule_errors
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [0])
    assert verdict.headline == "Rank 0 crashed (Windows exit code 0xC0000005, an access violation)"
    assert "its exit code 3221225477 is Windows' 0xC0000005" in verdict.finding.summary
    assert "faulthandler" in verdict.finding.fix
    assert english_runs(translate(verdict.finding.fix, "zh")) == []
    assert english_runs(translate(verdict.finding.summary, "zh")) == []
    assert english_runs(translate_headline(verdict.headline, "zh")) == []


def test_an_exit_code_past_any_integer_is_read_without_failing(tmp_path):
    # hostile input: a code no integer type holds breaks no rule
    lines = [line.replace("3221225477", "9" * 30) for line in WINDOWS_CRASH]
    analysis = analyze_files(tmp_path, {"console.log": lines})
    assert not analysis.rule_errors


# huggingface/text-generation-inference#1644, verbatim (the paste stops inside the stack): the
# launcher's error record, an empty line, then the shard's stderr
TGI_SHARD_DUMP = [
    "2024-03-14T13:19:25.453070Z  INFO shard-manager: text_generation_launcher: Waiting for shard to be ready... rank=2",
    "2024-03-14T13:19:25.453075Z  INFO shard-manager: text_generation_launcher: Waiting for shard to be ready... rank=1",
    "2024-03-14T13:19:25.453075Z  INFO shard-manager: text_generation_launcher: Waiting for shard to be ready... rank=0",
    "2024-03-14T13:19:25.463782Z  INFO shard-manager: text_generation_launcher: Waiting for shard to be ready... rank=3",
    "2024-03-14T13:19:25.553183Z ERROR shard-manager: text_generation_launcher: Shard complete standard error output:",
    "",
    "Traceback (most recent call last):",
    "",
    '  File "/opt/conda/bin/text-generation-server", line 8, in <module>',
    "    sys.exit(app())",
    "",
    '  File "/opt/conda/lib/python3.10/site-packages/text_generation_server/cli.py", line 89, in serve',
    "    server.serve(",
    "",
    '  File "/opt/conda/lib/python3.10/site-packages/text_generation_server/server.py", line 235, in serve',
    "    asyncio.run(",
]


def test_a_cut_stack_a_launcher_s_error_record_opened_after_a_blank_line_is_a_failure(tmp_path):
    verdict = analyze_files(tmp_path, {"launcher.log": TGI_SHARD_DUMP}).verdict
    assert verdict is not None and verdict.finding.kind == "rank_exception"
    assert "text_generation_server/server.py:235 in serve" in verdict.finding.summary
    # the same console from `kubectl logs --prefix`: the blank line carries the pod's prefix
    pod = [f"[pod/tgi-0/text-generation-inference] {line}" for line in TGI_SHARD_DUMP]
    prefixed = analyze_files(tmp_path / "pod", {"launcher.log": pod}).verdict
    assert prefixed is not None and prefixed.finding.kind == "rank_exception"


# facebookresearch/detectron2#1439, verbatim (the paste ends inside the parent's report): a
# worker's C++ backtrace, then mp.spawn's own traceback, cut after `-- Process 1 terminated`
SPAWN_RELAYED_CUT = [
    "frame #35: PyRun_StringFlags + 0x7d (0x5602cb4f0f2d in /home/user/.conda/envs/det2/bin/python)",
    "frame #36: PyRun_SimpleStringFlags + 0x3f (0x5602cb3b74fb in /home/user/.conda/envs/det2/bin/python)",
    "frame #37: <unknown function> + 0x1159ce (0x5602cb3b79ce in /home/user/.conda/envs/det2/bin/python)",
    "frame #38: Py_BytesMain + 0x39 (0x5602cb4f11d9 in /home/user/.conda/envs/det2/bin/python)",
    "frame #39: __libc_start_main + 0xf0 (0x7f4995f02830 in /lib/x86_64-linux-gnu/libc.so.6)",
    "frame #40: <unknown function> + 0x1ded73 (0x5602cb480d73 in /home/user/.conda/envs/det2/bin/python)",
    "",
    "Traceback (most recent call last):",
    '  File "train_net.py", line 126, in <module>',
    "    launch(",
    '  File "/home/user/.conda/envs/det2/lib/python3.8/site-packages/detectron2/engine/launch.py", line 50, in launch',
    "    mp.spawn(",
    '  File "/home/user/.conda/envs/det2/lib/python3.8/site-packages/torch/multiprocessing/spawn.py", line 200, in spawn',
    "    return start_processes(fn, args, nprocs, join, daemon, start_method='spawn')",
    '  File "/home/user/.conda/envs/det2/lib/python3.8/site-packages/torch/multiprocessing/spawn.py", line 158, in start_processes',
    "    while not context.join():",
    '  File "/home/user/.conda/envs/det2/lib/python3.8/site-packages/torch/multiprocessing/spawn.py", line 119, in join',
    "    raise Exception(msg)",
    "Exception: ",
    "",
    "-- Process 1 terminated with the",
]


def test_the_spawning_parent_s_exception_names_the_worker_not_its_error(tmp_path):
    verdict = analyze_files(tmp_path, {"train.log": SPAWN_RELAYED_CUT}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [1])
    assert verdict.headline == (
        "Rank 1 failed under torch.multiprocessing.spawn; its own error is cut"
    )
    # the parent's frames are not where the worker failed
    assert "spawn.py:119 in join" not in verdict.finding.summary
    assert english_runs(translate(verdict.finding.summary, "zh")) == []


def test_an_object_collective_s_empty_payload_beside_its_timeout_is_the_timeout_s(tmp_path):
    # modelscope/ms-swift#4340 (tests/data/threads): rank 0 packs the dataset alone (its bar at
    # 1% after 29:59); ranks 2 and 7 time out in BROADCAST #57, and rank 6's
    # broadcast_object_list unpickles the aborted broadcast's empty buffer
    lines = (THREADS / "ms_swift4340_packing_broadcast.log").read_text().splitlines()
    analysis = analyze_files(tmp_path, {"train.log": lines})
    assert "rank_exception" not in kinds(analysis)
    assert (analysis.verdict.finding.kind, analysis.verdict.ranks) == ("collective_timeout", [0])
    assert "Packing (num_proc=1)" in analysis.verdict.finding.summary


def test_an_object_collective_s_empty_payload_without_a_timeout_stays_a_failure(tmp_path):
    # pytorch/torchtitan#3051, verbatim: the reporter's condensed traceback of a DCP load's
    # gather_object, no timeout anywhere
    lines = [
        'File "torch/distributed/checkpoint/state_dict_loader.py:295" in _load_state_dict',
        'File "torch/distributed/checkpoint/utils.py:135" in gather_object',
        'File "torch/distributed/distributed_c10d.py:3364" in _tensor_to_object',
        "  return _unpickler(io.BytesIO(buf)).load()",
        "EOFError: Ran out of input",
    ]
    analysis = analyze_files(tmp_path, {"train.log": lines})
    assert analysis.verdict.finding.kind == "rank_exception"


# EvolvingLMMs-Lab/lmms-eval#322, verbatim (the end of the paste): a multi-node evaluation's
# gather_object, the stack cut at the collective's check of its arguments
CUT_AT_ARGUMENT_CHECK = [
    '  File "/opt/hpcaas/.mounts/fs-0663e2d3c38211883/home/orrzohar/lmms-eval-v2/lmms_eval/evaluator.py", line 543, in evaluate',
    "    torch.distributed.gather_object(",
    '  File "/data/home/orrzohar/miniconda3/envs/lmmsevalv2/lib/python3.11/site-packages/torch/distributed/c10d_logger.py", line 79, in wrapper',
    "    return func(*args, **kwargs)",
    "           ^^^^^^^^^^^^^^^^^^^^^",
    '  File "/data/home/orrzohar/miniconda3/envs/lmmsevalv2/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 2592, in gather_object',
    "    _validate_output_list_for_rank(my_rank, dst, object_gather_list)",
]


def test_a_stack_cut_at_a_collective_s_argument_check_failed_there(tmp_path):
    lines = CUT_AT_ARGUMENT_CHECK
    verdict = analyze_files(tmp_path, {"eval.log": lines}).verdict
    assert verdict.finding.kind == "rank_exception"
    assert "in gather_object" in verdict.finding.summary
    # the same stack cut where the collective waits is a process waiting for the others
    waiting = [*lines[:-1], "    work.wait()"]
    assert analyze_files(tmp_path / "waiting", {"eval.log": waiting}).verdict is None


# verl-project/verl#5750, verbatim (the driver's traceback's first line and its end, then rank
# 0's WorkerDict): the actor Ray reports dead is the one whose watchdog took it down
ACTOR_DIED_AFTER_TIMEOUT = [
    "Traceback (most recent call last):",
    "    raise value.as_instanceof_cause()",
    "ray.exceptions.RayTaskError(ActorDiedError): ray::TaskRunner.run() (pid=4030, ip=10.0.2.100, actor_id=3c87465a346071ce4fca78a401000000, repr=<main_ppo.TaskRunner object at 0x7123673b92b0>)",
    '  File "/workspace/verl/verl/trainer/main_ppo.py", line 359, in run',
    "    trainer.fit()",
    "(WorkerDict pid=7591) [rank0]:[E325 04:13:11.372179233 ProcessGroupNCCL.cpp:760] [Rank 0] To avoid data inconsistency, we are taking the entire process down.",
    "(WorkerDict pid=7591) [rank0]:[E325 04:13:11.373519468 ProcessGroupNCCL.cpp:2068] [PG ID 0 PG GUID 0(default_pg) Rank 0] Process group watchdog thread terminated with exception: [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=310463, OpType=_ALLGATHER_BASE, NumelIn=205796744, NumelOut=823186976, Timeout(ms)=600000) ran for 600021 milliseconds before timing out.",
]


def test_ray_s_word_that_an_actor_died_is_the_timeout_s_abort_not_a_cause(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": ACTOR_DIED_AFTER_TIMEOUT})
    assert "rank_exception" not in kinds(analysis)
    assert (analysis.verdict.finding.kind, analysis.verdict.finding.op) == (
        "collective_timeout",
        "_ALLGATHER_BASE",
    )
    # without the timeout, the actor's death is the failure the logs show
    alone = analyze_files(tmp_path / "alone", {"train.log": ACTOR_DIED_AFTER_TIMEOUT[:5]})
    assert alone.verdict.finding.kind == "rank_exception"


# Nixtla/neuralforecast#1291, verbatim (Ray Tune running a Lightning DDP trial, the raylet's
# line cut by the excerpt): Lightning's main process (global rank 0) reports its child of local
# rank 1 failed and kills everything, its own process too, which Ray then sees die
LIGHTNING_UNDER_RAY = [
    "(_train_tune pid=22946) Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/4",
    "(_train_tune pid=22946) [rank: 1] Child process with PID 23026 terminated with code 1. Forcefully terminating all other processes to avoid zombies 🧟",
    "(raylet) A worker died or was killed while executing a task by an unexpected system error. To troubleshoot the problem, check the logs for the dead worker. RayTask ID: ffffffffffffffff14b6988a6a4935518fd4985a01000000 Worker ID: fa49156216bca352caee735419dc8cf5a59f668a96d20f17a94ddec9 Node ID: 6eabca3b606628a676f68efc346d601b765017331b5032e290b6b99e Worker IP address: 169.255.255.2 Worker port: 33095 Worker PID: 22946 Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of file. There are some potential root causes. (1) The process is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop --force is called. (",
]


def test_the_child_lightning_reports_failed_is_the_verdict_not_the_ray_worker_it_killed(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": LIGHTNING_UNDER_RAY})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [1])
    assert verdict.headline == "Rank 1 exited with code 1"
    assert "oom" not in [finding.kind for finding in analysis.findings]


def test_a_launchers_local_rank_the_script_refused_gets_the_fix_that_accepts_it(tmp_path):
    # huggingface/pytorch-image-models#1724, verbatim: argparse's refusal of torch 2.0's
    # `--local-rank`
    lines = ["train.py: error: unrecognized arguments: --local-rank=2"]
    verdict = analyze_files(tmp_path, {"train.log": lines}).verdict
    assert verdict.finding.kind == "rank_exception"
    assert verdict.headline.endswith("died of an ArgumentError")
    assert "`--local-rank`" in verdict.finding.fix and "LOCAL_RANK" in verdict.finding.fix


# sgl-project/sglang#5602, verbatim (the paste ends inside the traceback): TP3 reached the
# monitored barrier of model loading but got errors from rank 0, then its scheduler raised
BARRIER_THEN_CUT_TRACEBACK = [
    "[2025-04-21 04:13:43] Received sigquit from a child process. It usually means the child failed.",
    "[rank3]:[E421 04:13:43.426633564 ProcessGroupGloo.cpp:143] Rank 3 successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.",
    "[2025-04-21 04:13:43 TP3] Scheduler hit an exception: Traceback (most recent call last):",
    '  File "/home/ubuntu/miniconda3/envs/sglang2/lib/python3.10/site-packages/sglang/srt/managers/scheduler.py", line 2056, in run_scheduler_process',
    "    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)",
    '  File "/home/ubuntu/miniconda3/envs/sglang2/lib/python3.10/site-packages/sglang/srt/managers/scheduler.py", line 260, in __init__',
    "    self.tp_worker = TpWorkerClass(",
    '  File "/home/ubuntu/miniconda3/envs/sglang2/lib/python3.10/site-packages/sglang/srt/managers/tp_worker_overlap_thread.py", line 63, in __init__',
    "    self.worker = TpModelWorker(server_args, gpu_id, tp_rank, dp_rank, nccl_port)",
    '  File "/home/ubuntu/miniconda3/envs/sglang2/lib/python3.10/site-packages/sglang/srt/managers/tp_worker.py", line 75, in __init__',
    "    self.model_runner = ModelRunner(",
]


def test_a_cut_traceback_after_the_rank_s_failed_monitored_barrier_is_that_barrier_s(tmp_path):
    analysis = analyze_files(tmp_path, {"server.log": BARRIER_THEN_CUT_TRACEBACK})
    assert analysis.verdict.finding.kind == "monitored_barrier"
    assert not any(f.kind == "rank_exception" and f.severity == "error" for f in analysis.findings)


# pytorch/pytorch#134006, verbatim: torchrun's summary has rank 4 exit at 11:37:36; rank 0's
# subgroup all-gather times out at 11:47:24, its 600 s after
EXIT_THEN_SUBGROUP_TIMEOUT = [
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
    "============================================================",
    "miminalbug.py FAILED",
    "------------------------------------------------------------",
    "Failures:",
    "  <NO_OTHER_FAILURES>",
    "------------------------------------------------------------",
    "Root Cause (first observed failure):",
    "[0]:",
    "  time      : 2024-08-20_11:37:36",
    "  host      : workergpu008.cm.cluster",
    "  rank      : 4 (local_rank: 0)",
    "  exitcode  : 1 (pid: 793062)",
    "  error_file: <N/A>",
    "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
    "============================================================",
    "srun: error: workergpu008: task 1: Exited with exit code 1",
    "[rank0]:[E820 11:47:24.069865760 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, OpType=_ALLGATHER_BASE, NumelIn=1, NumelOut=2, Timeout(ms)=600000) ran for 600001 milliseconds before timing out.",
    "[rank0]:[E820 11:47:24.070046070 ProcessGroupNCCL.cpp:1664] [PG 1 Rank 0] Exception (either an error or timeout) detected by watchdog at work: 2, last enqueued NCCL work: 3, last completed NCCL work: 1.",
]


def test_a_reported_exit_before_the_others_timed_out_is_what_they_waited_for(tmp_path):
    verdict = analyze_files(tmp_path, {"train.log": EXIT_THEN_SUBGROUP_TIMEOUT}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [4])
    assert verdict.headline.startswith("Rank 4 exited with code 1; rank 0 waited for it")


def test_a_timeout_before_the_reported_exit_still_speaks_for_itself(tmp_path):
    # the same lines with the summary's time after the watchdog's: the exit may follow it
    lines = [
        line.replace("2024-08-20_11:37:36", "2024-08-20_11:57:36")
        for line in EXIT_THEN_SUBGROUP_TIMEOUT
    ]
    verdict = analyze_files(tmp_path, {"train.log": lines}).verdict
    assert verdict.finding.kind == "collective_timeout"


# NVIDIA/Megatron-LM#1874, verbatim from the validation report on: both ranks' exit warning, then
# rank 0's `pure virtual method called` and a terminate that names no exception, and torchrun's
# report of its SIGABRT. The maintainer: "a profiler teardown failure rather than a training
# failure: validation completed, and the process subsequently aborted".
CRASH_AT_EXIT = [
    " validation loss at iteration 150 on test set | lm loss value: 1.177732E+01 | lm loss PPL: 1.302641E+05 | ",
    "-----------------------------------------------------------------------------------------------------------",
    "[rank0]:[W1019 08:16:22.397556647 ProcessGroupNCCL.cpp:1477] Warning: WARNING: destroy_process_group() was not called before program exit, which can leak resources. For more info, please see https://pytorch.org/docs/stable/distributed.html#shutdown (function operator())",
    "[rank1]:[W1019 08:16:22.418489772 ProcessGroupNCCL.cpp:1477] Warning: WARNING: destroy_process_group() was not called before program exit, which can leak resources. For more info, please see https://pytorch.org/docs/stable/distributed.html#shutdown (function operator())",
    "[rank0]:[W1019 08:16:25.280921748 observer.cpp:116] Warning: Leaked callback handle: 1 (function operator())",
    "pure virtual method called",
    "terminate called without an active exception",
    "E1019 08:21:39.599000 3036 torch/distributed/elastic/multiprocessing/api.py:874] failed (exitcode: -6) local_rank: 0 (pid: 3042) of binary: /usr/bin/python",
]


def test_a_crash_after_the_run_finished_is_its_exit_and_fails_the_job(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": CRASH_AT_EXIT})
    verdict = analysis.verdict
    assert verdict.finding.kind == "rank_exception" and verdict.ranks == [0]
    assert verdict.headline == "Rank 0 crashed (SIGABRT) while exiting, after the run had finished"
    assert "after the run had finished (console.log:3)" in verdict.finding.summary
    quoted = [evidence.text for evidence in verdict.finding.evidence]
    assert quoted[0] == "terminate called without an active exception"
    assert "profiler" in verdict.finding.fix
    assert english_runs(translate_headline(verdict.headline, "zh")) == []
    assert english_runs(translate(verdict.finding.summary, "zh")) == []


def test_a_terminate_that_names_no_exception_leaves_the_abort_a_death(tmp_path):
    # the same process's abort, the run's finish not in the excerpt: a crash like any other,
    # quoted with the terminate above it (before, the terminate hid the death and nothing failed)
    analysis = analyze_files(tmp_path, {"console.log": CRASH_AT_EXIT[-3:]})
    verdict = analysis.verdict
    assert verdict.finding.kind == "rank_exception" and verdict.ranks == [0]
    assert verdict.headline == "Rank 0 crashed (SIGABRT)"
    assert "after the run" not in verdict.finding.summary
    quoted = [evidence.text for evidence in verdict.finding.evidence]
    assert "terminate called without an active exception" in quoted


# THUDM/slime#1562, verbatim (the stored paste is cut inside the last line): the driver
# re-raising the rollout actor's TimeoutError, which printed no message, and nothing else failed
ROLLOUT_TIMED_OUT = [
    "Rollout generation:  62%|██████▎   | 40/64 [04:51<02:52,  7.19s/it]",
    "Traceback (most recent call last):",
    '  File "/export/home/pan/slime/train.py", line 100, in <module>',
    "    train(args)",
    '  File "/export/home/pan/slime/train.py", line 69, in train',
    "    rollout_data_ref = ray.get(rollout_manager.generate.remote(rollout_id))",
    "                       ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
    '  File "/export/home/pan/micromamba/envs/slime/lib/python3.12/site-packages/ray/_private/auto_init_hook.py", line 22, in auto_init_wrapper',
    "    return fn(*args, **kwargs)",
    "           ^^^^^^^^^^^^^^^^^^^",
    '  File "/export/home/pan/micromamba/envs/slime/lib/python3.12/site-packages/ray/_private/client_mode_hook.py", line 104, in wrapper',
    "    return func(*args, **kwargs)",
    "           ^^^^^^^^^^^^^^^^^^^^^",
    '  File "/export/home/pan/micromamba/envs/slime/lib/python3.12/site-packages/ray/_private/worker.py", line 2967, in get',
    "    values, debugger_breakpoint = worker.get_objects(",
    "                                  ^^^^^^^^^^^^^^^^^^^",
    '  File "/export/home/pan/micromamba/envs/slime/lib/python3.12/site-packages/ray/_private/worker.py", line 1015, in get_objects',
    "    raise value.as_instanceof_cause()",
    "ray.exceptions.RayTaskError(TimeoutError): ray::RolloutManager.generate() (pid=1694029, ip=134.100.9.210, actor_id=d937ea7a",
]


def test_a_bare_timeout_that_is_all_that_failed_is_a_wait_not_no_failure(tmp_path):
    verdict = analyze_files(tmp_path, {"driver.log": ROLLOUT_TIMED_OUT}).verdict
    assert verdict is not None and verdict.finding.kind == "collective_timeout"
    assert "TimeoutError" in verdict.finding.summary and verdict.ranks == []
