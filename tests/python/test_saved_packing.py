"""saved_packing.pack_small_saved (TCCD_PACK_SAVED) on graphs AOTAutograd partitions on the CPU:
what it packs, that forward and backward stay consistent, and the nothing-to-do case."""

import torch

from tccd import backend, saved_packing
from tccd_testlib import capture_aot_graphs


def _partitioned(fn, *args):
    _, partition_fn, table = backend._partitioner()
    pairs, results = [], []

    def partition(*a, **k):
        fw, bw = partition_fn(*a, **k)
        before = [n.name for n in bw.graph.nodes if n.op == "placeholder"]
        results.append((saved_packing.pack_small_saved(fw, bw), before))
        pairs.append((fw, bw))
        return fw, bw

    capture_aot_graphs(fn, *args, backward=True, partition_fn=partition, decompositions=table,
                       keep_inference_input_mutations=True)
    return pairs, results


def test_layer_norm_statistics_are_packed_and_sliced_back():
    ln = torch.nn.Sequential(*[torch.nn.LayerNorm(16) for _ in range(4)])
    x = torch.randn(2, 8, 16, requires_grad=True)
    pairs, results = _partitioned(lambda t: ln(t).sin(), x)
    (fw, bw), = pairs
    (changed, before), = results
    assert changed
    after = [n.name for n in bw.graph.nodes if n.op == "placeholder"]
    assert saved_packing.NAME in after and len(after) < len(before) - 2, (before, after)
    # The packed tensor is the forward's last saved output and the backward's last saved input.
    outs = list(fw.graph.output_node().args[0])
    assert outs[-1].name == saved_packing.NAME and outs[-1].target == torch.ops.aten.cat.default
    assert after[after.index(saved_packing.NAME) + 1].startswith("tangents")
    slices = [n for n in bw.graph.nodes if n.target == torch.ops.aten.slice.Tensor]
    assert slices and all(s.args[0].name == saved_packing.NAME for s in slices)


def test_nothing_to_pack_leaves_both_graphs_alone():
    w = torch.randn(3, 5, requires_grad=True)
    x = torch.randn(4, 3, requires_grad=True)
    pairs, results = _partitioned(lambda a, b: torch.sin(a @ b), x, w)
    (changed, before), = results
    (fw, bw), = pairs
    assert not changed
    assert [n.name for n in bw.graph.nodes if n.op == "placeholder"] == before
    assert not any(n.target == torch.ops.aten.cat.default for n in fw.graph.nodes)


def _stale_views(bw):
    """Nodes of `bw` whose metadata (shape, strides, storage offset) differs from what running
    the graph's ops on its placeholders' fake values gives."""
    vals = {n: n.meta.get("val") for n in bw.graph.nodes if n.op == "placeholder"}
    fake_mode = next(v.fake_mode for v in vals.values() if isinstance(v, torch.Tensor))
    stale = []
    for n in bw.graph.nodes:
        if n.op != "call_function":
            continue
        args, kwargs = torch.fx.node.map_arg((n.args, n.kwargs), lambda x: vals.get(x))
        try:
            with fake_mode:
                vals[n] = n.target(*args, **kwargs)
        except Exception:  # an op fake tensors cannot run: keep what the graph says
            vals[n] = n.meta.get("val")
            continue
        new, old = vals[n], n.meta.get("val")
        if isinstance(new, torch.Tensor) and isinstance(old, torch.Tensor):
            if (new.shape, new.stride(), new.storage_offset()) != (old.shape, old.stride(), old.storage_offset()):
                stale.append(n.name)
    return stale


def test_views_of_a_packed_tensor_get_its_slice_offset():
    """A saved activation the backward reads through views (an MLP's pre-GELU matmul output,
    viewed back to [B, S, F]; _unsafe_view too) lies at an offset in the packed tensor: the
    views' metadata, which the daemon takes as their layout, must say so (stale offsets 0 made
    the zoo's tiny GPT-2, Llama and BERT train wrongly on the CPU)."""
    ln1, ln2 = torch.nn.LayerNorm(16), torch.nn.LayerNorm(16)
    w = torch.randn(16, 32, requires_grad=True)
    x = torch.randn(2, 8, 16, requires_grad=True)

    def mlp(t, w):
        h = ln2(ln1(t)).view(16, 16) @ w
        return torch.nn.functional.gelu(h.view(2, 8, 32), approximate="tanh").sum(-1)

    pairs, results = _partitioned(mlp, x, w)
    (fw, bw), = pairs
    (changed, _), = results
    assert changed
    # Some view of a slice other than the first reaches further views: the case at stake.
    slices = [n for n in bw.graph.nodes if n.target == torch.ops.aten.slice.Tensor and n.args[2] > 0]
    later = [u for s in slices for v in s.users for u in v.users if u.op == "call_function"]
    assert any(u.meta["val"].storage_offset() > 0 for u in later if getattr(u.target, "is_view", False)
               or u.target == torch.ops.aten._unsafe_view.default), [(u.name, u.target) for u in later]
    assert _stale_views(bw) == []
