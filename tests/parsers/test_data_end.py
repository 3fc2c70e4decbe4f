"""Lines that say a rank's data ran out (parsers/data_end.py)."""

from __future__ import annotations

from tests.builders import analyze_files, parsed_by


def test_an_icefall_end_of_dataloader_line_names_its_rank_and_world():
    # lifeiteng/vall-e#86, verbatim
    line = "2023-04-13 16:00:05,621 INFO [trainer.py:650] (5/8) Reaches end of dataloader."
    row = parsed_by("data_end", [line]).row(0, named=True)
    assert (row["event"], row["rank"], row["world_size"]) == ("data_end", 5, 8)


def test_a_rank_beyond_the_world_it_states_is_no_rank():
    # vall-e#86's line with the header's numbers swapped (constructed): log text, not a rank
    line = "2023-04-13 16:00:05,621 INFO [trainer.py:650] (8/5) Reaches end of dataloader."
    row = parsed_by("data_end", [line]).row(0, named=True)
    assert (row["rank"], row["world_size"]) == (None, None)


def test_other_ends_are_not_the_end_of_the_data():
    lines = [
        # open-mmlab/mmdetection#11096, verbatim
        "Loading and preparing results...",
        # Lightning's finish line (pytorch-lightning#14428)
        "`Trainer.fit` stopped: `max_epochs=1` reached.",
        "reached the end of the warmup schedule",  # constructed: not data
    ]
    assert parsed_by("data_end", lines).is_empty()


# FunAudioLLM/CosyVoice#1727, verbatim: the per-step join's barrier failed on ranks 5-7 and 1
UNEVEN_WORKLOAD = [
    "2025-12-19 09:03:13,768 INFO Detected uneven workload distribution: Rank 5 successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.",
    " Original exception:",
    "[../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 1800000ms for recv operation to complete",
    "Break current worker to manually join all workers, world_size 8, current rank 5, current local_rank 5",
    "",
    "2025-12-19 09:03:13,771 INFO Detected uneven workload distribution: Rank 6 successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.",
]


def test_an_uneven_workload_report_is_said_by_a_rank_that_still_had_batches():
    said = parsed_by("data_end", UNEVEN_WORKLOAD)
    assert said.select("event", "rank").rows() == [("uneven_data", 5), ("uneven_data", 6)]


# allenai/allennlp#5030, verbatim (the row of the console's box, its border kept): AllenNLP's
# trainer, the worker whose batches ran out; the job hung at the epoch's end
ALLENNLP_DONE = "0 | 2021-03-02 00:46:12,994 - WARNING - allennlp.training.trainer - Worker 0 completed its entire epoch (training).                      │"


def test_allennlp_s_worker_that_completed_its_epoch_ran_out_of_data(tmp_path):
    said = parsed_by("data_end", [ALLENNLP_DONE])
    assert said.select("event", "rank").rows() == [("data_end", 0)]
    # with the world known and worker 1 never done, worker 0's loader was the shorter
    world = "+ torchrun --nproc_per_node=2 train.py"  # constructed: the launch states 2 workers
    verdict = analyze_files(tmp_path, {"train.log": [world, ALLENNLP_DONE]}).verdict
    assert (verdict.finding.kind, verdict.ranks) == ("loader_size_mismatch", [0])
