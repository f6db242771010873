"""mode="reduce-overhead" in the AOT recipe's runtime (TCCD_LEAN_CUDAGRAPHS; GPU only).

From its second step a graph under torch's CUDA graph trees runs in tccd's recipe runtime
(aot_runtime.py) around the very callables the trees wrapped: the trees record and replay as
under AOTAutograd's wrappers, training and inference match eager, and the knob turned off keeps
AOTAutograd's wrappers. The same behaviour without a GPU (trees replaced by a counting
pass-through) is in test_cudagraphs.py.
"""

import pytest
import torch

import tccd
from test_gpu_training import TOLERANCES, TinyLM, make_model, train

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@pytest.fixture
def replays(monkeypatch):
    count = {"replays": 0}
    real = torch.cuda.CUDAGraph.replay

    def replay(self):
        count["replays"] += 1
        return real(self)

    monkeypatch.setattr(torch.cuda.CUDAGraph, "replay", replay)
    return count


@pytest.fixture
def builds(monkeypatch):
    """(recipe kind, whether it runs other callables than the plans) per runtime built."""
    from tccd import aot_runtime

    built = []
    real = aot_runtime.build

    def build(recipe, fw_plan, bw_plan, calls=None):
        built.append((recipe.kind, calls is not None))
        return real(recipe, fw_plan, bw_plan, calls=calls)

    monkeypatch.setattr(aot_runtime, "build", build)
    return built


@pytest.mark.parametrize("lean", [True, False], ids=["lean", "aot"])
@pytest.mark.parametrize("name", ["mlp", "cnn", "block"])
def test_reduce_overhead_training_in_the_recipe_runtime_replays_and_matches_eager(
    daemon_env, monkeypatch, replays, builds, name, lean
):
    monkeypatch.setenv("TCCD_LEAN_CUDAGRAPHS", "1" if lean else "0")
    tccd.config.reload()
    torch._dynamo.reset()
    tccd.reset_compile_stats()
    dtype, steps = torch.float32, 6
    eager_losses, eager_state = train(name, dtype, steps=steps)
    assert replays["replays"] == 0
    losses, state = train(name, dtype, backend="tccd", mode="reduce-overhead", steps=steps)
    torch.testing.assert_close(losses, eager_losses, **TOLERANCES[dtype])
    for k in eager_state:
        torch.testing.assert_close(state[k], eager_state[k], **TOLERANCES[dtype], msg=k)
    stats = tccd.last_compile_stats()
    assert all(s["cudagraphs"] and s["fallback"] is None for s in stats), stats
    assert builds == ([("training", True)] if lean else []), builds
    # Step 1 warms up, step 2 records, steps 3.. replay the forward and the backward graph.
    assert replays["replays"] >= 2 * (steps - 2), replays


def _train_lm_under_autocast(steps: int, mode=None, backend=None):
    """The zoo's step: the compiled model under bf16 autocast entered outside it (so the recipe
    runtime runs the trees' callables with autocast off, as AOTAutograd's wrappers do), the loss
    eager."""
    torch.manual_seed(0)
    model = TinyLM().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    fn = torch.compile(model, backend=backend, mode=mode) if backend else model
    g = torch.Generator(device="cuda").manual_seed(1)
    ids = torch.randint(0, 512, (8, 64), device="cuda", generator=g)
    y = torch.randint(0, 512, (8, 64), device="cuda", generator=g)
    losses = []
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = fn(ids)
        loss = torch.nn.functional.cross_entropy(out.reshape(-1, 512).float(), y.reshape(-1))
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return torch.stack(losses).cpu(), {k: v.detach().float().cpu() for k, v in model.state_dict().items()}


@pytest.mark.parametrize("lean", [True, False], ids=["lean", "aot"])
def test_reduce_overhead_autocast_lm_in_the_recipe_runtime(daemon_env, monkeypatch, replays, builds, lean):
    monkeypatch.setenv("TCCD_LEAN_CUDAGRAPHS", "1" if lean else "0")
    tccd.config.reload()
    torch._dynamo.reset()
    tccd.reset_compile_stats()
    steps = 6
    eager_losses, eager_state = _train_lm_under_autocast(steps)
    losses, state = _train_lm_under_autocast(steps, mode="reduce-overhead", backend="tccd")
    tol = TOLERANCES[torch.bfloat16]
    torch.testing.assert_close(losses, eager_losses, **tol)
    for k in eager_state:
        torch.testing.assert_close(state[k], eager_state[k], **tol, msg=k)
    stats = tccd.last_compile_stats()
    assert all(s["cudagraphs"] and s["fallback"] is None for s in stats), stats
    assert builds == ([("training", True)] if lean else []), builds
    assert replays["replays"] >= 2 * (steps - 2), replays


