"""The min-cut partitioner's max-flow on flat lists instead of networkx's (TCCD_FAST_MIN_CUT).

    partition_fn = min_cut.wrap(partitioners.min_cut_rematerialization_partition)

Why: AOTAutograd's min-cut partitioner (torch._functorch.partitioners.solve_min_cut) builds a
networkx DiGraph of the joint graph's nodes and, in torch 2.11 (the GPU machines'), solves it with
`networkx.minimum_cut` (preflow-push on dict-of-dict residual graphs). On T5's training graph
(3227 vertices, 4052 edges) that call took 0.21 s of the partition's 0.61 s on the CPU (torch
2.11, the zoo's T5 at seq 64), on the path to the forward's compile request, so a cold first step
waits for all of it. Torch 2.15 replaced the call with its own Dinic's algorithm on integer-indexed
lists (torch/_functorch/_activation_checkpointing/min_cut.py): 0.018 s on the same graph. The
GPU machines run torch 2.11; this module is that function, copied, for a torch that lacks it.

Same partition: the partitioner takes only the cut's two vertex sets, and both functions return
as the sink side the vertices that can still reach the sink in the residual network of a maximum
flow. That set is the same for every maximum flow (it is the sink-closest minimum cut), so the
algorithm does not change it, and with the partitioner's capacities (Python ints; infinity, which
both replace by three times the sum of the finite capacities) the flow is exact. Checked against
networkx on random graphs with ties (tests/python/test_min_cut.py) and on the zoo's T5 (the same
cut and value).

How: while the wrapped partitioner runs, `networkx.minimum_cut` (which torch 2.11's
solve_min_cut looks up on the module at the call) is this module's `minimum_cut`; a call it does
not cover (keyword arguments such as flow_func, an undirected or multi-graph: never the
partitioner's) goes to networkx's own. A torch whose partitioner has its own `minimum_cut` is
left alone. TCCD_FAST_MIN_CUT=0 turns it off (config.py).

minimum_cut below is torch's code (BSD-3-Clause, Copyright (c) PyTorch contributors), with
the docstrings shortened.
"""

from __future__ import annotations

import contextlib
import functools
import math
import threading
from collections import deque
from typing import Any, Callable, Iterator


def torch_has_own() -> bool:
    """Whether this torch's partitioner solves its min cut without networkx (torch >= 2.15)."""
    from torch._functorch import partitioners

    return callable(getattr(partitioners, "minimum_cut", None))


def wrap(partition_fn: Callable[..., Any]) -> Callable[..., Any]:
    """partition_fn, run with networkx.minimum_cut swapped for minimum_cut (module doc)."""

    @functools.wraps(partition_fn)
    def partition(*args: Any, **kwargs: Any) -> Any:
        if torch_has_own():
            return partition_fn(*args, **kwargs)
        with swapped():
            return partition_fn(*args, **kwargs)

    return partition


_lock = threading.Lock()
_depth = 0  # guarded by _lock: nested or concurrent partitions share one swap
_original: Any = None  # guarded by _lock: networkx's minimum_cut while swapped


@contextlib.contextmanager
def swapped() -> Iterator[None]:
    """networkx.minimum_cut is `minimum_cut` (for the calls it covers) inside the block."""
    import networkx as nx

    global _depth, _original
    with _lock:
        if _depth == 0:
            _original = nx.minimum_cut
            nx.minimum_cut = _dispatching(_original)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                nx.minimum_cut = _original
                _original = None


