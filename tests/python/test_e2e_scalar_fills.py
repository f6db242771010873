"""TCCD_FOLD_SCALAR_FILLS (client/tccd/scalar_constants.py): a fill by a lifted CPU scalar
constant (HF T5's `shifted[..., 0] = decoder_start_token_id`, which on CUDA traces to
`_tensor_constant0`, lift_fresh_copy and fill.Tensor) is a fill by the number, so the graph holds
no constant and gets an AOT recipe (the lean runtime); with 0 the capture is abandoned."""

import os

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.proxy_tensor import make_fx

import tccd
from tccd import scalar_constants


def _shift_right(labels, w):
    shifted = labels.new_zeros(labels.shape)
    shifted[..., 1:] = labels[..., :-1].clone()
    shifted[..., 0] = torch.tensor(7)  # what setitem of a Python int makes on a CUDA tensor
    return (w[shifted].sum(), shifted)


def _targets(gm):
    return [(n.op, str(n.target)) for n in gm.graph.nodes if n.op in ("get_attr", "call_function")]


@pytest.mark.parametrize("device", ["cuda", "cpu"])
def test_fill_by_a_lifted_cpu_scalar_takes_the_number_and_the_constant_goes(device):
    with FakeTensorMode():
        inputs = [torch.zeros(2, 8, dtype=torch.long, device=device), torch.empty(16, 4, device=device)]
    gm = make_fx(_shift_right, tracing_mode="fake")(*inputs)
    before = _targets(gm)
    assert ("get_attr", "_tensor_constant0") in before and ("call_function", "aten.fill_.Tensor") in before
    assert scalar_constants.fold_scalar_fills(gm) == 1
    after = _targets(gm)
    assert not [t for t in after if t[0] == "get_attr" or "lift_fresh" in t[1] or t[1] == "aten.fill_.Tensor"], after
    fills = [n for n in gm.graph.nodes if n.target is torch.ops.aten.fill_.Scalar]
    assert len(fills) == 1 and fills[0].args[1] == 7


def test_real_graph_computes_the_same_after_folding():
    labels, w = torch.randint(0, 16, (2, 8)), torch.randn(16, 4)
    gm = make_fx(_shift_right)(labels, w)
    expected = _shift_right(labels, w)
    assert scalar_constants.fold_scalar_fills(gm) == 1
    for got, want in zip(gm(labels, w), expected):
        assert torch.equal(got, want)


def test_nothing_to_fold():
    def f(x, s):  # a CPU scalar graph input may change per call: not a constant
        y = x.clone()
        y.fill_(s)
        return (y,)

    gm = make_fx(f)(torch.randn(4), torch.tensor(2.0))
    before = _targets(gm)
    assert scalar_constants.fold_scalar_fills(gm) == 0
    assert _targets(gm) == before


class ShiftRightLM(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(64, 16)
        self.proj = torch.nn.Linear(16, 64)

    def forward(self, labels):
        shifted = labels.new_zeros(labels.shape)
        shifted[..., 1:] = labels[..., :-1].clone()
        shifted[..., 0] = torch.tensor(3)
        return self.proj(torch.relu(self.embed(shifted)))


def _train(backend=None, steps=3):
    torch.manual_seed(0)
    model = ShiftRightLM()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    fn = torch.compile(model, backend=backend) if backend else model
    labels = torch.randint(0, 64, (4, 12), generator=torch.Generator().manual_seed(1))
    losses = []
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(fn(labels).reshape(-1, 64), labels.reshape(-1))
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return torch.stack(losses), {k: v.detach().clone() for k, v in model.state_dict().items()}


@pytest.mark.parametrize("fold", [True, False], ids=["fold", "keep"])
def test_training_with_a_lifted_scalar_fill_gets_a_recipe_and_trains_like_eager(daemon_env, monkeypatch, fold):
    monkeypatch.setenv("TCCD_FOLD_SCALAR_FILLS", "1" if fold else "0")
    tccd.config.reload()
    torch._dynamo.reset()
    tccd.reset_compile_stats()
    eager_losses, eager_state = _train()
    losses, state = _train(backend="tccd")
    torch.testing.assert_close(losses, eager_losses, rtol=1e-5, atol=1e-6)
    for k in eager_state:
        torch.testing.assert_close(state[k], eager_state[k], rtol=1e-5, atol=1e-6, msg=k)
    stats = tccd.last_compile_stats()
    assert [s["kind"] for s in stats] == ["forward", "backward"] and all(s["fallback"] is None for s in stats)
    recipes = os.path.join(daemon_env["TCCD_CACHE_DIR"], "aot-recipes")
    stored = os.listdir(recipes) if os.path.isdir(recipes) else []
    # Folded: no constant, so the AOT recipe is stored; kept: "the graph has lifted constants".
    assert bool(stored) == fold, stored
