"""Where each rank's main thread stood, grouped: from the real py-spy dumps of the hung
`pyspy_hang` job (sample_logs/; rank 2 waits in the epoch-end barrier while ranks 0, 1, 3
wait in backward) and of a lock wait (tests/data/dumps/lock_wait), placed as ranks' dumps."""

from __future__ import annotations

import shutil
from pathlib import Path

from logforensics.api import analyze
from logforensics.i18n import translate, translate_headline
from logforensics.registry import diagnosis
from tests.conftest import ROOT, SAMPLE_LOGS
from tests.test_i18n import english_runs

DUMPS = SAMPLE_LOGS / "pyspy_hang" / "logs" / "pyspy"
LOCK = ROOT / "tests" / "data" / "dumps" / "lock_wait" / "plain.txt"
LOG = "{'rank': %d, 'local_rank': %d, 'device': %d, 'world_size': 4}"


def job(tmp_path: Path, dump_of: dict[int, Path]) -> Path:
    """Four ranks' mapping prints and the dump given for each rank (`stacks/rank<r>.txt`)."""
    root = tmp_path / "logs"
    (root / "stacks").mkdir(parents=True)
    for rank, dump in dump_of.items():
        (root / f"rank{rank}.log").write_text(LOG % (rank, rank, rank) + "\n")
        shutil.copy(dump, root / "stacks" / f"rank{rank}.txt")
    return root


def analyze_copy(folder: Path, tmp_path: Path):
    """`analyze` on a copy of a dump folder, its README left out."""
    root = tmp_path / "logs"
    shutil.copytree(folder, root)
    (root / "README.md").unlink()
    return analyze(root)


def stuck_location(analysis):
    (found,) = [f for f in analysis.findings if f.kind == "stuck_location"]
    return found


def test_the_rank_that_stands_elsewhere_is_the_suspect(tmp_path):
    analysis = analyze(job(tmp_path, {rank: DUMPS / f"rank{rank}.txt" for rank in range(4)}))
    found = stuck_location(analysis)
    assert (found.part, found.ranks, found.confidence) == ("departure", [2], "high")
    assert diagnosis(found) == "stage_divergence"  # the report's kind
    assert "rank 2 in dist.barrier at train (dumps_train.py:267)" in found.summary
    assert "ranks 0, 1, 3 wait in backward" in found.summary
    # the evidence quotes the dumps' own lines
    for evidence in found.evidence:
        lines = (tmp_path / "logs" / evidence.file).read_text().splitlines()
        assert lines[evidence.line - 1] == evidence.text
    assert analysis.verdict.finding is found


def test_ranks_all_at_one_place_are_context(tmp_path):
    analysis = analyze(job(tmp_path, dict.fromkeys(range(4), DUMPS / "rank0.txt")))
    found = stuck_location(analysis)
    assert (found.part, found.severity) == ("context", "info")
    assert diagnosis(found) == "last_common_stage"  # the place they share
    assert "do not single out a rank" in found.summary


def test_two_groups_of_two_name_no_suspect(tmp_path):
    dumps = {
        0: DUMPS / "rank0.txt",
        1: DUMPS / "rank0.txt",
        2: DUMPS / "rank2.txt",
        3: DUMPS / "rank2.txt",
    }
    found = stuck_location(analyze(job(tmp_path, dumps)))
    assert (found.part, found.severity) == ("context", "warning")
    assert diagnosis(found) == "stage_divergence"  # no place they share
    assert "none held by most of them" in found.summary


def test_a_rank_blocked_on_a_lock_names_the_threads_that_may_hold_it(tmp_path):
    dumps = {0: DUMPS / "rank0.txt", 1: DUMPS / "rank1.txt", 2: DUMPS / "rank3.txt", 3: LOCK}
    found = stuck_location(analyze(job(tmp_path, dumps)))
    assert found.ranks == [3]
    assert 'one may hold it: "checkpoint-writer" (active+gil) at holder (lockhang.py:7)' in (
        found.summary
    )


SPLIT = ROOT / "tests" / "data" / "dumps" / "deepspeed_7461"


