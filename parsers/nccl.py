"""NCCL_DEBUG output and PyTorch's wrappers around NCCL errors.

The line grammar (NVIDIA/nccl:src/debug.cc), optionally after a launcher prefix and, since
NCCL 2.26, after a `[%F %T] ` timestamp:

    host:pid:tid [cudaDev] NCCL INFO <message>
    host:pid:tid [cudaDev] file.cc:123 (func) NCCL WARN <message>      (2.x without `(func)`)
    host:pid:tid [cudaDev] 12.345678 func:123 NCCL TRACE <message>

WARN lines are preceded by an empty line. The communicator init record, by version
(NVIDIA/nccl:src/init.cc across tags):

    2.4          comm %p rank %d nranks %d cudaDev %d nvmlDev %d - Init COMPLETE
    2.7-2.15     comm %p rank %d nranks %d cudaDev %d busId %x - Init COMPLETE
    2.16-2.18.1  ... busId %lx commId 0x%llx - Init COMPLETE
    2.18.3-2.20  ... cudaDev %d nvmlDev %d busId %lx commId 0x%llx - Init START / COMPLETE
    2.21+        `ncclCommInitRank comm ...` / `ncclCommSplit comm ... parent %p color %d key %d`
    2.30         `[Rank %d] ncclCommInitRank comm ... - Init START`
    teardown     comm %p rank %d nranks %d cudaDev %d busId %lx - Abort|Destroy COMPLETE

PyTorch (pytorch/pytorch:torch/csrc/distributed/c10d/NCCLUtils.hpp) wraps an ncclResult_t as
`NCCL error in: <file>:<line>, <ncclGetErrorString>, NCCL version x.y.z`, then a line naming the
result (`ncclInvalidUsage: ...`), then `Last error:` and NCCL's last WARN text on the next line.

Events (family `nccl`): `nccl_version`; `nccl_init` (comm, comm_rank, nranks, cuda_dev,
nvml_dev, bus_id, comm_id; `extra` phase start|complete|layout, api, nnodes, local_ranks,
local_rank, parent, color, key); `nccl_abort` (phase abort|destroy); `duplicate_gpu`
(comm_rank and peer_rank = the two ranks NCCL names, bus_id); `nccl_error` (peer, error_code,
exc_message; for PyTorch's wrapper also nccl_version, exc_type and the WorkNCCL seq/op);
`nccl_warn`; `nccl_unwind` (error_code = the ncclResult_t); `nccl_mismatch` (NCCL 2.4-2.9's
mismatched-collective WARN, comm_rank = the reporting rank it names); `oom` (NCCL's own
`Cuda failure 'out of memory'`); `nccl_topology` (comm_rank = the process's own rank in a
ring, tree or channel line). `rank` is never set from NCCL's own lines: they name a process
(host, pid), and `logforensics.process_map` maps it to its global rank through the world
communicator's init records, or through its topology lines when no init record names it.
PyTorch's wrapper line may carry the default group's `[Rank N]`: that is its rank.

A WARN is an error when its text names a network, system or CUDA failure, or when NCCL's
return-code chain (`misc/socket.cc:564 -> 2`) follows it in its thread: the WARN's function
failed and returned that ncclResult_t up the stack. `extra` then holds the `result` and the
`subsystem` the WARN comes from (bootstrap, socket, infiniband, proxy, cuda, shared memory,
topology).

Ring, tree, channel and connection lines are counted as recognised: a 1,024-rank job prints
hundreds of thousands of them. In a file without init or teardown records (an NCCL 2.4-era
excerpt, or a set-up that failed before `Init COMPLETE`), the first line that states a
process's own rank becomes an `nccl_topology` event.
"""

from __future__ import annotations

import polars as pl

from logforensics.registry import LineParser
from parsers.watchdog import RANK_TAG

# The identity in front of every NCCL_DEBUG line, found anywhere in the message so that
# unpeeled launcher prefixes do not hide it (mpirun `[1,2]<stdout>:`, Ray `(Worker pid=1) `):
#   [2025-03-18 21:25:51] nickelpie-job-0:1:1 [0] NCCL INFO NCCL version 2.26.2+cuda12.8
#   [1,2]<stdout>:smc-gpu-03:29880:30398 [0] init.cc:497 NCCL WARN Duplicate GPU detected : ...
# A WARN pasted without its identity keeps its source and words (NVIDIA/NeMo#13996, quoted
# in an issue: `graph/topo.h:230 NCCL WARN Could not find NET with id 0`): read, no process.
# A line that kept only its device (`[0] misc/socket.cc:71 NCCL WARN socketProgress: ...`,
# NVIDIA/nccl#1612; `[3] include/shm.h:28 NCCL WARN ...`, NVIDIA/nccl#525) is read the same.
# A job's own logger may write the source and the process in brackets of its own before NCCL's
# level (NVIDIA/nccl#1618's job logs, each line of a 1,024-rank job behind `[0604/1024]` and a
# time):  [misc/socket.cc:586] [s12gn3064:pid=3942408] NCCL WARN socketPollConnect poll() ...
BRACKETED_IDENTITY = (
    r"\[(?P<bracket_src>[\w./-]+:\d+)\] \[(?P<bracket_host>[^\s:\[\]]+):pid=(?P<bracket_pid>\d+)\] "
)
# An NCCL build of Alibaba's (ACCL) writes the whole identity in brackets, no spaces between
# (OpenRLHF/OpenRLHF#795, a Ray actor's lines):
#   [dlc1f0bnd3uip696-master-0][16101:17880][0][init.cc:1815] NCCL WARN init.cc:1815 -> 5
ALL_BRACKETED = (
    r"\[(?P<all_host>[^\s:\[\]]+)\]\[(?P<all_pid>\d+):(?P<all_tid>\d+)\]\[(?P<all_dev>\d+)\]"
    r"\[(?P<all_src>[\w./-]+:\d+)\] "
)
NCCL_LINE = (
    r"(?:\[(?P<ts>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})\] )?"
    rf"(?:{ALL_BRACKETED})?"
    r"(?:(?:(?P<host>[^\s:\[\]]*):(?P<pid>\d+):(?P<tid>\d+) )?\[(?P<dev>\d+)\] )?"
    r"(?:[0-9.]+ )?(?:(?P<src>\S+:\d+)(?: \((?P<func>[^)\s]*)\))? )?"
    rf"(?:{BRACKETED_IDENTITY})?"
    r"NCCL (?P<level>INFO|WARN|TRACE) "
)
# The same, without captures: a DFA-only test for the bulk of the lines.
NCCL_LINE_TEST = (
    r"[^\s:\[\]]*:\d+:\d+ \[\d+\] (?:\S+ ){0,3}NCCL (?:INFO|WARN|TRACE) "
    r"|^(?:\S+:\d+ )?(?:\(\S*\) )?NCCL WARN "
    r"|^\[\d+\] (?:\S+ ){0,3}NCCL (?:INFO|WARN|TRACE) "
    # a paste that cut the process identity off (InternLM/xtuner#251):
    #   NCCL INFO comm 0x24a37dd0 rank 1 nranks 2 cudaDev 0 busId 2010 - Abort COMPLETE
    r"|^NCCL (?:INFO|WARN|TRACE) "
    r"|\[[^\s:\[\]]+:pid=\d+\] NCCL (?:INFO|WARN|TRACE) "
    r"|\]\[\d+:\d+\]\[\d+\]\[[\w./-]+:\d+\] NCCL (?:INFO|WARN|TRACE) "
)