def _dispatching(original: Callable[..., Any]) -> Callable[..., Any]:
    """minimum_cut for the partitioner's calls, networkx's `original` for any other."""

    @functools.wraps(original)
    def dispatching(graph: Any, source: Any, sink: Any, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs or not graph.is_directed() or graph.is_multigraph():
            return original(graph, source, sink, *args, **kwargs)
        return minimum_cut(graph, source, sink)

    dispatching.tccd_fast_min_cut = True  # type: ignore[attr-defined]
    return dispatching


def minimum_cut(graph: Any, source: Any, sink: Any) -> tuple[float, tuple[set[Any], set[Any]]]:
    """The minimum-cut value and (source_side, sink_side), as networkx.minimum_cut returns
    them, including its choice of the cut closest to the sink when several tie. Capacities must
    be nonnegative (missing: infinite); an all-infinite source-to-sink path raises
    NetworkXUnbounded, as networkx does.

    Dinic's algorithm: a breadth-first search builds the level graph, then blocking flows are
    sent along level-respecting residual edges (iteratively, with `current` pointers), until
    the sink is unreachable; reverse edges sit next to their forward edges (edge ^ 1)."""
    import networkx as nx

    if not graph.is_directed():
        raise nx.NetworkXError("minimum_cut only supports directed graphs")
    if graph.is_multigraph():
        raise nx.NetworkXError("MultiGraph and MultiDiGraph not supported")
    if source not in graph:
        raise nx.NetworkXError(f"node {source} not in graph")
    if sink not in graph:
        raise nx.NetworkXError(f"node {sink} not in graph")
    if source == sink:
        raise nx.NetworkXError("source and sink are the same node")

    nodes = list(graph)
    node_index = {node: index for index, node in enumerate(nodes)}
    node_count = len(nodes)
    source_index = node_index[source]
    sink_index = node_index[sink]

    # As networkx's build_residual_network: no self-loops or nonpositive edges, and infinity
    # replaced by three times the sum of the finite capacities.
    finite_capacity = sum(
        capacity
        for start, end, capacity in graph.edges(data="capacity", default=math.inf)
        if start != end and capacity > 0 and not math.isinf(capacity)
    )
    infinite_capacity = 3 * finite_capacity if finite_capacity else 1
    adjacency: list[list[int]] = [[] for _ in nodes]
    destinations: list[int] = []
    residual: list[float] = []
    infinite: list[bool] = []

    def add_edge(start: int, end: int, capacity: float, *, is_infinite: bool) -> None:
        edge = len(destinations)
        destinations.extend((end, start))
        residual.extend((capacity, 0))
        infinite.extend((is_infinite, False))
        adjacency[start].append(edge)
        adjacency[end].append(edge + 1)

    for start, end, capacity in graph.edges(data="capacity", default=math.inf):
        if start == end or capacity <= 0:
            continue
        add_edge(node_index[start], node_index[end], min(capacity, infinite_capacity),
                 is_infinite=math.isinf(capacity))

    reachable = {source_index}
    queue = deque([source_index])
    while queue:
        node = queue.popleft()
        for edge in adjacency[node]:
            end = destinations[edge]
            if infinite[edge] and end not in reachable:
                if end == sink_index:
                    raise nx.NetworkXUnbounded("Infinite capacity path, flow unbounded above.")
                reachable.add(end)
                queue.append(end)

    flow = 0.0
    while True:
        levels = [-1] * node_count
        levels[source_index] = 0
        queue = deque([source_index])
        while queue and levels[sink_index] < 0:
            node = queue.popleft()
            next_level = levels[node] + 1
            for edge in adjacency[node]:
                end = destinations[edge]
                if residual[edge] > 0 and levels[end] < 0:
                    levels[end] = next_level
                    queue.append(end)
        if levels[sink_index] < 0:
            break

        current = [0] * node_count

        def send_one() -> float:
            """Sends flow through one level-respecting path, without recursion."""
            path_nodes = [source_index]
            path_edges: list[int] = []
            bottlenecks = [math.inf]
            while path_nodes:
                node = path_nodes[-1]
                if node == sink_index:
                    amount = bottlenecks[-1]
                    for edge in path_edges:
                        residual[edge] -= amount
                        residual[edge ^ 1] += amount
                    return amount
                edges = adjacency[node]
                while current[node] < len(edges):
                    edge = edges[current[node]]
                    end = destinations[edge]
                    if residual[edge] > 0 and levels[end] == levels[node] + 1:
                        path_edges.append(edge)
                        path_nodes.append(end)
                        bottlenecks.append(min(bottlenecks[-1], residual[edge]))
                        break
                    current[node] += 1
                else:
                    levels[node] = -1
                    path_nodes.pop()
                    bottlenecks.pop()
                    if path_edges:
                        path_edges.pop()
            return 0

        while amount := send_one():
            flow += amount

    # As networkx: the sink side is every vertex that can still reach the sink through a
    # residual edge (edges traversed backwards).
    sink_side_indices = {sink_index}
    queue = deque([sink_index])
    while queue:
        node = queue.popleft()
        for edge in adjacency[node]:
            predecessor = destinations[edge]
            if residual[edge ^ 1] > 0 and predecessor not in sink_side_indices:
                sink_side_indices.add(predecessor)
                queue.append(predecessor)
    sink_side = {nodes[index] for index in sink_side_indices}
    return flow, (set(nodes) - sink_side, sink_side)
