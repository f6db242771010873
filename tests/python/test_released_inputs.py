"""A backward request names its saved activations (client/tccd/released_inputs.py).

No GPU and no daemon: the backward graph is traced on fake CUDA tensors, with placeholders named
as torch's partitioners name them (primals_*, saved values, tangents_*), and the request is what
the backend would send (backend._GraphCompiler._request). The daemon's side (segments cut where
they would hold released inputs) is tested by segment_builder_test and test_plan_memory.py.
"""

import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.proxy_tensor import make_fx

from tccd import config, released_inputs
from tccd.backend import _GraphCompiler


def _backward_graph(device):
    def backward(primals_1, mm, getitem_3, tangents_1):
        return (torch.mm(tangents_1 * getitem_3, mm.t()) + primals_1,)

    with FakeTensorMode(allow_non_fake_inputs=True):
        args = [torch.empty(8, 8, device=device) for _ in range(4)]
        return make_fx(backward, tracing_mode="fake")(*args), args


def test_saved_activations_are_named_and_forward_inputs_and_tangents_are_not():
    gm, _ = _backward_graph("cuda")
    names = [str(n.target) for n in gm.graph.find_nodes(op="placeholder")]
    assert names[0].startswith("primals") and "tangents" in names[3], names
    assert released_inputs.released(gm) == [1, 2]
    # A CPU graph has no segments: nothing named (its request and key stay as they were).
    cpu, _ = _backward_graph("cpu")
    assert released_inputs.released(cpu) == []
    assert released_inputs.released(cpu, devices=("cpu",)) == [1, 2]


def _request_options(monkeypatch, value, kind):
    # The request's CUDA target, as an H100 would report it (no GPU here).
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda index=0: (9, 0))
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda index=0: "NVIDIA H100 80GB HBM3")
    monkeypatch.setenv("TCCD_RELEASED_INPUTS", value)
    cfg = config.reload()
    gm, args = _backward_graph("cuda")
    request, _ = _GraphCompiler("g", None, None)._request(cfg, f"g {kind}", gm, args, kind)
    return dict(request.options.extra)


def test_the_backward_request_carries_the_option(monkeypatch):
    try:
        assert _request_options(monkeypatch, "1", "backward") == {released_inputs.OPTION: "1:3"}
        # TCCD_RELEASED_INPUTS=0: the request as before this option.
        assert released_inputs.OPTION not in _request_options(monkeypatch, "0", "backward")
        # Forward graphs never name their inputs: the caller keeps its weights and batch.
        assert released_inputs.OPTION not in _request_options(monkeypatch, "1", "forward")
    finally:
        monkeypatch.delenv("TCCD_RELEASED_INPUTS")
        config.reload()
