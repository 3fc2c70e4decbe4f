# ruff: noqa: E501 -- test data are verbatim log lines
"""Every rank announced joining the process group, and the logs end there."""

from __future__ import annotations

from logforensics.i18n import translate, translate_headline
from tests.builders import analyze_files, kinds
from tests.conftest import SAMPLE_LOGS
from tests.test_i18n import english_runs

# threestudio-project/threestudio#81, verbatim (the end of the paste): four Lightning ranks set
# their seeds and start joining, then nothing more is printed and nothing fails
LIGHTNING_JOINING = [
    "[INFO] HPU available: False, using: 0 HPUs",
    "[rank: 0] Global seed set to 0",
    "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/4",
    "[rank: 1] Global seed set to 0",
    "[rank: 3] Global seed set to 0",
    "[rank: 2] Global seed set to 0",
    "[rank: 3] Global seed set to 0",
    "Initializing distributed: GLOBAL_RANK: 3, MEMBER: 4/4",
    "[rank: 2] Global seed set to 0",
    "Initializing distributed: GLOBAL_RANK: 2, MEMBER: 3/4",
    "[rank: 1] Global seed set to 0",
    "Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/4",
]
# ray-project/ray#23060, verbatim: five Ray Train workers on two hosts (NCCL) set up their
# group, the driver names its results folder, and the job hangs
RAY_TRAIN_JOINING = [
    "2022-03-11 01:47:20,988\tINFO trainer.py:199 -- Trainer logs will be logged in: /home/gpu1/ray_results/train_2022-03-11_01-47-20",
    "(BaseWorkerMixin pid=20102, ip=10.0.100.15) 2022-03-11 01:47:25,905\tINFO torch.py:66 -- Setting up process group for: env:// [rank=0, world_size=5]",
    "(BaseWorkerMixin pid=25342, ip=10.0.100.14) 2022-03-11 01:47:25,982\tINFO torch.py:66 -- Setting up process group for: env:// [rank=1, world_size=5]",
    "(BaseWorkerMixin pid=25344, ip=10.0.100.14) 2022-03-11 01:47:25,988\tINFO torch.py:66 -- Setting up process group for: env:// [rank=3, world_size=5]",
    "(BaseWorkerMixin pid=25343, ip=10.0.100.14) 2022-03-11 01:47:25,984\tINFO torch.py:66 -- Setting up process group for: env:// [rank=2, world_size=5]",
    "(BaseWorkerMixin pid=25345, ip=10.0.100.14) 2022-03-11 01:47:26,044\tINFO torch.py:66 -- Setting up process group for: env:// [rank=4, world_size=5]",
    "2022-03-11 01:47:26,132\tINFO trainer.py:205 -- Run results will be logged in: /home/gpu1/ray_results/train_2022-03-11_01-47-20/run_001",
]

# implus/UM-MAE#12, verbatim (one node's console, "stuck here for each node"): the MAE code's
# print before `init_process_group`, no world size in it
MAE_JOINING = [
    "*****************************************",
    "| distributed init (rank 5): env://, gpu 5",
    "| distributed init (rank 3): env://, gpu 3",
    "| distributed init (rank 1): env://, gpu 1",
    "| distributed init (rank 0): env://, gpu 0",
    "| distributed init (rank 4): env://, gpu 4",
    "| distributed init (rank 7): env://, gpu 7",
    "| distributed init (rank 2): env://, gpu 2",
    "| distributed init (rank 6): env://, gpu 6",
]

# XuezheMax/apollo#4, verbatim (the start of a fairseq log whose training went on): fairseq says
# each rank's `init_process_group` returned
FAIRSEQ_JOINED = [
    "2020-10-18 02:33:50 | INFO | fairseq.distributed_utils | distributed init (rank 0): tcp://localhost:17289",
    "2020-10-18 02:33:50 | INFO | fairseq.distributed_utils | distributed init (rank 3): tcp://localhost:17289",
    "2020-10-18 02:33:50 | INFO | fairseq.distributed_utils | initialized host learnfair0892 as rank 3",
    "2020-10-18 02:33:50 | INFO | fairseq.distributed_utils | distributed init (rank 6): tcp://localhost:17289",
    "2020-10-18 02:33:50 | INFO | fairseq.distributed_utils | initialized host learnfair0892 as rank 6",
    "2020-10-18 02:33:50 | INFO | fairseq.distributed_utils | distributed init (rank 1): tcp://localhost:17289",
    "2020-10-18 02:33:50 | INFO | fairseq.distributed_utils | initialized host learnfair0892 as rank 1",
    "2020-10-18 02:33:50 | INFO | fairseq.distributed_utils | distributed init (rank 5): tcp://localhost:17289",
    "2020-10-18 02:33:50 | INFO | fairseq.distributed_utils | initialized host learnfair0892 as rank 5",
    "2020-10-18 02:33:50 | INFO | fairseq.distributed_utils | distributed init (rank 2): tcp://localhost:17289",
    "2020-10-18 02:33:50 | INFO | fairseq.distributed_utils | initialized host learnfair0892 as rank 2",
    "2020-10-18 02:33:50 | INFO | fairseq.distributed_utils | distributed init (rank 4): tcp://localhost:17289",
]