# INFO lines that become events; every other INFO line is only counted.
# `A03-R28-I49-3-9000018:193027:193119 [7] NCCL INFO comm 0x7fdf08000d00 rank 15 nranks 16
#  cudaDev 7 busId e7000 - Init COMPLETE`
EVENTFUL_INFO = (
    " - Init ",
    "- Init START",
    "NCCL INFO Init timings",
    " - Abort COMPLETE",
    " - Destroy COMPLETE",
    "NCCL version ",
    " nRanks ",
    "sharing GPU with bus",
    "same GPU detected and allowed",
    " : Using ",
    "Call to connect returned ",
    "socketPollConnect: connect to ",
    "socketPollConnect: connect returned ",
    "NET/Plugin",
    "Plugin Path : ",
    "Using network ",
    "Using internal Network ",
)
# The interface NCCL's bootstrap and socket transport took (pytorch/pytorch#52916, NCCL 2.7):
#   GPU9:10330:10330 [0] NCCL INFO Bootstrap : Using [0]lo:127.0.0.1<0>
#   GPU9:10330:10330 [0] NCCL INFO NET/Socket : Using [0]lo:127.0.0.1<0>
# (newer NCCL leaves out the `[0]`: `Bootstrap : Using eth0:10.0.0.4<0>`); the first is kept
# (NCCL 2.3 names each interface on a line of its own: `NET : Using interface lo:127.0.0.1<0>`,
# horovod/horovod#789)
INTERFACE = (
    r"^(?:Bootstrap|NET/Socket|NET) : Using (?:interface )?(?:\[\d+\])?"
    r"(?P<iface>[\w.-]+):(?P<addr>[0-9A-Fa-f.:%]+)<"
)
# The network each process's NCCL set up: an external network plugin it loaded, its internal
# one, and the transport it uses (NVIDIA/nccl#1634, two nodes of one mpirun, verbatim:
#   HGX-H100-11:18226:18274 [5] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.  # noqa: E501
#   HGX-H100-04:589474:589541 [0] NCCL INFO Plugin Path : /opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so  # noqa: E501
# older NCCL: `NET/Plugin : No plugin found (libnccl-net.so), using internal implementation`,
# and `Using network Socket` or `Using network IB` once the transport is chosen)
NETWORK_INTERNAL = (
    r"^NET/Plugin ?: (?:Could not find: \S+? ?\S*\.so\.? Using internal (?:network|net) plugin"
    r"|No plugin found \([^)]*\)(?:,? using internal implementation|\.?\s*$))"
)
NETWORK_PLUGIN = r"^(?:Plugin Path : (\S+)|NET/Plugin: Loaded net plugin (.+?) \(v\d+\))"
NETWORK_USED = r"^Using (?:internal )?[Nn]etwork (\S.*?)\s*$"
# A connect the bootstrap retries (same thread): nobody listens at the address it was given
#   GPU9:10330:10399 [0] NCCL INFO Call to connect returned Connection refused, retrying
# newer NCCL names the address and counts the tries (pytorch/pytorch#167288):
#   bj4-ml-g8h20-k8s-slave1026-20250527:5971:6015 [4] NCCL INFO socketPollConnect: connect to
#   10.29.224.148<52333> returned Connection refused, retrying (18/34) after sleep for 1800 msec
# and, where NCCL warned of the failed poll first, without the address (NVIDIA/nccl#1618's
# test of its retry: `socketPollConnect: connect returned Connection timed out, retrying (1/34)
# after sleep for 100 msec`)
CONNECT_RETRY = (
    r"(?:Call to connect|connect(?: to (?P<addr>\S+<\d+>))?) returned "
    r"(?P<why>[A-Z][a-z]+(?: [a-z]+)*), retrying"
)
# The error unwinding its stack, one line per frame; newer NCCL adds `(func)` and a suffix:
#   a100-st-p4d24xlarge-22:183006:183220 [1] NCCL INFO misc/socket.cc:535 -> 6
#   host:1:2 [0] NCCL INFO group.cc:79 (ncclAsyncJobMain) -> 3 [Async thread]
UNWIND_TEST = r"NCCL INFO \S+:\d+ (?:\(\S*\) )?-> -?\d+"
UNWIND = r"^(?P<src>\S+:\d+)(?: \((?P<func>\S*)\))? -> (?P<code>-?\d+)"

# `NCCL version 2.10.3+cuda11.3` (bare, NCCL <= 2.21 rank 0), `... NCCL INFO NCCL version
# 2.18.3+cuda12.2`, and PyTorch's `..., NCCL version 2.19.3`.
VERSION = r"NCCL version (\d+\.\d+\.\d+[\w.-]*(?:\+cuda\d+\.\d+)?)"

# Fields of the init / teardown record (each its own short pattern: versions add and drop
# fields). `kolyoz2:25146:25827 [0] NCCL INFO ncclCommInitRank comm 0x559d5aa8ca00 rank 4
# nranks 8 cudaDev 0 nvmlDev 0 busId 42000 commId 0x996ee6f117cb8e1e - Init START`
INIT_PHASE = r"- (?P<what>Init|Abort|Destroy) (?P<phase>START|COMPLETE)"
# NCCL 2.23+ times each init once it has completed (NVIDIA/nccl#1646, verbatim):
#   d5618706-01:1106802:1106870 [3] NCCL INFO Init timings - ncclCommInitRankConfig: rank 3
#   nranks 8 total 55.01 (kernels 52.45, alloc 0.41, bootstrap 0.57, ...)
# a record of that rank's completed init, whether or not the excerpt kept `Init COMPLETE`
INIT_TIMINGS = r"^Init timings(?: - (?P<api>ncclComm\w+))?: rank \d+ nranks \d+ total "
INIT_API = r"^(?:\[Rank \d+\] )?(ncclComm\w+) comm "
COMM = r"(?:^|\s)comm (0x[0-9a-fA-F]+)"
COMM_RANKS = r"(?:^|\s)rank (?P<rank>\d+) n[rR]anks (?P<nranks>\d+)"
CUDA_DEV = r"\scudaDev (\d+)"
NVML_DEV = r"\snvmlDev (\d+)"
BUS_ID = r"\sbusId (?:0x)?([0-9a-fA-F]+)"
COMM_ID = r"\scommId (0x[0-9a-fA-F]+)"
PARENT = r"\sparent (0x[0-9a-fA-F]+)"
COLOR_KEY = r"\scolor (?P<color>-?\d+) key (?P<key>-?\d+)"
# `qh100-gpu20:39634:39692 [5] NCCL INFO comm 0x5558e3c10180 rank 13 nRanks 16 nNodes 2
#  localRanks 8 localRank 5 MNNVL 0`
NODE_LAYOUT = (
    r"nNodes (?P<nnodes>\d+) localRanks (?P<local_ranks>\d+) localRank (?P<local_rank>\d+)"
)

# Two ranks on one GPU. NCCL 2.5-2.29 (WARN, also after PyTorch's `Last error:`):
#   Duplicate GPU detected : rank 2 and rank 0 both on CUDA device 1000
# NCCL 2.30.3 (INFO, first rank of the host only): Detected ranks 0 and 1 sharing GPU with bus
# 1B000 on this node
# PyTorch's own check before NCCL's (pytorch/pytorch#68666), naming the CUDA device and host:
#   RuntimeError: Duplicated GPU device is not allowed by NCCL. Rank [0] and rank [8] both
#   attached to GPU device 0 on the same host learngpu001.09.ftw5.facebook.com. Most likely ...
DUPLICATE_PAIR = (
    r"(?:(?:Duplicate GPU detected : rank (?P<a>\d+) and rank (?P<b>\d+) both on CUDA device "
    r"|Detected ranks (?P<a2>\d+) and (?P<b2>\d+) sharing GPU with bus )(?P<bus>[0-9a-fA-F]+)"
    r"|Rank \[(?P<a3>\d+)\] and rank \[(?P<b3>\d+)\] both attached to GPU device "
    r"(?P<device>\d+) on the same host (?P<on_host>\S+?)\.?(?:\s|$))"
)
TORCH_DUPLICATE = "Duplicated GPU device is not allowed by NCCL"
# NCCL 2.30 WARNs that name no rank:
#   Multiple ranks detected using the same GPU on this node. Set NCCL_MULTI_RANK_GPU_ENABLE=1 ...
#   Multiple Ranks are using the same GPU/Partition. Set NCCL_MULTI_RANK_GPU_ENABLE=1 ...
SHARED_GPU = r"Multiple [Rr]anks (?:detected using|are using) the same GPU"
SHARED_GPU_ALLOWED = "Multiple ranks on the same GPU detected and allowed"

# NCCL's device-side check of the collectives (ncclCommGetAsyncError, 2.4 to 2.9), naming the
# reporting process's own rank: asserted (`container-e28-...:105:185 [0] init.cc:1247 NCCL WARN
# Mismatched collective detected, please check your collective calls at and around rank 11.
# ...`) or suspected while it hangs (Lightning-AI/pytorch-lightning#8214: `[0] init.cc:1256 NCCL
# WARN Your program may be hanging, this may be caused by a collective mismatch around rank 1.
# ...`)
MISMATCH = (
    r"(?:Mismatched collective detected, please check your collective calls at and around"
    r"|may be caused by a collective mismatch around) rank (\d+)"
)

