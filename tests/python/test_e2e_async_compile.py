"""End to end (CPU, real daemon): forward and inference graphs compile in the background
(TCCD_ASYNC_COMPILE, issue 11): the backend returns before the daemon's compile ends and the
graph's first call takes the plan; a compile that fails surfaces at that call by the fallback
rules.

Compiles are slow on purpose (TCCD_TEST_KERNEL_DELAY_MS per kernel, one kernel thread), so that
"the backend returned while the compile was still running" is a fact about the daemon's
counters and the stats records, not a race.
"""

import shutil
import time
import warnings

import pytest
import torch

import tccd
from conftest import TCCD_BINARY, Daemon, short_tempdir
from tccd import config
from tccd.backend import tccd as tccd_backend

DELAY_MS = 400


def two_graphs(x, w):
    # A graph break between two graphs with pointwise work (native kernels) in each.
    h = torch.tanh(x @ w) * 2 + 1
    torch._dynamo.graph_break()
    return torch.sigmoid(h @ w.t()) * x


def _inputs():
    torch.manual_seed(0)
    return torch.randn(8, 16), torch.randn(16, 16)


@pytest.fixture
def slow_daemon(monkeypatch, tmp_path, request):
    """A daemon whose compiles take DELAY_MS per kernel (or the test's indirect parameter)."""
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    monkeypatch.setenv("TCCD_KERNEL_THREADS", "1")
    monkeypatch.setenv("TCCD_TEST_KERNEL_DELAY_MS", str(getattr(request, "param", DELAY_MS)))
    root = short_tempdir("tccd-async-")
    d = Daemon(TCCD_BINARY, root, extra_args=["--compile-threads=2"])
    d.start()
    monkeypatch.setenv("TCCD_ADDRESS", d.address)
    monkeypatch.setenv("TCCD_NO_AUTOSTART", "1")
    monkeypatch.setenv("TCCD_CACHE_DIR", str(tmp_path / "client-cache"))
    monkeypatch.setenv("TCCD_AOT_SHARE", "0")
    monkeypatch.setenv("TCCD_PROGRESS_AFTER_S", "0")
    config.reload()
    tccd.reset_compile_stats()
    yield d
    try:
        if d.alive():
            assert d.stop() == 0, d.log_tail()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _watching_backend(daemon, seen, on_return=None):
    """tccd's backend, noting per graph what was recorded and running when it returned."""

    def backend(gm, example_inputs):
        fn = tccd_backend(gm, example_inputs)
        records = len(tccd.last_compile_stats())
        if on_return:
            on_return()
        seen.append(
            {"records": records, "running": daemon.stats()["compiles_running"] if daemon.alive() else None}
        )
        return fn

    return backend


def _wait_until_running(daemon, timeout_s=5.0):
    # The background thread sends its request within milliseconds; the compile takes seconds.
    deadline = time.monotonic() + timeout_s
    while daemon.stats()["compiles_running"] < 1 and time.monotonic() < deadline:
        time.sleep(0.01)


def test_the_backend_returns_before_the_compile_ends_and_the_first_call_takes_it(slow_daemon):
    x, w = _inputs()
    seen = []
    torch._dynamo.reset()
    with torch.no_grad():
        got = torch.compile(two_graphs, backend=_watching_backend(slow_daemon, seen, lambda: _wait_until_running(slow_daemon)))(x, w)
        want = two_graphs(x, w)

    torch.testing.assert_close(got, want)
    assert len(seen) == 2, seen
    for s in seen:
        # Returned with nothing recorded yet (a graph is recorded when its compile is taken)
        # and its compile still running in the daemon.
        assert s["records"] == seen.index(s), seen
        assert s["running"] >= 1, seen
    stats = tccd.last_compile_stats()
    assert [s["kind"] for s in stats] == ["inference", "inference"], stats
    for s in stats:
        assert s["prefetched"] and s["fallback"] is None and s["native_kernels"] > 0, s
        assert s["prefetch_wait_ms"] > 0, s  # the first call waited for the daemon
        # The compile's timeline (stats.GraphRecord.timeline_ms): the first call came while the
        # daemon still compiled (>= DELAY_MS per kernel), then the answer, fetch and load in order.
        t = s["timeline_ms"]
        assert t["first_call"] < t["answered"] <= t["fetched"] <= t["loaded"] <= t["native"], t
        assert t["answered"] >= DELAY_MS, t


