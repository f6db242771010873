"""End to end against the real daemon: graphs with symbolic sizes compile once and serve every size.

An MLP and a small transformer block (embedding, layer norm, attention by matmuls and softmax,
GELU MLP) are trained under backend="tccd" with dynamic=True, with mark_dynamic and with
automatic dynamic (static first call, dynamic after the first size change), over 8+ batch sizes
and sequence lengths; every forward output and every gradient is matched against eager at
every size. The daemon compiles each of the graphs once (GetStats `compiles`: one artifact per
graph, whatever the size), and Dynamo compiles at most 2 graphs per frame (the static one and
the dynamic one).

On the CPU a symbolic graph's pointwise ops run as generated kernels with run-time sizes
(codegen/symbolic_kernels.h: one kernel per fused group, sizes passed at each call), the other
ops (matmuls, norms, softmax, views) as extern ATen steps, the whole plan in the native plan
runtime (its descriptor carries the size expressions); the tests check that the dynamic
graphs' plans hold such kernels (`native_kernels`, each replacing one or more ATen calls of
the extern-only plan), that no step runs in Python (`python_steps` 0), and print the plan's
step counts. `test_interpreter_fallback_matches` runs the same loop with
TCCD_NATIVE_RUNTIME=0 (the Python interpreter, the fallback). The tolerance is that of the fused static kernels
(test_e2e_training.py).
"""

import copy
import math

import pytest
import torch

import tccd

RTOL, ATOL = 1e-4, 1e-5
BATCHES = [3, 5, 2, 8, 7, 4, 6, 9, 11]
SEQ_LENS = [12, 7, 20, 5, 16, 9, 31, 24, 3]


class MLP(torch.nn.Module):
    def __init__(self, d: int):
        super().__init__()
        self.fc1 = torch.nn.Linear(d, 2 * d)
        self.fc2 = torch.nn.Linear(2 * d, d)

    def forward(self, x):
        return self.fc2(torch.nn.functional.gelu(self.fc1(x)))


class Block(torch.nn.Module):
    """A pre-norm transformer block over token ids: [B, T] -> [B, T, d]."""

    def __init__(self, d: int, vocab: int = 50, heads: int = 2):
        super().__init__()
        self.heads = heads
        self.embed = torch.nn.Embedding(vocab, d)
        self.pos = torch.nn.Embedding(64, d)
        self.ln1 = torch.nn.LayerNorm(d)
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.proj = torch.nn.Linear(d, d)
        self.ln2 = torch.nn.LayerNorm(d)
        self.fc1 = torch.nn.Linear(d, 4 * d)
        self.fc2 = torch.nn.Linear(4 * d, d)

    def forward(self, ids):
        b, t = ids.shape
        x = self.embed(ids) + self.pos(torch.arange(t, device=ids.device))
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
        d = q.shape[-1] // self.heads
        q, k, v = (z.reshape(b, t, self.heads, d).transpose(1, 2) for z in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(d)
        attn = torch.softmax(scores, dim=-1) @ v
        x = x + self.proj(attn.transpose(1, 2).reshape(b, t, self.heads * d))
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x))))


def train_ids_against_eager(model, sizes, seed, column_major_step=None):
    """Trains `model` compiled with tccd (dynamic=True) beside its eager deep copy on token ids of
    each (batch, length) in `sizes` (ids from seed + step; at `column_major_step` with their own
    column-major strides), checking the output and every parameter's gradient at each step: the
    dynamic e2e tests' shared loop (they check the compile stats afterwards)."""
    eager = copy.deepcopy(model)
    compiled = torch.compile(model, backend="tccd", dynamic=True)
    for step, (b, t) in enumerate(sizes):
        ids = torch.randint(0, 50, (b, t), generator=torch.Generator().manual_seed(seed + step))
        if step == column_major_step:
            ids = ids.t().contiguous().t()  # indices with their own (column-major) strides
        out, expected = compiled(ids), eager(ids)
        torch.testing.assert_close(out, expected, rtol=RTOL, atol=ATOL, msg=f"forward at {(b, t)}")
        weights = torch.linspace(0.5, 1.5, out.numel()).reshape(out.shape)
        (out * weights).sum().backward()
        (expected * weights).sum().backward()
        for (name, p), q in zip(model.named_parameters(), eager.parameters()):
            torch.testing.assert_close(p.grad, q.grad, rtol=RTOL, atol=ATOL, msg=f"grad {name} at {(b, t)}")
            p.grad = q.grad = None


