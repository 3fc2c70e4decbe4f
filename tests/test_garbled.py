"""A rank that could not use what a collective handed it (logforensics/garbled.py, reported by
rules/stage_divergence.py)."""

# ruff: noqa: E501 -- test data are verbatim log lines
from __future__ import annotations

from logforensics.i18n import translate, translate_headline
from tests.builders import analyze_files, kinds
from tests.test_i18n import english_runs

# huggingface/accelerate#190, verbatim (vegetable-lion's comment): rank 0 ran inference alone,
# rank 1's RNG sync received bytes of another collective
GARBLED_RNG_STATE = [
    "[rank1]: generator.set_state(rng_state)",
    "[rank1]: RuntimeError: Invalid mt19937 state",
]


def test_a_broadcast_state_that_fails_its_check_blames_the_source_not_the_receiver(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": GARBLED_RNG_STATE})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("stage_divergence", [0])
    assert verdict.finding.details["receivers"] == [1]
    assert verdict.finding.confidence == "low"
    assert "rank_exception" not in kinds(analysis)  # the exception is the symptom
    assert verdict.headline.startswith("Rank 1 got another collective's data from rank 0")
    assert "is_main_process" in verdict.finding.fix


def test_the_source_itself_garbled_blames_nobody(tmp_path):
    lines = [line.replace("[rank1]", "[rank0]") for line in GARBLED_RNG_STATE]
    lines += [line.replace("[rank1]", "[rank2]") for line in GARBLED_RNG_STATE]
    verdict = analyze_files(tmp_path, {"console.log": lines}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("stage_divergence", [])
    assert verdict.finding.details["receivers"] == [0, 2]


# CarperAI/trlx#319, verbatim (cut): the garbled state's exception names no rank; the watchdog
# then reports ranks 2 and 3 in different collectives at one number
UNRANKED_GARBLED = [
    "RuntimeError: Invalid mt19937 state",
    "terminate called after throwing an instance of 'std::runtime_error'",
    "  what():  [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=696, OpType=BROADCAST, Timeout(ms)=1800000) ran for 1802763 milliseconds before timing out.",
    "terminate called after throwing an instance of 'std::runtime_error'",
    "  what():  [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=696, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802485 milliseconds before timing out.",
]


def test_a_garbled_state_no_line_ties_to_a_rank_is_still_the_desync_s_symptom(tmp_path):
    analysis = analyze_files(tmp_path, {"console.log": UNRANKED_GARBLED})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("stage_divergence", [0])
    assert "rank_exception" not in kinds(analysis)
    assert verdict.headline.startswith("A rank got another collective's data from rank 0")


# wxjiao/Data-Rejuvenation#1, verbatim (fairseq under torch.multiprocessing.spawn; the paste
# starts inside the spawned child's report and ends mid-sentence)
UNDECODED_GATHER = [
    "Process 0 terminated with the following error:",
    "Traceback (most recent call last):",
    '  File "/home/luxiuzhi/luxiuzhi/Data-Rejuvenation/fairseq/fairseq/distributed_utils.py", line 177, in all_gather_list',
    "    result.append(pickle.loads(bytes(out_buffer[header_size:header_size + enc_size].tolist())))",
    "_pickle.UnpicklingError: invalid load key, '\\xe2'.",
    "",
    "Exception: Unable to unpickle data from other workers. all_gather_list requires all workers to enter the function together, so this error usually indicates that the workers have fallen out of sync somehow. Workers can fall out of sync if one of them runs out of memory, or if there are other conditions in your training script that can cause one worker to finish an epoch while other workers are still iterating over their portions of the data.",
]


def test_objects_no_worker_could_unpickle_are_a_mismatch_that_blames_nobody(tmp_path):
    analysis = analyze_files(tmp_path, {"train.log": UNDECODED_GATHER})
    verdict = analysis.verdict
    assert (verdict.finding.kind, verdict.ranks) == ("collective_mismatch", [])
    assert verdict.finding.details["departure"] == "undecoded_objects"
    assert verdict.headline == (
        "A process could not unpickle an object collective's data: the ranks were out of step"
    )
    assert "rank_exception" not in kinds(analysis)
    assert english_runs(translate_headline(verdict.headline, "zh")) == []
    for text in (verdict.finding.summary, verdict.finding.fix):
        assert english_runs(translate(text, "zh")) == []


def test_an_unpickling_error_outside_a_collective_is_the_rank_s_own(tmp_path):
    # MCZhi/GameFormer#17, verbatim: a DataLoader worker's unpickling error on rank 6
    lines = [
        '[rank6]:   File "/opt/conda/envs/gameformer/lib/python3.8/site-packages/torch/_utils.py", line 706, in reraise',
        "[rank6]:     raise exception",
        "[rank6]: _pickle.UnpicklingError: Caught UnpicklingError in DataLoader worker process 0.",
    ]
    verdict = analyze_files(tmp_path, {"train.log": lines}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("rank_exception", [6])