def test_dumps_no_rank_claims_waiting_in_different_collectives_are_a_mismatch(tmp_path):
    analysis = analyze_copy(SPLIT, tmp_path)
    verdict = analysis.verdict.finding
    assert (verdict.kind, verdict.ranks, verdict.blames_nobody) == ("collective_mismatch", [], True)
    assert "dist.all_reduce" in verdict.summary
    assert "dist.reduce_scatter_tensor" in verdict.summary
    assert {evidence.file for evidence in verdict.evidence} == {
        "step_all_reduce.txt",
        "backward_reduce_scatter.txt",
    }


def test_dumps_no_rank_claims_waiting_in_one_collective_are_no_mismatch(tmp_path):
    root = tmp_path / "logs"
    root.mkdir()
    for name in ("a.txt", "b.txt"):
        shutil.copy(SPLIT / "step_all_reduce.txt", root / name)
    analysis = analyze(root)
    assert analysis.verdict.finding.kind == "stuck_location"
    assert analysis.verdict.headline.startswith("Both processes dumped hung waiting in dist.")


ZERO3_BACKWARD = ROOT / "tests" / "data" / "dumps" / "deepspeed_6524"


def test_several_unclaimed_stacks_in_one_wait_say_the_job_hung_there(tmp_path):
    # deepspeedai/DeepSpeed#6524 (tests/data/dumps/deepspeed_6524): two processes' dumps, both
    # in ZeRO-3's backward under the job's own training loop
    analysis = analyze_copy(ZERO3_BACKWARD, tmp_path)
    (tmp_path / "one").mkdir()
    shutil.copy(ZERO3_BACKWARD / "pyspy_pid4886.txt", tmp_path / "one")
    verdict = analysis.verdict
    hung = verdict.finding
    assert (hung.kind, hung.ranks, hung.blames_nobody) == ("stuck_location", [], True)
    # nothing in the dumps shows a departure: where they wait is where the job stopped
    assert diagnosis(hung) == "last_common_stage"
    assert diagnosis(hung) == diagnosis(analyze(tmp_path / "one").verdict.finding)
    assert verdict.headline == (
        "Both processes dumped hung waiting in backward (DeepSpeed's gradient reduction)"
    )
    # the job's own frame, not DeepSpeed's or accelerate's, is where they stand
    assert (
        "at training_loop (src/compactifai_back/healing/scripts/fine_tune_accelerate.py:411)"
        in (hung.summary)
    )
    assert english_runs(translate(hung.summary, "zh")) == []
    assert english_runs(translate_headline(verdict.headline, "zh")) == []


# deepspeedai/DeepSpeed#860, verbatim (the first ten lines of stas00's faulthandler dump of the
# one hung process: ZeRO-3 inference whose ranks ran different numbers of forward passes)
ZERO3_FETCH = """\
Thread 0x00007f57caf71740 (most recent call first):
  File "/home/stas/anaconda3/envs/main-38/lib/python3.8/site-packages/torch/cuda/streams.py", line 95 in synchronize
  File "/mnt/nvme1/code/github/00optimize/DeepSpeed/deepspeed/runtime/zero/stage3.py", line 490 in _synchronize_communication
  File "/mnt/nvme1/code/github/00optimize/DeepSpeed/deepspeed/runtime/zero/stage3.py", line 406 in fetch_sub_module
  File "/mnt/nvme1/code/github/00optimize/DeepSpeed/deepspeed/runtime/zero/stage3.py", line 1139 in pre_sub_module_forward_function
  File "/mnt/nvme1/code/github/00optimize/DeepSpeed/deepspeed/runtime/zero/stage3.py", line 1071 in _pre_forward_module_hook
  File "/home/stas/anaconda3/envs/main-38/lib/python3.8/site-packages/torch/nn/modules/module.py", line 881 in _call_impl
  File "/mnt/nvme1/code/huggingface/transformers-ds-zero-3/src/transformers/models/t5/modeling_t5.py", line 451 in project
  File "/mnt/nvme1/code/huggingface/transformers-ds-zero-3/src/transformers/models/t5/modeling_t5.py", line 474 in forward
  File "/home/stas/anaconda3/envs/main-38/lib/python3.8/site-packages/torch/nn/modules/module.py", line 892 in _call_impl
"""  # noqa: E501 -- verbatim


