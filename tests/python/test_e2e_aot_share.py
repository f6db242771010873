"""End to end (CPU, a daemon of its own): AOT recipes shared through the daemon.

A process that traces a graph gives its recipe to the daemon (PutAotRecipe); a process with an
EMPTY local cache (another machine) then gets it (GetAotRecipe), loads the plans by the daemon's
keys and skips AOTAutograd, with the same results and no compile. A daemon started with
--aot-recipes=false refuses them, and clients fall back to tracing.
"""

import shutil

import pytest
import torch

import tccd
from conftest import TCCD_BINARY, Daemon, short_tempdir
from test_e2e_aot_cache import _check_training_twice, _training_graph  # noqa: F401
from test_e2e_training import ATOL, RTOL


@pytest.fixture
def own_daemon(request):
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    root = short_tempdir("tccd-share-")
    d = Daemon(TCCD_BINARY, root, extra_args=list(getattr(request, "param", [])))
    d.start()
    yield d
    try:
        assert d.stop() == 0, d.log_tail()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _use(monkeypatch, d, cache_dir):
    monkeypatch.setenv("TCCD_ADDRESS", d.address)
    monkeypatch.setenv("TCCD_NO_AUTOSTART", "1")
    monkeypatch.setenv("TCCD_CACHE_DIR", str(cache_dir))
    tccd.config.reload()


def _step(x, w):
    torch._dynamo.reset()
    x, w = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
    out = torch.compile(_training_graph, backend="tccd", dynamic=False)(x, w)
    out.sum().backward()
    return out.detach(), x.grad, w.grad


def test_a_process_with_an_empty_local_cache_gets_the_recipe_from_the_daemon(own_daemon, monkeypatch, tmp_path):
    x, w = torch.randn(4, 3), torch.randn(3, 5)
    _use(monkeypatch, own_daemon, tmp_path / "machine-a")
    cold = _step(x, w)
    stats = tccd.last_compile_stats()
    assert [s["aot_skipped"] for s in stats] == [False, False]
    assert own_daemon.stats()["aot_recipe_puts"] == 1

    before = own_daemon.stats()
    _use(monkeypatch, own_daemon, tmp_path / "machine-b")  # empty local cache
    tccd.reset_compile_stats()
    warm = _step(x, w)
    after = own_daemon.stats()
    stats = tccd.last_compile_stats()
    assert sorted(s["kind"] for s in stats) == ["backward", "forward"]
    assert all(s["aot_skipped"] and s["fallback"] is None for s in stats), stats
    assert after["aot_recipe_hits"] == before["aot_recipe_hits"] + 1
    assert after["compiles"] == before["compiles"] and after["cache_hits"] == before["cache_hits"]
    for got, want in zip(warm, cold):
        assert torch.equal(got, want)
    ex, ew = x.clone().requires_grad_(), w.clone().requires_grad_()
    eager = _training_graph(ex, ew)
    eager.sum().backward()
    for got, want in zip(warm, (eager.detach(), ex.grad, ew.grad)):
        torch.testing.assert_close(got, want, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("own_daemon", [["--aot-recipes=false"]], indirect=True)
def test_a_daemon_without_recipes_refuses_them_and_clients_trace(own_daemon, monkeypatch, tmp_path):
    x, w = torch.randn(4, 3), torch.randn(3, 5)
    _use(monkeypatch, own_daemon, tmp_path / "machine-a")
    _step(x, w)
    _use(monkeypatch, own_daemon, tmp_path / "machine-b")
    tccd.reset_compile_stats()
    _step(x, w)
    stats = tccd.last_compile_stats()
    assert len(stats) == 2 and not any(s["aot_skipped"] or s["fallback"] for s in stats)
    assert own_daemon.stats()["aot_recipe_puts"] == 0


def test_a_recipe_naming_plans_the_daemon_lacks_is_refused(own_daemon):
    import grpc

    from tccd.v1 import tccd_pb2 as pb

    with pytest.raises(grpc.RpcError) as e:
        own_daemon.stub().PutAotRecipe(pb.AotRecipe(key="ab" * 32, recipe=b"{}", plan_keys=["cd" * 32]), timeout=10)
    assert e.value.code() == grpc.StatusCode.FAILED_PRECONDITION and "does not hold" in e.value.details()
    with pytest.raises(grpc.RpcError) as e:
        own_daemon.stub().GetAotRecipe(pb.AotRecipeRequest(key="ab" * 32), timeout=10)
    assert e.value.code() == grpc.StatusCode.NOT_FOUND
