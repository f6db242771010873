"""A training batch norm's backward reads only the batch's saved mean and inverse std, so the joint
graph's backward gets None for the running statistics (decompositions.drop_bn_running_stats) and
the forward does not save them: per norm two [C] tensors fewer to return, hold and pass back
(ResNet-50: 429 -> 323 saved tensors; under CUDA graphs 106 outputs fewer for the tree to rebuild
at every replay). Training, running statistics included, still matches eager.

The saved-tensor checks look at the graphs AOTAutograd hands tccd; the training check runs them
through the real daemon."""

from __future__ import annotations

import operator

import torch

from tccd_testlib import capture_aot_graphs

aten = torch.ops.aten


class _ConvBn(torch.nn.Module):
    """Two conv + batch norm + relu blocks: two norms, so 4 running-statistic tensors to save."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.body = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, padding=1, bias=False), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
            torch.nn.Conv2d(8, 8, 3, padding=1, bias=False), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
        )

    def forward(self, x):
        return self.body(x)


def _input():
    return torch.randn(4, 3, 8, 8, generator=torch.Generator().manual_seed(1))


def _saved_by_forward(partition_fn):
    graphs = capture_aot_graphs(_ConvBn(), _input(), backward=True, partition_fn=partition_fn,
                                keep_inference_input_mutations=True)
    forward = next(gm for kind, gm, _ in graphs if kind == "forward")
    backward = next(gm for kind, gm, _ in graphs if kind == "backward")
    return forward.graph.output_node().args[0][1:], backward


def _running_stats(saved):
    """Saved tensors that are a functional norm's new running mean or variance (outputs 3, 4)."""
    return [
        n for n in saved
        if isinstance(n, torch.fx.Node) and n.target is operator.getitem
        and n.args[0].target is aten._native_batch_norm_legit_functional.default and n.args[1] in (3, 4)
    ]


def test_the_forward_saves_no_running_statistics():
    from tccd.backend import _partitioner

    name, partition_fn, _ = _partitioner()
    assert "+no_bn_stats" in name
    saved, backward = _saved_by_forward(partition_fn)
    assert _running_stats(saved) == []
    norms = [n for n in backward.graph.nodes if n.target is aten.native_batch_norm_backward.default]
    assert len(norms) == 2
    assert all(n.args[3] is None and n.args[4] is None for n in norms)


def test_switched_off_the_forward_saves_them(monkeypatch):
    from tccd import config
    from tccd.backend import _partitioner

    monkeypatch.setenv("TCCD_DROP_BN_RUNNING_STATS", "0")
    config.reload()
    name, partition_fn, _ = _partitioner()
    assert "+no_bn_stats" not in name
    saved, _ = _saved_by_forward(partition_fn)
    assert len(_running_stats(saved)) == 4


def _bn_backward_graph(target, args):
    graph = torch.fx.Graph()
    placeholders = {name: graph.placeholder(name) for name in ("g", "x", "w", "rm", "rv", "sm", "si")}
    resolved = tuple(placeholders.get(a, a) if isinstance(a, str) else a for a in args)
    node = graph.call_function(target, resolved)
    graph.output((node,))
    return torch.fx.GraphModule(torch.nn.Module(), graph), node


def test_only_training_backwards_lose_their_running_statistics():
    from tccd.decompositions import drop_bn_running_stats

    train = ("g", "x", "w", "rm", "rv", "sm", "si", True, 1e-5, [True, True, True])
    module, node = _bn_backward_graph(aten.native_batch_norm_backward.default, train)
    assert drop_bn_running_stats(module) == 2
    assert node.args[3] is None and node.args[4] is None and node.args[5].name == "sm"
    assert drop_bn_running_stats(module) == 0  # nothing left to do
    # Evaluation mode normalises with the running statistics: kept.
    module, node = _bn_backward_graph(aten.native_batch_norm_backward.default, train[:7] + (False,) + train[8:])
    assert drop_bn_running_stats(module) == 0
    assert node.args[3].name == "rm"
    # cuDNN's backward (always training) never reads them.
    cudnn = ("x", "g", "w", "rm", "rv", "sm", "si", 1e-5, "x")
    module, node = _bn_backward_graph(aten.cudnn_batch_norm_backward.default, cudnn)
    assert drop_bn_running_stats(module) == 2
    assert node.args[3] is None and node.args[4] is None


def test_training_through_the_daemon_matches_eager(daemon_env):
    eager, compiled_model = _ConvBn(), _ConvBn()
    compiled = torch.compile(compiled_model, backend="tccd")
    x = _input()
    for _ in range(3):
        for model, fn in ((eager, eager), (compiled_model, compiled)):
            fn(x).square().sum().backward()
            with torch.no_grad():
                for p in model.parameters():
                    p -= 0.01 * p.grad
                    p.grad = None
    for a, b in zip(compiled_model.parameters(), eager.parameters()):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)
    for a, b in zip(compiled_model.buffers(), eager.buffers()):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)
    compiled_model.eval(), eager.eval()
    torch.testing.assert_close(compiled(x), eager(x), rtol=1e-4, atol=1e-4)


def test_bf16_batch_norm_buffers_train_like_eager(daemon_env):
    # A module whose buffers are bf16 (no autocast): PyTorch's meta function types the functional
    # norm's new running statistics f32, ATen's kernels return them bf16; the request carries the
    # kernels' dtype (serialize._OUTPUT_DTYPE_OF_ARGUMENT), else the plan's copy into the buffers
    # refuses them ("input 19 has dtype code 15, the kernel takes 6").
    eager, compiled_model = _ConvBn().to(torch.bfloat16), _ConvBn().to(torch.bfloat16)
    compiled = torch.compile(compiled_model, backend="tccd")
    x = _input().to(torch.bfloat16)
    for _ in range(2):
        for fn in (eager, compiled):
            fn(x).float().square().sum().backward()
    for a, b in zip(compiled_model.buffers(), eager.buffers()):
        torch.testing.assert_close(a, b, rtol=2e-2, atol=2e-2)
    for a, b in zip(compiled_model.parameters(), eager.parameters()):
        torch.testing.assert_close(a.grad, b.grad, rtol=5e-2, atol=5e-2)
