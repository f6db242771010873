"""GPU tests of batch norms' running statistics in training (skipped without CUDA).

The joint graph's training batch-norm backwards take no running statistics
(decompositions.drop_bn_running_stats, TCCD_DROP_BN_RUNNING_STATS): a CNN trains like eager with
the knob on and off, running statistics included. And a known gap, found by the twelfth
session's GPU run (int1, H200): a model whose batch norms are themselves bf16 (module.to(bf16),
no autocast) failed at its first forward, with or without the knob: PyTorch's meta function of
_native_batch_norm_legit_functional types the new running statistics f32 (they are computed from
the f32 batch mean), ATen's CUDA kernel returns them in the buffers' dtype (bf16), and the
segment compiled from the graph's f32 meta refused the bf16 tensor ("input 21 has dtype code 15,
the kernel takes 6"). The request now carries the kernels' dtype (serialize.py
_OUTPUT_DTYPE_OF_ARGUMENT; the CPU case is tests/python/test_e2e_bn_running_stats.py); the GPU
case passed on the H200 (twelfth session's final run), so it is an ordinary test."""

import pytest
import torch

import tccd
from test_gpu_training import TOLERANCES, train

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@pytest.mark.parametrize("drop", ["1", "0"])
def test_cnn_trains_like_eager_with_and_without_running_statistics_saved(daemon_env, monkeypatch, drop):
    monkeypatch.setenv("TCCD_DROP_BN_RUNNING_STATS", drop)
    from tccd import config

    config.reload()
    tccd.reset_compile_stats()
    eager_losses, eager_state = train("cnn", torch.float32)
    losses, state = train("cnn", torch.float32, backend="tccd")
    torch.testing.assert_close(losses, eager_losses, **TOLERANCES[torch.float32])
    for k in eager_state:  # running_mean / running_var / num_batches_tracked included
        torch.testing.assert_close(state[k], eager_state[k], **TOLERANCES[torch.float32], msg=k)
    assert all(s["fallback"] is None for s in tccd.last_compile_stats())


def test_cnn_with_bf16_batch_norm_buffers_trains_like_eager(daemon_env):
    eager_losses, eager_state = train("cnn", torch.bfloat16)
    losses, state = train("cnn", torch.bfloat16, backend="tccd")
    torch.testing.assert_close(losses, eager_losses, **TOLERANCES[torch.bfloat16])
