"""Row gathers (codegen/passes/reduction_fusion.h, FusionOptions::row_gathers), without a GPU:
an LM's token embedding feeding its first norm is gathered inside the norm's row kernel, as
Inductor does, instead of being a kernel of its own that the norm reads back. The inference
graphs of a tiny Llama-like block (RMSNorm) and a GPT-2-like one (token + position embeddings,
LayerNorm) are captured on the CPU and compiled by the real daemon for an H100 target (as
cuda_plan_census.py); `TCCD_DISABLE_PASSES=row-gathers,embeddings-to-reader-shape` gives the
old plans.
tests/python/test_gpu_row_gathers.py runs the same models against eager on a GPU.
"""

import shutil

import pytest
import torch
import torch.nn as nn

from tccd import serialize
from tccd_testlib import capture_aot_graphs
from test_e2e_channels_last import _compile, _on_cuda

EMBEDDING = "aten::embedding.default"
NORMS = ("aten::mean.dim", "aten::native_layer_norm.default", "aten::var_mean.correction")


class RmsNormLM(nn.Module):
    """Llama's first layer's start: embedding, RMSNorm (decomposed as transformers writes it),
    a projection, the residual add (f32: the census graphs' autocast casts are beside the
    point here)."""

    def __init__(self, vocab=500, hidden=256):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.weight = nn.Parameter(torch.rand(hidden) + 0.5)
        self.proj = nn.Linear(hidden, hidden, bias=False)

    def forward(self, ids):
        h = self.embed(ids)
        var = h.pow(2).mean(-1, keepdim=True)
        x = self.weight * (h * torch.rsqrt(var + 1e-6))
        return h + self.proj(x)


class LayerNormLM(nn.Module):
    """GPT-2's start: token and position embeddings added, a LayerNorm, a projection. The
    position embedding ([1, S, E], broadcast over the batch) is gathered at [B, S, E]
    (embeddings-to-reader-shape, index_ops_to_reader_shape.h) to join the norm too."""

    def __init__(self, vocab=500, positions=64, hidden=256):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, hidden), nn.Embedding(positions, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.proj = nn.Linear(hidden, hidden)

    def forward(self, ids):
        pos = torch.arange(ids.shape[1], device=ids.device).unsqueeze(0)  # GPT-2's [1, S]
        h = self.wte(ids) + self.wpe(pos)
        return h + self.proj(self.norm(h))


def _inference_graph(model_cls):
    torch.manual_seed(0)
    m = model_cls().eval()

    def call(ids):
        with torch.no_grad():
            return m(ids)

    (_, gm, _), = capture_aot_graphs(call, torch.randint(0, 500, (2, 64)))
    graph, _ = serialize.encode_graph(gm)
    _on_cuda(graph)
    return graph


def _kernels(plan):
    """The ops of every generated kernel of the plan, one tuple per kernel."""
    out = []
    for step in plan.steps:
        kind = step.WhichOneof("kind")
        if kind in ("segment", "native_call"):
            out += [tuple(k.ops) for k in getattr(step, kind).kernels if k.kind.startswith("cuda_")]
    return out


def _gathering_norms(plan) -> int:
    """Row kernels that gather an embedding inside a norm."""
    return sum(1 for ops in _kernels(plan) if EMBEDDING in ops and any(op in NORMS for op in ops))


def _embeddings(plan) -> int:
    return sum(ops.count(EMBEDDING) for ops in _kernels(plan))


def _compile_with(disabled, graph):
    """Compiles `graph` with a daemon of its own started with TCCD_DISABLE_PASSES=disabled."""
    from conftest import TCCD_BINARY, Daemon, short_tempdir

    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    root = short_tempdir("tccd-rowg-")
    d = Daemon(TCCD_BINARY, root, env={"TCCD_DISABLE_PASSES": disabled})
    try:
        d.start()
        return _compile(d.stub(), graph, "inference")
    finally:
        assert d.stop() == 0
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("model_cls", [RmsNormLM, LayerNormLM], ids=["rms_norm", "layer_norm"])
def test_the_first_norm_gathers_its_embedding(daemon, model_cls):
    graph = _inference_graph(model_cls)
    plan = _compile(daemon.stub(), graph, "inference")
    kernels = _kernels(plan)
    assert _gathering_norms(plan) == 1, kernels
    # Every embedding is gathered inside the norm's kernel: none is a kernel of its own.
    assert _embeddings(plan) == (1 if model_cls is RmsNormLM else 2), kernels
    assert all(EMBEDDING not in ops or any(op in NORMS for op in ops) for ops in kernels), kernels

    off = _compile_with("row-gathers,embeddings-to-reader-shape", graph)
    assert _gathering_norms(off) == 0, _kernels(off)
    # Before: the embeddings' kernel (RMSNorm: with the square), GPT-2's position embedding one
    # more.
    extra = 1 if model_cls is RmsNormLM else 2
    assert len(_kernels(off)) == len(kernels) + extra, (_kernels(off), kernels)


def test_row_gathers_alone_off_keeps_the_embedding_out_of_the_norm():
    plan = _compile_with("row-gathers", _inference_graph(RmsNormLM))
    assert _gathering_norms(plan) == 0, _kernels(plan)
    assert _embeddings(plan) == 1


@pytest.mark.parametrize("model_cls", [RmsNormLM, LayerNormLM], ids=["rms_norm", "layer_norm"])
def test_the_training_forward_gathers_in_its_norm_too(daemon, model_cls):
    from tccd.backend import _partitioner

    torch.manual_seed(0)
    m = model_cls()
    _, partition_fn, decompositions = _partitioner()
    graphs = capture_aot_graphs(m, torch.randint(0, 500, (2, 64)), backward=True, partition_fn=partition_fn,
                                decompositions=decompositions)
    assert [g[0] for g in graphs] == ["forward", "backward"]
    fw, _ = serialize.encode_graph(graphs[0][1])
    _on_cuda(fw)
    plan = _compile(daemon.stub(), fw, "forward")
    assert _gathering_norms(plan) == 1, _kernels(plan)


def test_a_position_embedding_at_its_readers_shape_matches_eager_on_the_cpu(daemon_env):
    # embeddings-to-reader-shape runs on every target: on the CPU the position embedding is
    # gathered at [B, S, E] inside the token embedding's loop kernel; the values are eager's.
    import tccd

    m = LayerNormLM().eval()
    ids = torch.randint(0, 500, (3, 64))
    tccd.reset_compile_stats()
    with torch.no_grad():
        out = torch.compile(m, backend="tccd")(ids)
        eager = m(ids)
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), [s["fallback"] for s in stats]
    kernels = [k["ops"] for s in stats for k in s["kernels"]]
    assert any(ops.count(EMBEDDING) == 2 for ops in kernels), kernels
    torch.testing.assert_close(out, eager, rtol=1e-5, atol=1e-5)
