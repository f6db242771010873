"""End to end against the real daemon (CPU): ops whose lowering was added or fixed run as
generated kernels and match eager.

Each test compiles a small function with backend="tccd", compares with eager and checks which
ops became native kernels (KernelInfo.ops in tccd.last_compile_stats()), so a lowering that
silently falls back to an ATen extern step fails here.
"""

import pytest
import torch

import tccd


def _compile_and_compare(fn, *args, rtol=1e-5, atol=1e-6):
    expected = fn(*args)
    got = torch.compile(fn, backend="tccd", dynamic=False)(*args)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype
        torch.testing.assert_close(g, e, rtol=rtol, atol=atol)
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), stats
    return [op for s in stats for k in s["kernels"] for op in k["ops"]]


def test_bool_arithmetic_isclose_isfinite(daemon_env):
    # isclose/isfinite decompose into bool mul/bitwise ops, which once produced an invalid kernel
    # ("no arithmetic on b8").
    a = torch.randn(64)
    b = a + torch.randn(64) * 1e-6
    b[::3] += 1.0
    a[5] = float("inf")
    a[7] = float("nan")

    def f(x, y):
        return (torch.isclose(x, y), torch.isfinite(x), (x > 0) * (y > 0), (x > 0) + (y > 0),
                torch.maximum(x > 0, y > 0))

    ops = _compile_and_compare(f, a, b)
    assert "aten::bitwise_and.Tensor" in ops and "aten::mul.Tensor" in ops


class _TinyLM(torch.nn.Module):
    """Embedding, a rotary-style cat of slices and a plain one, padding, index_select and a
    vocabulary head: the index-aware lowerings forward and backward (slice_backward,
    constant_pad_nd)."""

    def __init__(self, vocab: int = 50, d: int = 16) -> None:
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, d)
        self.up = torch.nn.Linear(d, d)
        self.head = torch.nn.Linear(d, vocab)
        self.register_buffer("order", torch.tensor([3, 0, 2, 2, 1, 0, 5, 4]))

    def forward(self, ids):
        x = self.emb(ids)
        h = x.shape[-1] // 2
        # The negated half is placed by slice_backward, negated in its kernel (neg-into-index-ops);
        # the second, plain cat stays a cat.
        x = x * 0.7 + torch.cat((-x[..., h:], x[..., :h]), dim=-1) * 0.3
        x = x + torch.cat((x[..., h:], x[..., :h]), dim=-1) * 0.1
        x = x + torch.tanh(self.up(x))
        x = torch.nn.functional.pad(x[..., 1:], (0, 1), value=0.25) + x[:, :1]
        x = torch.index_select(x, 1, self.order)
        return self.head(x)


def test_index_ops_train_like_eager_as_generated_kernels(daemon_env):
    def run(backend):
        torch.manual_seed(0)
        model = _TinyLM()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        def step(ids, y):  # the loss inside the graph: log_softmax + nll_loss forward and backward
            logits = model(ids).reshape(-1, 50)
            return torch.nn.functional.cross_entropy(logits, y.reshape(-1), ignore_index=7)

        fn = torch.compile(step, backend=backend) if backend else step
        g = torch.Generator().manual_seed(1)
        ids = torch.randint(0, 50, (4, 8), generator=g)
        y = torch.randint(0, 50, (4, 8), generator=g)
        losses = []
        for _ in range(4):
            opt.zero_grad(set_to_none=True)
            loss = fn(ids, y)
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        return torch.stack(losses), {k: v.detach().clone() for k, v in model.state_dict().items()}

    eager_losses, eager_state = run(None)
    losses, state = run("tccd")
    torch.testing.assert_close(losses, eager_losses, rtol=1e-4, atol=1e-5)
    for k in eager_state:
        torch.testing.assert_close(state[k], eager_state[k], rtol=1e-4, atol=1e-5, msg=k)
    assert not torch.equal(losses[0], losses[-1])
    stats = tccd.last_compile_stats()
    assert all(s["fallback"] is None for s in stats), stats
    ops = {op for s in stats for k in s["kernels"] for op in k["ops"]}
    for op in ("aten::embedding.default", "aten::cat.default", "aten::constant_pad_nd.default",
               "aten::slice_backward.default", "aten::index_select.default",
               "aten::nll_loss_backward.default"):
        assert op in ops, (op, sorted(ops))
    kinds = {k["kind"] for s in stats for k in s["kernels"]}
    assert "cpu_pointwise_loop_index" in kinds, kinds


