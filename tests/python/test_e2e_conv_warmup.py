"""End to end (CPU, a daemon of its own): a backward plan's convolutions are warmed when the plan
is loaded, before the first .backward() (conv_warmup.py, TCCD_CONV_WARMUP), on the cold path
(the prefetch thread loads the backward before .backward() is called) and on a warm start (the AOT recipe's load, empty local
cache, the daemon filled by another process); results stay eager's. On the CPU the warm-up runs
with TCCD_CONV_WARMUP=2 (the mechanism; CUDA's effect is test_gpu_conv_warmup.py's).
"""

import pytest
import torch
import torch.nn as nn

import tccd
from tccd import conv_warmup, prefetch
from test_e2e_aot_share import _use, own_daemon  # noqa: F401  (the fixture)


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(3, 8, 3, padding=1)
        self.dw = nn.Conv2d(8, 8, 5, padding=2, groups=8)
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        h = torch.relu(self.a(x))
        h = h + self.dw(h)
        return self.head(h.mean((2, 3)))


def _step(backend, settle=False):
    """settle: the prefetched backward plan is loaded before .backward() is called (a cold
    backward that waits for its plan gets no warm-up: test_conv_warmup.py)."""
    torch.manual_seed(0)
    model = SmallCNN()
    x = torch.randn(2, 3, 12, 12, requires_grad=True)
    fn = torch.compile(model, backend=backend, dynamic=False) if backend else model
    loss = fn(x).square().sum()
    if settle:
        prefetch.wait_all(timeout_s=120)
    loss.backward()
    conv_warmup.wait_all(timeout_s=60)
    return [x.grad] + [p.grad for p in model.parameters()]


def _assert_close(got, want):
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-5)


def _fresh(monkeypatch, level):
    monkeypatch.setenv("TCCD_CONV_WARMUP", level)
    tccd.config.reload()
    torch._dynamo.reset()
    tccd.reset_compile_stats()
    conv_warmup.reset()


def test_the_backward_convolutions_are_warmed_cold_and_warm(own_daemon, monkeypatch, tmp_path):
    want = _step(None)
    _use(monkeypatch, own_daemon, tmp_path / "machine-a")
    _fresh(monkeypatch, "2")
    _assert_close(_step("tccd", settle=True), want)
    cold = conv_warmup.stats()
    assert [s["prefetched"] for s in tccd.last_compile_stats() if s["kind"] == "backward"] == [True]
    # The two convolutions' backward calls (the stem's input needs a gradient: x does).
    assert (cold["plans"], cold["shapes"], cold["failed"]) == (1, 2, 0), cold

    _use(monkeypatch, own_daemon, tmp_path / "machine-b")  # empty local cache: a warm start
    _fresh(monkeypatch, "2")
    _assert_close(_step("tccd"), want)
    assert all(s["aot_skipped"] for s in tccd.last_compile_stats())  # the recipe's load
    warm = conv_warmup.stats()
    assert (warm["plans"], warm["shapes"], warm["failed"]) == (1, 2, 0), warm


@pytest.mark.parametrize("level,prefetch", [("0", "1"), ("1", "1"), ("2", "0")])
def test_no_warmup_off_cpu_only_or_inside_the_backward(own_daemon, monkeypatch, tmp_path, level, prefetch):
    """0: off; 1: CUDA plans only; a backward compiled at .backward() (no prefetch) loads on the
    autograd thread, inside the backward: its calls come next there, nothing to warm ahead."""
    want = _step(None)
    _use(monkeypatch, own_daemon, tmp_path / "cache")
    monkeypatch.setenv("TCCD_PREFETCH_BACKWARD", prefetch)
    _fresh(monkeypatch, level)
    _assert_close(_step("tccd"), want)
    assert len(tccd.last_compile_stats()) == 2
    assert conv_warmup.stats()["plans"] == 0


def test_forward_warmup_on_a_warm_start_only(own_daemon, monkeypatch, tmp_path):
    """TCCD_CONV_WARMUP_FORWARD=2: the AOT recipe's forward plan (loaded by key) gets its two
    convolutions warmed on a thread of its own; the cold path's forward (its first call comes
    right after its load) does not; gradients stay eager's."""
    want = _step(None)
    monkeypatch.setenv("TCCD_CONV_WARMUP_FORWARD", "2")
    _use(monkeypatch, own_daemon, tmp_path / "machine-a")
    _fresh(monkeypatch, "2")
    _assert_close(_step("tccd", settle=True), want)
    cold = conv_warmup.stats()
    assert (cold["forward_plans"], cold["forward_shapes"]) == (0, 0), cold

    _use(monkeypatch, own_daemon, tmp_path / "machine-b")  # empty local cache: a warm start
    _fresh(monkeypatch, "2")
    _assert_close(_step("tccd"), want)
    assert all(s["aot_skipped"] for s in tccd.last_compile_stats())
    warm = conv_warmup.stats()
    assert (warm["forward_plans"], warm["forward_shapes"], warm["forward_failed"]) == (1, 2, 0), warm
    assert (warm["plans"], warm["shapes"], warm["failed"]) == (1, 2, 0), warm
