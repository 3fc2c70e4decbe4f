"""Nodes whose agents joined different rendezvous (logforensics/rules/rendezvous_split.py)."""

from __future__ import annotations

from pathlib import Path

from logforensics.i18n import translate, translate_headline
from logforensics.registry import diagnosis
from tests.builders import analyze_files, kinds
from tests.test_i18n import english_runs

THREADS = Path(__file__).resolve().parent.parent / "data" / "threads"


def consoles() -> dict[str, list[str]]:
    """ymcui/Chinese-LLaMA-Alpaca-2#274: the two nodes' consoles (tests/data/threads)."""
    return {
        f"{node}.log": (THREADS / f"chinese_llama_alpaca2_274_{node}.log").read_text().splitlines()
        for node in ("master", "worker")
    }


def test_nodes_that_each_made_up_a_run_id_never_met(tmp_path):
    analysis = analyze_files(tmp_path, consoles())
    verdict = analysis.verdict
    assert verdict.finding.kind == "rendezvous_split" and verdict.ranks == []
    assert verdict.finding.blames_nobody
    assert verdict.headline == (
        "The nodes joined 2 different rendezvous and never met; torchrun made up a run id on each"
    )
    assert "`--rdzv-id` being empty" in verdict.finding.summary
    assert "--rdzv-id" in verdict.finding.fix
    # each node's first line naming its id is the evidence
    assert [(e.file, e.line) for e in verdict.finding.evidence] == [
        ("master.log", 7),
        ("worker.log", 7),
    ]
    assert translate_headline(verdict.headline, "zh") != verdict.headline
    for said in (verdict.finding.summary, verdict.finding.fix):
        assert english_runs(translate(said, "zh")) == []


def test_the_report_calls_it_a_missing_rank(tmp_path):
    analysis = analyze_files(tmp_path, consoles())
    assert diagnosis(analysis.verdict.finding) == "missing_rank"


def test_nodes_that_share_one_id_are_no_split(tmp_path):
    logs = consoles()
    master_id = "174580650467654300307713793029077439978"
    worker_id = "304504801270300669882724678499925037384"
    logs["worker.log"] = [line.replace(worker_id, master_id) for line in logs["worker.log"]]
    assert "rendezvous_split" not in kinds(analyze_files(tmp_path, logs))


def test_one_console_of_two_launches_is_no_split(tmp_path):
    # a console holding two ids may be two launches one after the other, not two nodes
    logs = consoles()
    both = [*logs["master.log"], *logs["worker.log"]]
    assert "rendezvous_split" not in kinds(analyze_files(tmp_path, {"console.log": both}))


def test_ids_that_differ_in_a_job_that_did_not_fail_are_no_verdict(tmp_path):
    logs = {name: lines[:7] for name, lines in consoles().items()}  # up to each node's id
    assert analyze_files(tmp_path, logs).verdict is None


# QwenAudio/CosyVoice#241, verbatim: node 0's console, the launch traced by `set -x`, torchrun's
# warning and its traceback, cut by the excerpt
COSYVOICE_241 = [
    "+ torchrun --nnodes=2 --nproc_per_node=1 --node_rank=0 --master_addr=11.214.25.222 --master_port 9999 --rdzv_id=1986 --rdzv_backend=c10d cosyvoice/bin/train.py --train_engine torch_ddp --config conf/cosyvoice.llm.lfe.yaml --train_data data/zeroshot_large/parquet_phoneme/data.list --cv_data data/zeroshot_dev/parquet_phoneme/data.list --model llm --model_dir /apdcephfs_cq8/share_784792/users/yikezhang/public_repo/CosyVoice/examples/libritts/cosyvoice/exp/cosyvoice_lfe_zeroshot_large/llm/torch_ddp --tensorboard_dir /apdcephfs_cq8/share_784792/users/yikezhang/public_repo/CosyVoice/examples/libritts/cosyvoice/tensorboard/cosyvoice_lfe_zeroshot_large/llm/torch_ddp --ddp.dist_backend nccl --num_workers 2 --prefetch 100 --pin_memory --deepspeed_config ./conf/ds_stage2.json --deepspeed.save_states model+optimizer",
    "master_addr is only used for static rdzv_backend and when rdzv_endpoint is not specified.",
    "Traceback (most recent call last):",
    '  File "/usr/local/bin/torchrun", line 8, in <module>',
    "    sys.exit(main())",
    '  File "/usr/local/lib64/python3.8/site-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 346, in wrapper',
    "    return f(*args, **kwargs)",
    '  File "/usr/local/lib64/python3.8/site-packages/torch/distributed/run.py", line 794, in main',
    "    run(args)",
]


def test_a_multi_node_c10d_launch_with_no_endpoint_meets_at_localhost_on_each_node(tmp_path):
    verdict = analyze_files(tmp_path, {"node0.log": COSYVOICE_241}).verdict
    assert verdict.finding.kind == "rendezvous_split" and verdict.finding.blames_nobody
    assert verdict.headline == (
        "The 2 nodes waited in rendezvous of their own; the launch names no --rdzv-endpoint"
    )
    assert "a c10d rendezvous of 2 nodes" in verdict.finding.summary
    assert "--rdzv-endpoint=<host>:<port>" in verdict.finding.fix
    assert [e.line for e in verdict.finding.evidence] == [1]
    assert translate_headline(verdict.headline, "zh") != verdict.headline
    for said in (verdict.finding.summary, verdict.finding.fix):
        assert english_runs(translate(said, "zh")) == []


def test_the_launcher_s_own_stack_cut_at_its_script_is_no_rival_to_the_split(tmp_path):
    # the same console cut after torchrun's first frame: the stack is the launcher's
    verdict = analyze_files(tmp_path, {"node0.log": COSYVOICE_241[:5]}).verdict
    assert verdict.finding.kind == "rendezvous_split"


def test_a_launch_with_its_endpoint_or_on_one_node_is_no_split(tmp_path):
    with_endpoint = COSYVOICE_241[0].replace(
        "--rdzv_backend=c10d", "--rdzv_backend=c10d --rdzv_endpoint=11.214.25.222:9999"
    )
    one_node = COSYVOICE_241[0].replace("--nnodes=2", "--nnodes=1")
    for name, launch in (("endpoint", with_endpoint), ("one_node", one_node)):
        analysis = analyze_files(tmp_path / name, {"node0.log": [launch, *COSYVOICE_241[1:]]})
        assert "rendezvous_split" not in kinds(analysis), name