# facebookresearch/fairseq#247, verbatim (the start of a paste from a run that trained; the
# argument dump's first physical line): fairseq silences every rank but the first once the
# group is up, and the first prints its arguments
FAIRSEQ_WENT_ON = [
    "| distributed init (rank 0): tcp://localhost:19097",
    "| distributed init (rank 2): tcp://localhost:19097",
    "| distributed init (rank 3): tcp://localhost:19097",
    "| distributed init (rank 1): tcp://localhost:19097",
    "Namespace(adam_betas='(0.9, 0.98)', adam_eps=1e-08, arch='transformer_vaswani_wmt_en_de_big', attention_dropout=0.0, clip_norm=0.0, criterion='label_smoothed_cross_entropy', data='out/WMT14-ende/', decoder_attention_heads=16, decoder_embed_dim=1024, decoder_embed_path=None, decoder_ffn_embed_dim=4096, decoder_layers=6, decoder_learned_pos=False, decoder_normalize_before=False, device_id=0, distributed_backend='nccl', distributed_init_method='tcp://localhost:19097', distributed_port=-1, distributed_rank=0, distributed_world_size=4, dropout=0.3, encoder_attention_heads=16, encoder_embed_dim=1024, encoder_embed_path=None, encoder_ffn_embed_dim=4096, encoder_layers=6, encoder_learned_pos=False, encoder_normalize_before=False, fp16=True, keep_interval_updates=-1, label_smoothing=0.1, left_pad_source='True', left_pad_target='False', log_format=None, log_interval=1000, lr=[0.0005], lr_scheduler='inverse_sqrt', lr_shrink=0.1, max_epoch=0, max_sentences=None, max_sentences_valid=None, max_sourc",
]


def test_every_rank_joining_and_then_silence_is_a_hang_in_the_group_s_set_up(tmp_path):
    verdict = analyze_files(tmp_path, {"train.log": LIGHTNING_JOINING}).verdict
    assert verdict is not None
    assert (verdict.finding.kind, verdict.ranks) == ("last_common_stage", [])
    assert verdict.finding.ranks == [0, 1, 2, 3]
    assert verdict.headline.startswith("All 4 ranks hung joining the process group")
    assert "MASTER_ADDR" in verdict.finding.fix
    assert {e.line for e in verdict.finding.evidence} == {3, 12}
    ray = analyze_files(tmp_path / "ray", {"driver.log": RAY_TRAIN_JOINING}).verdict
    assert ray is not None and ray.finding.kind == "last_common_stage"
    assert ray.finding.ranks == [0, 1, 2, 3, 4]
    # no world stated: every rank the logs show, from 0 on, and said so
    mae = analyze_files(tmp_path / "mae", {"node0.out": MAE_JOINING}).verdict
    assert mae is not None and mae.finding.ranks == list(range(8))
    assert mae.headline.startswith("Every rank in the logs hung joining the process group")
    # ranks that do not start at 0 may be one node's of several whose first never joined
    later = [line.replace("(rank ", "(rank 1") for line in MAE_JOINING]
    assert analyze_files(tmp_path / "later", {"node1.out": later}).verdict is None


def test_a_group_that_came_up_or_a_rank_that_never_announced_is_no_such_hang(tmp_path):
    # a run here (sample_logs/lightning_rank_exception): Lightning says the group came up
    console = (SAMPLE_LOGS / "lightning_rank_exception/logs/console.log").read_text()
    started = console.splitlines()[:8]
    assert "All distributed processes registered. Starting with 2 processes" in started
    assert analyze_files(tmp_path, {"console.log": started}).verdict is None
    # fairseq saying the ranks' groups came up (the paste cut there)
    assert analyze_files(tmp_path / "fairseq", {"train.log": FAIRSEQ_JOINED}).verdict is None
    # rank 1's announcement left out: not every rank of the world is there
    three = [line for line in LIGHTNING_JOINING if "GLOBAL_RANK: 1," not in line]
    assert "last_common_stage" not in kinds(analyze_files(tmp_path / "three", {"t.log": three}))
    # the first rank's own output after fairseq's announcements: the group came up
    assert FAIRSEQ_WENT_ON[-1].startswith("Namespace(")
    assert analyze_files(tmp_path / "fs247", {"train.log": FAIRSEQ_WENT_ON}).verdict is None
    assert analyze_files(tmp_path / "fs247cut", {"t.log": FAIRSEQ_WENT_ON[:4]}).verdict
    # the logs going on past the announcements show something else
    longer = LIGHTNING_JOINING + ["[rank: 1] Global seed set to 0"] * 20
    assert analyze_files(tmp_path / "longer", {"t.log": longer}).verdict is None


