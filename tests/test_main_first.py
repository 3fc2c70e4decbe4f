# ruff: noqa: E501 -- test data are verbatim log lines
"""Ranks that gave up waiting for the main process inside `main_process_first`
(logforensics/main_first.py, reported by rules/stage_divergence.py)."""

from __future__ import annotations

from tests.builders import analyze_files, kinds

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
    assert (busy.kind, analysis.verdict.ranks) == ("stage_divergence", [0])
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