def test_switched_off_the_backend_returns_compiled(slow_daemon, monkeypatch):
    monkeypatch.setenv("TCCD_ASYNC_COMPILE", "0")
    config.reload()
    x, w = _inputs()
    seen = []
    torch._dynamo.reset()
    with torch.no_grad():
        got = torch.compile(two_graphs, backend=_watching_backend(slow_daemon, seen))(x, w)
    torch.testing.assert_close(got, two_graphs(x, w))
    assert [s["running"] for s in seen] == [0, 0], seen
    assert [s["records"] for s in seen] == [1, 2], seen
    assert not any(s["prefetched"] for s in tccd.last_compile_stats())


def test_training_graphs_compile_in_the_background_with_the_same_results(slow_daemon):
    x, w = _inputs()
    w.requires_grad_(True)
    eager = two_graphs(x, w).sum()
    eager.backward()
    want_grad, w.grad = w.grad, None
    torch._dynamo.reset()
    loss = torch.compile(two_graphs, backend="tccd")(x, w).sum()
    loss.backward()
    torch.testing.assert_close(loss, eager)
    torch.testing.assert_close(w.grad, want_grad)
    stats = tccd.last_compile_stats()
    assert sorted(s["kind"] for s in stats) == ["backward", "backward", "forward", "forward"], stats
    assert all(s["fallback"] is None and s["prefetched"] for s in stats), stats


def _kill(daemon):
    if not daemon.alive():
        return  # the second graph's: the daemon is gone already
    _wait_until_running(daemon)
    daemon.proc.kill()
    daemon.proc.wait()


def test_a_compile_that_fails_falls_back_at_the_first_call(slow_daemon):
    x, w = _inputs()
    seen = []
    torch._dynamo.reset()
    with warnings.catch_warnings(record=True) as caught, torch.no_grad():
        warnings.simplefilter("always")
        got = torch.compile(two_graphs, backend=_watching_backend(slow_daemon, seen, lambda: _kill(slow_daemon)))(x, w)
    torch.testing.assert_close(got, two_graphs(x, w))
    fallbacks = [str(w.message) for w in caught if issubclass(w.category, tccd.TccdFallbackWarning)]
    # The first graph's compile died with the daemon; so did the second's request (no daemon):
    # each graph runs eagerly, with one warning each, recorded.
    assert len(fallbacks) == 2 and all("runs eagerly" in m for m in fallbacks), fallbacks
    assert all(s["fallback"] for s in tccd.last_compile_stats())


def test_under_strict_a_failed_compile_raises_at_the_first_call(slow_daemon, monkeypatch):
    monkeypatch.setenv("TCCD_STRICT", "1")
    config.reload()
    x, w = _inputs()

    def single(x, w):
        return torch.tanh(x @ w) * 2 + 1

    torch._dynamo.reset()
    with torch.no_grad(), pytest.raises(Exception) as raised:
        torch.compile(single, backend=_watching_backend(slow_daemon, [], lambda: _kill(slow_daemon)))(x, w)
    # Raised at the graph's first call, from the compile the backend had started.
    chain = [raised.value] + [getattr(raised.value, "inner_exception", None), raised.value.__cause__]
    assert any(isinstance(e, tccd.TccdError) for e in chain if e is not None), repr(raised.value)


def one_graph(x, w):
    return torch.sigmoid(torch.tanh(x @ w) * 2 + 1) * x


