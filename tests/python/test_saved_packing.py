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
