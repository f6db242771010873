"""GPU: graphs with symbolic sizes run their pointwise ops as CUDA kernels with run-time sizes.

codegen/symbolic_kernels.h: a dynamic graph's fused pointwise groups become kernels whose sizes
come at each launch (ABI "tccd-cuda-sym-1": the contig entry gets numel, the strided one every
dim's size; the grid is computed from them by the host runtime). One artifact serves every size:
an MLP and a transformer block trained under dynamic=True over sizes whose element counts are
and are not multiples of the vector width, with broadcast operands (biases, residuals), match
eager in the forward and in every gradient, with one daemon compile per graph. The whole
symbolic plan runs in the native plan runtime (no step in Python).
"""

import copy
import os
import math

import pytest
import torch

import tccd

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

RTOL, ATOL = 1e-4, 1e-4


class Block(torch.nn.Module):
    def __init__(self, d: int, heads: int = 2):
        super().__init__()
        self.heads = heads
        self.ln1 = torch.nn.LayerNorm(d)
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.proj = torch.nn.Linear(d, d)
        self.ln2 = torch.nn.LayerNorm(d)
        self.fc1 = torch.nn.Linear(d, 4 * d)
        self.fc2 = torch.nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
        hd = d // self.heads
        q, k, v = (z.reshape(b, t, self.heads, hd).transpose(1, 2) for z in (q, k, v))
        attn = torch.softmax((q @ k.transpose(-2, -1)) / math.sqrt(hd), dim=-1) @ v
        x = x + self.proj(attn.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x))))


class MLP(torch.nn.Module):
    def __init__(self, d: int):
        super().__init__()
        self.fc1 = torch.nn.Linear(d, 2 * d)
        self.fc2 = torch.nn.Linear(2 * d, d)

    def forward(self, x):
        return torch.tanh(self.fc2(torch.nn.functional.gelu(self.fc1(x)) * 0.5 + 1.0))


@pytest.mark.parametrize("segments", ["1", "0", "split"])
@pytest.mark.parametrize("model_name", ["mlp", "transformer"])
def test_dynamic_cuda_kernels_match_eager_at_every_size(daemon, daemon_env, monkeypatch, model_name, segments):
    """`segments`: TCCD_SYMBOLIC_SEGMENTS (values between sized kernels, gemms and views as raw
    pointers into workspaces per call, tccd_plan_enable_symbolic_segments) on with one workspace
    per call (TCCD_SYMBOLIC_ONE_WORKSPACE, the default), off, and on with one workspace per
    segment ("split")."""
    import torch._dynamo

    monkeypatch.setenv("TCCD_SYMBOLIC_SEGMENTS", "0" if segments == "0" else "1")
    monkeypatch.setenv("TCCD_SYMBOLIC_ONE_WORKSPACE", "0" if segments == "split" else "1")

    torch._dynamo.reset()
    tccd.reset_compile_stats()
    torch.manual_seed(0)
    d = 40  # rows of 40 f32: not a multiple of every vector width
    model = (MLP(d) if model_name == "mlp" else Block(d)).cuda()
    eager = copy.deepcopy(model)
    compiled = torch.compile(model, backend="tccd", dynamic=True)
    compiles_before = daemon.stats().get("compiles", 0)
    sizes = [(3, 7), (5, 1), (2, 33), (8, 16), (1, 3), (4, 129)]
    for b, t in sizes:
        g = torch.Generator(device="cuda").manual_seed(b * 100 + t)
        x = torch.randn(b, t, d, device="cuda", generator=g)
        if model_name == "mlp":
            x = x.reshape(b * t, d)
        out = compiled(x)
        expected = eager(x)
        torch.testing.assert_close(out, expected, rtol=RTOL, atol=ATOL, msg=f"forward at {tuple(x.shape)}")
        weights = torch.linspace(0.5, 1.5, out.numel(), device="cuda").reshape(out.shape)
        (out * weights).sum().backward()
        (expected * weights).sum().backward()
        for (name, p), q in zip(model.named_parameters(), eager.parameters()):
            torch.testing.assert_close(p.grad, q.grad, rtol=RTOL, atol=ATOL, msg=f"grad {name} at {tuple(x.shape)}")
            p.grad = None
            q.grad = None
    stats = tccd.last_compile_stats()
    assert all(s["fallback"] is None for s in stats), stats
    # The exact graph and compile counts are checked on the CPU (test_e2e_dynamic_shapes.py).
    # Here Dynamo recompiles the frame at the sizes of 1 (0/0, 0/1, 0/2: it specialises them),
    # so the H100 run of 2026-11-26 saw three graph pairs: the MLP's later two were daemon cache
    # hits (2 compiles), the transformer's differ (6 compiles). Printed, not asserted.
    print("\n" + "\n".join(f"{s['name']} {s['kind']} cache_hit={s.get('cache_hit')}" for s in stats))
    print(f"daemon compiles: {daemon.stats().get('compiles', 0) - compiles_before}")
    assert {s["kind"] for s in stats} == {"forward", "backward"}, stats
    gemms = "symbolic-gemms" not in os.environ.get("TCCD_DISABLE_PASSES", "")
    # The transformer's gemm outputs and their head views feed kernels and gemms only.
    in_segments = sum(s["segment_values"] for s in stats)
    print(f"segment values: {[(s['name'], s['segment_values']) for s in stats]}")
    assert in_segments == 0 if segments == "0" else (in_segments > 0 or model_name == "mlp"), stats
    for s in stats:
        kinds = {k["kind"] for k in s["kernels"]}
        assert s["native_kernels"] >= 1 and "cuda_pointwise" in kinds, s
        # Matmuls are cuBLASLt gemms with run-time sizes (codegen/symbolic_gemms.h), static ones
        # in segments: none is an extern aten::mm/addmm/bmm.
        if gemms:
            assert "cublaslt_gemm" in kinds, s
        print(f"\n{model_name} {s['kind']}: {s['native_kernels']} kernels "
              f"({sum(k['kind'] == 'cublaslt_gemm' for k in s['kernels'])} gemms), "
              f"{s['extern_steps']} extern steps")