def test_the_one_unclaimed_stack_waiting_in_a_collective_says_the_job_hung_there(tmp_path):
    (tmp_path / "dump.txt").write_text(ZERO3_FETCH)
    analysis = analyze(tmp_path)
    hung = analysis.verdict.finding
    assert (hung.kind, hung.ranks, hung.blames_nobody) == ("stuck_location", [], True)
    assert "DeepSpeed ZeRO-3's parameter fetch" in hung.summary
    assert "stage3.py:490" in hung.summary and hung.confidence == "low"
    assert analysis.verdict.headline.startswith("The one process dumped hung waiting in")


def test_the_one_unclaimed_stack_outside_a_collective_says_nothing(tmp_path):
    # the same stack cut below the model's own forward: a thread computing, no wait
    own_code = [line for line in ZERO3_FETCH.splitlines() if "deepspeed" not in line.lower()]
    (tmp_path / "dump.txt").write_text("\n".join(own_code[:1] + own_code[2:]) + "\n")
    analysis = analyze(tmp_path)
    assert not [f for f in analysis.findings if f.kind == "stuck_location"]


TR11_EVAL = ROOT / "tests" / "data" / "dumps" / "bigscience_tr11_eval"


def test_the_one_unclaimed_process_outside_any_collective_is_where_the_job_stopped(tmp_path):
    # bigscience's tr11 eval hang (tests/data/dumps/bigscience_tr11_eval): one process blocked
    # in the DataLoader's queue, the others in broadcast, all_reduce and recv
    analysis = analyze_copy(TR11_EVAL, tmp_path)
    found = analysis.verdict.finding
    assert (found.kind, found.part) == ("stuck_location", "departure")
    assert "the DataLoader (waiting for a batch)" in found.summary
    assert [evidence.file for evidence in found.evidence] == ["trace-node48.out"]
    # (the job's own frame, Megatron's training loop, not DeepSpeed's pipeline engine below it)
    assert analysis.verdict.headline.startswith(
        "A process is stuck in the DataLoader (waiting for a batch) at evaluate "
        "(megatron/training.py:983)"
    )


PREQUEL_SPLIT = ROOT / "tests" / "data" / "dumps" / "bigscience_prequel_split"


def test_unclaimed_stacks_split_between_a_collective_and_elsewhere_say_so(tmp_path):
    # bigscience's prequel hang (tests/data/dumps/bigscience_prequel_split): one stack in
    # DeepSpeed's loss broadcast, one back in Megatron's train loop, no side the fewer
    analysis = analyze_copy(PREQUEL_SPLIT, tmp_path)
    found = analysis.verdict.finding
    assert (found.kind, found.severity, found.ranks) == ("stuck_location", "error", [])
    # (the job's own frame, Megatron's train step, not DeepSpeed's pipeline engine below it)
    assert "1 process waits in dist.broadcast at train_step (megatron/training.py:436)" in (
        found.summary
    )
    assert "outside any collective at train (megatron/training.py:915)" in found.summary
    assert {evidence.line for evidence in found.evidence} == {2, 10}
    assert analysis.verdict.headline.startswith("The stack dumps show the processes apart")


def test_unclaimed_stacks_all_outside_collectives_still_say_nothing(tmp_path):
    # the train-loop stack alone, twice: no process waits for another
    root = tmp_path / "logs"
    root.mkdir()
    stack = (PREQUEL_SPLIT / "pyspy_node.log").read_text().split("\n\n")[0]
    (root / "pyspy_node.log").write_text(stack + "\n\n" + stack.replace("835990", "835991"))
    assert analyze(root).verdict is None


LHOTSE = ROOT / "tests" / "data" / "dumps" / "lhotse_1146"


def test_the_one_unclaimed_stack_waiting_for_its_dataloader_is_where_it_stopped(tmp_path):
    # lhotse-speech/lhotse#1146: one spawned trainer dumped at the end of an epoch, its main
    # thread on its DataLoader's queue; no rank in the dump
    analysis = analyze_copy(LHOTSE, tmp_path)
    found = analysis.verdict.finding
    assert (found.kind, found.part, found.ranks) == ("stuck_location", "departure", [])
    assert "the DataLoader (waiting for a batch) at train_one_epoch (train.py:939)" in (
        found.summary
    )
    assert [evidence.line for evidence in found.evidence] == [15]
    assert analysis.verdict.headline == (
        "The one process dumped hung waiting in the DataLoader (waiting for a batch)"
    )
    assert english_runs(translate(found.summary, "zh")) == []
