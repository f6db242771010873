"""min_cut.py (TCCD_FAST_MIN_CUT): the partitioner's max-flow on flat lists returns networkx's
cut, and on a torch whose partitioner calls networkx.minimum_cut tccd's partition runs it
instead, with the same forward and backward graphs.

The venv's torch (2.15) has its own minimum_cut; the GPU machines' 2.11 calls networkx. The
partition tests make this torch behave as 2.11 does (its solve_min_cut looks networkx's function
up on the module at the call) by pointing the partitioner's name at networkx's.
"""

from __future__ import annotations

import math
import random

import networkx as nx
import pytest
import torch

from tccd import config, min_cut
from tccd_testlib import capture_aot_graphs


def _partitioner_like_graph(rng: random.Random, n: int) -> nx.DiGraph:
    """Source and sink, an in and an out vertex per node with the saving cost between them
    (small integers: many ties), infinite dependency edges forward, some nodes banned (source ->
    in infinite) or needed by the backward (out -> sink infinite), as solve_min_cut builds."""
    g = nx.DiGraph()
    for i in range(n):
        g.add_edge(f"{i}_in", f"{i}_out", capacity=rng.choice([1, 2, 2, 3, 4, 8, math.inf]))
        for j in rng.sample(range(i + 1, n), min(2, n - i - 1)):
            g.add_edge(f"{i}_out", f"{j}_in", capacity=math.inf)
        if i < 3 or rng.random() < 0.1:
            g.add_edge("source", f"{i}_in", capacity=math.inf)
        if i >= n - 3 or rng.random() < 0.1:
            g.add_edge(f"{i}_out", "sink", capacity=math.inf)
    return g


@pytest.mark.parametrize("seed", range(40))
def test_the_same_cut_as_networkx(seed):
    rng = random.Random(seed)
    g = _partitioner_like_graph(rng, rng.randint(4, 60))
    try:
        want = nx.minimum_cut(g, "source", "sink")
    except nx.NetworkXUnbounded:
        with pytest.raises(nx.NetworkXUnbounded):
            min_cut.minimum_cut(g, "source", "sink")
        return
    value, (source_side, sink_side) = min_cut.minimum_cut(g, "source", "sink")
    assert value == want[0]
    # The sink-closest minimum cut, as networkx chooses among the ties.
    assert (source_side, sink_side) == want[1]


def test_unbounded_as_networkx():
    g = nx.DiGraph()
    g.add_edge("source", "a", capacity=math.inf)
    g.add_edge("a", "sink")  # no capacity: infinite
    with pytest.raises(nx.NetworkXUnbounded):
        nx.minimum_cut(g, "source", "sink")
    with pytest.raises(nx.NetworkXUnbounded):
        min_cut.minimum_cut(g, "source", "sink")


def test_swapped_only_inside_and_only_for_the_calls_it_covers():
    original = nx.minimum_cut
    g = nx.DiGraph()
    g.add_edge("source", "a", capacity=3)
    g.add_edge("a", "sink", capacity=2)
    with min_cut.swapped():
        with min_cut.swapped():  # nested: one swap
            assert getattr(nx.minimum_cut, "tccd_fast_min_cut", False)
        assert getattr(nx.minimum_cut, "tccd_fast_min_cut", False)
        assert nx.minimum_cut(g, "source", "sink") == (2, ({"source", "a"}, {"sink"}))
        # A caller's flow function or an undirected graph: networkx's own.
        assert nx.minimum_cut(g, "source", "sink", flow_func=nx.flow.edmonds_karp)[0] == 2
        assert nx.minimum_cut(g.to_undirected(), "source", "sink")[0] == 2
    assert nx.minimum_cut is original


class _Block(torch.nn.Module):
    """Enough recomputable pointwise work and a norm for the min cut to choose."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.lin = torch.nn.Linear(16, 16)
        self.ln = torch.nn.LayerNorm(16)

    def forward(self, x):
        h = self.ln(torch.nn.functional.gelu(self.lin(x)))
        return (h.sin() * h.cos() + h.tanh()).sum()


def _partition_as_torch_2_11(monkeypatch, fast: bool):
    """tccd's partition of _Block's joint graph with this torch's partitioner calling
    networkx.minimum_cut as torch 2.11's does; (forward and backward code, calls networkx's
    own minimum_cut got, calls min_cut.minimum_cut got)."""
    from torch._functorch import partitioners

    from tccd.backend import _partitioner

    original = nx.minimum_cut
    calls = {"networkx": 0, "tccd": 0}

    def networkx_own(*args, **kwargs):
        calls["networkx"] += 1
        return original(*args, **kwargs)

    ours = min_cut.minimum_cut

    def tccd_own(*args, **kwargs):
        calls["tccd"] += 1
        return ours(*args, **kwargs)

    monkeypatch.setattr(nx, "minimum_cut", networkx_own)
    monkeypatch.setattr(min_cut, "minimum_cut", tccd_own)
    if hasattr(partitioners, "minimum_cut"):  # torch >= 2.15: make it call networkx's, as 2.11
        monkeypatch.setattr(partitioners, "minimum_cut", lambda g, s, t: nx.minimum_cut(g, s, t))
    monkeypatch.setattr(min_cut, "torch_has_own", lambda: False)
    monkeypatch.setenv("TCCD_FAST_MIN_CUT", "1" if fast else "0")
    config.reload()
    try:
        _, partition_fn, _ = _partitioner()
        x = torch.randn(8, 16, generator=torch.Generator().manual_seed(1), requires_grad=True)
        graphs = capture_aot_graphs(_Block(), x, backward=True, partition_fn=partition_fn)
    finally:
        monkeypatch.undo()
        config.reload()
    return [(kind, gm.code) for kind, gm, _ in graphs], calls


def test_tccd_partition_takes_the_fast_cut_with_the_same_graphs(monkeypatch):
    fast, fast_calls = _partition_as_torch_2_11(monkeypatch, fast=True)
    slow, slow_calls = _partition_as_torch_2_11(monkeypatch, fast=False)
    assert fast_calls == {"networkx": 0, "tccd": 1}
    assert slow_calls == {"networkx": 1, "tccd": 0}
    assert [kind for kind, _ in fast] == ["forward", "backward"]
    assert fast == slow


def test_a_torch_with_its_own_cut_is_left_alone(monkeypatch):
    calls = []
    monkeypatch.setattr(min_cut, "torch_has_own", lambda: True)
    monkeypatch.setattr(min_cut, "swapped", lambda: calls.append(1))
    assert min_cut.wrap(lambda: 7)() == 7
    assert calls == []
