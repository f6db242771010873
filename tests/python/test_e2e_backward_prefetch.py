"""End to end (CPU, real daemon): the backward's compile is requested with the forward's (issue 11).

Compiles are made slow on purpose (TCCD_TEST_KERNEL_DELAY_MS, read by the daemon's compile
workers; TCCD_KERNEL_THREADS=1), so that "the daemon has started compiling the backward before
the first forward returned" is a fact about the daemon's counters, not a race: the forward's own
compile takes seconds, the prefetch thread needs milliseconds to send its request, and the
daemon counts a compile (`compiles`) when it starts it. Without the prefetch the backward is
only requested at .backward(), so the counter says 1 where it says 2 with it.
"""

import shutil
import warnings

import pytest
import torch

import tccd
from conftest import TCCD_BINARY, Daemon, short_tempdir
from tccd import config

DELAY_MS = 400


def block(x, w, b):
    # Two matmuls (extern steps on the CPU) between pointwise work: a few kernels per graph.
    h = torch.tanh(x @ w + b)
    return (torch.sigmoid(h @ w.t()) * x).sum()


def _inputs():
    torch.manual_seed(0)
    return (
        torch.randn(8, 16, requires_grad=True),
        torch.randn(16, 16, requires_grad=True),
        torch.randn(16, requires_grad=True),
    )


@pytest.fixture
def slow_daemon(monkeypatch, tmp_path):
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    monkeypatch.setenv("TCCD_KERNEL_THREADS", "1")
    monkeypatch.setenv("TCCD_TEST_KERNEL_DELAY_MS", str(DELAY_MS))
    root = short_tempdir("tccd-prefetch-")
    # Two compile threads whatever the machine: forward and backward compile side by side. At
    # debug level the workers log each compile's priority.
    d = Daemon(TCCD_BINARY, root, extra_args=["--compile-threads=2", "--log-level=debug"])
    d.start()
    monkeypatch.setenv("TCCD_ADDRESS", d.address)
    monkeypatch.setenv("TCCD_NO_AUTOSTART", "1")
    monkeypatch.setenv("TCCD_CACHE_DIR", str(tmp_path / "client-cache"))
    monkeypatch.setenv("TCCD_AOT_SHARE", "0")
    monkeypatch.setenv("TCCD_PROGRESS_AFTER_S", "0")
    config.reload()
    yield d
    try:
        if d.alive():
            assert d.stop() == 0, d.log_tail()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _first_step(daemon):
    """(loss, grads, the daemon's `compiles` counter when the first forward returned)."""
    torch._dynamo.reset()
    inputs = _inputs()
    loss = torch.compile(block, backend="tccd")(*inputs)
    compiles_after_forward = daemon.stats()["compiles"]
    loss.backward()
    return loss.detach(), [t.grad for t in inputs], compiles_after_forward


def _by_kind():
    stats = tccd.last_compile_stats()
    by_kind = {s["kind"]: s for s in stats}
    assert sorted(by_kind) == ["backward", "forward"], stats
    return by_kind


def test_the_backward_is_requested_before_the_first_forward_returns(slow_daemon):
    inputs = _inputs()
    eager_loss = block(*inputs)
    eager_loss.backward()

    loss, grads, compiles_after_forward = _first_step(slow_daemon)

    assert compiles_after_forward == 2, "the daemon had not started the backward's compile"
    by_kind = _by_kind()
    # The forward compiled in the background too (TCCD_ASYNC_COMPILE, test_e2e_async_compile.py).
    assert by_kind["backward"]["prefetched"] and by_kind["forward"]["prefetched"]
    assert by_kind["backward"]["fallback"] is None and by_kind["backward"]["native_kernels"] > 0
    assert by_kind["backward"]["kernels_compiled"] > 0
    torch.testing.assert_close(loss, eager_loss.detach())
    for got, want in zip(grads, [t.grad for t in inputs]):
        torch.testing.assert_close(got, want)


def test_without_prefetch_the_backward_waits_for_backward_and_results_are_the_same(
    slow_daemon, monkeypatch
):
    loss, grads, _ = _first_step(slow_daemon)
    tccd.reset_compile_stats()

    # A fresh daemon cache would be needed to compare compile timing; here the point is that
    # the switch works and both paths give the same bits (the plans are the same plans).
    monkeypatch.setenv("TCCD_PREFETCH_BACKWARD", "0")
    monkeypatch.setenv("TCCD_LOCAL_CACHE", "0")
    config.reload()
    before = slow_daemon.stats()
    loss_off, grads_off, _ = _first_step(slow_daemon)

    assert not _by_kind()["backward"]["prefetched"]
    after = slow_daemon.stats()
    assert after["cache_hits"] - before["cache_hits"] == 2, "both graphs were served from cache"
    assert torch.equal(loss, loss_off)
    for got, want in zip(grads, grads_off):
        assert torch.equal(got, want)