# the InfiniBand device's own error event (libibverbs' names: `port error`, `local
# catastrophic error`, `CQ error`, ...; `port active` and the like are no failure):
#   transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : port error
# (Lightning-AI/lit-llama#380: every process of one node, then the job hung)
IB_ASYNC_ERROR = r"Got async event : .*\b(?:error|catastrophic)\b"

# A report that the other side went away (NVIDIA/nccl misc/socket.cc, proxy.cc; ncclResult_t 6
# is ncclRemoteError; PyTorch's `remote process exited or there was a network error`).
ABOUT_A_PEER = (
    r"(?i)remote peer|connection closed|connection reset|broken pipe|remote process exited"
    r"|retcode 6\b|ncclRemoteError"
    r"|invalid receiver queue pair"
)
# WARN texts that are network, system or CUDA failures (NVIDIA/nccl: misc/socket.cc, proxy.cc,
# transport/net_ib.cc, include/checks.h), errors even where an excerpt lacks the return-code
# chain after them; any other WARN is an error only when that chain follows it.
#   Net : Call to recv from 10.200.84.247<58355> failed : Broken pipe
#   socketProgress: Connection closed by remote peer gpu004.ds-a4-r02.abc.com<55693>
#   NET/IB : Got completion from peer 10.0.35.1<49189> with error 4, opcode 5327, len 5327, ...
#   [Proxy Service 9] Failed to execute operation Connect from rank 9, retcode 6
#   Cuda failure 'named symbol not found'
ERROR_WARN = (
    # a socket's connect that failed for good: NCCL retries a refused or timed-out one with an
    # INFO line, and warns only when it gives up (wenet-e2e/wenet#1891, NCCL 2.7's
    # `include/socket.h:403 NCCL WARN Connect to fe80::...%6<57335> failed : Network is
    # unreachable`; newer NCCL's `socketStartConnect: Connect to ... failed : ...`)
    r"Connect to \S+ failed|"
    r"Net ?: |NET/\w+ ?: Got completion|Got completion from peer|[Cc]onnection closed|"
    r"[Cc]onnection refused|[Cc]onnection reset|Broken pipe|remote peer|socketProgress|"
    r"socketPoll|socketWait|Call to \w+|\[Proxy \w+ \d+\] Failed|[Cc]uda failure|CUDA failure|"
    r"[Cc]uda error|CUDA error|System call|Timeout waiting|timed out"
    # the P2P transport's CUDA IPC open failing (Horovod's troubleshooting guide: two servers
    # with one hostname take each other's GPUs for local ones)
    r"|failed to open CUDA IPC handle"
    # init cannot map the topology to a network device (NVIDIA/NeMo#13996, NVIDIA/nccl#1748)
    r"|Could not find NET with id"
    # a connection to NCCL's port that was not NCCL's (a scanner, a metrics scraper: the magic
    # `74656d2f20544547` is `GET /met`); the proxy thread could hang on it (NVIDIA/nccl#1808)
    r"|wrong magic"
    # a request the network plugin's fabric failed (aws-ofi-nccl on EFA, aws/aws-ofi-nccl#156):
    #   NET/OFI Request 0x7fbb944701b8 completed with error. RC: 20. Error: unknown error. ...
    r"|completed with error"
    # an operation that did not succeed, with its code (aws/aws-ofi-nccl#584, Libfabric too old
    # for NCCL 2.19's memory registration):
    #   NET/OFI Unable to register memory (type = 2) for device 0. RC: -22, Error: Invalid argument
    r"|Unable to [^.]*\. RC: -?\d+"
    # any call the plugin reports failed with its code and the error's name (aws/aws-ofi-nccl#24:
    # `NET/OFI Couldn't open AV. RC: -22, ERROR: Invalid argument`, and the job hung)
    r"|\. RC: -?\d+, (?:Error|ERROR): "
    # a system call's failure with its errno (ai-dynamo/dynamo#1408, /dev/shm full in a pod):
    #   misc/shmutils.cc:87 NCCL WARN Error: failed to extend /dev/shm/nccl-YrFC5V to 33030532
    #   bytes, error: No space left on device (28)
    r"|\berror: [A-Z][a-z]+(?: [a-z]+){0,5} \(\d+\)"
    # its segment not made, the errno cut (fms-fsdp#94, see BARE_WARN)
    r"|Error while creating shared memory segment"
    # the peers disagree on a transfer's size (a collective called with different sizes, or
    # different protocols): NCCL fails the operation (NVIDIA/nccl#626, #969, #1176):
    #   transport/net_socket.cc:424 NCCL WARN NET/Socket : peer 192.168.161.30<59210> message
    #   truncated : receiving 1048576 bytes instead of 65536
    r"|[Mm]essage truncated|collective mismatch error"
    # the InfiniBand device's own error event (see IB_ASYNC_ERROR)
    r"|"
    + IB_ASYNC_ERROR
    # a WARN that opens by calling itself an error: NCCL_NET naming a network no plugin
    # provides (the CSCS Alps docs, `NCCL_NET="AWS Libfabric"` without the OFI plugin: NCCL
    # cannot start), a ring that does not close
    #   nid006365:180142:180163 [0] net.cc:626 NCCL WARN Error: network AWS Libfabric not found.
    + r"|^Error ?: "
)
# A network peer as printed: `10.200.84.247<58355>`, `gpu004.ds-a4-r02.abc.com<55693>`; the
# network plugin names the peer's instance: `Peer host id: i-08d8a345a75ab52a0.`
PEER = r"([^\s<>()]+<\d+>)"
PEER_HOST = r"Peer host id: ([\w.-]*\w)"
# What failed, as printed: `retcode 6`, IB `with error 4` / `with status=12` /
# `with status=IBV_WC_RETRY_EXC_ERR(12)`, `Cuda failure 'named symbol not found'` (2.19+:
# `Cuda failure 2 'out of memory'`), strerror after `failed : `.
RETCODE = r"retcode (\d+)"
IB_STATUS = r"Got completion .*?with (?:error |status=)(\w+(?:\(\d+\))?)"
CUDA_FAILURE = r"[Cc]uda failure (?:\d+ )?'([^']{1,80})'"
# `completed with error. RC: 5. Error: Invalid receiver queue pair number (QPN) My EFA addr: ...`
PLUGIN_ERROR = (
    r"(?:completed with error\. RC: \d+\. Error: (.{1,80}?)(?:\.(?: |$)| My |$)"
    r"|RC: -?\d+, (?:Error|ERROR): (.{1,80}?)\.?$)"
)
# strerror's words after a failed call: `failed : Broken pipe`, and a verbs call's `failed with
# error Cannot allocate memory` (nanochat's two-node notes: `Call to ibv_create_cq failed ...`)
STRERROR = r"failed(?: ?:| with error) ([A-Z][a-z]+(?: [a-z]+){0,4})"
# `[Proxy Service 9] Failed to execute operation Connect from rank 9, retcode 6`: the proxy's
# own rank in the communicator.
PROXY_RANK = r"\[Proxy \w+ (\d+)\]"

