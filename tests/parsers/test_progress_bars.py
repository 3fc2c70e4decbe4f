"""tqdm bars: counts, and the rank, epoch and world size a description names."""

from __future__ import annotations

from tests.builders import analyze_files, parse

# speechbrain/speechbrain#2401, verbatim: bars with a `set_postfix` after the rate, and a bar
# without one; the last (0/160) is where the hang began
SPEECHBRAIN = [
    "100%|██████████| 160/160 [00:01<00:00, 149.47it/s, train_loss=0.68] ",
    "100%|██████████| 40/40 [00:00<00:00, 1391.75it/s]",
    "  0%|          | 0/160 [00:00<?, ?it/s, train_loss=0.625]",
]


def test_bars_with_a_postfix_are_read_like_the_others():
    bars = parse(SPEECHBRAIN).filter(event="progress_bar").sort("line")
    assert bars.get_column("values").to_list() == [[160, 160], [40, 40], [0, 160]]


def test_a_description_names_the_rank_and_epoch():
    # sample_logs/tqdm_rank_bars_uneven, a real run here
    line = "Epoch 0, Rank 2, world_size 3:  92%|#########2| 12/13 [00:21<00:01,  1.82s/batch]"
    (bar,) = parse([line]).filter(event="progress_bar").iter_rows(named=True)
    assert (bar["rank"], bar["epoch"], bar["world_size"], bar["values"]) == (2, 0, 3, [12, 13])


def test_a_bar_over_an_iterable_of_no_length_is_its_count_and_names_its_rank(tmp_path):
    # meta-pytorch/torchrec#189, verbatim: tqdm over a loader without a length prints the
    # count, its unit, the elapsed time and the rate; the description names the rank
    lines = [
        "Epoch 9, Rank 7, world_size 8: 35batch [00:03, 10.54batch/s]",
        "Epoch 9, Rank 4, world_size 8: 26batch [30:06, 69.48s/batch]",
    ]
    bars = parse(lines).filter(event="progress_bar").sort("line")
    assert bars.select("rank", "epoch", "world_size", "values").rows() == [
        (7, 9, 8, [35, None]),
        (4, 9, 8, [26, None]),
    ]
    analysis = analyze_files(tmp_path, {"log.txt": lines})
    assert set(analysis.job.ranks_seen) == {4, 7}


def test_a_time_in_brackets_alone_is_no_bar():
    lines = ["Saved checkpoint 3 [00:03, 2.0 GB/s]", "step 12 [0:00:03, lr 0.1]"]
    assert parse(lines).filter(event="progress_bar").is_empty()


def test_ultralytics_own_bar_without_brackets_is_a_bar(tmp_path):
    # ultralytics/ultralytics#24536, verbatim: the bar of ultralytics >= 8.3 (counts, rate and
    # `elapsed<remaining` without tqdm's brackets) under its column header
    lines = [
        "Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size",
        "1/200      23G      1.663     0.9309   0.003412         40       1600: 95% ━━━━━━━━━━━─ 41/43 2.7it/s 15.5s<0.7s",
    ]
    bars = parse(lines).filter(event="progress_bar")
    assert bars.select("line", "values").rows() == [(2, [41, 43])]
    # a job's progress, not an input refused as no log: no failure shown
    assert analyze_files(tmp_path, {"train.log": lines}).verdict is None
