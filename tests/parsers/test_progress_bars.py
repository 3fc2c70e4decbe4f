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
