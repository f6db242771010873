"""log_softmax decomposed before partitioning (decompositions.py): the backward saves the logits
and one value per row instead of f32 log-probabilities, and training matches eager.

The saved-tensor check looks at the graphs AOTAutograd hands tccd (with tccd's partitioner and
decompositions); the training check runs them through the real daemon."""

from __future__ import annotations

import torch

from tccd_testlib import capture_aot_graphs

VOCAB, TOKENS, HIDDEN = 37, 12, 16


class _LossHead(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.proj = torch.nn.Linear(HIDDEN, VOCAB)

    def forward(self, h, target):
        return torch.nn.functional.cross_entropy(self.proj(h), target)


def _inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randn(TOKENS, HIDDEN, generator=g), torch.randint(0, VOCAB, (TOKENS,), generator=g)


def _saved_by_forward(monkeypatch, lse: str):
    from tccd import config
    from tccd.backend import _partitioner

    monkeypatch.setenv("TCCD_LOG_SOFTMAX_LSE", lse)
    config.reload()
    name, partition_fn, decompositions = _partitioner()
    graphs = capture_aot_graphs(_LossHead(), *_inputs(), backward=True, partition_fn=partition_fn,
                                decompositions=decompositions)
    forward = next(gm for kind, gm, _ in graphs if kind == "forward")
    targets = [n.target for n in forward.graph.nodes if n.op == "call_function"]
    saved = [tuple(n.meta["val"].shape) for n in forward.graph.output_node().args[0][1:]
             if isinstance(n, torch.fx.Node) and isinstance(n.meta.get("val"), torch.Tensor)]
    return name, targets, saved


def test_the_forward_saves_logsumexp_not_log_probabilities(monkeypatch):
    name, targets, saved = _saved_by_forward(monkeypatch, "1")
    assert name.endswith("+log_softmax_lse")
    assert torch.ops.aten.logsumexp.default in targets
    assert torch.ops.aten._log_softmax.default not in targets
    assert (TOKENS, 1) in saved  # logsumexp
    # The logits are saved (the linear layer's output, recomputed into log-probabilities in
    # the backward): one [TOKENS, VOCAB] tensor, not two.
    assert saved.count((TOKENS, VOCAB)) == 1


def test_switched_off_the_forward_keeps_atens_log_softmax(monkeypatch):
    name, targets, saved = _saved_by_forward(monkeypatch, "0")
    assert not name.endswith("+log_softmax_lse")
    assert torch.ops.aten._log_softmax.default in targets
    assert torch.ops.aten.logsumexp.default not in targets


def test_training_through_the_daemon_matches_eager(daemon_env):
    h, target = _inputs()
    eager = _LossHead()
    compiled_model = _LossHead()
    compiled = torch.compile(compiled_model, backend="tccd")
    for _ in range(3):
        for model, fn in ((eager, eager), (compiled_model, compiled)):
            loss = fn(h, target)
            loss.backward()
            with torch.no_grad():
                for p in model.parameters():
                    p -= 0.1 * p.grad
                    p.grad = None
        torch.testing.assert_close(compiled(h, target), eager(h, target), rtol=1e-5, atol=1e-6)
    for a, b in zip(compiled_model.parameters(), eager.parameters()):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)
    import tccd

    assert not [r for r in tccd.last_compile_stats() if r["fallback"]]


class _AutocastLossHead(_LossHead):
    """The loss as CUDA autocast traces it: a bf16 log_softmax cast to f32 for nll_loss."""

    def forward(self, h, target):
        logits = self.proj(h.to(torch.bfloat16)) if self.proj.weight.dtype == torch.bfloat16 else self.proj(h)
        log_probs = torch.log_softmax(logits.to(torch.bfloat16), -1)
        return torch.nn.functional.nll_loss(log_probs.to(torch.float32), target)


def test_a_cast_between_log_softmax_and_nll_loss_is_recomputed_not_saved(monkeypatch):
    from tccd import config
    from tccd.backend import _partitioner

    monkeypatch.setenv("TCCD_LOG_SOFTMAX_LSE", "1")
    config.reload()
    _, partition_fn, decompositions = _partitioner()
    graphs = capture_aot_graphs(_AutocastLossHead(), *_inputs(), backward=True, partition_fn=partition_fn,
                                decompositions=decompositions)
    forward = next(gm for kind, gm, _ in graphs if kind == "forward")
    saved = [(tuple(n.meta["val"].shape), n.meta["val"].dtype) for n in forward.graph.output_node().args[0][1:]
             if isinstance(n, torch.fx.Node) and isinstance(n.meta.get("val"), torch.Tensor)]
    # Only the bf16 logits of [TOKENS, VOCAB] are saved: not the f32 log-probabilities.
    assert [s for s in saved if s[0] == (TOKENS, VOCAB)] == [((TOKENS, VOCAB), torch.bfloat16)]