# The ncclResult_t a return-code chain carries (RESULT_CODES below); 0 is success and 7 (in
# progress) no failure.
# Where a failing WARN comes from, by its source file and words (first match wins):
#   bootstrap.cc:77 NCCL WARN Message truncated : received 256 bytes instead of 4
#   transport/net_ib.cc:1038 NCCL WARN NET/IB : req 0/1 tag 0 peer 10.10.23.6<58683> ...
#   misc/socket.cc:483 NCCL WARN socketStartConnect: Connect to 10.0.0.2<45763> failed : ...
#   graph/xml.cc:332 NCCL WARN Could not find real path of /sys/class/pci_bus/0000:01/../..
#   include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device
SUBSYSTEMS = (
    ("bootstrap", r"(?i)bootstrap"),
    ("infiniband", r"NET/IB|net_ib|ib_plugin|ibvwrap|Got completion|\bibv_\w+"),
    ("network plugin", r"NET/OFI|\bofi_"),
    # NVLink SHARP multicast set-up (transport/nvls.cc)
    ("nvls", r"\bnvls"),
    ("proxy", r"\[Proxy |\[Service thread\]|proxy\.cc"),
    ("socket", r"(?i)socket|Net ?: |Connect to |connection |Broken pipe"),
    # the network transport's own calls (`include/net.h:25 -> 2`, `transport/net.cc:515 -> 2`)
    ("network transport", r"\btransport/net\.cc|\binclude/net\.h"),
    ("cuda", r"(?i)cuda|enqueue\.cc|alloc\.h"),
    ("shared memory", r"/dev/shm|shmutils|shm\.(?:cc|h)\b|shared memory"),
    ("topology", r"graph/|topo\.|xml\.cc|/sys/"),
)
# The bootstrap root (rank 0's process) heard from one rank twice: two processes were started
# with that rank, or it restarted and joined again (NVIDIA/nccl src/bootstrap.cc):
#   Bootstrap Root : rank 1 of 2 ranks has already checked in
CHECKED_IN_TWICE = (
    r"Bootstrap Root : rank (?P<rank>\d+) of (?P<nranks>\d+) ranks has already checked in"
)
# A process asked NCCL for a rank past the communicator's size: more processes were started than
# the world size says, or ranks were numbered past it (NVIDIA/nccl src/init.cc; HybrIK#47, a
# script that ran on 8 GPUs with `--world-size 4`):
#   ued37c44e4ea65b:6861:6861 [7] init.cc:981 NCCL WARN Invalid rank requested : 7/4
INVALID_RANK = r"Invalid rank requested : (?P<rank>-?\d+)/(?P<nranks>\d+)"
# NCCL's own CUDA allocation failed: `Cuda failure 'out of memory'` (2.19+: `Cuda failure 2
# 'out of memory'`).
NCCL_OOM = r"[Cc]uda failure (?:\d+ )?'out of memory'"
# The WARN NCCL prints next, as PyTorch's `Last error:` quotes it when NCCL_DEBUG is unset:
# `Failed to CUDA calloc async 1920 bytes` (deepspeedai/DeepSpeed#3827); every posted NCCL_DEBUG
# log shows it right after the out-of-memory one (NVIDIA/nccl#962, #1235, #1485).
FAILED_ALLOCATION = r"^Failed to CUDA (?:calloc|malloc)(?: async)? \d+ bytes"

# A process's own rank in its topology lines (NVIDIA/nccl init.cc, graph/connect.cc,
# transport/{p2p,shm,net}.cc across tags):
#   Trees [0] 1/-1/-1->0->-1 [1] ...        2.7+ down/down/down->rank->up (2.4: up->rank->down)
#   Ring 02 : 2 -> 0 -> 1                   prev -> rank -> next
#   Ring 00 : 30 -> 28 [send] via NET/Socket/0, Ring 00 : 155[3d000] -> 157[b2000] via P2P/IPC
#   Channel 03/0 : 13[5] -> 4[4] [receive] via NET/IB/3     (the receiving side prints itself
#                                                            second)
TOPOLOGY_LITERALS = ("Trees [", "Ring ", "Channel ")
TREES_RANK = r"NCCL INFO Trees \[\d+\] [-\d/]*->(\d+)->"
LINK_RANKS = (
    r"NCCL INFO (?:Ring|Channel) \d+(?:/\d+)? : (?P<a>\d+)(?:\[[0-9a-fA-F]+\])? -> "
    r"(?P<b>\d+)(?:\[[0-9a-fA-F]+\])?(?P<middle> -> -?\d+)?(?P<receive> \[receive\])?"
)
# The process identity alone, for topology lines (see NCCL_LINE).
PROCESS = r"(?P<host>[^\s:\[\]]*):(?P<pid>\d+):\d+ \[\d+\] "

# PyTorch's wrapper, one line (the class words stop at ` (run with`, `,` or ` - please`):
#   torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/
#   ProcessGroupNCCL.cpp:1333, unhandled system error (run with NCCL_DEBUG=INFO for details),
#   NCCL version 2.18.1
#   Collective WorkNCCL(SeqNum=2, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1000000)
#   raised the following async exception: NCCL error: unhandled system error (...), NCCL ...
# torch.cuda.nccl's own check (DataParallel's broadcast, NCCL calls under CUDA graph capture)
# names the result by its number (mit-han-lab/distrifuser#13: both processes' `what(): NCCL
# Error 5: invalid usage (run with NCCL_DEBUG=WARN for details)`):
#   RuntimeError: NCCL Error 2: unhandled system error
WRAPPER = r"NCCL (?:error(?: in: (?P<src>\S+:\d+),|:)|Error \d+:) (?P<code>[a-z][a-z ]*[a-z])"
WRAPPER_TYPE = r"((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception)): NCCL [Ee]rror"
# The wrapper a terminal or a paste wrapped after its source location, the result's words
# starting the next line (pytorch/pytorch#188567, a symmetric-memory rendezvous):
#   torch.distributed.DistBackendError: NCCL error in: .../symm_mem/NCCLSymmetricMemory.cu:174,
#   invalid argument (run with NCCL_DEBUG=WARN for details), NCCL version 2.29.7
WRAPPER_CUT = r"NCCL error in: (?P<src>\S+:\d+),\s*$"
CARRIED_CODE = r"^\s*([a-z][a-z ]*[a-z])(?: \(run with|,|$)"
# PyTorch's wrapper that a paste shortened, the result's name kept (littlemex/distributed-ai's
# EFA notes, verbatim): `torch.distributed.DistBackendError: NCCL error ... ncclInternalError:
# Internal check failed.`, its `Last error:` on the next line
WRAPPER_RESULT = (
    r"NCCL error\b.*?\b(ncclUnhandledCudaError|ncclSystemError|ncclInternalError"
    r"|ncclInvalidArgument|ncclInvalidUsage|ncclRemoteError): "
)
WORK = r"WorkNCCL\((?:SeqNum=(?P<seq>\d+), )?OpType=(?P<op>\w+)"
WORK_TIMEOUT = r"Timeout\(ms\)=(\d+)"
# `ncclInvalidUsage: This usually reflects invalid usage of NCCL library.`
RESULT_LINE = r"^\s*nccl[A-Z]\w+: "
# The result line without PyTorch's `NCCL error in: ...` before it is the error itself, its
# `Last error:` text two lines on (NVIDIA/nccl#1837, a torchx console):
#   [trainer0|0]:ncclInternalError: Internal check failed.
#   [trainer0|0]:Last error:
#   [trainer0|0]:ncclSocketInit: connecting to address  with family 59936 is neither ...
RESULT_NAME = (
    r"^\s*(ncclUnhandledCudaError|ncclSystemError|ncclInternalError|ncclInvalidArgument"
    r"|ncclInvalidUsage|ncclRemoteError): "
)
# Each failing result's number (ncclResult_t in nccl.h), as a return-code chain carries it
RESULT_CODES = {
    "ncclUnhandledCudaError": "1",
    "ncclSystemError": "2",
    "ncclInternalError": "3",
    "ncclInvalidArgument": "4",
    "ncclInvalidUsage": "5",
    "ncclRemoteError": "6",
}
# ncclGetErrorString's words for each result (NVIDIA/nccl src/init.cc), as the wrapper says them
RESULT_WORDS = {
    "ncclUnhandledCudaError": "unhandled cuda error",
    "ncclSystemError": "unhandled system error",
    "ncclInternalError": "internal error",
    "ncclInvalidArgument": "invalid argument",
    "ncclInvalidUsage": "invalid usage",
    "ncclRemoteError": "remote process exited or there was a network error",
}
LAST_ERROR = "Last error:"
NOT_A_LAST_ERROR = "Exception raised from"

# A WARN quoted by its words alone, without `NCCL WARN` or the process before them: words only
# NCCL's InfiniBand transport writes (NVIDIA/nccl#1664, all the reporter quoted:
# `NET/IBP:Got completion from peer 7.6.13.83<36315> with status=12 opcode=32698 len=32696
# vendor err 129 (Send)`). Read as a WARN of no process.
# So are the words of NCCL's shared memory helper about its segment in /dev/shm (an excerpt
# of pytorch/pytorch's console in foundation-model-stack/fms-fsdp#94 starts at `[rank3]: Error
# while creating shared memory segment /dev/shm/nccl-aqMV6n (size 5767520)`, the `Last error:`
# above it left out).
BARE_WARN = (
    r"^(?:(?:NET/\w+ ?: ?)?Got completion from peer \S+ with (?:status=|error )"
    r"|(?:Error: )?(?:Error while creating shared memory segment|failed to extend) /dev/shm/nccl-)"
)
BARE_WARN_WORDS = ("Got completion from peer", "/dev/shm/nccl-")
# NCCL 2.0-2.2 printed no `NCCL` before the level, its sources `.cu` files (Horovod's
# troubleshooting guide quotes `node1:22671:22795 [1] transport/p2p.cu:431 WARN failed to open
# CUDA IPC handle : 30 unknown error`) or headers (NVIDIA/nccl-tests#15: `gpu-bql-144-103:18553:
# 18611 [0] include/socket.h:360 WARN Call to connect failed : Connection timed out`): read as
# today's WARN
OLD_WARN = r"^[^\s:\[\]]*:\d+:\d+ \[\d+\] \S+\.(?:cu|h):\d+ WARN "
OLD_SOURCES = (".cu:", ".h:")

