"""Peel launcher prefixes off each line, outside-in, keeping what each prefix says.

A line may carry several prefixes, one per program that relayed it::

    node04: 0: [default3]:[rank3]:[E1218 20:27:21.426 ProcessGroupNCCL.cpp:629] ...
    ^pdsh   ^srun ^torchrun --tee ^PyTorch's own

Each launcher's prefix is one `Framer` in `FRAMERS` (listed in peel order): an anchored regex
with a verbatim example, whose named groups fill the `prefix_*` columns. A framer applies at
most once per line and only after the framers listed before it, so an inner prefix is never
mistaken for an outer one. Formats and sources (see also the regex comments):

- a Markdown or e-mail quote `> ` on most of a file's lines, outermost;
- a paste's or a log viewer's line numbers `[1784] ` (growing from line to line);
- `grep -H` / `grep -r` output: the path of the file each line came from (`rank_3.log:`), read
  for its writer like a file's own path;
- `journalctl` output (`-o short` / `short-iso`: `<time> <host> <ident>[<pid>]: `);
- `kubectl logs --prefix` `[pod/<pod>/<container>] ` (kubernetes/kubectl:pkg/cmd/logs/logs.go)
  and `--timestamps` RFC3339 stamps; CRI node logs `<time> stdout F|P <text>` (Grafana Promtail
  `cri` stage docs), partial (`P`) lines joined with the line that completes them;
- `docker compose logs` `<container>  | ` (the container kept as the node);
- `torchx log`'s `<role>/<replica> ` (a node's launcher, kept as the node);
- pdsh `host: ` (pdsh(1), DeepSpeed's multi-node runner); a runner's `<label> [stderr] `
  (milabench's, the label kept as the node); SLURM `srun --label` task ids
  (srun(1)); Open MPI `--tag-output` `[job,rank]<stdout>:` with the optional
  `--timestamp-output` stamp (orterun(1)), and horovodrun's own `[rank]<stderr>:`; Determined
  AI's `[rank=N] `;
- SkyPilot's node prefixes `(head, rank=0, pid=..)`, `(worker1, rank=1, pid=.., ip=..)` (a node
  rank, kept in `prefix_node` / `prefix_node_index`);
- Ray worker prefixes `(RayTrainWorker pid=.., ip=..)` and `[repeated Nx across cluster]`
  dedup suffixes (Ray "Configuring Logging" docs);
- SGLang's scheduler logger `[<time> TP3] ` (its tensor-parallel rank);
- torchrun `--tee` `[<role><local_rank>]:` (pytorch/pytorch:torch/distributed/elastic/
  multiprocessing/tail_log.py), `TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE` shapes `[3]:` (the
  documented `[${rank}]:`) and `[rank3]: `, and PyTorch's own `[rank3]:` on tracebacks and C++
  log lines (torch >= 2.2);
- torchrun's agent relaying a failed worker's traceback a line per record under its header
  (`E0422 05:07:49.013000 204 torch/distributed/elastic/multiprocessing/api.py:732] `), the
  worker's local rank taken from the record that opens the relay;
- Text Generation Inference's `tracing` records, whose span field `rank=N` closes the record
  (`tracing_spans`);
- noise: ANSI colour codes, tqdm carriage-return progress bars after which a log line starts
  mid-line (the bar is kept in `glued` for the parsers, and the glued line may bring its own
  torchrun `--tee` prefix), trailing carriage returns.

Which prefix states a GLOBAL rank: PyTorch's `[rankN]:` (the innermost wins), a torchrun
template's `[N]:`, an MPI rank, and an srun task id unless the same file shows that the task
wraps a torchrun agent (a `[default3]:` inside it, or a `[rankN]:` that disagrees): then the
task id names a node and is kept in `prefix_node` / `prefix_node_index`, never as a rank. A
torchrun `--tee` prefix states a local rank only; `attribution.attribute` turns it into a
global one when the node's rank offset is known.

Two shapes are ambiguous on their own (`node04: ` could be text, `3: ` could be a list item):
the pdsh and srun framers apply only in files where at least half of the non-blank lines carry
such a prefix.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import polars as pl

from logforensics.hard_wraps import join_hard_wraps
from logforensics.literals import holds_any
from logforensics.tracing_spans import opens_a_span_record, span_ranks
from parsers.nccl import PROCESS as NCCL_PROCESS
from parsers.process_exit import LIGHTNING_CHILD
from parsers.traceback import CONTINUED_RECORD
from parsers.traceback import HEADER as TRACEBACK_HEADER

# What frame_lines adds to `file, line, text`; `message` and the first two are what parsers see.
PREFIX_COLUMNS: dict[str, pl.DataType] = {
    "prefix_rank": pl.Int32(),  # global rank stated by the innermost prefix that states one
    "prefix_local_rank": pl.Int32(),  # torchrun --tee local rank
    "prefix_host": pl.String(),  # pdsh host, kubectl pod, Ray worker ip
    "prefix_pid": pl.Int64(),  # Ray worker pid
    "prefix_node": pl.String(),  # an srun task / MPI process that is a node, not a rank
    "prefix_node_index": pl.Int32(),  # that node's index (srun task id), when it has one
    "prefix_stream": pl.String(),  # stdout / stderr (Open MPI tag, CRI)
    "prefix_time": pl.Datetime("us"),  # launcher stamp (kubectl, CRI, Open MPI); zone dropped
    "prefix_repeats": pl.Int32(),  # Ray dedup: the line stands for this many repeats
    "framing": pl.String(),  # framers applied, outer first: "srun+torchrun_tee+torch_rank"
    "glued": pl.String(),  # a tqdm bar the line began with, a log line glued after it
    "glued_local_rank": pl.Int32(),  # the torchrun local rank the bar was written under
}
FRAME_COLUMNS: tuple[str, ...] = ("message", *PREFIX_COLUMNS)

# A file's ambiguous prefixes (pdsh, srun) count only when they prefix this share of its lines.
AMBIGUOUS_PREFIX_SHARE = 0.5

# (rsyslog writes the escape character as `#033`: `#033[2m#033[33m(raylet)#033[0m`, a node's
# syslog of Ray's coloured output, vllm-project/vllm#1160)
ANSI_ESCAPE = r"(?:\x1b|#033)\[[0-9;?]*[A-Za-z]"
SYSLOG_ESCAPE = "#033["
# RFC3339 as kubectl --timestamps and CRI write it; the zone is dropped like other stamps.
RFC3339 = r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})"

# Nov 30 15:24:03 gpu-node1 python3[5130]: [rank2]: Traceback (most recent call last):
# 2026-11-30T15:24:03+0000 gpu-node1 python3[5130]: ...   (journalctl -o short / short-iso:
# time, host, identifier[pid]; systemd journalctl(1) OUTPUT OPTIONS)
JOURNALCTL = (
    r"(?:(?P<iso>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2}))"
    r"|[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2}) "
    r"(?P<host>[A-Za-z0-9][A-Za-z0-9._-]*) [^\s\[\]:]+\[(?P<pid>\d+)\]: "
)
# [pod/mnist-worker-0/pytorch] [default0]:rank=1 step=3 stage=after_step
# (format "[pod/%s/%s] ", kubernetes/kubectl:pkg/cmd/logs/logs.go addPrefixIfNeeded)
KUBECTL_PREFIX = r"\[pod/(?P<pod>[^/\]\s]+)/(?P<container>[^\]\s]*)\] "
# trainer-1  | [rank1]:[E ProcessGroupNCCL.cpp:475] ...   (`docker compose logs` / `up`: the
# container's name, padded to the longest one, then `| `; Compose v1 `project_trainer_1  | `):
# the container is the writer's node (its name is no host name NCCL would print). Only where it
# prefixes most of a file's lines.
COMPOSE_SERVICE = r"(?P<container>[A-Za-z][\w.-]*) +\| "
# 2019-04-30T02:12:41.8443515Z stdout F message   (Grafana Promtail docs, `cri` stage)
CRI_ENVELOPE = rf"(?P<time>{RFC3339}) (?P<stream>stdout|stderr) (?P<tag>[FP])(?: |$)"
# 2024-05-08T08:47:31.261530427Z [rank0]:[E508 08:47:31.261 ProcessGroupNCCL.cpp:607] ...
# (kubectl logs --timestamps: RFC3339Nano from the API server)
# A program that writes such stamps itself (Text Generation Inference's launcher), run under
# kubectl --timestamps, has two: both are peeled, the program's own time kept.
KUBECTL_TIMESTAMP = rf"(?:(?P<time>{RFC3339}) )+"
#  2025-02-18 12:54 [rank13]:[E218 04:54:22.864467604 ProcessGroupNCCL.cpp:616] [Rank 1] ...
#  2025-02-18 12:54 ncivki7qpk7pmo1btv0h0:174:3274 [1] proxy.cc:1497 NCCL WARN [Service ...
# (a log collector's stamp before what the job wrote, NVIDIA/nccl#1610): peeled only when a
# prefix or line the analyzer knows follows it, so a job's own dated log lines keep their date
# 18:11:06.680 [rank4]:[E205 18:11:06.375750231 ProcessGroupNCCL.cpp:1870] ...  (a log viewer's
# clock alone, modelscope/ms-swift#7992: peeled on the same terms, no time kept)
# 2025-08-12 09:37:02.216313 worker-9 >> :168:1228 [2] NCCL INFO Connected all trees
# (a log shipper's stamp and host, NCCL's own host left out, NVIDIA/nccl#1808)
# 2024-05-22 06:25:20.552227-04:00 Error From <host>: [W socket.cpp:436] [c10d] The server ...
# (a collector's own label after its stamp, pytorch/pytorch#128998: a few words and a colon,
# peeled on the same terms; its "Error" is the collector's, the line's `[W` is PyTorch's)
# 2019-06-02T16:13:44.884Z: [1,12]<stdout>:container-...:815:864 [0] transport/net_ib.cu:80 NCCL
# WARN ...   (a stamp with a colon after it, NVIDIA/nccl#230)
# 2020-01-15 22:42:07 UTC master.0 -- [1,1]<stdout>:plx-somenumberid-worker-0:28:36 [0] NCCL ...
# (Polyaxon's job log: the stamp, its zone and the pod before ` -- `, polyaxon/polyaxon#657)
COLLECTOR_TIME = (
    r" *(?P<stamp>\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?"
    r"(?:Z|[+-]\d{2}:?\d{2})?|\d{2}:\d{2}:\d{2}(?:[.,]\d{1,6})?):? "
    r"(?:(?P<host>[A-Za-z][\w-]*(?:\.[\w-]+)*) >> )?"
    r"(?:(?:[\w<>.-]+ ){0,3}(?:[\w<>.-]+: |-- ))?"
)
AFTER_COLLECTOR_TIME = (
    r"^(?:\[rank\d+\]:|\[\d+,\d+\]<std|[\w.-]*:\d+:\d+ \[\d+\] |[EWIF]\d{4} \d\d:|\[[EWIF]\d{4} "
    r"|\[[EWIF] [\w./-]+\.(?:cpp|cc|h|py):\d+\] "
    r"|\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\] [\w.-]*:\d+:\d+ \["
    # Open MPI's signal handler's report of a crashed process (NVIDIA/nccl#2380, under a
    # Kubernetes console's stamp): `[k8s-slave03:00956] Signal: Segmentation fault (11)`
    r"|\[[\w.-]+:\d+\] (?:\*\*\* |Signal|Failing at|Associated errno|\[ ?\d+\] ))"
)
# 02:21:53 RuntimeError: Broken pipe   (Jenkins' timestamper, pytorch/pytorch#11364)
# Dec 03 17:59:26 Traceback (most recent call last):   (CircleCI's stamp, pytorch/pytorch#30676)
# A CI console's clock on every line, peeled where it stamps most of a file's lines. It names
# no date a time could be placed on (`stamp_of` reads dated stamps only), so none is kept.
CONSOLE_TIME = r"(?:[A-Z][a-z]{2} [ \d]\d )?\d{2}:\d{2}:\d{2}(?:[.,]\d{1,6})? "
# node04: [E ProcessGroupNCCL.cpp:474] [Rank 7] Watchdog caught collective operation timeout
# rdma-test-gpu-worker-1: torch.distributed.DistBackendError: NCCL error in: ...
# A host name here starts with a letter and holds a digit (or is localhost / an IPv4 address),
# which keeps `RuntimeError: ` and `INFO: ` out.
PDSH_HOST = r"(?P<host>[A-Za-z][A-Za-z0-9_-]*\d[A-Za-z0-9._-]*|localhost|\d{1,3}(?:\.\d{1,3}){3}): "
# ray/0 (CommandActor pid=494406)   global_world_sizes=[2]
# trainer/0 [1]:I0210 16:15:39.768000 3837215 .../train.py:830] Training starts ...
# `torchx log`'s `<role>/<replica> ` in front of each line it fetches (pytorch/torchx#1008,
# #492); the replica is one node's launcher, numbered by torchx, not a rank. NeMo-Run's local
# executor names the role after the task, dots and all (NVIDIA-NeMo/Speech#14348):
# i.pretrain/0 [default2]:[rank2]: RuntimeError: Rank 2, node dcfai-xe9680-01, device 2, ...
TORCHX_REPLICA = r"(?P<role>[A-Za-z_][\w.-]*)/(?P<replica>\d+) "
# 11: [rank11]:[E617 15:17:35.519071987 ProcessGroupNCCL.cpp:681] [Rank 11] Some NCCL ...
# space-padded ` 3: ` (format "P%u %*d: " / "%*d: "), zero-padded `03: ` (older
# write_labelled_message.c), heterogeneous jobs `P0 3: ` (srun(1) --label)
SRUN_LABEL = r"(?:P(?P<het>\d+) )? *(?P<task>\d+): "
# [0] [rank0]:[W416 22:45:40.723224165 reducer.cpp:69] Warning: measureDifference between two ...
# MPICH / Intel MPI Hydra's `mpirun -l` (`-prepend-rank`): the process's rank in brackets
# (intel/intel-extension-for-pytorch#810). NCCL lines cut down to their device (`[0] NCCL INFO`,
# NVIDIA/nccl#1612) start alike and are not taken for it.
MPI_RANK_LABEL = r"\[(?P<task>\d{1,7})\] "
NCCL_BODY = r"^(?:[\w./-]+\.(?:cc|cu|h):\d+ )?NCCL "
# [1,3]<stdout>:smc-gpu-03:29881:30401 [0] NCCL INFO init.cc:903 -> 5
# Fri Aug 11 12:31:45 2023[1,0]<stdout>:tomte401:1850301:1881341 [0] transport.cc:154 NCCL WARN
# (format "%s[%s,%s]<%s>: ", the first %s is --timestamp-output; orterun(1), Open MPI 4.1)
# [0]<stderr>:RuntimeError: check_rank and exit epoch=1 batch=0 start_rank=0 rank=0
# [1,mpirank:9,algo-2]<stdout>:  File "/opt/mmclassification/mmcls/datasets/cifar.py", ...
# (SageMaker's mpirun, the rank and the host named: open-mmlab/mmpretrain#1188,
# aws-samples/sagemaker-distributed-training-workshop#6)
# (horovodrun's own launcher, gloo: "{time}[{index}]<{stream}>:{line}" with the rank as index,
# horovod/runner/common/util/safe_shell_exec.py prefix_connection; horovod/horovod#2907)
# Tags one after another with nothing between them: a process's empty write, then the one
# whose text follows (horovod/horovod#1215: `[1,4]<stderr>:[1,5]<stderr>:ERROR: Unexpected
# segmentation fault encountered in worker.`, rank 4's own line just before it): the last tag
# is the line's.
EMPTY_MPIRUN_WRITE = r"\[\d+,(?:mpirank:)?\d+(?:,[A-Za-z][\w.-]*)?\]<(?:stdout|stderr|stddiag)>:"
MPIRUN_TAG = (
    r"(?: ?(?P<time>[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}))?"
    rf"(?:{EMPTY_MPIRUN_WRITE})*"
    r"\[(?:(?P<job>\d+),(?:mpirank:)?(?P<rank>\d+)(?:,(?P<host>[A-Za-z][\w.-]*))?\]"
    r"<(?P<stream>stdout|stderr|stddiag)>: ?"
    r"|(?P<index>\d+)\]<(?P<index_stream>stdout|stderr)>:)"  # horovodrun: no space after it
)
# (RayTrainWorker pid=1193, ip=10.244.4.193) [rank1]: Traceback (most recent call last):
# (WorkerDict pid=3569860) degamts15:3569860:3571297 [0] NCCL INFO ncclCommInitRank ...
# (Worker_TP11 pid=113) ERROR 08-10 23:02:36 [multiproc_executor.py:898] ...   (vLLM's workers)
# (ActorWorker(actor_train-1) pid=18175, ip=33.199.184.82) [2025-10-11 11:16:52] ...  (an actor
# whose repr names it: alibaba/ROLL#193)
RAY_WORKER = (
    r"\((?:(?P<actor>[A-Za-z_][\w.:-]*(?:\([\w.:-]*\))?) )?(?:rank=(?P<rank>\d+) )?pid=(?P<pid>\d+)"
    r"(?:, ip=(?P<ip>\d{1,3}(?:\.\d{1,3}){3}|[0-9a-fA-F:]+))?\)(?: |$)"  # `$`: an empty line
)
# 2021-07-08 08:28:12 10.164.0.33 [0] torch.multiprocessing.spawn.ProcessExitedException: ...
# torch_xla's TPU pod launcher (`python -m torch_xla.distributed.xla_dist`) before each line a
# worker VM's processes print: its time, the VM's internal address and the VM's index (a node's,
# never a process's; pytorch/xla#3028)
XLA_DIST_WORKER = (
    r"(?P<time>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}) (?P<ip>\d{1,3}(?:\.\d{1,3}){3}) "
    r"\[(?P<worker>\d{1,5})\] "
)
# (head, rank=0, pid=5634) [nccl-e9ef-7d4f-0:3]:nccl-e9ef-7d4f-0:11172:11249 [3] misc/socket.cc ...
# (worker1, rank=1, pid=4888, ip=10.60.0.4)   rank      : 7 (local_rank: 3)
# SkyPilot's prefix on a multi-node task's output (skypilot-org/skypilot#4448; its log streaming
# code documents `(head, rank=0, pid={pid})` and `(worker1, rank=1, pid={pid}, ip=1.2.3.4)`,
# newer releases `ip=` before `pid=`). The rank is the node's (SKYPILOT_NODE_RANK), never a
# process's: torchrun's summary in the same console says `rank : 7` for worker1's failure.
SKYPILOT_NODE = (
    r"\((?P<node>head|worker\d+), rank=(?P<node_rank>\d+), "
    r"(?:pid=\d+(?:, ip=(?P<ip>[^\s,()]+))?|ip=(?P<ip_first>[^\s,()]+), pid=\d+)\) "
)
# (LLMRayActor pid=585804) (EngineCore_DP0 pid=586112) ERROR 03-05 00:25:45 [core.py:1094] ...
# A process vLLM spawned inside a Ray actor: vLLM's own label behind Ray's (OpenRLHF/OpenRLHF
# #1193). The innermost label names the writer (its pid, its rank); the ip is Ray's.
NESTED_RAY_WORKERS = f"(?:{RAY_WORKER})+"
# ERROR 03-05 00:25:45 [core.py:1094] Traceback (most recent call last):
# ERROR 03-05 00:25:45 [core.py:1094]   File ".../vllm/v1/engine/core.py", line 1091, in ...
# vLLM's logger repeats a record's header on every line of a multi-line message (its
# NewLineFormatter: `%(levelname)s %(asctime)s [%(fileinfo)s:%(lineno)d] `, before 2024
# `%(filename)s:%(lineno)d] `, dates `%m-%d %H:%M:%S`), so a logged traceback's lines each
# start with it. Only the repeats are peeled: the record's first line keeps its level.
VLLM_HEADER = (
    r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)? "
    r"\[?[\w./-]+\.py:\d+\] "
)
# A worker's label that numbers it in one dimension only (`Worker_TP11`, `Worker_rank3`, or
# `Worker_PP3` of an engine split into pipeline stages alone: vLLM names only the dimensions
# larger than one): its rank. `Worker_DP0_TP1` numbers it in two and says no global rank.
ACTOR_RANK = r"^[A-Za-z]+_(?:TP|PP|[Rr]ank|RANK)(\d+)$"
# ErrorMessage "RuntimeError: SMDDP does not support: ReduceOp
# (SageMaker's failure report, `AlgorithmError: ExecuteUserScriptError:`, `ExitCode 1`, then the
# tail of the process's stderr in one quoted string: Lightning-AI/pytorch-lightning#20409)
PLATFORM_REPORT = r'ErrorMessage "'
# > [rank1]: Traceback (most recent call last):
# A paste quoted in Markdown or an e-mail reply (OpenBMB/MiniCPM-V#144: every line of the
# tracebacks after `> `); outermost, and only where it quotes most of a file's lines
QUOTE = r">(?: ?>)*(?: |$)"  # a quote of a quote too (`> > `, `>> `)
# │ [2025-02-28 09:28:25 TP7] Scheduler hit an exception: Traceback (most recent call last):   │
# A console drawn inside a box, a border before and after each line (a terminal UI's or a
# renderer's frame; sgl-project/sglang#4017's paste); outermost, and only where it frames most
# of a file's lines. The right border, after the padding, goes too (`_without_right_border`)
BOX_SIDE = r"[│┃║](?: |$)"
BOX_RIGHT = r"\s*[│┃║]\s*$"
# E       -- Process 3 terminated with the following error:
# E       Traceback (most recent call last):
# pytest's failure report marks each line of the exception it caught with `E` and pads it to
# the failing source line's indentation (hpcaitech/Titans' committed `log`: a spawned test's
# ProcessRaisedException carrying process 3's traceback). The width follows that source line:
# eight columns in a method (`E` and seven spaces), four in a function or with `--tb=short`.
PYTEST_FAILURE = r"E(?: {7}| {3})"
#     * 1 x W0909 21:54:55.983000 41207 torch/distributed/elastic/multiprocessing/api.py:900] ...
#         | [rank0]: FileNotFoundError: Caught FileNotFoundError in DataLoader worker process 2.
# A runner's condensed error report (mila-iqia/milabench#367): each line indented behind a
# `| ` gutter, or counted (`* 1 x `) where it repeated; inside a collector's envelope (a kubectl
# stamp), outside the processes' own prefixes, and only where it frames most of a file's lines
REPORT_GUTTER = r"[ \t]+\|(?: |$)|[ \t]*\* \d+ x "
# diffusion-nodes.cn-n001.server.mila.quebec.nolog [stderr] [rank14]: Traceback (most recent ...
# A runner's label and the stream it read a line from (milabench's, mila-iqia/milabench#281);
# the label names the process's node
STREAM_LABEL = r"(?P<label>[^\s\[\]]+) \[(?P<stream>stdout|stderr)\](?: |$)"
# stderr:   rank      : 1 (local_rank: 1)
# A test harness that runs the job as a subprocess and echoes its streams line by line, each
# behind the stream's label (`accelerate test`'s execute_subprocess_async, huggingface/
# accelerate#1473: the worker's summary labelled, the harness's own traceback after it not)
SUBPROCESS_STREAM = r"(?P<stream>stdout|stderr): "
# A log viewer's or a paste's line numbers in front of every line (hiyouga/LlamaFactory#8261):
#   [1784] [rank0]:[E602 11:17:52.399340163 ProcessGroupNCCL.cpp:2268] [PG ID 1 PG GUID 1 ...
# or as `cat -n` and `nl` write them (right-aligned, then a tab), here over a sample's log:
#        1\tW1130 15:04:26.975000 4263 torch/distributed/run.py:874]
# (not numbers and spaces alone: a native backtrace numbers its frames ` 0  /usr/lib/...`)
# Kaggle's notebook log puts the seconds since the start before the number (AneKazek/malesbgt,
# a committed Kaggle run):
#   704.7s	1344	[rank0]: RuntimeError: [enforce fail at inline_container.cc:815] . ...
LINE_NUMBER_GUTTER = r"\[(?P<number>\d{1,9})\] | *(?:\d{1,7}(?:\.\d+)?s\t)?(?P<tabbed>\d{1,9})\t"
# rank_604.s12gn3064.4031852.log:[0604/1024][2025-02-16 22:31:34,422] [misc/socket.cc:586] ...
# `grep -r` / `grep -H` over several logs puts the file each line came from (and with `-n` its
# line number) before it (NVIDIA/nccl#1618's "signature in job error log", a grep of the ranks'
# logs). The path names the writer as the file's own name would: read like one
# (`attribution.rank_from_path`). Only log-like names count, and only where most of a file's
# lines carry one.
GREP_PATH = (
    r"(?P<path>/?(?:[\w.@+~-]+/)*[\w@+~-][\w.@+~-]*\.(?:log|txt|out|err|stdout|stderr)(?:\.\d+)?)"
    r"(?::(?P<number>\d+))?:"
)
# ... Init COMPLETE [repeated 8x across cluster]   (Ray log deduplication, RAY_DEDUP_LOGS)
RAY_DEDUP_SUFFIX = r" ?\[repeated (\d+)x across cluster\]$"
# [2025-03-09 14:40:47 TP3] Scheduler hit an exception: Traceback (most recent call last):
# [2025-03-17 17:15:55 DP1 TP3] ...
# SGLang's logger on each scheduler process (`[%(asctime)s{prefix}] `, the prefix ` TP{tp_rank}`
# or ` DP{dp_rank} TP{tp_rank}`, sglang/srt/managers/scheduler.py; sgl-project/sglang#4233). One
# dimension alone numbers the process: its rank. With two, the TP number is the rank where the
# file shows several DP numbers and no TP number with two of them (data-parallel attention
# inside one group of processes, sgl-project/sglang#7707: `DP5 TP5`, `DP6 TP6`, `DP7 TP7`, then
# `[2025-07-02 11:57:15 DP6 TP6] TpModelWorkerClient hit an exception`); where one does, the DP
# numbers are replicas, each its own group, and one DP number alone cannot tell: no rank.
# An expert-parallel number (` EP2`) numbers the same process inside its TP group, and the first
# pipeline stage (` PP0`) starts the global numbering, so its TP number is still the rank
# (sgl-project/sglang#9805: `[2025-08-29 20:35:50 DP2 TP2 EP2 PP0] Scheduler hit an exception`);
# a later stage's rank would need the TP size, which the prefix does not say.
SGLANG_WORKER = (
    r"\[(?P<time>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})"
    r"(?P<dims>(?: (?:[A-Z]{2,4}|DP_RANK|ATTN_TP_RANK|ATTN TP RANK) ?\d+)+)\] "
)
SGLANG_SAME_PROCESS = r"(?: EP\d+)?(?: PP0)?$"
SGLANG_RANK = r"^ TP(\d+)" + SGLANG_SAME_PROCESS
SGLANG_DP_TP = r"^ DP(?P<dp>\d+) TP(?P<tp>\d+)" + SGLANG_SAME_PROCESS
# [default0]:2026-11-30 15:04:29,000 INFO {'rank': 0, 'local_rank': 0, 'device': 0, ...}
# [trainer3]:... (header f"[{name}{local_rank}]:", torch/distributed/elastic/.../tail_log.py)
# [trainer0|0]:ncclInternalError: ...   (a torchx console, NVIDIA/nccl#1837: a second number after
# a bar, whose meaning is not documented, is kept out of the rank)
# (axolotl) 134 hotaisle@ENC1-CLS01-SVR14:~/shisa-v2/train/ablations$ [rank2]:[E1109 ...
# A shell's prompt (its conda env, the last exit status) the job's processes went on writing
# after, once the launcher had returned: peeled only before a rank's tag (ROCm/ROCm#4021)
SHELL_PROMPT = r"(?:\([\w.-]+\) )?(?:\d{1,3} )?[\w.-]+@[\w.-]+:[^\s$#]*[$#] "
TAG_AFTER_PROMPT = r"^\[(?:rank|[A-Za-z_][\w-]*?)\d+\]:"
TORCHRUN_TEE = r"\[(?P<role>[A-Za-z_][A-Za-z0-9_-]*?)(?P<local_rank>\d+)(?:\|\d+)?\]:"
# [1]:rank=1 local_rank=1 attempt=0 hello   (TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE='[${rank}]:',
# the global-rank example of torch/distributed/elastic/agent/server/local_elastic_agent.py)
TORCHRUN_RANK_TEMPLATE = r"\[(?P<rank>\d+)\]:"
# Everything up to the last carriage return: what a terminal shows is what came after it.
CARRIAGE_RETURN = r".*\r"
# tqdm bar with a log line glued after it (no newline before the line):
#   1%|▏         | 24/1752 [01:08<1:22:56,  2.88s/it][rank5]:[E602 11:17:52.185053341 ...
# A bar's name may be a table header (YOLO's validation bar: 89 characters, ultralytics/yolov5
# #4400). The line may also be glued into the bar's unclosed postfix, where a row of `=` (never
# in a `key=value` postfix) begins it (finetrainers#114):
#   Steps:   2%| | 254/12184 [3:47:24<176:05:39, 53.14s/it, ...=0.011===== Memory before ...
# A record may also cut the bar itself, before its counts: then its own bracketed header
# follows the bar's blocks (ultralytics/yolov5#9163, rank 0's label scan at 6% when the
# watchdog's line came):
#   train: Scanning '/mnt/.../labels/train' images and labels...113162 found, ...:   6%|▋ [E Pr...
TQDM_BAR = (
    r"[^|\r]{0,160}?\d{1,3}%\|(?:[^|\r]*\| *[\d.]+[kMGT]?/(?:[\d.]+[kMGT]?|\?) "
    r"\[(?:[^\]\r=]|=[^\]\r=])*\]?|(?P<cut>[▏▎▍▌▋▊▉█#1-9]* *))"
)
# [rank7]: Traceback (most recent call last):   (torch >= 2.3 excepthook; c10 log [rank1]:[E ...)
# A torchrun template `[rank${local_rank}]: ` in front of PyTorch's own gives two tags:
# [rank1]: [rank5]:[E ...]  -> the outer is torchrun's local rank, the inner the global one.
# "[rank3]: ValueError: Caught ValueError in DataLoader worker process 0.
# (a platform's error report that quotes the process's stderr in one string, its opening quote
# before the first line's tag: SageMaker's `AlgorithmError: ... ErrorMessage "`, aws-solutions-
# library-samples/accelerated-intelligent-document-processing-on-aws#7)
TORCH_RANK = r"\"?\[rank(?P<rank>\d+)\]: ?(?:\[rank(?P<inner>\d+)\]: ?)*"
# [2023-11-14 06:36:20,890] torch.testing._internal.common_distributed: [ERROR] AssertionError: ...
# (PyTorch 2.1's own log records, `torch._logging`'s format, which repeats the header before
# every line of a record, a traceback's included, behind `[rank1]:` once a group is up:
# pytorch/pytorch#113620's CI run)
TORCH_LOGGER = (
    r"\[(?P<time>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] torch(?:\.\w+)+: "
    r"\[(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\] ?"
)
# 2022-06-29 11:36:17,871: rank0[824065][MainThread]: INFO: composer.utils.reproducibility: ...
# (MosaicML Composer's and llm-foundry's log format: time, `rank{global rank}[pid][thread]`;
# mosaicml/composer#1218, mosaicml/examples#292)
COMPOSER_RECORD = (
    r"(?P<time>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}): rank(?P<rank>\d+)"
    r"\[(?P<pid>\d+)\]\[[^\]]*\]: "
)
# [2024-02-27T21:35:28.705869Z] fa88a9df [rank=1] || [E ProcessGroupNCCL.cpp:828] [Rank 1] ...
# [2024-02-27T21:35:35.628581Z]          || ERROR: Trial 139 (Experiment 138) was terminated: ...
# [2020-06-09T20:10:40Z] cf108822 [RUNNING] ||  Tue Jun  9 20:10:40 2020[1]<stderr>:*** Received ...
# (Determined AI's trial log as its web UI and `det trial logs` print it: time, container id,
# the container's state in older releases, the worker's rank when it has one, `||`;
# determined-ai/determined#8915, horovod/horovod#2015)
DETERMINED_TRIAL = (
    r"\[(?P<time>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z?)\] +"
    r"(?:[0-9a-f]{6,16} )?(?:\[[A-Z]+\] )?(?:\[rank=(?P<rank>\d+)\] )?\|\| ?"
)
# [rank=3] Epoch 1 ...   (Determined AI's Horovod/torch worker wrapper: f"[rank={rank}] " before
# each line it forwards, determined-ai/determined worker_process_wrapper.py)
# [rank: 1] Seed set to 42   (Lightning's rank-prefixed messages)
# [rank8] Warning: Unable to resolve hostname ...   (a script's or wrapper's own f"[rank{rank}] "
# tag, without the colon of PyTorch's; aws-samples/aws-do-eks#50)
# [rank 0 x3200c0s13b0n0] torch.cuda OK ...   (a script's f"[rank {rank} {host}] ": the rank and
# the host it ran on; argonne-lcf/conda_install_scripts' Polaris smoke test)
RANK_EQUALS = r"\[rank(?:=|: | )?(?P<rank>\d+)(?: (?P<host>[A-Za-z][\w.-]*))?\] "
# torchrun's agent logs a failed function worker's traceback in the record that reports it
# (torch/distributed/elastic/multiprocessing/api.py: `logger.exception("failed (exitcode: %s)
# local_rank: %s (pid: %s) of fn: %s (start_method: %s)", ...)`), and torch's log formatter
# repeats the record's header on every line of it (huggingface/accelerate#3524, verbatim):
#   E0422 05:07:49.013000 204 torch/distributed/elastic/multiprocessing/api.py:732]     raise
#   E0422 05:07:49.013000 204 torch/distributed/elastic/multiprocessing/api.py:732] RuntimeError:
# (each cut here). The record's first line names the worker, as the binary form does
# (lmzpai/roboMamba#10: `E0325 20:57:27.620000 2606 site-packages/torch/distributed/elastic/
# multiprocessing/api.py:869] failed (exitcode: -9) local_rank: 5 (pid: 2630) of binary: ...`).
ELASTIC_RELAY = (
    r"[EW]\d{4} \d{2}:\d{2}:\d{2}\.\d+ +\d+ +\S*torch/distributed/elastic/multiprocessing/"
    r"api\.py:\d+\] "
)
# what of a traceback follows the header: its first line, a frame or code line, the exception,
# and where the worker was a function run under spawn, the child's own traceback that spawn's
# exception carries (`-- Process 1 terminated with the following error:`, a run here:
# tests/data/launchers/elastic_function)
RELAYED_TRACEBACK = (
    r"^(?:Traceback \(most recent call last\):|\s+\S|\s*$"
    r"|[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failure)(?::|$)"
    r"|-- Process \d+ terminated with the following error:$)"
)
# the record that opens the relay names the worker: `failed (exitcode: 1) local_rank: 0 (pid: 240)`
RELAY_OPENING = r"\] failed \(exitcode: -?\d+\) local_rank: (\d+)"


def _growing(digits: pl.Expr) -> pl.Expr:
    """Whether each number is greater than the one before it in its file and smaller than the
    one after it, with at least one of them there, in a file whose numbers only grow (labels
    that repeat or fall back, like an MPI rank's `[3] `, number processes, not lines)."""
    number = digits.cast(pl.Int64, strict=False)
    before = number.shift(1).forward_fill().over("file")
    after = number.shift(-1).backward_fill().over("file")
    neighbours = before.is_not_null() | after.is_not_null()
    rising = (number > before).fill_null(True)
    return neighbours & rising & (number < after).fill_null(True) & rising.all().over("file")


def _always(groups: pl.Expr) -> pl.Expr:
    return pl.lit(True)


def _no_fields(groups: pl.Expr) -> dict[str, pl.Expr]:
    return {}


@dataclass(frozen=True, slots=True)
class Framer:
    """One launcher's line prefix.

    `pattern` matches exactly the prefix to strip, anchored at the start of what is left of
    the line; `fields` maps its named groups (a struct) to columns. `accept` can refuse a
    match the regex alone cannot (no look-around in polars regex). `per_file` framers apply
    only where they prefix at least AMBIGUOUS_PREFIX_SHARE of the file's non-blank lines.
    """

    name: str
    pattern: str
    fields: Callable[[pl.Expr], dict[str, pl.Expr]] = _no_fields
    accept: Callable[[pl.Expr], pl.Expr] = _always
    per_file: bool = False
    # literals one of which a line must contain to be worth trying, for prefixes that are not
    # at the very start of the line (a regex scan of every line would cost more)
    literals: tuple[str, ...] = ()
    # what else this launcher did to its lines, undone before inner framers look at them
    then: Callable[[pl.DataFrame], pl.DataFrame] | None = None
    # lines whose match `accept` always refuses, told apart by a scan where the regex cannot:
    # a console of only such lines is not worth the framer's extraction
    refused: str | None = None

    @property
    def regex(self) -> str:
        return f"^(?P<prefix>{self.pattern})"


def _group(groups: pl.Expr, name: str) -> pl.Expr:
    return groups.struct.field(name)


def _number(digits: pl.Expr) -> pl.Expr:
    """The number some digits spell, null beyond an Int32: a prefix's number is data
    (`[rank99999999999]:` states no rank a job can have)."""
    return digits.cast(pl.Int32, strict=False)


def _rfc3339(groups: pl.Expr) -> pl.Expr:
    return (
        _group(groups, "time")
        .str.extract(r"^([\d-]+T[\d:.]+)", 1)
        .str.to_datetime("%Y-%m-%dT%H:%M:%S%.f", strict=False, time_unit="us")
    )


def _iso_minutes(groups: pl.Expr) -> pl.Expr:
    """`2025-02-18 12:54`, `2025-02-18T12:54:22.86`: to the second when it has seconds."""
    stamp = _group(groups, "stamp").str.replace("T", " ").str.replace(",", ".")
    return pl.coalesce(
        stamp.str.slice(0, 26).str.to_datetime(
            "%Y-%m-%d %H:%M:%S%.f", strict=False, time_unit="us"
        ),
        stamp.str.slice(0, 16).str.to_datetime("%Y-%m-%d %H:%M", strict=False, time_unit="us"),
    )


def _ctime(groups: pl.Expr) -> pl.Expr:
    # ctime pads the day with a space (`Aug  1`) and chrono's %d wants two digits; the weekday
    # is dropped so that a wrong one cannot void the stamp.
    return (
        _group(groups, "time")
        .str.replace(r"^\w{3} (\w{3})  ?(\d) ", "${1} 0${2} ")
        .str.replace(r"^\w{3} (\w{3} \d)", "${1}")
        .str.to_datetime("%b %d %H:%M:%S %Y", strict=False, time_unit="us")
    )


TORCHRUN_TEE_FRAMER = Framer(
    "torchrun_tee",
    TORCHRUN_TEE,
    lambda g: {"prefix_local_rank": _number(_group(g, "local_rank"))},
    # `[rank3]:` is PyTorch's own prefix (or a template naming a rank): the torch_rank framer
    accept=lambda g: _group(g, "role") != "rank",
    refused=r"^\[rank\d+(?:\|\d+)?\]:",
)


FRAMERS: tuple[Framer, ...] = (
    Framer("quote", QUOTE, per_file=True),
    Framer("box", BOX_SIDE, per_file=True, then=lambda frame: _without_right_border(frame)),
    Framer(
        "gutter",
        LINE_NUMBER_GUTTER,
        # numbers that grow from line to line; a constant one (an NCCL device, a pid) is no gutter
        accept=lambda g: _growing(pl.coalesce(_group(g, "number"), _group(g, "tabbed"))),
        per_file=True,
    ),
    Framer(
        "grep_path",
        GREP_PATH,
        lambda g: {"_grep_path": _group(g, "path")},
        per_file=True,
        then=lambda frame: _grep_path_writers(frame),
    ),
    Framer(
        "journalctl",
        JOURNALCTL,
        # the short format has no year: only the ISO variants give a time
        lambda g: {
            "prefix_host": _group(g, "host"),
            "prefix_pid": _group(g, "pid").cast(pl.Int64, strict=False),
            "prefix_time": _group(g, "iso")
            .str.extract(r"^([\d-]+T[\d:.]+)", 1)
            .str.to_datetime("%Y-%m-%dT%H:%M:%S%.f", strict=False, time_unit="us"),
        },
    ),
    Framer("kubectl_prefix", KUBECTL_PREFIX, lambda g: {"prefix_host": _group(g, "pod")}),
    Framer(
        "compose",
        COMPOSE_SERVICE,
        lambda g: {"_node_name": pl.concat_str(pl.lit("compose "), _group(g, "container"))},
        per_file=True,
    ),
    Framer(
        "cri",
        CRI_ENVELOPE,
        lambda g: {
            "prefix_time": _rfc3339(g),
            "prefix_stream": _group(g, "stream"),
            "_cri_tag": _group(g, "tag"),
        },
        then=lambda frame: _join_cri_partials(frame),
    ),
    Framer(
        "kubectl_timestamp",
        KUBECTL_TIMESTAMP,
        lambda g: {"prefix_time": _rfc3339(g)},
        # a CRI envelope starts with the same stamp; it is the cri framer's
        accept=lambda g: (
            pl.col("framing").is_null() | ~pl.col("framing").str.contains("cri", literal=True)
        ),
    ),
    Framer(
        "collector_time",
        COLLECTOR_TIME,
        lambda g: {"prefix_time": _iso_minutes(g), "prefix_host": _group(g, "host")},
        accept=lambda g: (
            pl.col("message")
            .str.slice(_group(g, "prefix").str.len_chars())
            .str.contains(AFTER_COLLECTOR_TIME)
        ),
        # what may follow it; a scan of every dated line would cost more
        literals=(
            "[rank",
            "]<std",
            " NCCL ",
            "]:[",
            ".cpp:",
            ".cc:",
            *("] *** ", "] Signal", "] Failing at", "] Associated errno", "] [ "),
        ),
    ),
    Framer("console_time", CONSOLE_TIME, per_file=True),
    Framer("report_gutter", REPORT_GUTTER, per_file=True),
    # inside a collector's envelope (a CloudWatch or kubectl stamp before it)
    Framer("platform_report", PLATFORM_REPORT),
    Framer(
        "determined",
        DETERMINED_TRIAL,
        lambda g: {"_task": _number(_group(g, "rank")), "prefix_time": _rfc3339(g)},
    ),
    Framer(
        "torchx",
        TORCHX_REPLICA,
        lambda g: {
            "_node_name": pl.concat_str(
                pl.lit("torchx "), _group(g, "role"), pl.lit("/"), _group(g, "replica")
            )
        },
        per_file=True,
    ),
    Framer("pdsh", PDSH_HOST, lambda g: {"prefix_host": _group(g, "host")}, per_file=True),
    Framer(
        "stream_label",
        STREAM_LABEL,
        lambda g: {"_node_name": _group(g, "label"), "prefix_stream": _group(g, "stream")},
        per_file=True,
    ),
    Framer(
        "subprocess_stream", SUBPROCESS_STREAM, lambda g: {"prefix_stream": _group(g, "stream")}
    ),
    Framer(
        "srun",
        SRUN_LABEL,
        lambda g: {
            "_task": _number(_group(g, "task")),
            "_het": _number(_group(g, "het")),
        },
        per_file=True,
    ),
    Framer(
        "mpirun_label",
        MPI_RANK_LABEL,
        lambda g: {"_task": _number(_group(g, "task"))},
        accept=lambda g: (
            ~(
                pl.col("message")
                .str.slice(_group(g, "prefix").str.len_chars())
                .str.contains(NCCL_BODY)
            )
        ),
        per_file=True,
    ),
    Framer(
        "mpirun",
        MPIRUN_TAG,
        lambda g: {
            "_task": _number(pl.coalesce(_group(g, "rank"), _group(g, "index"))),
            "prefix_stream": pl.coalesce(_group(g, "stream"), _group(g, "index_stream")),
            "prefix_host": _group(g, "host"),
            "prefix_time": _ctime(g),
            "_own_tag": _group(g, "prefix").str.extract(r"(\[[^\]]*\]<\w+>:)", 1),
        },
        then=lambda frame: _join_tagged_writes(frame),
    ),
    Framer(
        "skypilot",
        SKYPILOT_NODE,
        lambda g: {
            "_node_name": pl.concat_str(pl.lit("skypilot "), _group(g, "node")),
            "_node_index": _number(_group(g, "node_rank")),
            "prefix_host": pl.coalesce(_group(g, "ip"), _group(g, "ip_first")),
        },
    ),
    Framer(
        "xla_dist",
        XLA_DIST_WORKER,
        lambda g: {
            "_node_name": pl.concat_str(pl.lit("xla_dist worker "), _group(g, "worker")),
            "_node_index": _number(_group(g, "worker")),
            "prefix_host": _group(g, "ip"),
            "prefix_time": _group(g, "time").str.to_datetime(
                "%Y-%m-%d %H:%M:%S", strict=False, time_unit="us"
            ),
        },
        per_file=True,
    ),
    Framer(
        "ray",
        NESTED_RAY_WORKERS,
        lambda g: {
            "prefix_pid": _group(g, "pid").cast(pl.Int64, strict=False),
            "prefix_host": _group(g, "ip"),
            "_task": _number(
                pl.coalesce(_group(g, "rank"), _group(g, "actor").str.extract(ACTOR_RANK, 1))
            ),
        },
        then=lambda frame: _strip_ray_dedup(frame),
    ),
    Framer(
        "sglang",
        SGLANG_WORKER,
        lambda g: {
            "_task": _number(_group(g, "dims").str.extract(SGLANG_RANK, 1)),
            "_dp": _number(_group(g, "dims").str.extract(SGLANG_DP_TP, 1)),
            "_dp_tp": _number(_group(g, "dims").str.extract(SGLANG_DP_TP, 2)),
            "prefix_time": _group(g, "time").str.to_datetime(
                "%Y-%m-%d %H:%M:%S", strict=False, time_unit="us"
            ),
        },
    ),
    # inside any launcher's label (`srun -l pytest ...`), outside the processes' own tags
    Framer("pytest", PYTEST_FAILURE),
    Framer(
        "shell_prompt",
        SHELL_PROMPT,
        accept=lambda g: (
            pl.col("message")
            .str.slice(_group(g, "prefix").str.len_chars())
            .str.contains(TAG_AFTER_PROMPT)
        ),
        literals=("$ [", "# ["),
    ),
    Framer(CONTINUED_RECORD, VLLM_HEADER, accept=lambda g: _repeats_the_line_before(g)),
    TORCHRUN_TEE_FRAMER,
    Framer(
        "torchrun_template",
        TORCHRUN_RANK_TEMPLATE,
        lambda g: {"_template_rank": _number(_group(g, "rank"))},
        # ChildFailedError summaries number their entries `[0]:` alone on a line (blanks after
        # it, a paste's, are nothing)
        accept=lambda g: (
            pl.col("message").str.strip_chars_end().str.len_chars()
            > _group(g, "prefix").str.len_chars()
        ),
    ),
    Framer("carriage_return", CARRIAGE_RETURN, literals=("\r",)),
    Framer(
        "tqdm",
        TQDM_BAR,
        # the bar is a print of its own, kept for the parsers (a rank busy past a timeout) with
        # the local rank of the prefix it stood behind
        lambda g: {"glued": _group(g, "prefix"), "glued_local_rank": pl.col("prefix_local_rank")},
        literals=("%|",),
        # a bar alone is a progress line (a parser may read its counts); strip it only when a
        # log line follows it on the same line (tqdm pads a bar with spaces: no line)
        accept=lambda g: _line_after_bar(g),
    ),
    # another process's line glued after the bar: its own torchrun prefix comes next
    # (huggingface/nanotron#204: `...[02:32<30:38, 4866.01 examples/s][default2]:[E ...`)
    TORCHRUN_TEE_FRAMER,
    Framer(
        "rank_equals",
        RANK_EQUALS,
        lambda g: {"_task": _number(_group(g, "rank")), "prefix_host": _group(g, "host")},
        # Lightning's report of a child that failed (`[rank: 1] Child process with PID ...`)
        # puts the child's rank there, not its writer's (the main process): the line stays
        # whole for the parser that reads it
        accept=lambda g: (
            ~(
                pl.col("message")
                .str.slice(_group(g, "prefix").str.len_chars())
                .str.starts_with(LIGHTNING_CHILD)
            )
        ),
    ),
    Framer(
        "elastic_relay",
        ELASTIC_RELAY,
        lambda g: {"_relay": _group(g, "prefix")},
        accept=lambda g: (
            pl.col("message")
            .str.slice(_group(g, "prefix").str.len_chars())
            .str.contains(RELAYED_TRACEBACK)
        ),
        literals=("elastic/multiprocessing/api.py:",),
        then=lambda frame: _relayed_worker(frame),
    ),
    Framer(
        "torch_rank",
        TORCH_RANK,
        lambda g: {
            "_rank": _number(_group(g, "rank")),
            "_inner_rank": _number(_group(g, "inner")),
        },
    ),
    Framer(
        "composer",
        COMPOSER_RECORD,
        lambda g: {
            "_rank": _number(_group(g, "rank")),
            "prefix_pid": _group(g, "pid").cast(pl.Int64, strict=False),
            "prefix_time": _group(g, "time").str.to_datetime(
                "%Y-%m-%d %H:%M:%S,%3f", strict=False, time_unit="us"
            ),
        },
        literals=(": rank",),
    ),
    Framer(
        "torch_logger",
        TORCH_LOGGER,
        lambda g: {
            "prefix_time": _group(g, "time").str.to_datetime(
                "%Y-%m-%d %H:%M:%S,%3f", strict=False, time_unit="us"
            )
        },
        literals=("] torch.",),
    ),
)

# Working columns the framers fill before the ranks are resolved per file.
_SCRATCH: dict[str, pl.DataType] = {
    "_task": pl.Int32(),
    "_het": pl.Int32(),
    "_rank": pl.Int32(),
    "_inner_rank": pl.Int32(),
    "_template_rank": pl.Int32(),
    "_cri_tag": pl.String(),
    "_node_name": pl.String(),  # a prefix that names a node outright (SkyPilot's)
    "_node_index": pl.Int32(),
    "_relay": pl.String(),  # the agent's record header a relayed traceback line was under
    "_own_tag": pl.String(),  # Open MPI's tag of the line (`[1,19]<stderr>:`)
    "_dp": pl.Int32(),  # SGLang's data-parallel number beside a TP number
    "_dp_tp": pl.Int32(),  # ... and that TP number
    "_grep_path": pl.String(),  # the file `grep -H` named before the line
}


def _without_group_names(pattern: str) -> str:
    return re.sub(r"\(\?P<\w+>", "(?:", pattern)


# A line needs framing when it starts like some framer's prefix or holds noise anywhere.
STARTS_WITH_PREFIX = (
    "^(?:"
    + "|".join(_without_group_names(framer.pattern) for framer in FRAMERS if not framer.literals)
    + ")"
)
NOISE_LITERALS = [
    "\x1b",
    SYSLOG_ESCAPE,
    *(literal for framer in FRAMERS for literal in framer.literals),
]


# A paste indented as a whole (a code block under a Markdown list item, a quoted console in a
# doc page: OLCF's and saforem2/mmm's Aurora notes indent every line by 6) is read as the lines it
# indents. Less than this is a traceback's own indentation (`  File ...` alone in an excerpt);
# a single line so indented may be a traceback's code line quoted alone.
MIN_COMMON_INDENT = 4
MIN_INDENTED_LINES = 2
INDENTED_TAG = r"^\s+\[(?:rank|[A-Za-z_][\w-]*?)\d+\]:"


def frame_lines(lines: pl.DataFrame, nonblank: pl.DataFrame | None = None) -> pl.DataFrame:
    """Add `message` and the PREFIX_COLUMNS to a frame of raw lines (`file, line, text`).

    `message` is the line with every recognised prefix (and the noise around it) removed, and
    without the indentation every non-blank line of its file shares (MIN_COMMON_INDENT or more
    spaces). `nonblank` (`file, _nonblank`) counts each file's non-blank lines when `lines` are
    not all of them (the plain stage marks were read apart).
    """
    lead = _common_indent(lines)
    if lead is None:
        lead = _viewer_numbers(lines)
    if lead is None:
        return _frame_lines(lines, nonblank)
    indented = lines.with_columns(lead).with_columns(
        pl.col("text").str.slice(pl.col("_lead").str.len_chars().fill_null(0))
    )
    framed = _frame_lines(indented, nonblank)
    # the line as written: its indentation back in front of it
    text = pl.concat_str(pl.col("_lead").fill_null(""), pl.col("text"))
    return framed.with_columns(text.alias("text")).drop("_lead")


# A paste copied from a viewer that numbers the lines (an editor, a web log viewer) keeps the
# numbers in front of each line (NVIDIA/TransformerEngine#1275: `110881 [rank0]:   File ...`).
# They are told from a log's own counters by counting on with the file's lines, one apart, and by
# standing in front of what framers read (a launcher's tag, a time stamp) on most lines.
VIEWER_NUMBER = r"^( *\d{1,9} )"
MIN_NUMBERED_LINES = 3
FRAMED_SHARE = 0.5


def _viewer_numbers(lines: pl.DataFrame) -> pl.Expr | None:
    """Per line, the viewer's line number in front of it (`_lead`), in the files numbered as a
    whole; None when no line opens with a number (a scan that costs little)."""
    text = pl.col("text")
    if not lines.select(text.str.contains(VIEWER_NUMBER).any()).item():
        return None
    nonblank = text.str.strip_chars() != ""
    lead = text.str.extract(VIEWER_NUMBER, 1)
    offset = lead.str.strip_chars().cast(pl.Int64, strict=False) - pl.col("line").cast(pl.Int64)
    rest = text.str.slice(lead.str.len_chars().fill_null(0))
    framed = holds_any(rest, NOISE_LITERALS) | rest.str.contains(STARTS_WITH_PREFIX)
    numbered = (
        lead.filter(nonblank).is_not_null().all().over("file")
        & (offset.filter(nonblank).n_unique().over("file") == 1)
        & (nonblank.sum().over("file") >= MIN_NUMBERED_LINES)
        & (framed.filter(nonblank).mean().over("file") >= FRAMED_SHARE)
    )
    return pl.when(numbered & nonblank).then(lead).alias("_lead")


def _common_indent(lines: pl.DataFrame) -> pl.Expr | None:
    """Per line, the spaces every non-blank line of its file starts with (`_lead`, null where
    fewer than MIN_COMMON_INDENT); None when no file is indented so (a scan that costs little)."""
    text = pl.col("text")
    if not lines.select(text.str.starts_with(" " * MIN_COMMON_INDENT).any()).item():
        return None
    nonblank = text.str.strip_chars() != ""
    spaces = text.str.len_chars() - text.str.strip_chars_start(" ").str.len_chars()
    common = spaces.filter(nonblank).min().over("file")
    # a launcher's tag opens the line its process wrote: one line indented before it is a
    # paste's indentation too, no code line quoted alone
    tagged = text.str.contains(INDENTED_TAG).filter(nonblank).all().over("file")
    block = (nonblank.sum().over("file") >= MIN_INDENTED_LINES) | tagged
    return (
        pl.when((common >= MIN_COMMON_INDENT) & block)
        .then(pl.lit(" ").str.pad_end(common.cast(pl.Int64)))
        .alias("_lead")
    )


def _frame_lines(lines: pl.DataFrame, nonblank: pl.DataFrame | None) -> pl.DataFrame:
    indexed, continued = join_hard_wraps(lines.with_row_index("_row"))
    needs = holds_any("text", NOISE_LITERALS) | pl.col("text").str.contains(STARTS_WITH_PREFIX)
    to_frame = indexed.filter(needs)
    plain = indexed.filter(~needs).with_columns(
        # (trailing blanks, which a paste or a padded terminal leaves, say nothing)
        pl.col("text").str.strip_chars_end().alias("message"),
        *(pl.lit(None, dtype=dtype).alias(name) for name, dtype in PREFIX_COLUMNS.items()),
    )
    if not continued.is_empty():  # read as part of the line before them
        plain = pl.concat([plain, _continuations(continued, plain.schema)], how="vertical")
    if to_frame.is_empty():
        return plain.sort("_row").drop("_row")
    framed = _peel(to_frame, nonblank if nonblank is not None else _nonblank_lines_per_file(lines))
    whole = pl.concat([plain, framed], how="vertical").sort("_row")
    if framed.select(_opens_a_logged_traceback().any()).item():
        whole = _logged_tracebacks_continued(whole)
    if framed.select(opens_a_span_record().any()).item():
        whole = span_ranks(whole)
    return whole.drop("_row")


def _continuations(continued: pl.DataFrame, schema: pl.Schema) -> pl.DataFrame:
    """Pieces of a wrapped line (see `hard_wraps`): no message of their own, framed as such."""
    return (
        continued.with_columns(
            pl.lit("").alias("message"),
            *(pl.lit(None, dtype=dtype).alias(name) for name, dtype in PREFIX_COLUMNS.items()),
        )
        .with_columns(pl.lit("hard_wrap").alias("framing"))
        .select(schema.names())
        .cast(schema)
    )


def _opens_a_logged_traceback() -> pl.Expr:
    """A rank-prefixed log record that ends in a traceback's header: its logger prefixed only
    the record's first line (SGLang's `[... TP3] Scheduler hit an exception: Traceback ...`)."""
    return (
        pl.col("framing").str.contains("sglang", literal=True).fill_null(False)
        & pl.col("prefix_rank").is_not_null()
        & pl.col("message").str.ends_with(TRACEBACK_HEADER)
    )


def _logged_tracebacks_continued(frame: pl.DataFrame) -> pl.DataFrame:
    """The traceback a rank-prefixed record opens is that rank's: its indented frame lines and
    the exception line right after them, unprefixed, take the record's rank. A collector's
    envelope around every line (a kubectl time stamp) is no prefix of the process's own."""
    # a paste's own decoration (a quote, a box) says nothing of who wrote a line, and a box's
    # first line may have lost its border with what came before it
    written = pl.col("framing").fill_null("").str.replace(r"^(?:(?:quote|box)(?:\+|$))+", "")
    envelope = written.str.replace(r"\+?sglang.*$", "")
    opened_in = pl.when(_opens_a_logged_traceback()).then(envelope).forward_fill().over("file")
    unframed = written == opened_in.fill_null("")
    indented = pl.col("message").str.contains(r"^\s+\S")
    # the rank of the last line that is no unprefixed frame line, -1 when it opened nothing
    carried = (
        pl.when(_opens_a_logged_traceback())
        .then(pl.col("prefix_rank"))
        .when(unframed & indented)
        .then(None)
        .otherwise(-1)
        .forward_fill()
        .over("file")
    )
    frame = frame.with_columns(
        pl.when(unframed & indented & (carried >= 0)).then(carried).alias("_carried")
    )
    after_frames = pl.col("_carried").shift(1).over("file")
    exception_line = unframed & ~indented & pl.col("_carried").is_null()
    return frame.with_columns(
        pl.coalesce("prefix_rank", "_carried", pl.when(exception_line).then(after_frames)).alias(
            "prefix_rank"
        )
    ).drop("_carried")


def _nonblank_lines_per_file(lines: pl.DataFrame) -> pl.DataFrame:
    return lines.group_by("file").agg(
        (pl.col("text").str.strip_chars() != "").sum().alias("_nonblank")
    )


def _peel(frame: pl.DataFrame, nonblank: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("text")
    if frame.select(holds_any(message, ("\x1b", SYSLOG_ESCAPE)).any()).item():
        message = message.str.replace_all(ANSI_ESCAPE, "")
    frame = frame.with_columns(
        message.str.strip_chars_end("\r").alias("message"),
        *(pl.lit(None, dtype=dtype).alias(name) for name, dtype in PREFIX_COLUMNS.items()),
        *(pl.lit(None, dtype=dtype).alias(name) for name, dtype in _SCRATCH.items()),
    )
    worth_trying: list[bool] | None = None  # for FRAMERS[at:], asked while nothing was peeled
    # framers that refused every look-alike since the lines last changed: a framer that comes
    # twice (torchrun's tag before and after a progress bar) would refuse them again
    refused: set[int] = set()
    for at, framer in enumerate(FRAMERS):
        if worth_trying is None:  # one query for the framers left
            worth_trying = _worth_trying(frame, FRAMERS[at:])
        if not worth_trying.pop(0) or id(framer) in refused:
            continue
        peeled = _peel_one(frame, framer, nonblank)
        if peeled is None:
            refused.add(id(framer))
            continue
        frame = framer.then(peeled) if framer.then is not None else peeled
        worth_trying = None  # the messages changed: ask again
        refused.clear()
    # what the prefixes framed, without the blanks a paste or a padded terminal leaves after it
    frame = frame.with_columns(pl.col("message").str.strip_chars_end())
    return _resolve_ranks(frame).select("_row", *_input_columns(frame), *FRAME_COLUMNS)


def _input_columns(frame: pl.DataFrame) -> list[str]:
    produced = {"_row", *FRAME_COLUMNS, *_SCRATCH}
    return [name for name in frame.columns if name not in produced]


def _worth_trying(frame: pl.DataFrame, framers: tuple[Framer, ...]) -> list[bool]:
    """Whether some message could carry each framer's prefix, all asked in one query (the
    scans run side by side on every core)."""
    message = pl.col("message")

    def could_carry(framer: Framer) -> pl.Expr:
        if framer.literals:
            return message.str.contains_any(list(framer.literals))
        matches = message.str.contains(framer.regex)
        return matches & ~message.str.contains(framer.refused) if framer.refused else matches

    flags = frame.select(
        could_carry(framer).any().alias(str(at)) for at, framer in enumerate(framers)
    )
    return list(flags.row(0))


def _peel_one(frame: pl.DataFrame, framer: Framer, nonblank: pl.DataFrame) -> pl.DataFrame | None:
    """The frame with `framer`'s prefix peeled where it holds; None where it holds nowhere."""
    message = pl.col("message")
    groups = message.str.extract_groups(framer.regex)
    frame = frame.with_columns(groups.alias("_groups"))
    matched = pl.col("_groups").struct.field("prefix").is_not_null() & framer.accept(
        pl.col("_groups")
    )
    if framer.per_file:
        share = matched.sum().over("file") / pl.col("_nonblank")
        frame = frame.join(nonblank, on="file", how="left")
        matched = matched & (share >= AMBIGUOUS_PREFIX_SHARE)
    frame = frame.with_columns(matched.fill_null(False).alias("_matched"))
    if not frame.get_column("_matched").any():  # only look-alikes it refused (`[rank3]:`)
        return None
    hit = pl.col("_matched")
    prefix_length = pl.col("_groups").struct.field("prefix").str.len_chars()
    updates = {
        name: pl.when(hit).then(value).otherwise(pl.col(name)).cast(frame.schema[name])
        for name, value in framer.fields(pl.col("_groups")).items()
    }
    return frame.with_columns(
        pl.when(hit).then(message.str.slice(prefix_length)).otherwise(message).alias("message"),
        pl.when(hit)
        .then(
            pl.concat_str(pl.col("framing"), pl.lit(framer.name), separator="+", ignore_nulls=True)
        )
        .otherwise(pl.col("framing"))
        .alias("framing"),
        **updates,
    ).drop("_groups", "_matched", *(["_nonblank"] if framer.per_file else []))


def _line_after_bar(groups: pl.Expr) -> pl.Expr:
    """Whether a log line follows a tqdm bar on its line: anything but padding after a whole
    bar; a record's bracketed header (`[E ...`, `[rank3]:`) after a bar cut before its counts."""
    after = pl.col("message").str.slice(_group(groups, "prefix").str.len_chars())
    cut = _group(groups, "cut").is_not_null()
    return (after.str.strip_chars() != "") & (~cut | after.str.starts_with("["))


def _repeats_the_line_before(groups: pl.Expr) -> pl.Expr:
    """Whether the same writer's line before (in the same file, as the framers before this one
    told writers apart: interleaved workers write one console) starts with the same prefix: a
    logger repeating its record's header."""
    prefix = _group(groups, "prefix")
    writer = [pl.col(name).cast(pl.String).fill_null("") for name in _WRITER_COLUMNS]
    return (prefix.shift(1).over("file", *writer) == prefix).fill_null(False)


# what tells apart the processes writing one file, as far as the framers have read
_WRITER_COLUMNS = ("prefix_host", "prefix_pid", "prefix_local_rank", "prefix_rank", "_task")


def _relayed_worker(frame: pl.DataFrame) -> pl.DataFrame:
    """A relayed traceback's lines take the local rank its record's opening line names (the
    lines of one record share its header, to the microsecond and the pid)."""
    header = pl.coalesce("_relay", pl.col("message").str.extract(f"^({ELASTIC_RELAY})", 1))
    opening = _number(pl.col("message").str.extract(RELAY_OPENING, 1))
    named = opening.forward_fill().over("file", header)
    return frame.with_columns(
        pl.when(pl.col("_relay").is_not_null())
        .then(pl.coalesce("prefix_local_rank", named))
        .otherwise(pl.col("prefix_local_rank"))
        .alias("prefix_local_rank")
    )


def _join_tagged_writes(frame: pl.DataFrame) -> pl.DataFrame:
    """Open MPI tags each write of a process, not each line: a line written in two writes holds
    its own tag again where the second began (deepspeedai/DeepSpeed#1834: `[1,19]<stderr>:
    RuntimeError[1,19]<stderr>:: NCCL communicator was aborted on rank 19.`). The line's own
    tag is taken out of it; another process's tag inside it stays (their writes interleaved)."""
    again = pl.col("_own_tag").is_not_null() & pl.col("message").str.contains("]<", literal=True)
    if not frame.select(again.any()).item():
        return frame
    joined = pl.col("message").str.split(pl.col("_own_tag")).list.join("")
    return frame.with_columns(
        pl.when(again).then(joined).otherwise(pl.col("message")).alias("message")
    )


def _framed_by(name: str) -> pl.Expr:
    """Whether a line's prefixes, as peeled so far, include the framer `name`'s."""
    return pl.col("framing").str.contains(rf"(?:^|\+){name}(?:\+|$)").fill_null(False)


def _without_right_border(frame: pl.DataFrame) -> pl.DataFrame:
    """A box's right border and the padding before it, on every line of a file the box frames
    (its first line may open inside the box, the left border cut off with what came before)."""
    boxed = _framed_by("box").any().over("file")
    return frame.with_columns(
        pl.when(boxed)
        .then(pl.col("message").str.replace(BOX_RIGHT, ""))
        .otherwise(pl.col("message"))
        .alias("message")
    )


def _strip_ray_dedup(frame: pl.DataFrame) -> pl.DataFrame:
    """`... [repeated 8x across cluster]`: keep the count, drop the suffix from the message."""
    is_ray = _framed_by("ray")
    if not frame.select(is_ray.any()).item():
        return frame
    repeats = _number(pl.col("message").str.extract(RAY_DEDUP_SUFFIX, 1))
    return frame.with_columns(
        pl.when(is_ray).then(repeats).alias("prefix_repeats"),
        pl.when(is_ray & repeats.is_not_null())
        .then(pl.col("message").str.replace(RAY_DEDUP_SUFFIX, ""))
        .otherwise(pl.col("message"))
        .alias("message"),
    )


def _grep_path_writers(frame: pl.DataFrame) -> pl.DataFrame:
    """What each path `grep` named says of its writer, as a file of that name would: a global
    rank (a task of its own), or a torchrun tree's local rank and node; host and pid from an
    NCCL debug file's name. Read once per path, not per line."""
    from logforensics.attribution import rank_from_path  # (attribution frames lines: cycle)

    paths = frame.get_column("_grep_path").drop_nulls().unique().to_list()
    said = {path: rank_from_path(path) for path in paths}
    writers = pl.DataFrame(
        {
            "_grep_path": paths,
            "_grep_rank": [said[path].rank for path in paths],
            "_grep_local": [said[path].local_rank for path in paths],
            "_grep_node": [said[path].node for path in paths],
            "_grep_host": [said[path].host for path in paths],
            "_grep_pid": [said[path].pid for path in paths],
        },
        schema={
            "_grep_path": pl.String,
            "_grep_rank": pl.Int32,
            "_grep_local": pl.Int32,
            "_grep_node": pl.String,
            "_grep_host": pl.String,
            "_grep_pid": pl.Int64,
        },
    )
    joined = frame.join(writers, on="_grep_path", how="left", maintain_order="left")
    return joined.with_columns(
        pl.coalesce("_task", "_grep_rank").alias("_task"),
        pl.coalesce("prefix_local_rank", "_grep_local").alias("prefix_local_rank"),
        pl.coalesce("_node_name", "_grep_node").alias("_node_name"),
        pl.coalesce("prefix_host", "_grep_host").alias("prefix_host"),
        pl.coalesce("prefix_pid", "_grep_pid").alias("prefix_pid"),
    ).drop("_grep_rank", "_grep_local", "_grep_node", "_grep_host", "_grep_pid")


def _join_cri_partials(frame: pl.DataFrame) -> pl.DataFrame:
    """CRI splits long lines into `P` pieces ended by an `F` line: the first line of such a run
    gets the whole text, the others an empty message."""
    tag = pl.col("_cri_tag")
    if not frame.select((tag == "P").any()).item():
        return frame
    previous_tag = tag.shift(1).over("file", order_by="line")
    starts_run = previous_tag.is_null() | (previous_tag != "P")
    frame = frame.with_columns(starts_run.cum_sum().over("file", order_by="line").alias("_run"))
    in_partial_run = (tag == "P").any().over("file", "_run") & tag.is_not_null()
    first_of_run = pl.col("line") == pl.col("line").min().over("file", "_run")
    joined = pl.col("message").str.join("").over("file", "_run", order_by="line")
    return frame.with_columns(
        pl.when(in_partial_run & first_of_run)
        .then(joined)
        .when(in_partial_run)
        .then(pl.lit(""))
        .otherwise(pl.col("message"))
        .alias("message")
    ).drop("_run")


# A node's launcher speaking: torchrun's agent (its loggers and glog paths), DeepSpeed's
# per-node launcher. Under a task's tag they make the task a node, not a rank.
AGENT_WORDS = (
    "torch.distributed.elastic",
    "torch/distributed/elastic/",
    "torch/distributed/run.py",
    "torch.distributed.run",
    "[launch.py:",
)


def _files_whose_tasks_are_nodes(frame: pl.DataFrame) -> list[str]:
    """Files where a launcher's task is a node's launcher, not one rank: several processes
    write under one task's tag (NCCL's `host:pid:tid [dev]` with two pids; microsoft/
    MeshTransformer#38: pids 993, 994, 997 on GPUs 3, 4, 7, all under mpirun's `[1,0]`), or
    the task's lines hold a node launcher's own records (`srun -l torchrun ...`: task 0's lines
    hold torchrun's, its failure summary naming rank 7), and its workers' ranks are theirs to
    tell. Only tagged lines are read: a job without launcher tasks pays nothing."""
    tagged = frame.filter(pl.col("_task").is_not_null())
    if tagged.is_empty():
        return []
    pids = tagged.select(
        "file", "_task", pl.col("message").str.extract(f"^{NCCL_PROCESS}", 2).alias("_pid")
    )
    shared = (
        pids.drop_nulls("_pid")
        .group_by("file", "_task")
        .agg(pl.col("_pid").n_unique())
        .filter(pl.col("_pid") > 1)
        .get_column("file")
    )
    agents = tagged.filter(pl.col("message").str.contains_any(list(AGENT_WORDS))).get_column("file")
    return pl.concat([shared, agents]).unique().to_list()


def _tp_numbered(frame: pl.DataFrame) -> pl.DataFrame:
    """`_task` from SGLang's TP number beside a DP number, in the files where no TP number
    comes with two DP numbers (see SGLANG_WORKER)."""
    pairs = frame.filter(pl.col("_dp_tp").is_not_null()).select("file", "_dp", "_dp_tp").unique()
    if pairs.is_empty():
        return frame
    replicas = (
        pairs.group_by("file", "_dp_tp")
        .agg(pl.col("_dp").n_unique().alias("_dps"))
        .filter(pl.col("_dps") > 1)
        .get_column("file")
    )
    one_dp = pairs.group_by("file").agg(pl.col("_dp").n_unique().alias("_dps"))
    unclear = pl.concat([replicas, one_dp.filter(pl.col("_dps") < 2).get_column("file")])
    numbered = pl.col("_dp_tp").is_not_null() & ~pl.col("file").is_in(unclear.implode())
    return frame.with_columns(pl.when(numbered).then("_dp_tp").otherwise("_task").alias("_task"))


def _resolve_ranks(frame: pl.DataFrame) -> pl.DataFrame:
    """Decide, per file, what the rank-like tags mean (see the module docstring)."""
    frame = _tp_numbered(frame)
    outer_tag, inner_tag = pl.col("_rank"), pl.col("_inner_rank")
    # `[rank1]: [rank5]:` anywhere in the file: its outer `[rankN]` tags are torchrun's local ranks
    template_local = (inner_tag.is_not_null() & (inner_tag != outer_tag)).any().over("file")
    if frame.get_column("_inner_rank").null_count() == frame.height:
        template_local = pl.lit(False)  # (no window over every line where no tag is inner)
    torch_rank = (
        pl.when(template_local).then(inner_tag).otherwise(pl.coalesce(inner_tag, outer_tag))
    )
    local_rank = pl.coalesce(pl.col("prefix_local_rank"), pl.when(template_local).then(outer_tag))
    frame = frame.with_columns(
        pl.coalesce(torch_rank, pl.col("_template_rank")).alias("_torch_rank"),
        local_rank.alias("prefix_local_rank"),
    )
    task = pl.col("_task")
    if frame.get_column("_task").null_count() == frame.height:  # no launcher numbered tasks
        return frame.with_columns(
            pl.col("_torch_rank").cast(frame.schema["prefix_rank"]).alias("prefix_rank"),
            pl.col("_node_name").cast(frame.schema["prefix_node"]).alias("prefix_node"),
            pl.col("_node_index")
            .cast(frame.schema["prefix_node_index"])
            .alias("prefix_node_index"),
        ).drop("_torch_rank", *_SCRATCH)
    wraps_agent = task.is_not_null() & (
        pl.col("prefix_local_rank").is_not_null()
        | (pl.col("_torch_rank").is_not_null() & (pl.col("_torch_rank") != task))
        | pl.col("_het").is_not_null()
        | pl.col("file").is_in(_files_whose_tasks_are_nodes(frame))
    )
    task_is_node = wraps_agent.any().over("file")
    launcher = pl.col("framing").str.extract(r"(srun|mpirun)", 1)
    node_name = pl.concat_str(
        launcher,
        pl.when(pl.col("_het").is_not_null()).then(
            pl.concat_str(pl.lit(" P"), pl.col("_het").cast(pl.String))
        ),
        pl.lit(" task "),
        task.cast(pl.String),
        ignore_nulls=True,
    )
    return frame.with_columns(
        pl.coalesce(pl.col("_torch_rank"), pl.when(~task_is_node).then(task)).alias("prefix_rank"),
        pl.coalesce(
            pl.when(task_is_node & task.is_not_null()).then(node_name), pl.col("_node_name")
        ).alias("prefix_node"),
        pl.coalesce(
            pl.when(task_is_node & pl.col("_het").is_null()).then(task), pl.col("_node_index")
        ).alias("prefix_node_index"),
    ).drop("_torch_rank", *_SCRATCH)
