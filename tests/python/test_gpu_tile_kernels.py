"""GPU: copies whose inputs and outputs are contiguous along different dims run as tiled kernels.

A transpose's clone, a cast through a transposed view (BERT's scaled K^T) and NCHW <-> NHWC
copies took the strided entry, one element per thread with one side uncoalesced. The daemon now
makes them tiled kernels by default (codegen/cuda_host/tile_kernels.h: 32 x 32 tiles staged
through shared memory, loads coalesced along the inputs' contiguous dim and stores along the outputs'). Each case
is checked against eager (bit for bit: copies and one rounding of the same f32 value) and the
profile must show a tiled kernel (entry `<name>_tile`).
"""


import pytest
import torch

import tccd

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def _kernel_names(fn, *args):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn(*args)
        torch.cuda.synchronize()
    return [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]


def _transpose_cast(t):
    return (t.transpose(1, 2) * 0.125).to(torch.bfloat16).contiguous()


def _to_nhwc(t):
    return (t * 2).contiguous(memory_format=torch.channels_last)


def _to_nchw(t):
    return t.relu().contiguous()


def _odd_transpose(t):
    # Sizes that no tile divides: the bounds tests of both phases.
    return (t.permute(0, 2, 1) + 1).contiguous()


CASES = [
    ("transpose_cast", _transpose_cast, lambda: torch.randn(24, 512, 64, device="cuda")),
    ("to_nhwc", _to_nhwc, lambda: torch.randn(8, 96, 28, 28, device="cuda", dtype=torch.bfloat16)),
    (
        "to_nchw",
        _to_nchw,
        lambda: torch.randn(8, 96, 28, 28, device="cuda", dtype=torch.float16).contiguous(
            memory_format=torch.channels_last
        ),
    ),
    ("odd_transpose", _odd_transpose, lambda: torch.randn(5, 67, 45, device="cuda")),
]


@pytest.mark.parametrize("name,fn,make", CASES, ids=[c[0] for c in CASES])
def test_transposing_copy_is_a_tiled_kernel_and_matches_eager(daemon_env, name, fn, make):
    x = make()
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="tccd")
    got = compiled(x)
    want = fn(x)
    assert got.stride() == want.stride()
    assert torch.equal(got, want), (got - want).abs().max()
    stats = tccd.last_compile_stats()
    assert all(s["fallback"] is None for s in stats), stats
    names = _kernel_names(compiled, x)
    # <name>_tile: tccd_tile_<ops>_<hash>_tile with per-kernel objects, tccd_k<i>_tile without.
    assert any(n.startswith("tccd_") and n.endswith("_tile") for n in names), names
