"""End to end (CPU, a daemon of its own): what a warm start asks of the daemon, and that it
makes Dynamo compile nothing twice (issue 11).

A process with an empty local cache, its daemon holding the graph's AOT recipe and plans (another
machine compiled them): one GetAotRecipe for the Dynamo graph, one GetManifest per plan, every
artifact fetched once, no Compile; with a torch job id (the dynamic-profile hook live) one
Dynamo frame compile for the step, and further calls compile nothing.
"""

import contextlib
import torch

import tccd
from test_e2e_aot_cache import _training_graph
from test_e2e_aot_share import _use, own_daemon  # noqa: F401  (the fixture)


def _compile_and_run(x, w):
    x, w = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
    fn = torch.compile(_training_graph, backend="tccd", dynamic=False)
    fn(x, w).sum().backward()
    return fn, x, w


def test_a_warm_start_asks_once_per_plan_and_dynamo_compiles_once(own_daemon, monkeypatch, tmp_path, request):
    from torch._dynamo.utils import counters

    x, w = torch.randn(4, 3), torch.randn(3, 5)
    # Through torch's own config patching: monkeypatch's undo deletes the attribute, which a
    # torch config module takes as "hide this option" (later tests then fail inside Dynamo's PGO
    # with "torch.compiler.config.job_id does not exist").
    patches = contextlib.ExitStack()
    request.addfinalizer(patches.close)
    patches.enter_context(torch.compiler.config.patch(job_id="tccd-warm-round-trips"))
    # torch's own per-rank PGO file would answer first (dynamic_profiles.py): only the daemon's.
    patches.enter_context(torch._dynamo.config.patch(automatic_dynamic_local_pgo=False))
    _use(monkeypatch, own_daemon, tmp_path / "machine-a")
    torch._dynamo.reset()
    _compile_and_run(x, w)  # fills the daemon: plans, recipe, the job's profile

    _use(monkeypatch, own_daemon, tmp_path / "machine-b")  # an empty local cache
    torch._dynamo.reset()
    tccd.reset_compile_stats()
    counters.clear()
    before = own_daemon.stats()
    fn, x1, w1 = _compile_and_run(x, w)
    after = own_daemon.stats()
    stats = tccd.last_compile_stats()
    assert sorted(s["kind"] for s in stats) == ["backward", "forward"]
    assert all(s["aot_skipped"] and s["fallback"] is None for s in stats), stats
    delta = {k: after[k] - before.get(k, 0) for k in after}
    assert delta["aot_recipe_hits"] == 1, delta
    assert delta["manifest_reads"] == 2, delta  # one per plan: forward, backward
    assert delta["compiles"] == 0 and delta["cache_hits"] == 0 and delta["cache_misses"] == 0, delta
    assert delta["dynamic_profile_hits"] + delta["dynamic_profile_misses"] == 1, delta  # the hook is live
    assert counters["stats"]["unique_graphs"] == 1, dict(counters["stats"])
    frames = counters["frames"]["ok"]

    fn(x1, w1).sum().backward()  # the hook put nothing that makes Dynamo recompile
    fn((x1.detach() + 1).requires_grad_(), w1.detach().clone().requires_grad_()).sum().backward()
    assert counters["frames"]["ok"] == frames and counters["stats"]["unique_graphs"] == 1
    assert own_daemon.stats()["manifest_reads"] == after["manifest_reads"]