@pytest.mark.parametrize("slow_daemon", [4000], indirect=True)
def test_eager_while_compiling_runs_early_calls_eagerly_then_the_plans(slow_daemon, monkeypatch):
    """TCCD_EAGER_WHILE_COMPILING: the first training step runs while its forward and backward
    still compile (4 s per kernel; the backward's call comes milliseconds after the forward's),
    eagerly, with eager's results; once the compiles are done the plans run, and each graph
    says how many of its calls ran eagerly."""
    monkeypatch.setenv("TCCD_EAGER_WHILE_COMPILING", "1")
    config.reload()
    x, w = _inputs()
    w.requires_grad_(True)
    eager = one_graph(x, w).sum()
    eager.backward()
    want_grad, w.grad = w.grad, None
    torch._dynamo.reset()
    compiled = torch.compile(one_graph, backend="tccd")
    started = time.monotonic()
    loss = compiled(x, w).sum()
    loss.backward()
    first_step_s = time.monotonic() - started
    torch.testing.assert_close(loss, eager)
    torch.testing.assert_close(w.grad, want_grad)
    deadline = time.monotonic() + 120
    while len(tccd.last_compile_stats()) < 2 and time.monotonic() < deadline:
        time.sleep(0.5)
        w.grad = None
        loss = compiled(x, w).sum()
        loss.backward()
    torch.testing.assert_close(loss, eager)
    torch.testing.assert_close(w.grad, want_grad)
    stats = tccd.last_compile_stats()
    assert sorted(s["kind"] for s in stats) == ["backward", "forward"], stats
    for s in stats:
        assert s["fallback"] is None and s["prefetched"] and s["native_kernels"] > 0, s
        assert s["eager_calls"] >= 1, s  # the first step's call, at least
    print(f"first step {first_step_s:.2f} s, eager calls {[(s['kind'], s['eager_calls']) for s in stats]}")


def _first_call_waits(stats):
    assert sorted(s["kind"] for s in stats) == ["backward", "forward"], stats
    assert all(s["eager_calls"] == 0 and s["prefetch_wait_ms"] > 0 for s in stats), stats


def test_without_eager_while_compiling_the_first_call_waits(slow_daemon, monkeypatch):
    """TCCD_EAGER_WHILE_COMPILING=0: the first call waits for its plan (no eager call)."""
    monkeypatch.setenv("TCCD_EAGER_WHILE_COMPILING", "0")
    config.reload()
    x, w = _inputs()
    w.requires_grad_(True)
    torch._dynamo.reset()
    loss = torch.compile(one_graph, backend="tccd")(x, w).sum()
    loss.backward()
    _first_call_waits(tccd.last_compile_stats())


def test_under_deterministic_algorithms_the_first_call_waits(slow_daemon, monkeypatch):
    """Which calls would run eagerly depends on the compile's speed: a run that asks for
    reproducible results gets plans from the first call, whatever the knob says."""
    monkeypatch.setenv("TCCD_EAGER_WHILE_COMPILING", "1")
    config.reload()
    x, w = _inputs()
    w.requires_grad_(True)
    torch._dynamo.reset()
    torch.use_deterministic_algorithms(True)
    try:
        loss = torch.compile(one_graph, backend="tccd")(x, w).sum()
        loss.backward()
    finally:
        torch.use_deterministic_algorithms(False)
    _first_call_waits(tccd.last_compile_stats())


def test_under_strict_the_first_call_waits(slow_daemon, monkeypatch):
    """TCCD_STRICT: no call runs eagerly unnoticed (and a failed compile raises at the first
    call), whatever TCCD_EAGER_WHILE_COMPILING says."""
    monkeypatch.setenv("TCCD_EAGER_WHILE_COMPILING", "1")
    monkeypatch.setenv("TCCD_STRICT", "1")
    config.reload()
    x, w = _inputs()
    w.requires_grad_(True)
    torch._dynamo.reset()
    loss = torch.compile(one_graph, backend="tccd")(x, w).sum()
    loss.backward()
    _first_call_waits(tccd.last_compile_stats())


