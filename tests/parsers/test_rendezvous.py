"""The store a process could not reach at start-up (parsers/rendezvous.py), on verbatim lines."""

from __future__ import annotations

from tests.builders import only, parsed_by

# kubeflow/trainer#2041, verbatim: worker 1 cannot reach worker 0's dynamic c10d port
NO_ROUTE = "[W socket.cpp:601] [c10d] The client socket has failed to connect to [elastic-example-imagenet-worker-0.default.svc.cluster.local]:43461 (errno: 113 - No route to host)."


def test_the_endpoint_and_the_systems_reason_are_read():
    failure = only(parsed_by("rendezvous", [NO_ROUTE], file="worker-1.log"))
    assert failure["event"] == "store_unreachable"
    assert failure["peer"] == (
        "[elastic-example-imagenet-worker-0.default.svc.cluster.local]:43461"
    )
    assert (failure["value"], failure["error_code"]) == (113, "No route to host")


def test_torchruns_rendezvous_result_states_the_world_size():
    # kubeflow/trainer#2041, verbatim (the agent's `Rendezvous complete for workers` block)
    lines = ["  global_ranks=[1]", "  role_world_sizes=[2]", "  global_world_sizes=[2]"]
    size = only(parsed_by("rendezvous", lines))
    assert (size["event"], size["world_size"]) == ("world_size", 2)