def test_the_hang_in_set_up_reads_in_chinese(tmp_path):
    verdict = analyze_files(tmp_path, {"train.log": LIGHTNING_JOINING}).verdict
    mae = analyze_files(tmp_path / "mae", {"node0.out": MAE_JOINING}).verdict
    assert english_runs(translate(mae.finding.summary, "zh")) == []
    assert english_runs(translate_headline(mae.headline, "zh")) == []
    assert english_runs(translate(verdict.finding.summary, "zh")) == []
    assert english_runs(translate(verdict.finding.fix, "zh")) == []
    assert english_runs(translate_headline(verdict.headline, "zh")) == []


# RLHFlow/Online-RLHF#11, verbatim: the three lines the poster quotes as where the terminal
# stops; DeepSpeed's first rank says it creates the torch group, no rank prints anything more
# (the cause: `main_process_port: 0` in the accelerate config)
DEEPSPEED_JOINING = [
    "[2024-06-11 00:23:36,254] [INFO] [comm.py:637:init_distributed] cdb=None",
    "[2024-06-11 00:23:36,254] [INFO] [comm.py:668:init_distributed] Initializing TorchBackend in DeepSpeed with backend nccl",
    "[2024-06-11 00:23:36,296] [INFO] [comm.py:637:init_distributed] cdb=None",
]


def test_logs_that_end_as_the_group_is_created_are_a_likely_hang_in_its_set_up(tmp_path):
    verdict = analyze_files(tmp_path, {"console.log": DEEPSPEED_JOINING}).verdict
    assert verdict.finding.kind == "last_common_stage" and verdict.ranks == []
    assert verdict.finding.confidence == "low"
    assert verdict.headline == (
        "The job most likely hung creating its process group; the logs end there with no error"
    )
    assert "MASTER_ADDR:MASTER_PORT" in verdict.finding.fix
    assert not english_runs(translate_headline(verdict.headline, "zh"))
    assert not english_runs(translate(verdict.finding.summary, "zh"))


def test_a_group_created_and_then_used_is_no_such_hang(tmp_path):
    # the same lines, then training: the group came up
    trained = [*DEEPSPEED_JOINING, *(f"{{'loss': 0.{n}, 'epoch': 0.0{n}}}" for n in range(3))]
    trained += [f"[rank{r}]: rank={r} step=0 stage=forward" for r in range(2)]
    analysis = analyze_files(tmp_path, {"console.log": trained})
    assert not any(f.details.get("unranked") for f in analysis.findings)
    # or another file goes on past it
    other = analyze_files(
        tmp_path / "other",
        {
            "console.log": DEEPSPEED_JOINING,
            "rank1.log": [f"step {n}/48 loss=0.1" for n in range(5)],
        },
    )
    assert not any(f.details.get("unranked") for f in other.findings)


# wenet-e2e/wenet#812, verbatim: 8 machines x 8 GPUs; each process's word before
# `init_process_group` (its local GPU, no rank), then nothing (solved by gloo -> nccl)
WENET_JOINING = [
    "2021-11-24 08:11:49,857 INFO training on multiple gpus, this gpu 7",
    "2021-11-24 08:11:49,857 INFO training on multiple gpus, this gpu 5",
    "2021-11-24 08:11:55,954 INFO training on multiple gpus, this gpu 2",
    "2021-11-24 08:11:55,954 INFO training on multiple gpus, this gpu 5",
    "2021-11-24 08:11:55,954 INFO training on multiple gpus, this gpu 4",
    "2021-11-24 08:11:55,954 INFO training on multiple gpus, this gpu 1",
    "2021-11-24 08:11:55,955 INFO training on multiple gpus, this gpu 6",
    "2021-11-24 08:11:55,956 INFO training on multiple gpus, this gpu 0",
    "2021-11-24 08:11:55,957 INFO training on multiple gpus, this gpu 7",
    "2021-11-24 08:11:55,957 INFO training on multiple gpus, this gpu 3",
]


def test_wenet_s_word_before_the_group_and_then_silence_is_the_same_likely_hang(tmp_path):
    verdict = analyze_files(tmp_path, {"console.log": WENET_JOINING}).verdict
    assert verdict.finding.kind == "last_common_stage" and verdict.ranks == []
    assert verdict.finding.details.get("unranked")