def test_switched_off_the_backward_is_not_requested_before_backward(slow_daemon, monkeypatch):
    monkeypatch.setenv("TCCD_PREFETCH_BACKWARD", "0")
    config.reload()
    _, _, compiles_after_forward = _first_step(slow_daemon)
    assert compiles_after_forward == 1
    assert slow_daemon.stats()["compiles"] == 2
    assert not _by_kind()["backward"]["prefetched"]


def _compile_lines(daemon):
    """{graph kind: the worker's "compiling graph" line} from the daemon's log."""
    with open(daemon.log, encoding="utf-8", errors="replace") as f:
        lines = [line for line in f if "compiling graph" in line]
    return {kind: line for line in lines for kind in ("forward", "backward") if f' {kind}"' in line}


@pytest.mark.parametrize("background", [True, False])
def test_the_prefetched_backward_compiles_below_the_forwards_priority(
    slow_daemon, monkeypatch, background
):
    """TCCD_BACKGROUND_PREFETCH (default 1): the prefetched backward's request says
    `background`, so the daemon compiles it at --compile-nice (10) while the forward, which the
    first call waits for, keeps --waited-compile-nice (0); the backward still takes its prefetched
    plan (the flag is outside the request hash). 0: both at the waited priority."""
    import os

    monkeypatch.setenv("TCCD_BACKGROUND_PREFETCH", "1" if background else "0")
    config.reload()
    _first_step(slow_daemon)
    assert _by_kind()["backward"]["prefetched"]
    lines = _compile_lines(slow_daemon)
    base = os.getpriority(os.PRIO_PROCESS, slow_daemon.proc.pid)
    assert f"waited for, nice {base})" in lines["forward"], lines
    expected = f"prefetched, nice {min(19, base + 10)})" if background else f"waited for, nice {base})"
    assert expected in lines["backward"], lines


@pytest.mark.parametrize("forward_first", [True, False])
def test_the_forwards_request_is_sent_before_the_backwards_is_built(
    slow_daemon, monkeypatch, forward_first
):
    """TCCD_FORWARD_REQUEST_FIRST (default 1): the forward, whose compile the first call waits
    for, goes to the daemon first; the prefetched backward's request is built while it compiles.
    0: the backward's first, as before. Either way both are in flight before the first forward
    returns, and the backward takes its prefetched plan."""
    from tccd import prefetch

    monkeypatch.setenv("TCCD_FORWARD_REQUEST_FIRST", "1" if forward_first else "0")
    config.reload()
    order = []
    start = prefetch.start

    def spy(request, key, config, kind="backward", on_manifest=None):
        order.append(kind)
        return start(request, key, config, kind=kind, on_manifest=on_manifest)

    monkeypatch.setattr(prefetch, "start", spy)
    _, _, compiles_after_forward = _first_step(slow_daemon)
    assert order == (["forward", "backward"] if forward_first else ["backward", "forward"])
    assert compiles_after_forward == 2
    assert _by_kind()["backward"]["prefetched"]


def _forward_then_kill(daemon):
    torch._dynamo.reset()
    inputs = _inputs()
    loss = torch.compile(block, backend="tccd")(*inputs)
    # The backward is still compiling (seconds of kernel delay): the daemon dies under it.
    assert daemon.stats()["compiles_running"] >= 1
    daemon.proc.kill()
    daemon.proc.wait()
    return inputs, loss


def test_a_prefetched_compile_that_fails_falls_back_at_the_backward(slow_daemon):
    inputs, loss = _forward_then_kill(slow_daemon)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loss.backward()

    fallbacks = [w for w in caught if issubclass(w.category, tccd.TccdFallbackWarning)]
    assert len(fallbacks) == 1 and "backward runs eagerly" in str(fallbacks[0].message), [
        str(w.message) for w in caught
    ]
    by_kind = _by_kind()
    assert by_kind["backward"]["fallback"] and by_kind["forward"]["fallback"] is None
    ref = _inputs()
    block(*ref).backward()
    for got, want in zip(inputs, ref):
        torch.testing.assert_close(got.grad, want.grad)


def test_a_prefetched_compile_that_fails_raises_at_the_backward_when_strict(
    slow_daemon, monkeypatch
):
    monkeypatch.setenv("TCCD_STRICT", "1")
    config.reload()
    _, loss = _forward_then_kill(slow_daemon)
    with pytest.raises(tccd.TccdError, match="backward"):
        loss.backward()