def test_dynamic_cuda_plan_runs_in_the_native_runtime(daemon, daemon_env):
    """The symbolic plan (CUDA kernels with run-time sizes, extern matmuls/norms/softmax, SymInt
    view sizes) runs in the native plan runtime: descriptor format 2 carries its expressions, so
    no step is a Python call, at every size, and it matches eager. Prints the training step of
    the dynamic graph against a static one at one size (alternating, minimum of 20 each): the
    figure issue 9 targets (<= 1.10) comes from deploy/dynamic_shapes_bench.py --interleave."""
    import time

    import torch._dynamo

    torch._dynamo.reset()
    tccd.reset_compile_stats()
    torch.manual_seed(0)
    d = 64
    model = Block(d).cuda()
    eager = copy.deepcopy(model)
    compiled = torch.compile(model, backend="tccd", dynamic=True)
    for b, t in [(2, 17), (4, 64), (3, 5), (8, 128), (2, 250)]:
        g = torch.Generator(device="cuda").manual_seed(b * 1000 + t)
        x = torch.randn(b, t, d, device="cuda", generator=g)
        out = compiled(x)
        expected = eager(x)
        torch.testing.assert_close(out, expected, rtol=RTOL, atol=ATOL, msg=f"forward at {tuple(x.shape)}")
        out.sum().backward()
        expected.sum().backward()
        for (name, p), q in zip(model.named_parameters(), eager.parameters()):
            torch.testing.assert_close(p.grad, q.grad, rtol=RTOL, atol=ATOL, msg=f"grad {name} at {tuple(x.shape)}")
            p.grad = None
            q.grad = None
    stats = tccd.last_compile_stats()
    assert all(s["fallback"] is None for s in stats), stats
    for s in stats:
        print(f"\n{s['name']} {s['kind']}: {s['native_kernels']} kernels, {s['extern_steps']} extern steps, "
              f"{s['python_steps']} Python steps per call")
    from tccd import native_plan

    if native_plan._UNDEFINED_TENSOR_RETURNS_CONVERT:
        assert all(s["python_steps"] == 0 for s in stats), [(s["name"], s["python_steps"]) for s in stats]
    else:
        # Before torch 2.15 an op with an unused, possibly undefined Tensor return (layer norm's
        # backward with a masked-off output) goes through the Python callback (native_plan.py).
        assert all(s["python_steps"] <= 2 for s in stats), [(s["name"], s["python_steps"]) for s in stats]

    static = torch.compile(copy.deepcopy(model), backend="tccd", dynamic=False)
    x = torch.randn(8, 128, d, device="cuda")

    def step_ms(fn) -> float:
        torch.cuda.synchronize()
        start = time.perf_counter()
        fn(x).sum().backward()
        torch.cuda.synchronize()
        return 1e3 * (time.perf_counter() - start)

    for _ in range(3):
        step_ms(compiled)
        step_ms(static)
    times = {"dynamic": [], "static": []}
    for _ in range(20):
        times["dynamic"].append(step_ms(compiled))
        times["static"].append(step_ms(static))
    dy, st = min(times["dynamic"]), min(times["static"])
    print(f"\ntraining step at [8, 128, {d}] on {torch.cuda.get_device_name()}: static {st:.3f} ms, "
          f"dynamic {dy:.3f} ms, dynamic/static {dy / st:.2f}")
