"""GPU: the backward plan's convolutions are warmed in cuDNN before the first .backward()
(conv_warmup.py, TCCD_CONV_WARMUP): each distinct convolution_backward call once, on the autograd
engine's thread of the device (the one that then runs the plan's real calls: ATen's cuDNN plan
cache is thread-local), on a stream of its own. Results equal eager's, with the warm-up and
without it, in f32 and in bf16 with channels-last inputs (ConvNeXt's and ResNet's cases).
"""

import threading

import pytest
import torch
import torch.nn as nn

import tccd
from tccd import config, conv_warmup, prefetch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

_TOL = {torch.float32: dict(rtol=1e-4, atol=1e-4), torch.bfloat16: dict(rtol=3e-2, atol=3e-2)}


class ConvNet(nn.Module):
    """A stem, a depthwise 7x7, a strided downsample and a 1x1: four distinct shapes."""

    def __init__(self, c: int = 32) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, c, 4, stride=4)
        self.dw = nn.Conv2d(c, c, 7, padding=3, groups=c)
        self.down = nn.Conv2d(c, 2 * c, 2, stride=2)
        self.pw = nn.Conv2d(2 * c, 2 * c, 1)

    def forward(self, x):
        h = self.stem(x)
        h = h + torch.relu(self.dw(h))
        h = self.down(h)
        return h + self.pw(torch.relu(h))


def _run(backend, dtype, channels_last):
    torch.manual_seed(0)
    model = ConvNet().cuda()
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
    fn = torch.compile(model, backend=backend) if backend else model
    g = torch.Generator(device="cuda").manual_seed(1)
    x = torch.randn(4, 3, 64, 64, device="cuda", generator=g)
    if channels_last:
        x = x.to(memory_format=torch.channels_last)
    x.requires_grad_(True)
    threads = []
    x.register_hook(lambda grad: threads.append(threading.get_ident()))  # runs where the backward runs
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=dtype == torch.bfloat16):
        out = fn(x)
    # The backward's plan loaded before .backward() (as on a warm start); a cold backward that
    # waits for its prefetched plan gets no warm-up (the autograd thread is in it).
    prefetch.wait_all(timeout_s=300)
    out.float().square().mean().backward()
    torch.cuda.synchronize()
    grads = {k: p.grad.detach().float().clone() for k, p in model.named_parameters()}
    grads["x"] = x.grad.detach().float().clone()
    return out.detach().float(), grads, threads


@pytest.mark.parametrize("level", ["1", "0"], ids=["warmup", "off"])
@pytest.mark.parametrize("dtype,channels_last", [(torch.float32, False), (torch.bfloat16, True)],
                         ids=["f32", "bf16-channels-last"])
def test_backward_convolutions_are_warmed_on_the_autograd_thread_and_results_stay_eagers(
        daemon_env, monkeypatch, dtype, channels_last, level):
    monkeypatch.setenv("TCCD_CONV_WARMUP", level)
    # The stem and the downsample stay convolutions (TCCD_PATCHIFY_GEMM would make them
    # matmuls, leaving one shape to warm: test_gpu_patchify_gemm.py has that path).
    monkeypatch.setenv("TCCD_PATCHIFY_GEMM", "0")
    config.reload()
    torch._dynamo.reset()
    tccd.reset_compile_stats()
    conv_warmup.reset()
    want, want_grads, _ = _run(None, dtype, channels_last)
    got, grads, threads = _run("tccd", dtype, channels_last)
    conv_warmup.wait_all(timeout_s=60)
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), stats
    torch.testing.assert_close(got, want, **_TOL[dtype])
    for k in want_grads:
        torch.testing.assert_close(grads[k], want_grads[k], **_TOL[dtype], msg=k)
    warmed = conv_warmup.stats()
    print(f"{dtype} channels_last={channels_last} TCCD_CONV_WARMUP={level}: {warmed}")
    if level == "0":
        assert warmed["plans"] == 0, warmed
        return
    assert warmed["plans"] == 1 and warmed["failed"] == 0, warmed
    # Four convolutions of distinct shapes (the stem's input needs a gradient too: x does); at
    # least the three that cannot be anything but a convolution backward.
    assert warmed["shapes"] >= 3, warmed
    assert warmed["threads"] == threads[:1], (warmed["threads"], threads)


class Attention(nn.Module):
    def __init__(self, d: int = 64, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, s, d))


def _run_attention(backend):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    torch.manual_seed(0)
    model = Attention().cuda()
    fn = torch.compile(model, backend=backend) if backend else model
    x = torch.randn(2, 128, 64, device="cuda", requires_grad=True)
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION), torch.autocast("cuda", dtype=torch.bfloat16):
        out = fn(x)
    prefetch.wait_all(timeout_s=300)
    out.float().square().mean().backward()
    torch.cuda.synchronize()
    grads = {k: p.grad.detach().float().clone() for k, p in model.named_parameters()}
    grads["x"] = x.grad.detach().float().clone()
    return out.detach().float(), grads


