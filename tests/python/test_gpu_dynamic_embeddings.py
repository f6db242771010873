"""GPU: embeddings of symbolic graphs as CUDA gather kernels with run-time sizes, and their
gradients as scatter kernels (SymbolicKernelOptions::embeddings, codegen/symbolic_kernels.h;
symbolic_rewrites.h's "symbolic-embedding-scatter-kernels"; the CPU twin of the forward is
test_e2e_dynamic_embeddings.py).

The token and position embeddings of a transformer block trained under dynamic=True are index
kernels of their own (the strided entry only: their gather operands take their own strides,
NativeCall.gather_inputs), launched with the call's sizes; their gradients are scatter kernels
over the gradient's run-time sizes into a zero-filled f32 table (NativeCall.scatter_outputs).
Forward and gradients match eager at sizes whose element counts are and are not multiples of
the vector width, f32 and bf16, and the whole plan runs in the native runtime. The position
ids' arange is a kernel too, and the position embedding's gradient scatters the unsummed
gradient with the positions expanded over the batch (symbolic-embedding-sum-fold). With
symbolic row gathers (the default) both embeddings are gathered inside the first layer norm's
row kernel instead (d 40: rows with a tail, the ids read per row at run-time coordinates).
"""

import copy
import os

import pytest
import torch

import tccd
from test_e2e_dynamic_shapes import Block

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

EMBEDDING = "aten::embedding.default"
SCATTER = "tccd::embedding_scatter_add.default"
ARANGE = "aten::arange.default"


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_dynamic_embedding_kernels_match_eager(daemon, daemon_env, dtype):
    import torch._dynamo

    torch._dynamo.reset()
    tccd.reset_compile_stats()
    torch.manual_seed(0)
    model = Block(40).cuda().to(dtype)
    eager = copy.deepcopy(model)
    compiled = torch.compile(model, backend="tccd", dynamic=True)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == torch.float32 else dict(rtol=2e-2, atol=2e-2)
    # (5, 33) repeats length 33: the forward's saved position ids come from the runtime's
    # per-size cache there (TCCD_SYMBOLIC_SAVED_ARANGES), not from a launch.
    for step, (b, t) in enumerate([(3, 7), (2, 33), (8, 16), (4, 61), (6, 9), (5, 33)]):
        g = torch.Generator(device="cuda").manual_seed(500 + step)
        ids = torch.randint(0, 50, (b, t), device="cuda", generator=g)
        out = compiled(ids)
        expected = eager(ids)
        torch.testing.assert_close(out, expected, **tol, msg=f"forward at {(b, t)}")
        (out.float() * 0.01).sum().backward()
        (expected.float() * 0.01).sum().backward()
        for (name, p), q in zip(model.named_parameters(), eager.parameters()):
            torch.testing.assert_close(p.grad, q.grad, **tol, msg=f"grad {name} at {(b, t)}")
            p.grad = None
            q.grad = None
    stats = tccd.last_compile_stats()
    assert all(s["fallback"] is None for s in stats), stats
    forward = [s for s in stats if s["kind"] == "forward"][-1]
    ops = [op for k in forward["kernels"] for op in k["ops"]]
    assert ops.count(EMBEDDING) == 2, forward["kernels"]
    # Both gathered inside the first layer norm's row kernel (symbolic-row-gathers; the position
    # embedding at [B, T, d] from the expanded ids, symbolic-embeddings-to-reader-shape), as the
    # static plan gathers its token embedding there.
    if "symbolic-row-gathers" not in os.environ.get("TCCD_DISABLE_PASSES", ""):
        assert [k["ops"] for k in forward["kernels"] if EMBEDDING in k["ops"]] == [
            [EMBEDDING, EMBEDDING, "aten::add.Tensor", "aten::native_layer_norm.default"]], forward["kernels"]
    # The position ids, arange(T), a kernel of their own (symbolic-arange-kernels).
    assert [k["ops"] for k in forward["kernels"] if ARANGE in k["ops"]] == [[ARANGE]], forward["kernels"]
    assert forward["python_steps"] == 0, forward.get("python_step_reasons")
    backward = [s for s in stats if s["kind"] == "backward"][-1]
    scatters = [k for k in backward["kernels"] if SCATTER in k["ops"]]
    assert len(scatters) == 2, backward["kernels"]
    assert backward["python_steps"] == 0, backward.get("python_step_reasons")
    print(f"\n{dtype}: forward {forward['native_kernels']} kernels, {forward['extern_steps']} extern steps")