def test_concat_pad_and_backward_views_match_eager(daemon_env):
    a = torch.randn(3, 5, 4)
    b = torch.randn(3, 2, 4)
    g = torch.randn(3, 7)

    def f(x, y, gr):
        c = torch.cat((x, y.flip(0) * 2), dim=1)                   # [3, 7, 4]
        p = torch.nn.functional.pad(c, (1, 2, -1, 1), value=-3.0)  # crop and pad
        s = torch.ops.aten.select_backward(gr, [3, 7, 2], 2, -1)
        return c + 1, p, s

    ops = _compile_and_compare(f, a, b, g)
    assert {"aten::cat.default", "aten::constant_pad_nd.default", "aten::select_backward.default"} <= set(ops)


def test_dropout_backward_and_functional_copy_match_eager(daemon_env):
    g = torch.randn(6, 10)
    mask = torch.rand(6, 10) > 0.3
    src = torch.randn(10)
    dst = torch.zeros(6, 10)

    def f(grad, m, s, d):
        y = torch.ops.aten.native_dropout_backward(grad, m, 1.0 / 0.7)
        return y + torch.ops.aten.copy(d, s), torch.ops.aten.copy(d, s * 2)

    ops = _compile_and_compare(f, g, mask, src, dst)
    assert {"aten::native_dropout_backward.default", "aten::copy.default"} <= set(ops)


def test_fills_fuse_and_scalar_fills_inline(daemon_env):
    x = torch.randn(8, 16)

    def f(a):
        z = torch.zeros_like(a)
        m = torch.where(a > 0, a, torch.zeros((), dtype=a.dtype))   # a 0-dim fill, inlined
        full = torch.full((8, 16), 0.5) + a                          # a fill fused with its consumer
        masked = a.masked_fill(a < -1, float("-inf"))
        # ones & x is x (affine-factory-folding); the f32 ones is a fill of its consumer's kernel.
        return z + m, full, masked, torch.ones(8, 16, dtype=torch.bool) & (a > 1), torch.ones(8, 16) - a

    ops = _compile_and_compare(f, x)
    assert {"aten::full.default", "aten::zeros_like.default", "aten::masked_fill.Scalar",
            "aten::ones.default"} <= set(ops), ops
    assert "aten::zeros.default" not in ops  # the 0-dim zeros became a constant of the where


def test_scatters_stack_and_gather_match_eager(daemon_env):
    base = torch.randn(4, 6, 5)
    src = torch.randn(4, 2, 5)
    row = torch.randn(4, 5)
    idx = torch.randint(0, 6, (4, 3, 5))

    pick = torch.tensor([3, -1, 0, 2, 2])

    def f(b, s, r, i, p):
        a = torch.ops.aten.slice_scatter(b, s * 2, 1, 3, 5)
        c = torch.ops.aten.select_scatter(b, r + 1, 1, -2)
        d = torch.stack((r, r * 2, r - 1), dim=1)
        e = torch.gather(b, 1, i) * 3
        rows = b[p] + 1  # index.Tensor; a negative index wraps
        return a, c, d, e, rows

    ops = _compile_and_compare(f, base, src, row, idx, pick)
    assert {"aten::slice_scatter.default", "aten::select_scatter.default", "aten::stack.default",
            "aten::gather.default", "aten::index.Tensor"} <= set(ops), ops



def test_index_with_broadcast_index_tensors_fuses_like_transformers_masks(daemon_env):
    # transformers' causal masks: a [batch, seq] tensor indexed by a batch index [B, 1, 1, 1]
    # and a position index [1, 1, S, 1] (broadcast together), compared with its transpose.
    pos = torch.arange(12).expand(3, 12) + torch.tensor([[0], [5], [-2]])
    b = torch.arange(3).view(3, 1, 1, 1)
    q = torch.arange(12).view(1, 1, 12, 1)
    kv = torch.arange(12).view(1, 1, 1, 12)
    table = torch.randn(5, 7, 4)
    rows, cols = torch.tensor([[4, -1], [0, 2]]), torch.tensor([6, -7])

    def f(p, b, q, kv, t, r, c):
        mask = p[b, q] <= p[b, kv]            # two index tensors each, broadcast
        picked = t[r, c] * 2                  # [2, 2] and [2] broadcast, one dim left over
        return mask & (p[b, kv] >= 0), picked

    ops = _compile_and_compare(f, pos, b, q, kv, table, rows, cols)
    assert ops.count("aten::index.Tensor") >= 3, ops