LITERALS = (
    "NCCL INFO",
    "NCCL WARN",
    "NCCL TRACE",
    "NCCL version",
    "NCCL error",
    "NCCL Error ",
    LAST_ERROR,
    "Duplicate GPU detected",
    TORCH_DUPLICATE,
    "the same GPU",
    "ncclInvalidUsage:",
    "ncclSystemError:",
    "ncclRemoteError:",
    "ncclInternalError:",
    "ncclUnhandledCudaError:",
    "ncclInvalidArgument:",
    *BARE_WARN_WORDS,
    *OLD_SOURCES,
)


def parse(lines: pl.DataFrame) -> pl.DataFrame:
    message = pl.col("message")
    lines = _warns_in_other_words(lines).with_columns(
        (pl.col("candidate") & message.str.contains(NCCL_LINE_TEST)).alias("_nccl")
    )
    nccl = lines.filter(pl.col("_nccl"))
    info = message.str.contains(" NCCL INFO ", literal=True) | message.str.starts_with("NCCL INFO ")
    eventful = message.str.contains("NCCL WARN ", literal=True) | (
        info & (message.str.contains_any(list(EVENTFUL_INFO)) | message.str.contains(UNWIND_TEST))
    )
    counted = nccl.filter(~eventful)
    is_topology = message.str.contains_any(list(TOPOLOGY_LITERALS))
    debug = _debug_lines(nccl.filter(eventful))
    return pl.concat(
        [
            counted.filter(~is_topology).select(
                "file", "line", pl.lit(None, pl.String).alias("event")
            ),
            _topology(counted.filter(is_topology), _initialised(debug)),
            debug,
            _pytorch_lines(lines.filter(~pl.col("_nccl"))),
        ],
        how="diagonal_relaxed",
    )


def _warns_in_other_words(lines: pl.DataFrame) -> pl.DataFrame:
    """`lines` with the WARNs quoted without `NCCL WARN` (BARE_WARN) or written by NCCL before
    2.3 (OLD_WARN) given today's words in `message`; `lines` itself where no line holds either
    (one scan: the other passes are not made on the bulk of INFO lines)."""
    message = pl.col("message")
    if not lines.select(message.str.contains_any([*BARE_WARN_WORDS, *OLD_SOURCES]).any()).item():
        return lines
    said_last = message.str.contains(LAST_ERROR, literal=True).fill_null(False)
    after_last_error = (said_last.shift(1) | said_last.shift(2)).over("file").fill_null(False)
    # (PyTorch's `Last error:` quotes the WARN on the lines after it: that text is its)
    bare = pl.col("candidate") & message.str.contains(BARE_WARN) & ~after_last_error
    old_warn = pl.col("candidate") & message.str.contains(OLD_WARN)
    return lines.sort("file", "line").with_columns(
        pl.when(bare)
        .then(pl.lit("NCCL WARN ") + message)
        .when(old_warn)
        .then(message.str.replace(" WARN ", " NCCL WARN ", literal=True))
        .otherwise(message)
        .alias("message")
    )


# What an `nccl_topology` event keeps; the other topology lines are only counted.
TOPOLOGY_KEPT = ("host", "pid", "comm_rank")


PROCESS_KEY = ("file", "host", "pid")


def _initialised(debug: pl.DataFrame) -> pl.DataFrame:
    """The processes (`file, host, pid`) that have an init or teardown record."""
    if "comm_rank" not in debug.columns:
        return pl.DataFrame(schema={"file": pl.String, "host": pl.String, "pid": pl.Int64})
    records = debug.filter(pl.col("event").is_in(["nccl_init", "nccl_abort"]))
    return records.select(
        "file", pl.col("host").cast(pl.String), pl.col("pid").cast(pl.Int64)
    ).unique()


def _topology(lines: pl.DataFrame, initialised: pl.DataFrame) -> pl.DataFrame:
    """Ring, tree and channel lines, all recognised. For a process without an init or teardown
    record (which gives it its rank; an excerpt may hold another process's record and not its
    own, vllm-project/vllm#9920), the first line that states its own rank becomes
    `nccl_topology` (comm_rank = that rank)."""
    message = pl.col("message")
    link = message.str.extract_groups(LINK_RANKS)
    own_in_link = (
        pl.when(
            link.struct.field("middle").is_not_null() | link.struct.field("receive").is_not_null()
        )
        .then(link.struct.field("b"))
        .otherwise(link.struct.field("a"))
    )
    process = message.str.extract_groups(PROCESS)
    ranked = lines.select(
        "file",
        "line",
        pl.when(process.struct.field("host") != "")
        .then(process.struct.field("host"))
        .alias("host"),
        process.struct.field("pid").cast(pl.Int64, strict=False).alias("pid"),
        pl.coalesce(message.str.extract(TREES_RANK, 1), own_in_link)
        .cast(pl.Int32, strict=False)
        .alias("comm_rank"),
    )
    has_init = ranked.join(initialised, on=list(PROCESS_KEY), how="semi", nulls_equal=True)
    counted = has_init.select("file", "line", pl.lit(None, pl.String).alias("event"))
    ranked = ranked.join(initialised, on=list(PROCESS_KEY), how="anti", nulls_equal=True)
    known = pl.col("comm_rank").is_not_null() & pl.col("pid").is_not_null()
    first = known & (
        pl.col("line") == pl.col("line").min().over("file", "host", "pid", "comm_rank")
    )
    topology = ranked.with_columns(
        pl.when(first).then(pl.lit("nccl_topology")).alias("event"),
        pl.when(first).then(pl.lit("info")).alias("severity"),
    ).with_columns(
        [pl.when(pl.col("event").is_not_null()).then(pl.col(c)).alias(c) for c in TOPOLOGY_KEPT]
    )
    return pl.concat([counted, topology], how="diagonal_relaxed")