def _inputs(model_name: str, step: int, d: int):
    g = torch.Generator().manual_seed(100 + step)
    if model_name == "mlp":
        return torch.randn(BATCHES[step], d, generator=g), 0
    # The transformer varies the batch and the sequence length together.
    return torch.randint(0, 50, (BATCHES[step] % 4 + 2, SEQ_LENS[step]), generator=g), (0, 1)


def _model(model_name: str, d: int) -> torch.nn.Module:
    torch.manual_seed(0)
    return MLP(d) if model_name == "mlp" else Block(d)


def _compile(model, mode):
    if mode == "dynamic":
        return torch.compile(model, backend="tccd", dynamic=True)
    return torch.compile(model, backend="tccd")


@pytest.mark.parametrize("mode", ["dynamic", "mark_dynamic", "automatic"])
@pytest.mark.parametrize("model_name", ["mlp", "transformer"])
def test_dynamic_sizes_compile_once_and_match_eager(daemon, daemon_env, model_name, mode):
    import torch._dynamo

    torch._dynamo.reset()
    # A width per mode: each test's graphs are new to the session daemon, so its `compiles`
    # counter counts exactly this test's graphs.
    d = {"dynamic": 16, "mark_dynamic": 24, "automatic": 32}[mode]
    model = _model(model_name, d)
    eager = copy.deepcopy(model)
    compiled = _compile(model, mode)
    compiles_before = daemon.stats().get("compiles", 0)
    sizes = set()
    for step in range(len(BATCHES)):
        x, dims = _inputs(model_name, step, d)
        sizes.add(tuple(x.shape))
        if mode == "mark_dynamic":
            for dim in (dims if isinstance(dims, tuple) else (dims,)):
                torch._dynamo.mark_dynamic(x, dim)
        out = compiled(x)
        expected = eager(x)
        torch.testing.assert_close(out, expected, rtol=RTOL, atol=ATOL, msg=f"forward at {tuple(x.shape)}")
        # A loss that weighs every element differently, so that wrong gradients cannot cancel.
        weights = torch.linspace(0.5, 1.5, out.numel()).reshape(out.shape)
        (out * weights).sum().backward()
        (expected * weights).sum().backward()
        for (name, p), q in zip(model.named_parameters(), eager.parameters()):
            torch.testing.assert_close(p.grad, q.grad, rtol=RTOL, atol=ATOL, msg=f"grad {name} at {tuple(x.shape)}")
            p.grad = None
            q.grad = None
    assert len(sizes) >= 8

    stats = tccd.last_compile_stats()
    for s in stats:
        assert s["fallback"] is None, f"{s['name']} fell back: {s['fallback']}"
    forwards = [s for s in stats if s["kind"] == "forward"]
    backwards = [s for s in stats if s["kind"] == "backward"]
    # Dynamo: dynamic=True and mark_dynamic compile the dynamic graph straight away; automatic
    # dynamic compiles the static one first, then the dynamic one at the first new size.
    expected_graphs = 2 if mode == "automatic" else 1
    assert len(forwards) == expected_graphs, [s["name"] for s in forwards]
    assert len(backwards) == expected_graphs, [s["name"] for s in backwards]
    # The daemon: one compile per graph, for all sizes (one artifact serves every size).
    compiles = daemon.stats().get("compiles", 0) - compiles_before
    assert compiles == 2 * expected_graphs, f"{compiles} daemon compiles for {2 * expected_graphs} graphs"
    # The dynamic graphs' pointwise ops (bias/residual adds, GELU and its backward, scaling)
    # run as kernels with run-time sizes; the rest stay extern steps.
    for s in (forwards[-1], backwards[-1]):
        _check_symbolic_kernels(s)
    print(
        f"\n{model_name}/{mode}: {len(sizes)} sizes, {len(forwards)} Dynamo graphs, {compiles} daemon compiles; "
        + "; ".join(_plan_counts(s) for s in (forwards[-1], backwards[-1]))
    )


