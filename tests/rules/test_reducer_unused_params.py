from __future__ import annotations

from tests.builders import analyze_files, finding, kinds

# hkchengrex/Cutie#125 (formats.md §8), verbatim
UNFINISHED = [
    "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error indicates that your module has parameters that were not used in producing loss. You can enable unused parameter detection by passing the keyword argument `find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by ",
    "making sure all `forward` function outputs participate in calculating loss. ",
    "Parameters which did not receive grad for rank 3: mask_encoder.sensory_update.transform.bias, mask_encoder.sensory_update.transform.weight",
    "Parameter indices which did not receive grad for rank 3: 282 283 ",
]


def test_names_the_rank_and_its_parameters(tmp_path):
    reducer = finding(analyze_files(tmp_path, {"train.log": UNFINISHED}), "reducer_unused_params")
    assert reducer.ranks == [3]
    assert reducer.details["parameters"] == [
        "mask_encoder.sensory_update.transform.bias",
        "mask_encoder.sensory_update.transform.weight",
    ]
    assert reducer.details["parameter_indices"] == [282, 283]
    assert "find_unused_parameters=True" in reducer.fix


def test_ready_twice(tmp_path):
    line = (
        "RuntimeError: Parameter at index 55 has been marked as ready twice. This means that "
        "multiple autograd engine  hooks have fired for this particular parameter during this "
        "iteration. You can set the environment variable TORCH_DISTRIBUTED_DEBUG to either INFO "
        "or DETAIL to print parameter names for further debugging."
    )
    analysis = analyze_files(tmp_path, {"rank1.log": [line]})
    reducer = finding(analysis, "reducer_unused_params")
    assert reducer.ranks == [1] and "static_graph=True" in reducer.fix


def test_healthy_log_mentioning_the_reducer_is_quiet(tmp_path):
    line = "[I reducer.cpp:1313] Reducer buckets have been rebuilt in this iteration."
    assert "reducer_unused_params" not in kinds(analyze_files(tmp_path, {"a.log": [line]}))