def test_reduce_overhead_inference_in_the_recipe_runtime(daemon_env, monkeypatch, replays, builds):
    monkeypatch.setenv("TCCD_LEAN_CUDAGRAPHS", "1")
    tccd.config.reload()
    torch._dynamo.reset()
    model = make_model("cnn", torch.float32).eval()
    fn = torch.compile(model, backend="tccd", mode="reduce-overhead")
    g = torch.Generator(device="cuda").manual_seed(2)
    steps = 5
    with torch.no_grad():
        for _ in range(steps):
            x = torch.randn(16, 8, 12, 12, device="cuda", generator=g)
            torch.testing.assert_close(fn(x), model(x), **TOLERANCES[torch.float32])
    assert builds == [("inference", True)], builds
    assert replays["replays"] >= steps - 2, replays


@pytest.mark.parametrize("name", ["cnn", "block"])
def test_reduce_overhead_with_packed_saved_tensors_matches_eager(daemon_env, monkeypatch, replays, name):
    """TCCD_PACK_SAVED=1: the small saved tensors (batch/layer norm statistics) travel as one
    concatenated tensor under the CUDA graph trees; training still matches eager and replays."""
    monkeypatch.setenv("TCCD_PACK_SAVED", "1")
    tccd.config.reload()
    torch._dynamo.reset()
    tccd.reset_compile_stats()
    dtype, steps = torch.float32, 6
    eager_losses, eager_state = train(name, dtype, steps=steps)
    losses, state = train(name, dtype, backend="tccd", mode="reduce-overhead", steps=steps)
    torch.testing.assert_close(losses, eager_losses, **TOLERANCES[dtype])
    for k in eager_state:
        torch.testing.assert_close(state[k], eager_state[k], **TOLERANCES[dtype], msg=k)
    stats = tccd.last_compile_stats()
    assert all(s["cudagraphs"] and s["fallback"] is None for s in stats), stats
    assert replays["replays"] >= 2 * (steps - 2), replays


class ShiftRightLM(torch.nn.Module):
    """HF T5's decoder input: the labels shifted right with the start token written in
    (`shifted[..., 0] = 0`: on CUDA a lifted CPU 0-dim constant read by fill.Tensor), embedded
    and projected."""

    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(512, 64)
        self.proj = torch.nn.Linear(64, 512)

    def forward(self, labels):
        shifted = labels.new_zeros(labels.shape)
        shifted[..., 1:] = labels[..., :-1].clone()
        shifted[..., 0] = 0
        return self.proj(torch.relu(self.embed(shifted)))


@pytest.mark.parametrize(
    "fold, cpu_constants", [(True, False), (False, True), (False, False)], ids=["fold", "constants", "old-rule"]
)
def test_reduce_overhead_graph_with_a_cpu_scalar_constant_replays(
    daemon_env, monkeypatch, replays, fold, cpu_constants
):
    """T5's shifted labels put a CPU 0-dim constant in the forward. TCCD_FOLD_SCALAR_FILLS turns
    its fill into a fill by the number (no CPU tensor left); without it,
    TCCD_CUDAGRAPH_CPU_CONSTANTS still captures the graph. Either way it replays, training like
    eager; with both off (the old rules) it runs without CUDA graphs, training alike."""
    monkeypatch.setenv("TCCD_FOLD_SCALAR_FILLS", "1" if fold else "0")
    monkeypatch.setenv("TCCD_CUDAGRAPH_CPU_CONSTANTS", "1" if cpu_constants else "0")
    tccd.config.reload()
    torch._dynamo.reset()
    tccd.reset_compile_stats()
    steps = 6

    def run(backend=None, mode=None):
        torch.manual_seed(0)
        model = ShiftRightLM().cuda()
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        fn = torch.compile(model, backend=backend, mode=mode) if backend else model
        g = torch.Generator(device="cuda").manual_seed(1)
        labels = torch.randint(0, 512, (4, 32), device="cuda", generator=g)
        losses = []
        for _ in range(steps):
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.cross_entropy(fn(labels).reshape(-1, 512), labels.reshape(-1))
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        return torch.stack(losses).cpu(), {k: v.detach().cpu() for k, v in model.state_dict().items()}

    eager_losses, eager_state = run()
    losses, state = run(backend="tccd", mode="reduce-overhead")
    tol = TOLERANCES[torch.float32]
    torch.testing.assert_close(losses, eager_losses, **tol)
    for k in eager_state:
        torch.testing.assert_close(state[k], eager_state[k], **tol, msg=k)
    stats = tccd.last_compile_stats()
    assert all(s["fallback"] is None for s in stats), stats
    if fold or cpu_constants:
        assert all(s["cudagraphs"] for s in stats), stats
        assert replays["replays"] >= 2 * (steps - 2), replays
    else:
        assert not any(s["cudagraphs"] for s in stats), stats
        assert replays["replays"] == 0, replays