def test_a_forward_whose_backward_is_not_prefetched_waits(slow_daemon, monkeypatch):
    """Without the backward's prefetch its compile runs at .backward(), synchronously: an eager
    forward would leave the backward's plan recorded before the forward's, so the forward waits."""
    monkeypatch.setenv("TCCD_EAGER_WHILE_COMPILING", "1")
    monkeypatch.setenv("TCCD_PREFETCH_BACKWARD", "0")
    config.reload()
    x, w = _inputs()
    w.requires_grad_(True)
    torch._dynamo.reset()
    loss = torch.compile(one_graph, backend="tccd")(x, w).sum()
    loss.backward()
    stats = tccd.last_compile_stats()
    assert [s["kind"] for s in stats] == ["forward", "backward"], stats
    assert all(s["eager_calls"] == 0 for s in stats), stats


def test_a_backward_runs_eagerly_while_its_forward_does(slow_daemon, monkeypatch, caplog):
    """The pair switches to plans together: a first step whose forward ran eagerly runs its
    backward eagerly too, even when the backward's plan is there by then, so that the forward's
    plan is taken (recorded, captured in the AOT recipe) first and the recipe's lean runtime
    finds both plans (before, the backward took its plan first and the graph kept AOTAutograd's
    runtime for good)."""
    monkeypatch.setenv("TCCD_EAGER_WHILE_COMPILING", "1")
    config.reload()
    x, w = _inputs()
    w.requires_grad_(True)
    eager = one_graph(x, w).sum()
    eager.backward()
    want_grad, w.grad = w.grad, None
    torch._dynamo.reset()
    compiled = torch.compile(one_graph, backend="tccd")
    caplog.set_level("DEBUG", logger="tccd")
    loss = compiled(x, w).sum()  # eagerly: the compiles take DELAY_MS per kernel
    deadline = time.monotonic() + 60
    while slow_daemon.stats()["compiles_running"] > 0 and time.monotonic() < deadline:
        time.sleep(0.05)  # both plans are ready before the first .backward()
    loss.backward()
    assert tccd.last_compile_stats() == [], "a plan was taken while the forward ran eagerly"
    # The daemon is done, but the client's background fetch and load of the plans may not be
    # (a loaded machine): step until both plans were taken.
    deadline = time.monotonic() + 60
    while len(tccd.last_compile_stats()) < 2 and time.monotonic() < deadline:
        w.grad = None
        loss = compiled(x, w).sum()
        loss.backward()
    for _ in range(2):  # and steps on the plans (the lean runtime switches at a plan call)
        w.grad = None
        loss = compiled(x, w).sum()
        loss.backward()
    torch.testing.assert_close(loss, eager)
    torch.testing.assert_close(w.grad, want_grad)
    stats = tccd.last_compile_stats()
    assert [s["kind"] for s in stats] == ["forward", "backward"], stats
    # The forward's plan first, and the backward ran eagerly at least as long as the forward did
    # (longer when its own plan's background load was still running).
    assert stats[0]["eager_calls"] >= 1 and stats[1]["eager_calls"] >= stats[0]["eager_calls"], stats
    assert "runs in its AOT recipe's runtime from now on" in caplog.text, caplog.text[-3000:]


class _ConvNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.b = torch.nn.Conv2d(8, 8, 3, padding=1, groups=8)

    def forward(self, x):
        return self.b(torch.relu(self.a(x))).square().mean()