def _debug_lines(lines: pl.DataFrame) -> pl.DataFrame:
    """Events of the NCCL_DEBUG lines that carry facts: versions, inits, unwinds, WARNs."""
    message = pl.col("message")
    head = message.str.extract_groups(NCCL_LINE)
    level = head.struct.field("level")
    src = pl.coalesce(
        head.struct.field("src"), head.struct.field("bracket_src"), head.struct.field("all_src")
    )
    body_start = message.str.find(r"NCCL (?:INFO|WARN|TRACE) ") + pl.when(level == "TRACE").then(
        11
    ).otherwise(10)
    framed = lines.select(
        "file",
        "line",
        head.struct.field("ts")
        .str.to_datetime("%Y-%m-%d %H:%M:%S", strict=False, time_unit="us")
        .alias("timestamp"),
        # a log shipper may leave the host out (`:166:1228 [0] NCCL INFO`, NVIDIA/nccl#1808):
        # the host is then its prefix's
        pl.coalesce(
            pl.when(head.struct.field("host") != "").then(head.struct.field("host")),
            head.struct.field("bracket_host"),
            head.struct.field("all_host"),
        ).alias("host"),
        pl.coalesce(
            head.struct.field("pid"), head.struct.field("bracket_pid"), head.struct.field("all_pid")
        )
        .cast(pl.Int64, strict=False)
        .alias("pid"),
        pl.coalesce(head.struct.field("tid"), head.struct.field("all_tid"))
        .cast(pl.Int64, strict=False)
        .alias("tid"),
        pl.coalesce(head.struct.field("dev"), head.struct.field("all_dev"))
        .cast(pl.Int32, strict=False)
        .alias("cuda_dev"),
        _frame(src, head.struct.field("func")).alias("frame"),
        src.alias("_src"),
        level.alias("_level"),
        message.str.slice(body_start).alias("_body"),
    )
    framed = _with_chain_results(framed)
    body = pl.col("_body")
    is_warn = pl.col("_level") == "WARN"
    init = body.str.extract_groups(INIT_PHASE)
    pair = body.str.extract_groups(DUPLICATE_PAIR)
    comm_ranks = body.str.extract_groups(COMM_RANKS)
    is_pair = pair.struct.field("bus").is_not_null()
    is_shared = body.str.contains(SHARED_GPU)
    is_allowed = body.str.contains(SHARED_GPU_ALLOWED, literal=True)
    is_mismatch = body.str.contains(MISMATCH)
    is_oom = is_warn & body.str.contains(NCCL_OOM)
    is_error = (
        is_warn
        & (
            body.str.contains(ERROR_WARN)
            | pl.col("_result").is_not_null()
            | body.str.contains(CHECKED_IN_TWICE)
            | body.str.contains(INVALID_RANK)
        )
        & ~_retried()
    )
    is_version = body.str.contains(VERSION)
    is_layout = body.str.contains(NODE_LAYOUT)
    is_timed = body.str.contains(INIT_TIMINGS)
    is_unwind = pl.col("_unwind_code").is_not_null()
    is_interface = body.str.contains(INTERFACE)
    is_retry = body.str.contains(CONNECT_RETRY)
    is_network = (
        body.str.contains(NETWORK_INTERNAL)
        | body.str.contains(NETWORK_PLUGIN)
        | body.str.contains(NETWORK_USED)
    )
    event = (
        pl.when(is_pair | is_shared | is_allowed)
        .then(pl.lit("duplicate_gpu"))
        .when(is_warn & is_mismatch)
        .then(pl.lit("nccl_mismatch"))
        .when(is_oom)
        .then(pl.lit("oom"))
        .when(is_error)
        .then(pl.lit("nccl_error"))
        .when(is_warn)
        .then(pl.lit("nccl_warn"))
        .when(init.struct.field("what") == "Init")
        .then(pl.lit("nccl_init"))
        .when(init.struct.field("what").is_not_null())
        .then(pl.lit("nccl_abort"))
        .when((is_layout | is_timed) & comm_ranks.struct.field("rank").is_not_null())
        .then(pl.lit("nccl_init"))
        .when(is_version)
        .then(pl.lit("nccl_version"))
        .when(is_unwind)
        .then(pl.lit("nccl_unwind"))
        .when(is_interface)
        .then(pl.lit("nccl_interface"))
        .when(is_retry)
        .then(pl.lit("connect_retry"))
        .when(is_network)
        .then(pl.lit("nccl_network"))
    )
    severity = (
        pl.when(is_allowed)
        .then(pl.lit("info"))
        .when(is_pair | is_shared | is_mismatch | is_error | is_oom)
        .then(pl.lit("error"))
        .when(is_warn | is_unwind | is_retry)
        .then(pl.lit("warning"))
        .otherwise(pl.lit("info"))
    )
    events = framed.with_columns(event.alias("event"), severity.alias("severity"))
    return pl.concat(
        [
            events.filter(pl.col("event").is_null()).select("file", "line", "event"),
            _inits(events.filter(pl.col("event").is_in(["nccl_init", "nccl_abort"]))),
            _duplicates(events.filter(pl.col("event") == "duplicate_gpu")),
            _warnings(events.filter(pl.col("event").is_in(["nccl_error", "nccl_warn", "oom"]))),
            _others(events.filter(pl.col("event").is_in(["nccl_mismatch", "nccl_version"]))),
            _unwinds(events.filter(pl.col("event") == "nccl_unwind")),
            _sockets(events.filter(pl.col("event").is_in(["nccl_interface", "connect_retry"]))),
            _networks(events.filter(pl.col("event") == "nccl_network")),
        ],
        how="diagonal_relaxed",
    )


def _with_chain_results(framed: pl.DataFrame) -> pl.DataFrame:
    """`_unwind_code` on return-code lines, and `_result` on each WARN that the chain follows
    in its thread (further WARNs of the same failure may come first: `Cuda failure 'out of
    memory'`, then `Failed to CUDA calloc 6291456 bytes`, then `-> 1`). The chain's first frame
    is in the failing function's thread; later frames move to the caller's."""
    body = pl.col("_body")
    is_warn = pl.col("_level") == "WARN"
    unwind_code = pl.when(~is_warn).then(body.str.extract(UNWIND, 3))
    # on each line that is not a WARN: its code, or "" when it is no return-code line
    after_warns = pl.when(~is_warn).then(pl.col("_unwind_code").fill_null(""))
    next_after_warns = after_warns.shift(-1).backward_fill().over("file", "host", "pid", "tid")
    return (
        framed.sort("file", "line")
        .with_columns(unwind_code.alias("_unwind_code"))
        .with_columns(
            pl.when(is_warn & next_after_warns.is_in(list(RESULT_CODES.values())))
            .then(next_after_warns)
            .alias("_result")
        )
    )


def _retried() -> pl.Expr:
    """A WARN whose process's next NCCL line retries the connect it failed (NVIDIA/nccl#1618:
    `socketPollConnect poll() failed, ... Connection timed out`, then `connect returned
    Connection timed out, retrying (1/34)`): a try that failed, not a failure, unless the
    retries run out (another WARN, or a return-code chain, ends them)."""
    retry = pl.col("_body").str.contains(CONNECT_RETRY) & (pl.col("_level") != "WARN")
    next_is_retry = retry.shift(-1).over("file", "host", "pid")
    return (pl.col("_result").is_null() & next_is_retry).fill_null(False)


def _frame(src: pl.Expr, func: pl.Expr) -> pl.Expr:
    """`misc/socket.cc:518`, or `init.cc:1945 in ncclCommInitRankFunc` when NCCL names it."""
    return pl.when(func.is_not_null() & (func != "")).then(src + " in " + func).otherwise(src)


def _line_columns(events: pl.DataFrame) -> pl.DataFrame:
    return events.select(pl.exclude("^_.*$"))


def _inits(events: pl.DataFrame) -> pl.DataFrame:
    """`nccl_init` (START, COMPLETE, and the nRanks/nNodes layout line) and `nccl_abort`."""
    body = pl.col("_body")
    phase = body.str.extract_groups(INIT_PHASE)
    ranks = body.str.extract_groups(COMM_RANKS)
    layout = body.str.extract_groups(NODE_LAYOUT)
    split = body.str.extract_groups(COLOR_KEY)
    details = pl.struct(
        pl.when(phase.struct.field("what") == "Init")
        .then(phase.struct.field("phase").str.to_lowercase())
        .when(body.str.contains(INIT_TIMINGS))
        .then(pl.lit("complete"))
        .otherwise(pl.coalesce(phase.struct.field("what").str.to_lowercase(), pl.lit("layout")))
        .alias("phase"),
        pl.coalesce(body.str.extract(INIT_API, 1), body.str.extract(INIT_TIMINGS, 1)).alias("api"),
        layout.struct.field("nnodes").cast(pl.Int64, strict=False).alias("nnodes"),
        layout.struct.field("local_ranks").cast(pl.Int64, strict=False).alias("local_ranks"),
        layout.struct.field("local_rank").cast(pl.Int64, strict=False).alias("local_rank"),
        body.str.extract(PARENT, 1).alias("parent"),
        split.struct.field("color").cast(pl.Int64, strict=False).alias("color"),
        split.struct.field("key").cast(pl.Int64, strict=False).alias("key"),
    )
    return _line_columns(
        events.with_columns(
            body.str.extract(COMM, 1).alias("comm"),
            ranks.struct.field("rank").cast(pl.Int32, strict=False).alias("comm_rank"),
            ranks.struct.field("nranks").cast(pl.Int32, strict=False).alias("nranks"),
            body.str.extract(CUDA_DEV, 1).cast(pl.Int32, strict=False).alias("_cuda_dev"),
            body.str.extract(NVML_DEV, 1).cast(pl.Int32, strict=False).alias("nvml_dev"),
            body.str.extract(BUS_ID, 1).str.to_lowercase().alias("bus_id"),
            body.str.extract(COMM_ID, 1).alias("comm_id"),
            _json(details).alias("extra"),
        )
        .with_columns(pl.coalesce("_cuda_dev", "cuda_dev").alias("cuda_dev"))
        .drop("_cuda_dev")
    )


def _duplicates(events: pl.DataFrame) -> pl.DataFrame:
    """`duplicate_gpu`: `comm_rank` = rank a, `peer_rank` = rank b when NCCL names them."""
    body = pl.col("_body")
    return _line_columns(_duplicate_columns(events, body))


