"""Partitions a few training graphs with AOTAutograd's min-cut partitioner and prints the
forward and backward graphs it made (for test_light_partition.py, one fresh process per way).

    python light_partition_probe.py light|real
    python light_partition_probe.py regions   # the stand-in's helpers vs the real module's
"""

import sys
import time

import torch
from torch._functorch import partitioners
from functorch.compile import make_boxed_func
from torch._functorch.aot_autograd import aot_module

from tccd import light_partition

graphs = []


def keep(gm, example_inputs):
    graphs.append(gm.code)
    return make_boxed_func(gm)


def regions() -> None:
    """Mutation region ids and same_mutation_regions on a graph with in-place ops (a training
    joint graph is functional, so the partition above only sees region 0), stand-in vs real."""
    stand_in = light_partition._get_stand_in()
    assert stand_in is not None and light_partition.PATTERN_MATCHER not in sys.modules

    def f(x, y):
        a = x + 1
        x.add_(a)
        b = torch.relu_(y * 2)
        torch.ops.aten.copy_.default(y, b)
        return a + b + x

    import torch._inductor.pattern_matcher as real

    ids = []
    for module in (stand_in, real):
        gm = torch.fx.symbolic_trace(f)
        module.compute_mutation_region_ids(gm.graph)
        nodes = list(gm.graph.nodes)
        ids.append([(n.name, n.meta["mutation_region_id"]) for n in nodes])
        ids.append([module.same_mutation_regions(a, b) for a in nodes for b in nodes])
    print("REGIONS", ids[0])
    print("REGIONS_EQUAL", ids[0] == ids[2] and ids[1] == ids[3], max(i for _, i in ids[0]))


class Block(torch.nn.Module):
    """Pointwise chains the partitioner recomputes, a norm, a mutation (batch norm's running
    statistics: copy_ nodes that split the CSE's mutation regions), RNG."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(16, 16)
        self.ln = torch.nn.LayerNorm(16)
        self.bn = torch.nn.BatchNorm1d(16)

    def forward(self, x):
        h = self.ln(torch.nn.functional.gelu(self.lin(x)))
        h = self.bn(h) + self.bn(h * 2)  # the same ops twice: what the CSE merges
        h = torch.nn.functional.dropout(h, 0.1, training=True)
        return (h.sin() * h.cos() + h.tanh()).sum()


def main() -> None:
    way = sys.argv[1]
    if way == "regions":
        return regions()
    partition = partitioners.min_cut_rematerialization_partition
    if way == "light":
        partition = light_partition.wrap(partition)
    timed = partition

    def partition(*args, **kwargs):  # how long, and how many modules it imported
        before, start = len(sys.modules), time.perf_counter()
        try:
            return timed(*args, **kwargs)
        finally:
            print(f"PARTITION {time.perf_counter() - start:.3f} s, {len(sys.modules) - before} modules imported")
    torch.manual_seed(0)
    model = Block()
    compiled = aot_module(model, fw_compiler=keep, bw_compiler=keep, partition_fn=partition)
    compiled(torch.randn(8, 16, requires_grad=True)).backward()
    print("PATTERN_MATCHER_IMPORTED", light_partition.PATTERN_MATCHER in sys.modules)
    for code in graphs:
        print("GRAPH")
        print(code)


if __name__ == "__main__":
    main()