def _check_symbolic_kernels(s):
    assert s["native_kernels"] >= 1, f"{s['name']}: no generated kernel in the dynamic plan: {s}"
    # The native plan runtime runs the whole symbolic plan (descriptor format 2: sizes from
    # expressions evaluated per call): no step is a Python call.
    assert s["python_steps"] == 0, s
    assert s["fused_kernels"] >= s["native_kernels"], s


def _plan_counts(s) -> str:
    return (f"{s['kind']}: {s['native_kernels']} kernels, {s['extern_steps']} extern steps, "
            f"{s['python_steps']} python steps")


def test_symbolic_graph_key_does_not_depend_on_the_first_size(daemon, daemon_env, tmp_path, monkeypatch):
    """The same dynamic model first called at another size is the same compile key: the example
    sizes (ShapeEnv hints) never enter the key, and symbols are renamed canonically."""
    import torch._dynamo

    keys = []
    for first_batch in (3, 6):
        torch._dynamo.reset()
        tccd.reset_compile_stats()
        monkeypatch.setenv("TCCD_CACHE_DIR", str(tmp_path / f"cache-{first_batch}"))
        tccd.config.reload()
        torch.manual_seed(0)
        compiled = torch.compile(MLP(20), backend="tccd", dynamic=True)
        compiled(torch.randn(first_batch, 20)).sum().backward()
        stats = tccd.last_compile_stats()
        assert all(s["fallback"] is None for s in stats), stats
        keys.append(sorted((s["kind"], s["key"]) for s in stats))
    assert keys[0] == keys[1]


def test_inference_over_sequence_lengths_compiles_one_graph(daemon, daemon_env):
    """Inference (no grad) over 9 prompt lengths: one dynamic inference graph, one compile."""
    import torch._dynamo

    torch._dynamo.reset()
    model = _model("transformer", 40).eval()
    compiled = torch.compile(model, backend="tccd", dynamic=True)
    compiles_before = daemon.stats().get("compiles", 0)
    with torch.no_grad():
        for step, t in enumerate(SEQ_LENS):
            ids = torch.randint(0, 50, (2, t), generator=torch.Generator().manual_seed(step))
            torch.testing.assert_close(compiled(ids), model(ids), rtol=RTOL, atol=ATOL, msg=f"length {t}")
    stats = tccd.last_compile_stats()
    assert [s["kind"] for s in stats] == ["inference"], stats
    assert stats[0]["fallback"] is None, stats[0]["fallback"]
    assert daemon.stats().get("compiles", 0) - compiles_before == 1
    _check_symbolic_kernels(stats[0])
    print("\n" + _plan_counts(stats[0]))


def test_interpreter_fallback_matches(daemon, daemon_env, monkeypatch):
    """TCCD_NATIVE_RUNTIME=0: the same symbolic plans run in the Python interpreter (the native
    runtime's fallback), every step a Python call, and still match eager at every size."""
    import torch._dynamo

    monkeypatch.setenv("TCCD_NATIVE_RUNTIME", "0")
    tccd.config.reload()
    torch._dynamo.reset()
    model = _model("mlp", 12)  # a width no other test compiles: no plan loaded natively before
    eager = copy.deepcopy(model)
    compiled = torch.compile(model, backend="tccd", dynamic=True)
    for step in range(4):
        x, _ = _inputs("mlp", step, 12)
        out = compiled(x)
        torch.testing.assert_close(out, eager(x), rtol=RTOL, atol=ATOL, msg=f"forward at {tuple(x.shape)}")
        out.sum().backward()
    for s in tccd.last_compile_stats():
        assert s["fallback"] is None, s
        assert s["python_steps"] == s["native_kernels"] + s["extern_steps"], s
    monkeypatch.delenv("TCCD_NATIVE_RUNTIME")
    tccd.config.reload()