@pytest.mark.parametrize("level", ["2", "0"])
def test_first_calls_waiting_for_their_compiles_warm_their_convolutions_meanwhile(slow_daemon, monkeypatch, level):
    """TCCD_WAIT_CONV_WARMUP (2: CPU graphs too, the mechanism without a GPU): the forward's
    first call, which waits for its background compile (400 ms per kernel here), runs the graph's
    two convolutions meanwhile on its thread, each with its input channels-last and as traced
    (4 calls); the first .backward(), waiting for its prefetched compile, runs the backward
    graph's convolution backwards likewise on the autograd thread. 0 runs none. Results and
    gradients are eager's either way."""
    from tccd import conv_warmup

    monkeypatch.setenv("TCCD_WAIT_CONV_WARMUP", level)
    monkeypatch.setenv("TCCD_CONV_WARMUP", "0")
    config.reload()
    conv_warmup.reset()
    torch._dynamo.reset()

    def step(backend):
        torch.manual_seed(0)
        model = _ConvNet()
        x = torch.randn(2, 3, 10, 10)
        fn = torch.compile(model, backend=backend) if backend else model
        loss = fn(x)
        loss.backward()
        return [loss.detach()] + [p.grad for p in model.parameters()]

    want = step(None)
    got = step("tccd")
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-5)
    stats = conv_warmup.stats()
    records = {s["kind"]: s for s in tccd.last_compile_stats()}
    assert not records["forward"]["fallback"] and not records["backward"]["fallback"], records
    if level == "0":
        assert stats["waiting_calls"] == 0, stats
        return
    assert stats["waiting_calls"] >= 4 and stats["failed"] == 0, stats
    if records["backward"]["prefetched"] and records["backward"]["prefetch_wait_ms"] > 2000:
        # Waited long enough for some of the backward's calls too (each ~0.1 s on the CPU).
        assert stats["waiting_calls"] > 4, (stats, records["backward"])


@pytest.fixture
def gc_as_on_torch_2_11():
    """No full-collection deferral of Dynamo's own (torch < 2.14, as on the GPU machines), so
    tccd's (TCCD_DEFER_FULL_GC) applies; small thresholds, so that a full collection is due
    after any compile."""
    import gc

    import contextlib

    import torch._dynamo.config as dynamo_config

    saved = gc.get_threshold()
    gc.set_threshold(50, 2, 3)
    own = (dynamo_config.patch(gc_gen2_threshold_during_compile=None)
           if hasattr(dynamo_config, "gc_gen2_threshold_during_compile") else contextlib.nullcontext())  # < 2.14
    try:
        with own:
            yield
    finally:
        gc.set_threshold(*saved)


def _compiled_noting_thresholds(thresholds):
    import gc

    def backend(gm, example_inputs):
        fn = tccd_backend(gm, example_inputs)
        thresholds.append(gc.get_threshold())
        return fn

    return torch.compile(one_graph, backend=backend)


@pytest.mark.parametrize("wait_full_gc", ["1", "0"])
def test_the_full_collection_due_after_a_compile_runs_while_the_first_call_waits(slow_daemon, gc_as_on_torch_2_11,
                                                                                monkeypatch, wait_full_gc):
    """TCCD_WAIT_FULL_GC: the raised threshold2 outlives the backend call (no full collection
    in the rest of Dynamo's compile) until the first call, which runs the due collection while
    it waits for the daemon, then restores the thresholds; 0: restored at the backend's return."""
    import gc

    from tccd import full_gc

    monkeypatch.setenv("TCCD_WAIT_FULL_GC", wait_full_gc)
    config.reload()
    x, w = _inputs()
    thresholds = []
    before = full_gc.waited_collections()[0]
    torch._dynamo.reset()
    with torch.no_grad():
        got = _compiled_noting_thresholds(thresholds)(x, w)
    torch.testing.assert_close(got, one_graph(x, w))
    held = wait_full_gc == "1"
    assert thresholds == [(50, 2, full_gc.GEN2_THRESHOLD if held else 3)], thresholds
    assert gc.get_threshold() == (50, 2, 3)
    assert full_gc.waited_collections()[0] - before == (1 if held else 0)
    (stats,) = tccd.last_compile_stats()
    assert stats["prefetched"] and stats["prefetch_wait_ms"] > 0 and stats["fallback"] is None, stats


def test_a_graph_never_called_releases_its_hold(slow_daemon, gc_as_on_torch_2_11):
    import gc

    x, w = _inputs()
    thresholds = []

    def backend(gm, example_inputs):
        tccd_backend(gm, example_inputs)  # dropped uncalled: the hold ends with it
        gc.collect()
        thresholds.append(gc.get_threshold())
        return gm.forward

    torch._dynamo.reset()
    with torch.no_grad():
        got = torch.compile(one_graph, backend=backend)(x, w)
    torch.testing.assert_close(got, one_graph(x, w))
    assert thresholds == [(50, 2, 3)], thresholds
