"""The client's local cache is keyed by the daemon's compiler identity: a daemon of another build
or with code-changing debugging knobs never gets another's artifacts from a client's cache; while
no daemon answers, the identity last seen keeps the cached graphs usable."""

import torch

import tccd
from conftest import TCCD_BINARY, Daemon, short_tempdir


def _compile_and_run(x):
    torch._dynamo.reset()
    tccd.reset_compile_stats()
    out = torch.compile(lambda t: torch.sin(t) * 2 + 1, backend="tccd")(x)
    torch.testing.assert_close(out, torch.sin(x) * 2 + 1)
    (stats,) = tccd.last_compile_stats()
    assert stats["fallback"] is None, stats
    return stats


def _point_at(monkeypatch, daemon):
    from tccd import config

    monkeypatch.setenv("TCCD_ADDRESS", daemon.address)
    config.reload()


def test_local_cache_entries_are_per_daemon_identity(daemon_env, monkeypatch):
    from tccd import local_cache

    x = torch.randn(64)
    plain = Daemon(TCCD_BINARY, short_tempdir("tccd-id-a-"))
    plain.start()
    # Same build, but a debugging knob that changes generated code: another compiler identity.
    monkeypatch.setenv("TCCD_DISABLE_PASSES", "dead-code-elimination")
    bisecting = Daemon(TCCD_BINARY, short_tempdir("tccd-id-b-"))
    bisecting.start()
    monkeypatch.delenv("TCCD_DISABLE_PASSES")
    try:
        _point_at(monkeypatch, plain)
        first = _compile_and_run(x)
        assert not first["local_hit"] and not first["cache_hit"]
        assert _compile_and_run(x)["local_hit"]

        _point_at(monkeypatch, bisecting)
        other = _compile_and_run(x)
        assert not other["local_hit"], "served another daemon build's artifacts from the local cache"
        assert bisecting.stats()["compiles"] == 1
        assert _compile_and_run(x)["local_hit"]

        identities = {d.address: d.stub().GetStats(local_cache.pb.StatsRequest(), timeout=10).compiler_fingerprint
                      for d in (plain, bisecting)}
        assert identities[plain.address] and identities[plain.address] != identities[bisecting.address]
        assert "disable=dead-code-elimination" in identities[bisecting.address]

        # The daemon is gone and no new one may start: the identity it last reported (saved in
        # the cache directory, read by a fresh process) still finds its entries.
        bisecting.stop()
        local_cache._identities.clear()
        offline = _compile_and_run(x)
        assert offline["local_hit"], offline
    finally:
        plain.stop()
        bisecting.stop()