def _duplicate_columns(events: pl.DataFrame, text: pl.Expr) -> pl.DataFrame:
    pair = text.str.extract_groups(DUPLICATE_PAIR)
    allowed = text.str.contains(SHARED_GPU_ALLOWED, literal=True)
    host = pair.struct.field("on_host")
    if "host" in events.columns:
        host = pl.coalesce("host", host)
    return events.with_columns(
        pl.coalesce(pair.struct.field(name) for name in ("a", "a2", "a3"))
        .cast(pl.Int32, strict=False)
        .alias("comm_rank"),
        pl.coalesce(pair.struct.field(name) for name in ("b", "b2", "b3"))
        .cast(pl.Int32, strict=False)
        .alias("peer_rank"),
        pair.struct.field("bus").str.to_lowercase().alias("bus_id"),
        pair.struct.field("device").alias("device"),
        host.alias("host"),
        text.alias("exc_message"),
        pl.when(allowed).then(pl.lit('{"allowed": true}')).alias("extra"),
    )


def _warnings(events: pl.DataFrame) -> pl.DataFrame:
    """`nccl_error` (network, system and CUDA failures; WARNs a return-code chain follows),
    `nccl_warn` and NCCL's `oom`: the WARN text, peer, code, and in `extra` the ncclResult_t
    and the subsystem. A bootstrap root that saw a rank twice names it in `peer_rank`; a rank
    NCCL refused as past the communicator's size is `comm_rank` (with `nranks`)."""
    body = pl.col("_body")
    checked_in = body.str.extract_groups(CHECKED_IN_TWICE)
    invalid = body.str.extract_groups(INVALID_RANK)
    details = pl.struct(
        pl.col("_result").cast(pl.Int64, strict=False).alias("result"),
        subsystem_of(pl.concat_str([pl.col("_src").fill_null(""), body], separator=" ")).alias(
            "subsystem"
        ),
    )
    return _line_columns(
        events.with_columns(
            body.alias("exc_message"),
            pl.coalesce(body.str.extract(PEER, 1), body.str.extract(PEER_HOST, 1)).alias("peer"),
            pl.coalesce(
                body.str.extract(PLUGIN_ERROR, 1),
                body.str.extract(PLUGIN_ERROR, 2),
                body.str.extract(RETCODE, 1),
                body.str.extract(IB_STATUS, 1),
                body.str.extract(CUDA_FAILURE, 1),
                body.str.extract(STRERROR, 1),
            ).alias("error_code"),
            pl.coalesce(body.str.extract(PROXY_RANK, 1), invalid.struct.field("rank"))
            .cast(pl.Int32, strict=False)
            .alias("comm_rank"),
            checked_in.struct.field("rank").cast(pl.Int32, strict=False).alias("peer_rank"),
            pl.coalesce(checked_in.struct.field("nranks"), invalid.struct.field("nranks"))
            .cast(pl.Int32, strict=False)
            .alias("nranks"),
            pl.when(pl.col("event") != "nccl_warn").then(_json(details)).alias("extra"),
        )
    )


def subsystem_of(text: pl.Expr) -> pl.Expr:
    """The first of SUBSYSTEMS whose words `text` holds (null for none)."""
    named = pl.lit(None, pl.String)
    for name, pattern in reversed(SUBSYSTEMS):
        named = pl.when(text.str.contains(pattern)).then(pl.lit(name)).otherwise(named)
    return named


def _others(events: pl.DataFrame) -> pl.DataFrame:
    """`nccl_version`; `nccl_mismatch` with the reporting rank it names (`comm_rank`)."""
    body = pl.col("_body")
    return _line_columns(
        events.with_columns(
            body.str.extract(VERSION, 1).alias("nccl_version"),
            body.str.extract(MISMATCH, 1).cast(pl.Int32, strict=False).alias("comm_rank"),
            pl.when(pl.col("event") == "nccl_mismatch").then(body).alias("exc_message"),
        )
    )


def _unwinds(events: pl.DataFrame) -> pl.DataFrame:
    """`nccl_unwind`: one frame of an error unwinding (`-> 6`): its ncclResult_t and place."""
    unwind = pl.col("_body").str.extract_groups(UNWIND)
    return _line_columns(
        events.with_columns(
            unwind.struct.field("code").alias("error_code"),
            _frame(unwind.struct.field("src"), unwind.struct.field("func")).alias("frame"),
        )
    )


def _sockets(events: pl.DataFrame) -> pl.DataFrame:
    """`nccl_interface`: the interface (`device`) and address (`peer`) the bootstrap or the
    socket transport took; `connect_retry`: a refused connect it retries (`exc_message`, the
    address in `peer` when NCCL names it)."""
    interface = pl.col("_body").str.extract_groups(INTERFACE)
    return _line_columns(
        events.with_columns(
            interface.struct.field("iface").alias("device"),
            pl.col("_body").str.extract(CONNECT_RETRY, 2).alias("exc_message"),
            pl.coalesce(
                interface.struct.field("addr"), pl.col("_body").str.extract(CONNECT_RETRY, 1)
            ).alias("peer"),
        )
    )


def _networks(events: pl.DataFrame) -> pl.DataFrame:
    """`nccl_network`: what the process's NCCL uses for the network, in `device`: `internal
    plugin`, `plugin <path or name>`, or `network <transport>`."""
    body = pl.col("_body")
    plugin = body.str.extract_groups(NETWORK_PLUGIN)
    return _line_columns(
        events.with_columns(
            pl.when(body.str.contains(NETWORK_INTERNAL))
            .then(pl.lit("internal plugin"))
            .when(body.str.contains(NETWORK_PLUGIN))
            .then(
                pl.format(
                    "plugin {}",
                    pl.coalesce(plugin.struct.field("1"), plugin.struct.field("2")),
                )
            )
            .otherwise(pl.format("network {}", body.str.extract(NETWORK_USED, 1)))
            .alias("device"),
        )
    )


def _json(details: pl.Expr) -> pl.Expr:
    """A struct as a JSON object without its null fields (null when all are)."""
    encoded = (
        details.struct.json_encode().str.replace_all(r',?"\w+":null', "").str.replace(r"^\{,", "{")
    )
    return pl.when(encoded != "{}").then(encoded)


def _pytorch_lines(lines: pl.DataFrame) -> pl.DataFrame:
    """Lines without the NCCL_DEBUG identity: the bare version line, PyTorch's wrappers and
    the `Last error:` text that follows them."""
    message = pl.col("message")
    stripped = message.str.strip_chars()
    previous = pl.col("message").shift(1).over("file", order_by="line")
    previous_line = pl.col("line").shift(1).over("file", order_by="line")
    marked = lines.with_columns(
        (
            (previous_line == pl.col("line") - 1)
            & (previous.str.strip_chars() == LAST_ERROR)
            & (stripped != "")
            & ~stripped.str.starts_with(NOT_A_LAST_ERROR)
        )
        .fill_null(False)
        .alias("_last_error")
    )
    wrapper = message.str.extract_groups(WRAPPER)
    following = pl.when(
        pl.col("line").shift(-1).over("file", order_by="line") == pl.col("line") + 1
    ).then(message.shift(-1).over("file", order_by="line"))
    cut = message.str.contains(WRAPPER_CUT)
    marked = marked.with_columns(
        pl.when(cut).then(following.str.extract(CARRIED_CODE, 1)).alias("_carried_code"),
        pl.when(cut).then(following.str.extract(VERSION, 1)).alias("_carried_version"),
    )
    is_wrapper = pl.col("candidate") & (
        wrapper.struct.field("code").is_not_null()
        | message.str.contains(WRAPPER_RESULT)
        | pl.col("_carried_code").is_not_null()
    )
    is_pair = message.str.contains(DUPLICATE_PAIR)
    is_shared = message.str.contains(SHARED_GPU)
    is_bare_version = (
        pl.col("candidate")
        & stripped.str.starts_with("NCCL version ")
        & message.str.contains(VERSION)
    )
    is_noted = pl.col("candidate") & (message.str.contains(RESULT_LINE) | (stripped == LAST_ERROR))
    carried_on = (
        pl.col("_carried_code").shift(1).over("file", order_by="line").is_not_null()
        & (pl.col("line").shift(1).over("file", order_by="line") == pl.col("line") - 1)
    ).fill_null(False)
    is_checked_in = pl.col("candidate") & message.str.contains(CHECKED_IN_TWICE)
    kind = (
        pl.when(is_wrapper)
        .then(pl.lit("wrapper"))
        .when(is_checked_in)
        .then(pl.lit("checked_in"))
        .when(is_pair | is_shared)
        .then(pl.lit("duplicate"))
        .when(is_bare_version)
        .then(pl.lit("version"))
        .when(pl.col("_last_error") | is_noted | carried_on)
        .then(pl.lit("counted"))
    )
    marked = marked.with_columns(kind.alias("_kind")).filter(pl.col("_kind").is_not_null())
    wrappers = _wrappers(marked.filter(pl.col("_kind") == "wrapper"), marked)
    headless = _headless_results(marked, lines)
    duplicates = _duplicate_columns(
        marked.filter(pl.col("_kind") == "duplicate"), pl.col("message")
    ).with_columns(pl.lit("duplicate_gpu").alias("event"), pl.lit("error").alias("severity"))
    versions = marked.filter(pl.col("_kind") == "version").with_columns(
        pl.lit("nccl_version").alias("event"),
        pl.lit("info").alias("severity"),
        message.str.extract(VERSION, 1).alias("nccl_version"),
    )
    counted = (
        marked.filter(pl.col("_kind") == "counted")
        .join(headless.select("file", "line"), on=["file", "line"], how="anti")
        .with_columns(pl.lit(None, pl.String).alias("event"))
    )
    keep = ["file", "line", "event"]
    return pl.concat(
        [
            wrappers,
            headless,
            _allocation_failures(pl.concat([wrappers, headless], how="diagonal_relaxed")),
            _checked_in_twice(marked.filter(pl.col("_kind") == "checked_in")),
            duplicates.select(
                *keep,
                "severity",
                "comm_rank",
                "peer_rank",
                "bus_id",
                "device",
                "host",
                "exc_message",
                "extra",
            ),
            versions.select(*keep, "severity", "nccl_version"),
            counted.select(keep),
        ],
        how="diagonal_relaxed",
    )