def test_size_expressions_and_symint_outputs_run_natively(daemon, daemon_env):
    """Sizes that are expressions (floor division, modulo, products), SymInts the graph returns
    and SymInt graph inputs (symbols the caller binds): the native runtime evaluates them per
    call (descriptor format 2) and matches eager at every size, with no step in Python."""
    import torch._dynamo

    def f(x):
        b, t = x.shape
        y = x.reshape(b * t // 2, 2) * 2.0          # (s0*s1)//2 rows
        z = x[:, : t - t % 3]                       # s1 - Mod(s1, 3) columns (an optional SymInt)
        return y.sum(1), z.relu(), b * t + 1

    torch._dynamo.reset()
    tccd.reset_compile_stats()
    compiled = torch.compile(f, backend="tccd", dynamic=True)
    for b, t in [(2, 4), (3, 8), (5, 10), (4, 7 * 2), (6, 16)]:
        x = torch.randn(b, t)
        got, expected = compiled(x), f(x)
        torch.testing.assert_close(got[0], expected[0], msg=f"reshape at {(b, t)}")
        torch.testing.assert_close(got[1], expected[1], msg=f"slice at {(b, t)}")
        assert got[2] == expected[2], (got[2], expected[2])
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), stats
    assert all(s["python_steps"] == 0 for s in stats), stats


@pytest.mark.parametrize("native_runtime", ["1", "0"])
def test_view_chains_over_kernel_outputs_fold_and_match_eager(daemon, daemon_env, monkeypatch, native_runtime):
    """A view chain over a kernel's output (view, then transpose, then expand) whose intermediate
    views nothing else reads is one as_strided step of the kernel's output in the plan
    (codegen/symbolic_views.h), in the native runtime and in the Python interpreter, and matches
    eager at every size, forward and backward (the backward's chains too)."""
    import torch._dynamo
    from tccd.v1 import tccd_pb2 as pb

    monkeypatch.setenv("TCCD_NATIVE_RUNTIME", native_runtime)

    def f(x, w):
        b, t, d = x.shape
        y = torch.tanh(x) * 2.0                                     # a kernel
        z = y.view(b, t, 2, d // 2).transpose(1, 2)                 # view -> transpose
        return (z.unsqueeze(2).expand(b, 2, 3, t, d // 2) * w).sum(2)  # -> unsqueeze -> expand

    torch._dynamo.reset()
    tccd.reset_compile_stats()
    compiled = torch.compile(f, backend="tccd", dynamic=True)
    for b, t in [(2, 5), (3, 8), (4, 3), (5, 11), (2, 16)]:
        g = torch.Generator().manual_seed(b * 100 + t)
        x = torch.randn(b, t, 8, generator=g, requires_grad=True)
        w = torch.randn(3, 1, 4, generator=g, requires_grad=True)
        x2, w2 = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
        got, expected = compiled(x, w), f(x2, w2)
        torch.testing.assert_close(got, expected, rtol=RTOL, atol=ATOL, msg=f"forward at {(b, t)}")
        got.pow(2).sum().backward()
        expected.pow(2).sum().backward()
        torch.testing.assert_close(x.grad, x2.grad, rtol=RTOL, atol=ATOL, msg=f"grad x at {(b, t)}")
        torch.testing.assert_close(w.grad, w2.grad, rtol=RTOL, atol=ATOL, msg=f"grad w at {(b, t)}")
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), stats
    if native_runtime == "1":
        assert all(s["python_steps"] == 0 for s in stats), [(s["name"], s["python_step_reasons"]) for s in stats]
    forwards = [s for s in stats if s["kind"] == "forward"]
    assert forwards, stats
    manifest = daemon.stub().GetManifest(pb.ManifestRequest(key=forwards[0]["key"]), timeout=10)
    targets = [step.extern_call.target for step in manifest.plan.steps
               if step.WhichOneof("kind") == "extern_call"]
    print(f"\nforward extern steps: {targets}")
    assert "aten::as_strided.default" in targets, targets
    assert "aten::transpose.int" not in targets, targets  # folded into the chain's last view
