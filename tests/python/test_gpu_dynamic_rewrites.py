"""GPU: the rewrites of symbolic CUDA graphs (codegen/symbolic_rewrites.h) against eager.

Under dynamic=True a transformer block's layer norm backwards become a row kernel (grad_input,
run-time rows) and a column kernel (grad_weight, grad_bias over the run-time row count), and its
embedding gradients index_add over f32 (the cast of grad a kernel, the final cast to the
parameter's dtype another). Checked over batch sizes and sequence lengths whose token counts are
and are not multiples of the vector width, f32 and bf16 (bf16 against a float64 reference, as
test_gpu_dynamic_rows.py does), and that the backward plan's kernels hold all four layer norm
backward halves and the casts.
"""

import copy

import pytest
import torch

import tccd
from test_e2e_dynamic_shapes import Block

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_dynamic_block_with_rewrites_matches_eager(daemon, daemon_env, dtype):
    import torch._dynamo

    torch._dynamo.reset()
    tccd.reset_compile_stats()
    torch.manual_seed(0)
    model = Block(40).cuda().to(dtype)
    eager = copy.deepcopy(model)
    reference = copy.deepcopy(model).double() if dtype != torch.float32 else None
    compiled = torch.compile(model, backend="tccd", dynamic=True)

    def rel_err(got, want):
        return float((got.detach().double() - want.detach()).norm() / want.detach().norm().clamp_min(1e-12))

    def check(got, want, ref, what):
        if ref is None:
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4, msg=what)
        else:
            e_t, e_e = rel_err(got, ref), rel_err(want, ref)
            assert e_t <= 2 * e_e + 2e-3, f"{what}: tccd error {e_t:.2e} vs eager {e_e:.2e} (float64 reference)"

    for b, t in [(3, 7), (2, 33), (8, 16), (4, 61), (5, 3)]:
        g = torch.Generator(device="cuda").manual_seed(b * 100 + t)
        ids = torch.randint(0, 50, (b, t), device="cuda", generator=g)
        out = compiled(ids)
        expected = eager(ids)
        ref_out = reference(ids) if reference is not None else None
        check(out, expected, ref_out, f"forward at {(b, t)}")
        weights = torch.linspace(0.5, 1.5, out.numel(), device="cuda", dtype=dtype).reshape(out.shape)
        (out * weights).sum().backward()
        (expected * weights).sum().backward()
        if reference is not None:
            (ref_out * weights.double()).sum().backward()
        ref_params = list(reference.parameters()) if reference is not None else [None] * len(list(eager.parameters()))
        for (name, p), q, r in zip(model.named_parameters(), eager.parameters(), ref_params):
            check(p.grad, q.grad, None if r is None else r.grad, f"grad {name} at {(b, t)}")
            p.grad = None
            q.grad = None
            if r is not None:
                r.grad = None
    stats = tccd.last_compile_stats()
    assert all(s["fallback"] is None for s in stats), stats
    # The native plan runtime runs the whole plans: the column halves' per-column outputs ([N]
    # of an [..., N] space, right-aligned) once failed its descriptor check ("output is not of
    # the kernel's rank"), and every step ran in the Python interpreter (H200, run r1).
    for s in stats:
        assert s["python_steps"] == 0, (s["name"], s["python_steps"], s.get("python_step_reasons"))
    backwards = [s for s in stats if s["kind"] == "backward"]
    assert backwards, stats
    kinds = [k["kind"] for k in backwards[0]["kernels"]]
    print(f"\nblock {dtype} backward: {backwards[0]['native_kernels']} kernels "
          f"({kinds.count('cuda_row_reduction')} row/column kernels), {backwards[0]['extern_steps']} extern steps")
    # Both layer norm backwards' halves are kernels (no extern layer norm backward: every
    # native_layer_norm_backward node of the split graph is in some kernel), and so are the
    # embedding gradients: scatter kernels (symbolic-embedding-scatter-kernels), and for 16-bit
    # weights their accumulators' casts (f32 gradients are the accumulators themselves).
    ops = [op for k in backwards[0]["kernels"] for op in k["ops"]]
    assert ops.count("aten::native_layer_norm_backward.default") == 4, backwards[0]["kernels"]
    assert "tccd::embedding_scatter_add.default" in ops, backwards[0]["kernels"]
    if dtype != torch.float32:
        assert "aten::_to_copy.default" in ops, backwards[0]["kernels"]