@pytest.mark.parametrize("early", [False, True])
def test_with_saved_layouts_the_backward_starts_from_the_forwards_manifest(slow_daemon, monkeypatch, early):
    """A forward whose saved tensors take its plan's layout (TCCD_SAVED_LAYOUT: CUDA graphs with
    a convolution, forced here on the CPU) has its backward compiled for the strides the plan
    chose: the prefetch starts on the forward's compile thread as soon as the manifest is there
    (before its fetch, load and first call), or with TCCD_EARLY_SAVED_LAYOUT (default) on the
    thread of the forward's plan-only request, whose answer comes in milliseconds (no kernels:
    the daemon's kernel delay does not apply), before the forward's compile ends; results are
    eager's."""
    import threading

    from tccd import prefetch, saved_layouts

    monkeypatch.setenv("TCCD_EARLY_SAVED_LAYOUT", "1" if early else "0")
    config.reload()
    monkeypatch.setattr(saved_layouts, "_is_cuda_conv_graph", lambda gm: True)
    started = []
    real_start = prefetch.start

    def start(request, key, config, kind="backward", **kwargs):
        started.append((kind, threading.current_thread().name))
        return real_start(request, key, config, kind=kind, **kwargs)

    monkeypatch.setattr(prefetch, "start", start)
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU(), torch.nn.Conv2d(8, 4, 3))
    x = torch.randn(2, 3, 10, 10)
    net(x).square().sum().backward()
    want = [p.grad.clone() for p in net.parameters()]
    net.zero_grad()

    torch._dynamo.reset()
    torch.compile(net, backend="tccd")(x).square().sum().backward()

    assert [kind for kind, _ in started] == ["forward", "backward"], started
    thread = "tccd-plan" if early else "tccd-prefetch"
    assert started[1][1].startswith(thread) and "forward" in started[1][1], started
    by_kind = _by_kind()
    assert by_kind["backward"]["prefetched"] and by_kind["backward"]["fallback"] is None, by_kind
    if early:
        # The backward's compile ran beside the forward's: it ended before the forward's did
        # plus its own length, i.e. the two overlapped (the forward's compile is seconds here).
        assert by_kind["backward"]["compile_ms"] > 0 and by_kind["forward"]["compile_ms"] > 0
    for p, g in zip(net.parameters(), want):
        torch.testing.assert_close(p.grad, g)


def test_a_compiled_plan_that_lays_out_saved_tensors_unlike_its_plan_only_lowering_recompiles_the_backward(
    slow_daemon, monkeypatch, caplog
):
    """TCCD_EARLY_SAVED_LAYOUT: the backward is prefetched for the strides of the forward's
    plan-only lowering. Should the compiled plan lay the saved tensors out otherwise (a kernel
    the compile refused and lowered again could), the backward must not take that prefetched
    plan: its request, built again at .backward() with the compiled plan's strides, no longer
    matches, and it compiles for them. Forced here by reporting channels-last strides for the
    plan-only answer's 4-d saved tensors; gradients are eager's."""
    import logging
    import threading

    from tccd import saved_layouts

    monkeypatch.setattr(saved_layouts, "_is_cuda_conv_graph", lambda gm: True)
    real_strides = saved_layouts.output_strides

    def output_strides(plan):
        strides = real_strides(plan)
        if not threading.current_thread().name.startswith("tccd-plan"):
            return strides
        out = []
        for s in strides:
            s = list(s) if s is not None else s
            if s is not None and len(s) == 4 and s[3] == 1 and s[1] and s[0] % s[1] == 0:
                c = s[0] // s[1]
                s = [s[0], 1, s[2] * c, c]  # channels-last for the same sizes
            out.append(s)
        return out

    monkeypatch.setattr(saved_layouts, "output_strides", output_strides)
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU(), torch.nn.Conv2d(8, 4, 3))
    x = torch.randn(2, 3, 10, 10)
    net(x).square().sum().backward()
    want = [p.grad.clone() for p in net.parameters()]
    net.zero_grad()

    torch._dynamo.reset()
    with caplog.at_level(logging.INFO, logger="tccd.backend"):
        torch.compile(net, backend="tccd")(x).square().sum().backward()

    assert any("unlike its plan-only lowering" in r.getMessage() for r in caplog.records), caplog.text
    by_kind = _by_kind()
    assert not by_kind["backward"]["prefetched"] and by_kind["backward"]["fallback"] is None, by_kind
    for p, g in zip(net.parameters(), want):
        torch.testing.assert_close(p.grad, g)


def test_a_forward_the_local_cache_has_asks_for_no_plan_only_lowering(slow_daemon, monkeypatch):
    """TCCD_EARLY_SAVED_LAYOUT asks the daemon for the forward's plan alone only when the forward
    compiles: in a process whose local cache has the forward's manifest (a warm start) that
    manifest comes at once and starts the backward, with no request beside it."""
    import threading

    from tccd import compiler, saved_layouts

    # No AOT recipe: the warm run traces again and compiles through the local cache.
    monkeypatch.setenv("TCCD_AOT_CACHE", "0")
    config.reload()
    monkeypatch.setattr(saved_layouts, "_is_cuda_conv_graph", lambda gm: True)
    plan_only = []
    real = compiler._daemon_compile

    def spy(request, config):
        if request.options.extra.get("tccd_plan_only") == "1":
            plan_only.append(threading.current_thread().name)
        return real(request, config)

    monkeypatch.setattr(compiler, "_daemon_compile", spy)
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU(), torch.nn.Conv2d(8, 4, 3))
    x = torch.randn(2, 3, 10, 10)
    for _ in range(2):  # cold, then warm from the local cache
        torch._dynamo.reset()
        tccd.reset_compile_stats()
        torch.compile(net, backend="tccd")(x).square().sum().backward()
    assert len(plan_only) == 1, plan_only