def test_dropout_draws_in_kernels_with_the_right_distribution(daemon_env):
    # tccd's dropout draws its own (Philox) stream: not eager's numbers, the same distribution.
    x = torch.ones(200, 100, requires_grad=True)
    f = torch.compile(lambda t: torch.nn.functional.dropout(t * 2, p=0.3, training=True), backend="tccd")
    torch.manual_seed(0)
    y = f(x)
    y.sum().backward()
    kept = y != 0
    assert abs(kept.float().mean().item() - 0.7) < 0.02
    torch.testing.assert_close(y[kept], torch.full_like(y[kept], 2 / 0.7))
    torch.testing.assert_close(x.grad, kept.float() * (2 / 0.7))  # backward uses the same mask
    torch.manual_seed(0)
    assert torch.equal(f(x), y)            # the seed comes from torch's generator
    assert not torch.equal(f(x), y)        # and advances it
    stats = tccd.last_compile_stats()
    assert all(s["fallback"] is None for s in stats), stats
    ops = {op for s in stats for k in s["kernels"] for op in k["ops"]}
    assert "tccd::philox_uniform.default" in ops, ops


def test_fallback_random_keeps_atens_dropout(daemon_env):
    x = torch.ones(64, 32)
    f = torch.compile(lambda t: torch.nn.functional.dropout(t, p=0.5, training=True), backend="tccd",
                      options={"fallback_random": True})
    y = f(x)
    assert set(torch.unique(y).tolist()) <= {0.0, 2.0}
    ops = {op for s in tccd.last_compile_stats() for k in s["kernels"] for op in k["ops"]}
    assert "tccd::philox_uniform.default" not in ops


def test_activation_and_classification_ops_match_eager(daemon_env):
    x = torch.randn(6, 40) * 4
    x[0, :3] = torch.tensor([float("nan"), float("inf"), -float("inf")])
    y, z = torch.randn(6, 40), torch.rand(6, 40) + 0.5
    g = torch.randn(6, 40)
    ops_ = torch.ops.aten

    def f(a, b, c, grad):
        return (torch.isnan(a), torch.isinf(a), torch.sign(b), torch.logical_xor(a > 0, b > 0),
                torch.nn.functional.leaky_relu(b, 0.2), ops_.leaky_relu_backward(grad, b, 0.2, False),
                torch.nn.functional.hardtanh(b, -0.5, 0.7), ops_.hardtanh_backward(grad, b, -0.5, 0.7),
                torch.nn.functional.hardsigmoid(b), torch.nn.functional.hardswish(b),
                torch.addcmul(b, c, grad, value=0.3), torch.addcdiv(b, grad, c, value=-2),
                torch.lerp(b, grad, 0.3), torch.lerp(b, grad, 0.8))

    ops = _compile_and_compare(f, x, y, z, g)
    for op in ("aten::isnan.default", "aten::isinf.default", "aten::sign.default", "aten::hardswish.default",
               "aten::leaky_relu_backward.default", "aten::hardtanh_backward.default",
               "aten::addcmul.default", "aten::lerp.Scalar"):  # addcdiv decomposes in AOT
        assert op in ops, (op, sorted(ops))


# A custom op (torch.library) the daemon has never heard of: one extern step, the rest of the
# graph still compiles (it used to reject the whole graph: "unknown op", run eagerly).
torch.library.define("tccd_test::scaled_add", "(Tensor x, Tensor y, float alpha) -> Tensor")


@torch.library.impl("tccd_test::scaled_add", "CompositeExplicitAutograd")
def _scaled_add(x, y, alpha):
    return x + alpha * y


@torch.library.register_fake("tccd_test::scaled_add")
def _scaled_add_fake(x, y, alpha):
    return torch.empty_like(x)


def test_custom_op_is_one_extern_step_not_a_fallback(daemon_env):
    def f(x, y):
        return (torch.relu(torch.ops.tccd_test.scaled_add(torch.sigmoid(x), y, 0.5)) * 2,)

    x, y = torch.randn(32, 16), torch.randn(32, 16)
    ops = _compile_and_compare(f, x, y)
    assert "aten::sigmoid.default" in ops and "aten::relu.default" in ops, ops
    assert sum(s["extern_steps"] for s in tccd.last_compile_stats()) == 1
