"""The joint graph's detaches are dropped before the min cut (decompositions.drop_detaches): the
tanh-GELU of GPT-2's MLP is recomputed in the backward from the matmul output instead of saving
its tanh, and training matches eager.

The MLP makes the casts CUDA autocast makes (pow runs in f32, so the tanh is f32 and, saved,
would be an f32 [tokens, 4 x width] tensor written by the forward and read by the backward).
The saved-tensor checks look at the graphs AOTAutograd hands tccd; the training check runs them
through the real daemon."""

from __future__ import annotations

import math

import torch

from tccd_testlib import capture_aot_graphs

TOKENS, WIDTH = 16, 8


class _Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.fc, self.proj = torch.nn.Linear(WIDTH, 4 * WIDTH), torch.nn.Linear(4 * WIDTH, WIDTH)

    def forward(self, h):
        bf16 = torch.bfloat16
        x = torch.nn.functional.linear(h.to(bf16), self.fc.weight.to(bf16), self.fc.bias.to(bf16))
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x.float(), 3.0))
        y = 0.5 * x * (1.0 + torch.tanh(inner))
        return torch.nn.functional.linear(y.to(bf16), self.proj.weight.to(bf16), self.proj.bias.to(bf16))


def _input():
    return torch.randn(TOKENS, WIDTH, generator=torch.Generator().manual_seed(1), requires_grad=True)


def _saved_by_forward(partition_fn):
    graphs = capture_aot_graphs(_Mlp(), _input(), backward=True, partition_fn=partition_fn)
    forward = next(gm for kind, gm, _ in graphs if kind == "forward")
    saved = forward.graph.output_node().args[0][1:]
    return [n for n in saved if isinstance(n, torch.fx.Node) and isinstance(n.meta.get("val"), torch.Tensor)]


def _hidden(nodes, dtype):
    return [n for n in nodes if tuple(n.meta["val"].shape) == (TOKENS, 4 * WIDTH) and n.meta["val"].dtype == dtype]


def test_the_forward_saves_the_matmul_output_not_the_tanh():
    from tccd.backend import _partitioner

    name, partition_fn, _ = _partitioner()
    assert "+no_detach" in name
    saved = _saved_by_forward(partition_fn)
    assert not [n for n in saved if n.target is torch.ops.aten.tanh.default]
    assert not _hidden(saved, torch.float32)
    # The first matmul's output (the GELU's input) and the bf16 GELU output the second matmul's
    # weight gradient reads.
    assert len(_hidden(saved, torch.bfloat16)) == 2


def test_without_dropping_detaches_the_min_cut_saves_the_f32_tanh():
    # What the test above guards against: min_cut_rematerialization_partition on its own.
    from torch._functorch.partitioners import min_cut_rematerialization_partition

    saved = _saved_by_forward(min_cut_rematerialization_partition)
    assert [n for n in saved if n.target is torch.ops.aten.tanh.default]
    assert len(_hidden(saved, torch.float32)) == 1


def test_switched_off_the_min_cut_sees_the_detaches(monkeypatch):
    from tccd import config
    from tccd.backend import _partitioner

    monkeypatch.setenv("TCCD_DROP_DETACHES", "0")
    config.reload()
    name, partition_fn, _ = _partitioner()
    assert "+no_detach" not in name
    assert len(_hidden(_saved_by_forward(partition_fn), torch.float32)) == 1


def test_a_detach_that_is_a_graph_output_stays():
    from tccd.decompositions import drop_detaches

    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    inner = graph.call_function(torch.ops.aten.detach.default, (x,))
    out = graph.call_function(torch.ops.aten.detach.default, (graph.call_function(torch.ops.aten.mul.Tensor, (inner, 2)),))
    graph.output((out,))
    module = torch.fx.GraphModule(torch.nn.Module(), graph)
    assert drop_detaches(module) == 1
    targets = [n.target for n in module.graph.nodes if n.op == "call_function"]
    assert targets == [torch.ops.aten.mul.Tensor, torch.ops.aten.detach.default]
    assert torch.equal(module(torch.ones(3))[0], torch.full((3,), 2.0))


def test_training_through_the_daemon_matches_eager(daemon_env):
    eager, compiled_model = _Mlp(), _Mlp()
    compiled = torch.compile(compiled_model, backend="tccd")
    h = _input()
    for _ in range(3):
        for model, fn in ((eager, eager), (compiled_model, compiled)):
            fn(h).float().square().sum().backward()
            with torch.no_grad():
                for p in model.parameters():
                    p -= 0.01 * p.grad
                    p.grad = None
    # bf16 activations: the compiled kernels round once where eager rounds after every op.
    torch.testing.assert_close(compiled(h), eager(h), rtol=2e-2, atol=2e-2)
    for a, b in zip(compiled_model.parameters(), eager.parameters()):
        torch.testing.assert_close(a, b, rtol=2e-2, atol=2e-2)
