# ruff: noqa: E501 -- test data are verbatim log lines
"""Ranks that gave up waiting for the main process inside `main_process_first`
(logforensics/main_first.py, reported by rules/collective_timeout.py)."""

from __future__ import annotations

from pathlib import Path

from logforensics.i18n import translate, translate_headline
from tests.builders import analyze_files, kinds
from tests.test_i18n import english_runs

THREADS = Path(__file__).resolve().parent / "data" / "threads"

# NVIDIA/nccl#865, verbatim: rank 0's tokenizer bar at 47% after 30 minutes, and the other
# rank's traceback in the barrier of transformers' main_process_first (cut before its
# exception line in the thread)
MAIN_FIRST_WAIT = [
    "Running tokenizer on dataset:  47%|███████████████▊                  | 3169000/6811963 [30:11<38:27, 1578.58 examples/s]Traceback (most recent call last):",
    '  File "/mnt/data/smart_health_02/fanyongqi/workspace/ChatMedNorm/src/train_sft.py", line 94, in <module>',
    "    main()",
    '  File "/mnt/data/smart_health_02/fanyongqi/workspace/ChatMedNorm/src/train_sft.py", line 25, in main',
    '    dataset = preprocess_data(dataset, tokenizer, data_args, training_args, stage="sft")',
    '  File "/mnt/data/smart_health_02/fanyongqi/workspace/ChatMedNorm/src/utils/common.py", line 506, in preprocess_data',
    '    with training_args.main_process_first(desc="dataset map pre-processing"):',
    '  File "/mnt/data/smart_health_02/fanyongqi/anaconda3/envs/chatglm_etuning/lib/python3.9/contextlib.py", line 119, in __enter__',
    "    return next(self.gen)",
    '  File "/mnt/data/smart_health_02/fanyongqi/anaconda3/envs/chatglm_etuning/lib/python3.9/site-packages/transformers/training_args.py", line 1891, in main_process_first',
    "    torch.distributed.barrier()",
    '  File "/mnt/data/smart_health_02/fanyongqi/anaconda3/envs/chatglm_etuning/lib/python3.9/site-packages/torch/distributed/distributed_c10d.py", line 3328, in barrier',
    "    work = default_pg.barrier(opts=opts)",
]