def test_level_3_warms_cudnn_attention_backward_and_results_stay_eagers(daemon_env, monkeypatch):
    monkeypatch.setenv("TCCD_CONV_WARMUP", "3")
    config.reload()
    torch._dynamo.reset()
    conv_warmup.reset()
    try:
        want, want_grads = _run_attention(None)
    except RuntimeError as e:  # no cuDNN attention on this GPU/torch
        pytest.skip(f"cuDNN attention unavailable: {e}")
    got, grads = _run_attention("tccd")
    conv_warmup.wait_all(timeout_s=60)
    torch.testing.assert_close(got, want, **_TOL[torch.bfloat16])
    for k in want_grads:
        torch.testing.assert_close(grads[k], want_grads[k], **_TOL[torch.bfloat16], msg=k)
    warmed = conv_warmup.stats()
    print(f"cuDNN attention, TCCD_CONV_WARMUP=3: {warmed}")
    assert warmed["shapes"] >= 1 and warmed["failed"] == 0, warmed


def test_a_warm_process_with_deferred_backward_module_loads_matches_eager(daemon_env, tmp_path):
    """TCCD_DEFER_BACKWARD_INIT=1: a second process (the local cache and its AOT recipe filled
    by the first) loads the backward plan on its main thread and its CUDA modules in the
    background; the step's gradients equal eager's."""
    import json
    import os
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(
        f"""
        import json, sys, torch
        sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})
        import tccd
        from test_gpu_conv_warmup import _run
        _, grads, _ = _run("tccd", torch.bfloat16, True)
        print("RESULT", json.dumps({{"grads": {{k: v.double().sum().item() for k, v in grads.items()}},
                                    "aot_skipped": [s["aot_skipped"] for s in tccd.last_compile_stats()]}}))
        """
    )

    def run(defer):
        env = dict(os.environ, TCCD_CACHE_DIR=str(tmp_path / "cache"), TCCD_DEFER_BACKWARD_INIT=defer)
        r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-4000:]
        return json.loads([l for l in r.stdout.splitlines() if l.startswith("RESULT ")][-1][len("RESULT "):])

    run("0")  # fills the local cache and the AOT recipe
    second = run("1")
    assert second["aot_skipped"] and all(second["aot_skipped"]), second
    _, want, _ = _run(None, torch.bfloat16, True)
    for k, v in want.items():
        assert abs(second["grads"][k] - v.double().sum().item()) <= 3e-2 * (1 + abs(v.double().sum().item())), k


def test_a_warm_process_with_the_forward_warmup_matches_eager(daemon_env, tmp_path):
    """TCCD_CONV_WARMUP_FORWARD=1: a second process (the local cache and its AOT recipe filled
    by the first) warms the forward plan's convolutions on a background thread when the recipe
    loads it, and the backward's after them; outputs and gradients equal eager's."""
    import json
    import os
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(
        f"""
        import json, sys, torch
        sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})
        import tccd
        from tccd import conv_warmup
        from test_gpu_conv_warmup import _run
        out, grads, _ = _run("tccd", torch.bfloat16, True)
        conv_warmup.wait_all(timeout_s=60)
        print("RESULT", json.dumps({{"out": out.double().sum().item(),
                                    "grads": {{k: v.double().sum().item() for k, v in grads.items()}},
                                    "aot_skipped": [s["aot_skipped"] for s in tccd.last_compile_stats()],
                                    "warmup": conv_warmup.stats()}}, default=str))
        """
    )

    def run(level):
        # TCCD_PATCHIFY_GEMM=0: the stem and the downsample stay convolutions to warm.
        env = dict(os.environ, TCCD_CACHE_DIR=str(tmp_path / "cache"), TCCD_CONV_WARMUP_FORWARD=level,
                   TCCD_PATCHIFY_GEMM="0")
        r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-4000:]
        return json.loads([l for l in r.stdout.splitlines() if l.startswith("RESULT ")][-1][len("RESULT "):])

    first = run("1")  # fills the local cache and the AOT recipe: its forward loads on the cold path
    assert first["warmup"]["forward_shapes"] == 0, first["warmup"]
    second = run("1")
    assert second["aot_skipped"] and all(second["aot_skipped"]), second
    print(f"forward warm-up in the warm process: {second['warmup']}")
    assert second["warmup"]["forward_shapes"] >= 3 and second["warmup"]["forward_failed"] == 0, second["warmup"]
    want_out, want, _ = _run(None, torch.bfloat16, True)
    assert abs(second["out"] - want_out.double().sum().item()) <= 3e-2 * (1 + abs(want_out.double().sum().item()))
    for k, v in want.items():
        assert abs(second["grads"][k] - v.double().sum().item()) <= 3e-2 * (1 + abs(v.double().sum().item())), k