class LossAndLogitsLM(torch.nn.Module):
    """Returns its loss and its logits, as a transformers LM compiled whole does (the zoo
    backpropagates the loss alone)."""

    def __init__(self, vocab=8192, dim=64):
        super().__init__()
        self.vocab = vocab
        self.embed = torch.nn.Embedding(vocab, dim)
        self.head = torch.nn.Linear(dim, vocab)

    def forward(self, ids, labels):
        logits = self.head(torch.relu(self.embed(ids)))
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, self.vocab).float(), labels.reshape(-1))
        return loss, logits


@pytest.mark.parametrize("knob", ["1", "0"])
def test_reduce_overhead_unused_logits_peak(daemon_env, monkeypatch, replays, knob):
    """TCCD_CUDAGRAPH_ZERO_TANGENTS: the logits' zero gradient is made inside the backward's graph
    (its pool), not by autograd in ordinary memory at every step: the replayed steps' peak
    (max_memory_allocated) drops by about the logits' size (bf16 [8, 128, 8192]: 16 MiB), and
    training matches eager either way (GPT-2 train small: 358 vs Inductor's 262 MiB, session 15)."""
    monkeypatch.setenv("TCCD_CUDAGRAPH_ZERO_TANGENTS", knob)
    tccd.config.reload()
    torch._dynamo.reset()
    tccd.reset_compile_stats()
    steps, warmup = 8, 4

    def run(backend=None, mode=None):
        torch.manual_seed(0)
        model = LossAndLogitsLM().cuda()
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        fn = torch.compile(model, backend=backend, mode=mode) if backend else model
        g = torch.Generator(device="cuda").manual_seed(1)
        ids = torch.randint(0, model.vocab, (8, 128), device="cuda", generator=g)
        labels = torch.randint(0, model.vocab, (8, 128), device="cuda", generator=g)
        losses, peak = [], 0
        for step in range(steps):
            if step == warmup:
                torch.cuda.synchronize()
                torch.cuda.reset_peak_memory_stats()
            if mode:
                torch.compiler.cudagraph_mark_step_begin()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss, _ = fn(ids, labels)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            losses.append(loss.detach().clone())
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated()
        state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
        return torch.stack(losses).cpu(), state, peak

    eager_losses, eager_state, _ = run()
    losses, state, peak = run(backend="tccd", mode="reduce-overhead")
    tol = TOLERANCES[torch.bfloat16]
    torch.testing.assert_close(losses, eager_losses, **tol)
    for k in eager_state:
        torch.testing.assert_close(state[k], eager_state[k], **tol, msg=k)
    assert replays["replays"] >= 2 * (steps - warmup), replays
    logits_bytes = 8 * 128 * 8192 * 2
    params_bytes = sum(p.numel() * 4 for p in LossAndLogitsLM().parameters())
    # Parameters, the batch and the loss are all that the replayed steps allocate outside the
    # graphs with the knob on; with it off, autograd's zeros for the logits too.
    if knob == "1":
        assert peak < params_bytes + logits_bytes // 2, (peak, params_bytes)
    else:
        assert peak >= params_bytes + logits_bytes, (peak, params_bytes)