def _allocation_failures(errors: pl.DataFrame) -> pl.DataFrame:
    """NCCL's `oom` on the line of an error whose last error is NCCL failing to allocate GPU
    memory for its buffers."""
    if "exc_message" not in errors.columns:
        return pl.DataFrame(schema={"file": pl.String, "line": pl.UInt32, "event": pl.String})
    said = pl.col("exc_message").str.contains(FAILED_ALLOCATION).fill_null(False)
    return errors.filter(said).select(
        "file",
        "line",
        pl.lit("oom").alias("event"),
        pl.lit("error").alias("severity"),
        "exc_message",
    )


def _headless_results(marked: pl.DataFrame, lines: pl.DataFrame) -> pl.DataFrame:
    """`nccl_error` for a result line (`ncclInternalError: ...`) that no wrapper line stands
    just before, with the `Last error:` text two lines on as its message."""
    message = pl.col("message")
    name = message.str.extract(RESULT_NAME, 1)
    wrapper_lines = marked.filter(pl.col("_kind") == "wrapper").select(
        "file", (pl.col("line") + 1).alias("line")
    )
    results = (
        marked.filter((pl.col("_kind") == "counted") & name.is_not_null())
        .join(wrapper_lines, on=["file", "line"], how="anti")
        .with_columns(name.alias("_result"))
    )
    if results.is_empty():
        return pl.DataFrame(schema={"file": pl.String, "line": pl.UInt32, "event": pl.String})
    found = results.join(_last_error_text(marked, 2), on=["file", "line"], how="left")
    said = message.str.slice(message.str.find(": ", literal=True) + 2).str.strip_chars()
    subsystem = subsystem_of(pl.col("_following"))
    return found.select(
        "file",
        "line",
        pl.lit("nccl_error").alias("event"),
        pl.lit("error").alias("severity"),
        pl.col("_result").replace_strict(RESULT_WORDS, default=None).alias("error_code"),
        pl.coalesce("_following", said).alias("exc_message"),
        pl.col("_following").str.extract(PEER, 1).alias("peer"),
        pl.when(subsystem.is_not_null())
        .then(pl.struct(subsystem=subsystem).struct.json_encode())
        .alias("extra"),
    )


def _last_error_text(marked: pl.DataFrame, lines_before: int) -> pl.DataFrame:
    """The text after each `Last error:` line, keyed to the line `lines_before` lines above it
    (`_following`): the error line it belongs to."""
    return marked.filter(pl.col("_last_error")).select(
        "file",
        (pl.col("line") - lines_before).alias("line"),
        pl.col("message").str.strip_chars().alias("_following"),
    )


def _checked_in_twice(lines: pl.DataFrame) -> pl.DataFrame:
    """The bootstrap root's WARN printed without the `host:pid:tid` identity (RCCL with
    NCCL_DEBUG=WARN writes `<path>/bootstrap.cpp:132 NCCL WARN Bootstrap Root : ...`)."""
    message = pl.col("message")
    checked_in = message.str.extract_groups(CHECKED_IN_TWICE)
    return lines.select(
        "file",
        "line",
        pl.lit("nccl_error").alias("event"),
        pl.lit("error").alias("severity"),
        checked_in.struct.field("rank").cast(pl.Int32, strict=False).alias("peer_rank"),
        checked_in.struct.field("nranks").cast(pl.Int32, strict=False).alias("nranks"),
        message.str.slice(message.str.find("Bootstrap Root", literal=True)).alias("exc_message"),
        pl.lit('{"subsystem":"bootstrap"}').alias("extra"),
    )


def _wrappers(wrappers: pl.DataFrame, marked: pl.DataFrame) -> pl.DataFrame:
    """`nccl_error` for PyTorch's `NCCL error ...` line, with NCCL's last error as its message:
    the text after an inline `Last error: `, or the line after `Last error:` three lines on."""
    message = pl.col("message")
    wrapper = message.str.extract_groups(WRAPPER)
    work = message.str.extract_groups(WORK)
    inline_at = message.str.find(LAST_ERROR + " ", literal=True)
    inline = (
        pl.when(inline_at.is_not_null())
        .then(message.str.slice(inline_at + len(LAST_ERROR) + 1).str.strip_chars())
        .otherwise(None)
    )
    result = message.str.extract(WRAPPER_RESULT, 1)
    found = wrappers.with_columns(
        pl.coalesce(
            wrapper.struct.field("code"),
            result.replace_strict(RESULT_WORDS, default=None),
            "_carried_code",
        ).alias("error_code"),
        result.alias("_result"),
        pl.coalesce(message.str.extract(VERSION, 1), "_carried_version").alias("nccl_version"),
        message.str.extract(WRAPPER_TYPE, 1).alias("exc_type"),
        pl.coalesce(wrapper.struct.field("src"), message.str.extract(WRAPPER_CUT, 1)).alias(
            "frame"
        ),
        work.struct.field("seq").cast(pl.Int64, strict=False).alias("seq"),
        work.struct.field("op").alias("op"),
        message.str.extract(WORK_TIMEOUT, 1).cast(pl.Int64, strict=False).alias("timeout_ms"),
        inline.alias("_inline"),
    ).join(_last_error_text(marked, 3), on=["file", "line"], how="left")
    # the shortened wrapper is its result's line: its `Last error:` comes next
    found = found.join(
        _last_error_text(marked, 2).rename({"_following": "_after_result"}),
        on=["file", "line"],
        how="left",
    )
    after_result = pl.when(pl.col("_result").is_not_null()).then(pl.col("_after_result"))
    last_error = pl.coalesce("_inline", after_result, "_following")
    return found.select(
        "file",
        "line",
        pl.lit("nccl_error").alias("event"),
        pl.lit("error").alias("severity"),
        "error_code",
        "nccl_version",
        "exc_type",
        "frame",
        "seq",
        "op",
        "timeout_ms",
        pl.coalesce(last_error, pl.col("error_code")).alias("exc_message"),
        last_error.str.extract(PEER, 1).alias("peer"),
        _wrapper_rank(),
    )


def _wrapper_rank() -> pl.Expr:
    """The rank PyTorch's wrapper line names, unlike NCCL's own lines (see the module doc): its
    tag of the default group's rank (`[E ProcessGroupNCCL.cpp:852] [Rank 16] NCCL watchdog
    thread terminated with exception: NCCL error: remote process exited ...`, a KubeCon 2024
    talk's slides, oeyoews/talks); a `[PG 1 Rank 3]` tag is a sub-group's."""
    message = pl.col("message")
    named = message.str.extract(RANK_TAG, 1).cast(pl.Int32, strict=False)
    return pl.when(~message.str.contains("[PG ", literal=True)).then(named).alias("rank")


PARSER = LineParser(name="nccl", literals=LITERALS, parse=parse, context_after=1)
