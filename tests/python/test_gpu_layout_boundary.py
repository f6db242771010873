"""GPU: a CUDA kernel of a plan has only the entry point its declared layout takes
(codegen/cuda_host/entry_points.h), so an input that arrives misaligned where the plan declared
it aligned is copied into the declared layout at the call (runtime.py, the native plan runtime),
as Inductor copies misaligned inputs. Dynamo guards sizes and strides but not the storage
offset, so a graph compiled for an aligned input runs again, without recompiling, on one that
starts 4 bytes into its storage.
"""

import pytest
import torch

import tccd

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def _misaligned(t):
    """t's values in a tensor of t's sizes and strides whose data starts one element (4 bytes
    for f32) into its storage: not 16-byte aligned."""
    storage = torch.empty(t.numel() + 1, dtype=t.dtype, device=t.device)
    out = storage[1:].view(t.shape)
    out.copy_(t)
    assert out.data_ptr() % 16 != 0 and out.stride() == t.stride()
    return out


def pointwise(x, y):
    # One fused kernel alone: a NativeCall step.
    return torch.relu(x) * y + 1


def matmul_then_pointwise(x, w, y):
    # A matmul and the kernel after it: one segment (cuBLASLt, then the kernel).
    return torch.tanh(x @ w) * y


@pytest.mark.parametrize("native", ["1", "0"], ids=["native", "interpreter"])
@pytest.mark.parametrize("fn, shapes", [(pointwise, [(64, 96), (64, 96)]),
                                        (matmul_then_pointwise, [(64, 96), (96, 128), (64, 128)])],
                         ids=["native-call", "segment"])
def test_a_misaligned_input_is_copied_at_the_call_and_matches_eager(daemon_env, monkeypatch, native, fn, shapes):
    monkeypatch.setenv("TCCD_NATIVE_RUNTIME", native)
    from tccd import config

    config.reload()
    torch.manual_seed(0)
    args = [torch.randn(*s, device="cuda") for s in shapes]
    torch._dynamo.reset()
    tccd.reset_compile_stats()
    compiled = torch.compile(fn, backend="tccd", dynamic=False)
    torch.testing.assert_close(compiled(*args), fn(*args))
    graphs = len(tccd.last_compile_stats())
    assert graphs == 1 and tccd.last_compile_stats()[0]["native_kernels"] > 0

    for position in range(len(args)):
        moved = list(args)
        moved[position] = _misaligned(args[position])
        torch.testing.assert_close(compiled(*moved), fn(*args))
    # No recompile: the same plan ran on the misaligned inputs.
    assert len(tccd.last_compile_stats()) == graphs
    assert tccd.last_compile_stats()[0]["fallback"] is None


def test_a_transposed_input_gets_a_plan_of_its_own_and_matches_eager(daemon_env):
    # Other strides are a Dynamo guard failure, hence a new graph whose kernels are compiled
    # for them (strided entry only); the dense plan keeps running on dense inputs.
    torch.manual_seed(0)
    x, y = torch.randn(96, 64, device="cuda"), torch.randn(64, 96, device="cuda")
    torch._dynamo.reset()
    tccd.reset_compile_stats()
    compiled = torch.compile(pointwise, backend="tccd", dynamic=False)
    torch.testing.assert_close(compiled(x.t().contiguous(), y), pointwise(x.t(), y))
    torch.testing.assert_close(compiled(x.t(), y), pointwise(x.t(), y))
    torch.testing.assert_close(compiled(x.t().contiguous(), y), pointwise(x.t(), y))
    stats = tccd.last_compile_stats()
    assert len(stats) == 2 and all(s["fallback"] is None for s in stats), stats
