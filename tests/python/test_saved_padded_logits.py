"""Saved tensors of LM forwards take the daemon's strides (saved_layouts.py): BERT's and GPT-2's
logits, saved for the loss backward, are the padded product's strided view instead of a
contiguous copy written beside it (the forward's loss row kernel wrote [tokens, V] a second
time; BERT train small: 59.6 MiB, train large 477 MiB). The backward reads them through a
reshape chain ([T, V] -> [B, S, V] -> [T, V]) that the client now lets through and restrides.
Without a GPU: the rules on small captured graphs (the BERT census shows the plans:
cuda_plan_census.py --memory --padded-outputs census_models.py bert; the forward's loss kernel
has no clone output and the backward's loss row reads the logits at row stride 30528)."""

import torch
from torch.fx.experimental.proxy_tensor import make_fx

from tccd import saved_layouts, serialize


def _backward_like(shape, via):
    def bw(saved):
        v = torch.ops.aten._unsafe_view.default(saved, via)
        w = torch.ops.aten.view.default(v, list(shape))
        return w.float()

    return make_fx(bw)(torch.empty(*shape, dtype=torch.bfloat16))


def test_a_row_reshape_chain_back_to_the_saved_shape_reads_the_saved_tensor_as_is():
    assert saved_layouts.free_outputs(_backward_like((8, 30), [2, 4, 30]), 0, 1, 0) == [0]
    # Not where the chain changes the last dim, or over a 4-D (possibly channels-last) tensor.
    assert saved_layouts.free_outputs(_backward_like((8, 30), [8, 3, 10]), 0, 1, 0) == []
    assert saved_layouts.free_outputs(_backward_like((2, 3, 4, 5), [6, 4, 5]), 0, 1, 0) == []


def test_restrided_input_gives_its_reshapes_the_strides_they_have_at_run_time():
    graph, _ = serialize.encode_graph(_backward_like((8, 30), [2, 4, 30]))
    assert saved_layouts.restride_inputs(graph, [(32, 1)], 0) == 1
    strides = [[d.value for d in n.outputs[0].strides] for n in graph.nodes[:2]]
    assert strides == [[128, 32, 1], [32, 1]]
    # Nothing restrided: the traced strides stay.
    graph, _ = serialize.encode_graph(_backward_like((8, 30), [2, 4, 30]))
    assert saved_layouts.restride_inputs(graph, [(30, 1)], 0) == 0
    assert [d.value for d in graph.nodes[0].outputs[0].strides] == [120, 30, 1]


def test_lm_graphs_with_a_padded_product_qualify(monkeypatch):
    def fwd(h, w):
        return torch.ops.aten.mm.default(h, w)

    with torch.device("meta"):
        odd = make_fx(fwd)(torch.empty(8, 16), torch.empty(16, 30))
        even = make_fx(fwd)(torch.empty(8, 16), torch.empty(16, 32))
    # The rule wants CUDA matmuls; meta tensors stand in for them here.
    from tccd import config

    monkeypatch.setattr(saved_layouts, "_is_cuda", lambda val: True)
    assert not saved_layouts._has_padded_product(odd)  # off by default (TCCD_SAVED_PADDED)
    monkeypatch.setenv("TCCD_SAVED_PADDED", "1")
    config.reload()
    try:
        assert saved_layouts._has_padded_product(odd)
        assert not saved_layouts._has_padded_product(even)
    finally:
        monkeypatch.delenv("TCCD_SAVED_PADDED")
        config.reload()