def test_a_wait_inside_main_process_first_that_gave_up_names_rank_0(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": MAIN_FIRST_WAIT})
    busy = analysis.verdict.finding
    assert (busy.kind, analysis.verdict.ranks) == ("collective_timeout", [0])
    assert busy.details["departure"] == "main_first" and busy.confidence == "medium"
    assert "inside main_process_first:" in busy.summary
    assert "--ddp_timeout" in busy.fix
    assert "Nothing in the logs says why" not in analysis.verdict.reason


def test_the_main_rank_s_own_exception_is_not_lagging(tmp_path):
    # the same wait on rank 1, and rank 0 failing on its own (constructed from the same lines
    # behind torchrun's rank prefixes): rank 0 failed, it did not lag
    waiting = [f"[rank1]:{line}" for line in MAIN_FIRST_WAIT[1:]]
    waiting.insert(0, "[rank1]:Traceback (most recent call last):")
    failing = [
        "[rank0]:Traceback (most recent call last):",
        '[rank0]:  File "/mnt/data/smart_health_02/fanyongqi/workspace/ChatMedNorm/src/train_sft.py", line 94, in <module>',
        "[rank0]:    main()",
        "[rank0]:ValueError: bad example",
    ]
    analysis = analyze_files(tmp_path, {"console.log": failing + waiting})
    assert not [f for f in analysis.findings if f.details.get("departure") == "main_first"]
    assert "rank_exception" in kinds(analysis)


# shibing624/MedicalGPT#425 (torchrun, 4 workers on one host), verbatim excerpts: rank 0's
# tokenizer bar near 30 minutes; rank 3's stack in main_process_first's barrier, cut at
# torch.distributed's wrapper of it; torchrun then reports local rank 3 failed and stops the rest
WRAPPER_CUT = [
    "Running tokenizer on dataset (num_proc=10): 100%|████████████████████████████████████████████████████████▉| 1368806/1370895 [29:46<01:07, 30.89 examples/s][rank3]:[W1001 13:40:02.778279096 socket.cpp:428] [c10d] While waitForInput, poolFD failed with (errno: 0 - Success).",
    "[rank1]:[W1001 13:40:02.817983009 socket.cpp:428] [c10d] While waitForInput, poolFD failed with (errno: 0 - Success).",
    "[rank3]: Traceback (most recent call last):",
    '[rank3]:   File "/data/ctr/MedicalGPT/pretraining.py", line 779, in <module>',
    "[rank3]:     main()",
    '[rank3]:   File "/data/ctr/MedicalGPT/pretraining.py", line 541, in main',
    '[rank3]:     with training_args.main_process_first(desc="Dataset tokenization and grouping"):',
    '[rank3]:   File "/home/server/anaconda3/envs/medicalgpt/lib/python3.11/contextlib.py", line 137, in __enter__',
    "[rank3]:     return next(self.gen)",
    "[rank3]:            ^^^^^^^^^^^^^^",
    '[rank3]:   File "/home/server/anaconda3/envs/medicalgpt/lib/python3.11/site-packages/transformers/training_args.py", line 2410, in main_process_first',
    "[rank3]:     dist.barrier()",
    '[rank3]:   File "/home/server/anaconda3/envs/medicalgpt/lib/python3.11/site-packages/torch/distributed/c10d_logger.py", line 79, in wrapper',
    "[rank3]:     return func(*args, **kwargs)",
    "[rank3]:            ^^^^^^^^^^^^^^^^^^^^^",
    "[rank2]: frame #42: /home/server/anaconda3/envs/medicalgpt/bin/python() [0x5bbac3]",
    "[rank2]: . This may indicate a possible application crash on rank 0 or a network set up issue.",
    "W1001 13:40:03.742000 140703168014144 torch/distributed/elastic/multiprocessing/api.py:858] Sending process 457151 closing signal SIGTERM",
    "W1001 13:40:03.745000 140703168014144 torch/distributed/elastic/multiprocessing/api.py:858] Sending process 457152 closing signal SIGTERM",
    "W1001 13:40:03.745000 140703168014144 torch/distributed/elastic/multiprocessing/api.py:858] Sending process 457153 closing signal SIGTERM",
    "E1001 13:40:03.910000 140703168014144 torch/distributed/elastic/multiprocessing/api.py:833] failed (exitcode: 1) local_rank: 3 (pid: 457154) of binary: /home/server/anaconda3/envs/medicalgpt/bin/python",
    "Traceback (most recent call last):",
    '  File "/home/server/anaconda3/envs/medicalgpt/bin/torchrun", line 8, in <module>',
    "    sys.exit(main())",
    "             ^^^^^^",
    '  File "/home/server/anaconda3/envs/medicalgpt/lib/python3.11/site-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 348, in wrapper',
    "    return f(*args, **kwargs)",
    "           ^^^^^^^^^^^^^^^^^^",
    '  File "/home/server/anaconda3/envs/medicalgpt/lib/python3.11/site-packages/torch/distributed/run.py", line 901, in main',
    "    run(args)",
]


def test_a_stack_cut_inside_torch_distributed_s_wrapper_is_a_wait_not_a_crash(tmp_path):
    analysis = analyze_files(tmp_path, {"output.log": WRAPPER_CUT})
    assert (analysis.verdict.finding.kind, analysis.verdict.ranks) == ("collective_timeout", [0])
    assert analysis.verdict.finding.details["departure"] == "main_first"
    # rank 3 exited first only because it gave up waiting: not the cause
    assert all(f.role != "root_cause" for f in analysis.findings if f.kind == "rank_exception")


# huggingface/transformers#17106 (torchrun on one node), verbatim excerpts: several processes'
# stacks interleaved, no header, each entering main_process_first (the frame of it cut); then
# the end of torchrun's summary naming rank 1
INTERLEAVED_ENTRIES = [
    "> main()",
    '  File "./code/gpt2/Model-Compression-Research-Package/examples/transformers/language-modeling/run_clm.py", line 414, in main',
    '  File "./code/gpt2/Model-Compression-Research-Package/examples/transformers/language-modeling/run_clm.py", line 414, in main',
    '  File "./code/gpt2/Model-Compression-Research-Package/examples/transformers/language-modeling/run_clm.py", line 414, in main',
    "    main()",
    '  File "./code/gpt2/Model-Compression-Research-Package/examples/transformers/language-modeling/run_clm.py", line 414, in main',
    '    with training_args.main_process_first(desc="dataset map tokenization"):',
    '  File "/usr/lib/python3.8/contextlib.py", line 113, in __enter__',
    '    with training_args.main_process_first(desc="dataset map tokenization"):',
    '  File "/usr/lib/python3.8/contextlib.py", line 113, in __enter__',
    '    with training_args.main_process_first(desc="dataset map tokenization"):',
    '  File "/usr/lib/python3.8/contextlib.py", line 113, in __enter__',
    '    with training_args.main_process_first(desc="dataset map tokenization"):',
    '  File "/usr/lib/python3.8/contextlib.py", line 113, in __enter__',
    '    with training_args.main_process_first(desc="dataset map tokenization"):',
    '  File "/usr/lib/python3.8/contextlib.py", line 113, in __enter__',
    '    with training_args.main_process_first(desc="dataset map tokenization"):',
    "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
    "Root Cause (first observed failure):",
    "[0]:",
    "  time      : 2022-11-11_07:49:25",
    "  host      : ido-branch-s2n2k-pxvf4",
    "  rank      : 1 (local_rank: 1)",
    "  exitcode  : 1 (pid: 5733)",
    "  error_file: <N/A>",
    "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
]


def test_stacks_cut_at_the_entry_of_main_process_first_are_waits_for_rank_0(tmp_path):
    analysis = analyze_files(tmp_path, {"output.log": INTERLEAVED_ENTRIES})
    assert (analysis.verdict.finding.kind, analysis.verdict.ranks) == ("collective_timeout", [0])
    (exit_report,) = [f for f in analysis.findings if f.kind == "rank_exception"]
    assert exit_report.role != "root_cause"
    assert "most likely the exit ended such a wait" in exit_report.summary


def test_the_main_process_waiting_at_main_process_first_s_exit_blames_no_rank_0(tmp_path):
    # Ascend/pytorch#43, verbatim frames (rank 16, a node's main process, `worker-1:`
    # prefixed) under the header Python prints above every stack, which the paste lost: its
    # barrier is reached from the context's exit, `next(self.gen)` in `__exit__`: its own
    # first work is done and it waits for the others, not they for rank 0
    stack = (THREADS / "ascend_pytorch43_barrier_task_timeout.log").read_text().splitlines()
    lines = ["worker-1: Traceback (most recent call last):", *stack]
    analysis = analyze_files(tmp_path, {"train.log": lines})
    assert not [f for f in analysis.findings if f.details.get("departure") == "main_first"]
    assert analysis.verdict.finding.kind == "collective_timeout"


# hiyouga/LlamaFactory#360, verbatim as far as the thread's excerpt goes: rank 0's tokenizer
# at 88% after 29:55, another rank's traceback glued after the bar and cut at the entry of
# main_process_first, no other line
CUT_AT_THE_ENTRY_ALONE = [
    "Running tokenizer on dataset:  88%|████████▊ | 383700/433643 [29:55<03:25, 2432.70 examples/s]Traceback (most recent call last):",
    '  File "/workspace/LLaMA-Efficient-Tuning-dev/src/train_bash.py", line 14, in <module>',
    "    main()",
    '  File "/workspace/LLaMA-Efficient-Tuning-dev/src/train_bash.py", line 5, in main',
    "    run_exp()",
    '  File "/workspace/LLaMA-Efficient-Tuning-dev/src/llmtuner/tuner/tune.py", line 21, in run_exp',
    "    run_sft(model_args, data_args, training_args, finetuning_args, callbacks)",
    '  File "/workspace/LLaMA-Efficient-Tuning-dev/src/llmtuner/tuner/sft/workflow.py", line 28, in run_sft',
    '    dataset = preprocess_dataset(dataset, tokenizer, data_args, training_args, stage="sft")',
    '  File "/workspace/LLaMA-Efficient-Tuning-dev/src/llmtuner/dsets/preprocess.py", line 160, in preprocess_dataset',
    '    with training_args.main_process_first(desc="dataset map pre-processing"):',
    '  File "/workspace/local/anaconda3/envs/llama_etuning_py310/lib/python3.10/contextlib.py", line 135, in __enter__',
    "    return next(self.gen)",
]


def test_a_stack_cut_entering_main_process_first_is_a_wait_not_a_crash_of_its_own(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": CUT_AT_THE_ENTRY_ALONE})
    assert (analysis.verdict.finding.kind, analysis.verdict.ranks) == ("collective_timeout", [0])
    assert "rank_exception" not in kinds(analysis)


# LianjiaTech/BELLE#542, verbatim (the paste stops at the barrier): rank 0's bar grouping texts
# at 29% after ten hours, a waiting rank's traceback in the barrier of transformers' older
# torch_distributed_zero_first
ZERO_FIRST_WAIT = [
    "Grouping texts in chunks of 1024:  29%|██▉       | 3362000/11407235 [10:03:35<25:22:33, 88.07 examples/s]Traceback (most recent call last):",
    '  File "src/entry_point/pt_train.py", line 481, in <module>',
    "    main()",
    '  File "src/entry_point/pt_train.py", line 317, in main',
    "    with torch_distributed_zero_first(global_rank):",
    '  File "/home/wanghw/miniconda3/envs/llm_torch_2.0.1/lib/python3.8/contextlib.py", line 113, in __enter__',
    "    return next(self.gen)",
    '  File "/home/wanghw/miniconda3/envs/llm_torch_2.0.1/lib/python3.8/site-packages/transformers/trainer_pt_utils.py", line 251, in torch_distributed_zero_first',
    "    dist.barrier()",
]


def test_a_wait_inside_torch_distributed_zero_first_names_rank_0(tmp_path):
    analysis = analyze_files(tmp_path, {"pt_train.log": ZERO_FIRST_WAIT})
    busy = analysis.verdict.finding
    assert (busy.kind, analysis.verdict.ranks) == ("collective_timeout", [0])
    assert busy.details["departure"] == "main_first"
    # its frames are a wait in the barrier, not a failure of its own
    assert "rank_exception" not in kinds(analysis)
    # the context is told by its own name, in both languages
    assert "inside torch_distributed_zero_first:" in busy.summary
    assert "inside torch_distributed_zero_first when" in analysis.verdict.headline
    assert english_runs(translate(busy.summary, "zh")) == []
    assert english_runs(translate_headline(analysis.verdict.headline, "zh")) == []
