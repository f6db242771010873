"""Dynamic shapes: a training loop and an inference loop over varying sequence lengths and batch
sizes (issue 9), tccd against eager: results matched at every size, and the counts that matter.

    TCCD_BINARY=build/bin/tccd PYTHONPATH=client python deploy/dynamic_shapes_bench.py \\
        [--device cpu|cuda] [--lengths 32,64,...] [--d 128] [--mode dynamic|automatic]

Runs a pre-norm transformer block (embedding, layer norm, attention by matmuls and softmax, GELU
MLP) over 16 sequence lengths (32..512 by default; the batch varies with the length so the
token count stays near constant), training (forward, backward, SGD) then inference, and prints
per phase: Dynamo graphs compiled (forward/inference graphs in tccd.last_compile_stats()),
daemon compiles (GetStats `compiles` before and after), the largest difference from eager and
the mean step time of tccd and eager. Uses the daemon at TCCD_ADDRESS (auto-started).

`--compare-static` measures instead what issue 9 targets, "dynamic kernels within 10% of the
static kernels' step time at the sizes the static ones were built for": per length, the
training step (forward, backward) of a graph compiled for that size (dynamic=False, one Dynamo
graph and one daemon compile per size) against the one dynamic graph (dynamic=True), each the
median of --steps timed steps after --warmup, and the ratio; plus the dynamic plan's kernel and
extern step counts and Python steps per call (the pointwise ops of a dynamic graph are
kernels with run-time sizes; the whole plan runs in the native plan runtime, 0 Python steps).
`--interleave` compiles the static and the dynamic graphs first, then alternates their steps
per length and reports the minimum of each (robust on a shared machine); with `--top-kernels N`
(cuda) it then profiles 3 steps of each at the last length and prints their GPU busy time per
step and N slowest kernels (is the gap host or GPU time?); with `--phases` it prints per length
each model's host time until the forward returns, until the backward returns, and the wait
for the device after it. `--rounds N` (with --interleave) repeats the timed loop N times over
all lengths, the order of the two models swapped every other round (static first in odd
rounds): it prints every round's table, then per length the median of the rounds' ratios, whose
worst and geometric mean are the figure (the GPU host's drift moves a round's static and
dynamic times together, so a ratio per round cancels it where one minimum per model did not);
`--rounds 1` (the default) prints the single table as before. For the GPU figure:

    TCCD_BINARY=build/bin/tccd PYTHONPATH=client python deploy/dynamic_shapes_bench.py \
        --device cuda --compare-static --interleave --lengths 128,256,384,512 --tokens 8192 \
        --d 256 --steps 30
"""

import argparse
import copy
import math
import os
import sys
import time


def build(d: int, device: str, dtype: str = "float32"):
    import torch
    import torch.nn as nn

    class Block(nn.Module):
        def __init__(self, vocab=1000, heads=4):
            super().__init__()
            self.heads = heads
            self.embed = nn.Embedding(vocab, d)
            self.pos = nn.Embedding(1024, d)
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, ids):
            b, t = ids.shape
            x = self.embed(ids) + self.pos(torch.arange(t, device=ids.device))
            q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
            hd = q.shape[-1] // self.heads
            q, k, v = (z.reshape(b, t, self.heads, hd).transpose(1, 2) for z in (q, k, v))
            attn = torch.softmax((q @ k.transpose(-2, -1)) / math.sqrt(hd), dim=-1) @ v
            x = x + self.proj(attn.transpose(1, 2).reshape(b, t, d))
            return x + self.fc2(nn.functional.gelu(self.fc1(self.ln2(x))))

    torch.manual_seed(0)
    return Block().to(device=device, dtype=getattr(torch, dtype))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--lengths", default=",".join(str(32 * i) for i in range(1, 17)))
    parser.add_argument("--tokens", type=int, default=2048, help="batch * length, about")
    parser.add_argument("--d", type=int, default=128)
    parser.add_argument("--mode", choices=["dynamic", "automatic"], default="automatic")
    parser.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32",
                        help="the model's parameters and activations (bfloat16: a bf16 model, no autocast)")
    parser.add_argument("--compare-static", action="store_true",
                        help="per length: static graph vs the dynamic graph, training step time")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--top-kernels", type=int, default=0,
                        help="--interleave, cuda: after the timing, GPU busy time per step of the static and "
                             "the dynamic model at the last length and their N slowest kernels (torch.profiler)")
    parser.add_argument("--phases", action="store_true",
                        help="--interleave: per length, also where each model's step goes: host time until the "
                             "forward returns, until the loss's backward returns, and the wait for the device "
                             "after it (each the minimum over the steps): host-bound or device-bound, and where")
    parser.add_argument("--rounds", type=int, default=1,
                        help="--interleave: repeat the timed loop over all lengths N times (the models' order "
                             "swapped every other round), print each round's table, then per length the median "
                             "of the rounds' dynamic/static ratios (1: the single table, as before)")
    parser.add_argument("--interleave", action="store_true",
                        help="--compare-static on a loaded machine: compile both first, then alternate "
                             "static and dynamic steps per length and report the minimum of each")
    args = parser.parse_args()
    if args.compare_static:
        return compare_static(args)

    import torch

    import tccd
    from tccd import channel, config
    from tccd.v1 import tccd_pb2 as pb

    lengths = [int(x) for x in args.lengths.split(",")]
    stub = channel.connect(config.get())

    def daemon_compiles() -> int:
        return dict(stub.GetStats(pb.StatsRequest(), timeout=10).counters).get("compiles", 0)

    def sync():
        if args.device == "cuda":
            torch.cuda.synchronize()

    for phase in ("training", "inference"):
        torch._dynamo.reset()
        tccd.reset_compile_stats()
        model = build(args.d, args.device, args.dtype)
        eager = copy.deepcopy(model)
        compiled = torch.compile(model, backend="tccd", dynamic=True if args.mode == "dynamic" else None)
        before = daemon_compiles()
        worst = 0.0
        times = {"tccd": [], "eager": []}
        for i, t in enumerate(lengths):
            b = max(1, args.tokens // t)
            ids = torch.randint(0, 1000, (b, t), generator=torch.Generator().manual_seed(i)).to(args.device)
            for name, m in (("tccd", compiled), ("eager", eager)):
                sync()
                start = time.perf_counter()
                if phase == "training":
                    out = m(ids)
                    out.float().pow(2).mean().backward()
                else:
                    with torch.no_grad():
                        out = m(ids)
                sync()
                times[name].append(time.perf_counter() - start)
                if name == "tccd":
                    got = out.detach()
                else:
                    worst = max(worst, (got - out.detach()).abs().max().item())
            if phase == "training":
                for p, q in zip(model.parameters(), eager.parameters()):
                    worst = max(worst, (p.grad - q.grad).abs().max().item())
                    p.grad = None
                    q.grad = None
        stats = tccd.last_compile_stats()
        graphs = [s for s in stats if s["kind"] in ("forward", "inference")]
        fallbacks = [s["fallback"] for s in stats if s["fallback"]]
        # The first size pays the compiles: step times from the third size on.
        mean = {k: 1e3 * sum(v[2:]) / max(1, len(v) - 2) for k, v in times.items()}
        print(f"{phase}: {len(lengths)} lengths {lengths[0]}..{lengths[-1]}, mode {args.mode}, {args.device}: "
              f"{len(graphs)} Dynamo graphs, {daemon_compiles() - before} daemon compiles, "
              f"max |tccd - eager| {worst:.2e}, step {mean['tccd']:.1f} ms (eager {mean['eager']:.1f} ms)"
              + (f", FALLBACKS: {fallbacks}" if fallbacks else ""))
    return 0


def compare_static(args) -> int:
    import statistics

    import torch
    import torch._dynamo

    import tccd

    lengths = [int(x) for x in args.lengths.split(",")]
    # One static graph per length: Dynamo must not give up recompiling.
    torch._dynamo.config.cache_size_limit = max(torch._dynamo.config.cache_size_limit, 2 * len(lengths) + 4)
    if hasattr(torch._dynamo.config, "recompile_limit"):
        torch._dynamo.config.recompile_limit = max(torch._dynamo.config.recompile_limit, 2 * len(lengths) + 4)

    def sync():
        if args.device == "cuda":
            torch.cuda.synchronize()

    def ids_for(t: int):
        b = max(1, args.tokens // t)
        return torch.randint(0, 1000, (b, t), generator=torch.Generator().manual_seed(t)).to(args.device)

    def step_ms(model, ids) -> float:
        times = []
        for i in range(args.warmup + args.steps):
            sync()
            start = time.perf_counter()
            model(ids).float().pow(2).mean().backward()
            sync()
            if i >= args.warmup:
                times.append(1e3 * (time.perf_counter() - start))
        return statistics.median(times)

    def check_no_fallback(what: str) -> None:
        fallbacks = [s["fallback"] for s in tccd.last_compile_stats() if s["fallback"]]
        if fallbacks:
            raise SystemExit(f"{what}: graphs fell back to eager: {fallbacks}")

    if args.interleave:
        return compare_interleaved(args, ids_for, sync, check_no_fallback)

    torch._dynamo.reset()
    tccd.reset_compile_stats()
    model = build(args.d, args.device, args.dtype)
    dynamic = torch.compile(model, backend="tccd", dynamic=True)
    compiles = _DaemonCompiles()
    dynamic_ms = {t: step_ms(dynamic, ids_for(t)) for t in lengths}
    check_no_fallback("dynamic")
    dynamic_counts = (_dynamo_graphs(), compiles.since())
    # The last forward and backward: Dynamo may first specialise b == t (one symbol) and then
    # recompile with two at the first size that breaks it.
    last = {s["kind"]: s for s in tccd.last_compile_stats()}
    counts = ", ".join(
        f"{s['kind']}: {s['native_kernels']} native steps ({s['fused_kernels']} kernels), {s['extern_steps']} extern, "
        f"{s.get('python_steps', '?')} Python steps per call"
        for s in last.values()
    ) + f"; {len(tccd.last_compile_stats())} graphs compiled"

    static_ms = {}
    static_graphs = 0
    compiles = _DaemonCompiles()
    for t in lengths:
        torch._dynamo.reset()
        tccd.reset_compile_stats()
        static = torch.compile(model, backend="tccd", dynamic=False)
        static_ms[t] = step_ms(static, ids_for(t))
        check_no_fallback(f"static {t}")
        static_graphs += _dynamo_graphs()
    static_counts = (static_graphs, compiles.since())

    name = torch.cuda.get_device_name() if args.device == "cuda" else "cpu"
    print(f"training step (forward + backward), {args.dtype}, d {args.d}, ~{args.tokens} tokens, {name}; "
          f"dynamic plan: {counts}")
    _print_counts(lengths, dynamic_counts, static_counts)
    _print_table(args, lengths, static_ms, dynamic_ms)
    return 0


class _DaemonCompiles:
    """The daemon's `compiles` counter (GetStats) from construction on."""

    def __init__(self):
        from tccd import channel, config
        from tccd.v1 import tccd_pb2 as pb

        self._stub, self._request = channel.connect(config.get()), pb.StatsRequest()
        self._start = self.now()

    def now(self) -> int:
        return dict(self._stub.GetStats(self._request, timeout=10).counters).get("compiles", 0)

    def since(self) -> int:
        return self.now() - self._start


def _dynamo_graphs() -> int:
    """Dynamo graphs tccd compiled since tccd.reset_compile_stats(): forward or inference graphs
    (a backward belongs to its forward)."""
    import tccd

    return sum(1 for s in tccd.last_compile_stats() if s["kind"] in ("forward", "inference"))


def _print_counts(lengths, dynamic_counts, static_counts) -> None:
    print(f"compiles over {len(lengths)} lengths: dynamic=True {dynamic_counts[0]} Dynamo graphs, "
          f"{dynamic_counts[1]} daemon compiles; dynamic=False {static_counts[0]} Dynamo graphs, "
          f"{static_counts[1]} daemon compiles (a daemon compile is one forward or backward graph "
          f"the daemon built: a cache hit is none)")


def _print_table(args, lengths, static_ms, dynamic_ms) -> None:
    print(f"{'length':>6} {'batch':>5} {'static ms':>10} {'dynamic ms':>11} {'dynamic/static':>15}")
    ratios = []
    for t in lengths:
        ratios.append(dynamic_ms[t] / static_ms[t])
        print(f"{t:>6} {max(1, args.tokens // t):>5} {static_ms[t]:>10.2f} {dynamic_ms[t]:>11.2f} "
              f"{ratios[-1]:>15.2f}")
    geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    print(f"worst dynamic/static: {max(ratios):.2f}, geometric mean {geomean:.2f} (target <= 1.10)")


def _print_rounds(args, lengths, rounds) -> None:
    """--rounds N > 1: every round's table (static, dynamic, ratio per length, the round's order),
    then per length the median of the rounds' ratios with their spread; the worst and the
    geometric mean of those medians are the figure."""
    import statistics

    print(f"{len(rounds)} rounds, each the min of {args.steps} interleaved steps per model and length; "
          f"dynamic first in rounds 1, 3, ..., static first in rounds 2, 4, ...")
    print(f"{'round':>5} {'length':>6} {'batch':>5} {'static ms':>10} {'dynamic ms':>11} {'dynamic/static':>15}")
    ratios = {t: [] for t in lengths}
    for r, (static_ms, dynamic_ms) in enumerate(rounds, start=1):
        for t in lengths:
            ratios[t].append(dynamic_ms[t] / static_ms[t])
            print(f"{r:>5} {t:>6} {max(1, args.tokens // t):>5} {static_ms[t]:>10.2f} {dynamic_ms[t]:>11.2f} "
                  f"{ratios[t][-1]:>15.2f}")
    print("per length, the median of the rounds' ratios (min .. max of the rounds):")
    print(f"{'length':>6} {'median dynamic/static':>22} {'min':>6} {'max':>6}")
    medians = []
    for t in lengths:
        medians.append(statistics.median(ratios[t]))
        print(f"{t:>6} {medians[-1]:>22.2f} {min(ratios[t]):>6.2f} {max(ratios[t]):>6.2f}")
    geomean = math.exp(sum(math.log(r) for r in medians) / len(medians))
    print(f"worst median dynamic/static: {max(medians):.2f}, geometric mean {geomean:.2f} over {len(rounds)} rounds "
          f"(target <= 1.10)")


def compare_interleaved(args, ids_for, sync, check_no_fallback) -> int:
    """Static vs dynamic with the two measured alternately, step by step, after both compiled
    (two copies of the model: Dynamo keeps their graphs apart), each the minimum of --steps: on
    a shared machine the minimum is what the code costs, the median what the neighbours do."""
    import torch
    import torch._dynamo

    import tccd

    lengths = [int(x) for x in args.lengths.split(",")]
    torch._dynamo.reset()
    tccd.reset_compile_stats()
    model = build(args.d, args.device, args.dtype)
    dynamic = torch.compile(copy.deepcopy(model), backend="tccd", dynamic=True)
    static = torch.compile(copy.deepcopy(model), backend="tccd", dynamic=False)

    def one(fn, ids, phases=None) -> float:
        sync()
        start = time.perf_counter()
        out = fn(ids)
        forward = time.perf_counter()
        out.float().pow(2).mean().backward()
        backward = time.perf_counter()
        sync()
        end = time.perf_counter()
        if phases is not None:
            for name, (a, b) in (("forward", (start, forward)), ("backward", (forward, backward)),
                                 ("wait", (backward, end))):
                phases[name] = min(phases.get(name, math.inf), 1e3 * (b - a))
        return 1e3 * (end - start)

    # Compile (and warm) the dynamic model over every length, then the static one, counting
    # each one's Dynamo graphs and daemon compiles.
    counts, dynamic_stats = [], []
    for fn in (dynamic, static):
        graphs_before, compiles = _dynamo_graphs(), _DaemonCompiles()
        for t in lengths:
            for _ in range(args.warmup):
                one(fn, ids_for(t))
        counts.append((_dynamo_graphs() - graphs_before, compiles.since()))
        dynamic_stats = dynamic_stats or tccd.last_compile_stats()
    check_no_fallback("interleaved")
    stats = tccd.last_compile_stats()
    python_steps = sorted({s.get("python_steps") for s in stats}, key=str)
    name = torch.cuda.get_device_name() if args.device == "cuda" else "cpu"
    print(f"training step, {args.dtype}, d {args.d}, ~{args.tokens} tokens, {name}, interleaved, min of "
          f"{args.steps}; {len(stats)} graphs compiled; Python steps per call (any plan): {python_steps}")
    # The dynamic model's last forward and backward (Dynamo may first specialise b == t).
    for s in {s["kind"]: s for s in dynamic_stats}.values():
        print(f"  dynamic {s['name']}: {s['native_kernels']} native steps ({s['fused_kernels']} kernels), "
              f"{s['extern_steps']} extern")
    _print_counts(lengths, *counts)
    phases = {}  # (length, model) -> {"forward"|"backward"|"wait": min ms over every round}
    rounds = []  # per round: (static_ms, dynamic_ms), each {length: min ms of the round's steps}
    for r in range(max(1, args.rounds)):
        # Every other round the static model steps first: neither pays the other's leftovers
        # (allocator state, clocks) in every round.
        order = (("dynamic", dynamic), ("static", static)) if r % 2 == 0 else (("static", static), ("dynamic", dynamic))
        static_ms, dynamic_ms = {}, {}
        for t in lengths:
            ids = ids_for(t)
            times = {"static": [], "dynamic": []}
            for _ in range(args.steps):
                for label, fn in order:
                    times[label].append(one(fn, ids, phases.setdefault((t, label), {}) if args.phases else None))
            static_ms[t], dynamic_ms[t] = min(times["static"]), min(times["dynamic"])
        rounds.append((static_ms, dynamic_ms))
    if len(rounds) == 1:
        _print_table(args, lengths, *rounds[0])
    else:
        _print_rounds(args, lengths, rounds)
    if args.phases:
        print("where a step goes, ms (min over the steps of each phase): host until the forward returns, "
              "until loss.backward() returns, then the wait for the device; static / dynamic")
        print(f"{'length':>6} {'forward':>15} {'backward':>15} {'wait':>15}")
        for t in lengths:
            cells = [f"{phases[(t, 'static')][k]:.3f} / {phases[(t, 'dynamic')][k]:.3f}"
                     for k in ("forward", "backward", "wait")]
            print(f"{t:>6} " + " ".join(f"{c:>15}" for c in cells))
    if args.device == "cuda":
        # One more step of each at every length, its allocator peak (the symbolic plans' segment
        # workspaces are held longer than single values: TCCD_SYMBOLIC_SEGMENTS).
        peaks = []
        for t in lengths:
            ids = ids_for(t)
            for fn in (static, dynamic):
                torch.cuda.synchronize()
                torch.cuda.reset_peak_memory_stats()
                one(fn, ids)
                peaks.append(torch.cuda.max_memory_allocated() / 2**20)
        print("peak memory per training step, MiB (length: static / dynamic): " + ", ".join(
            f"{t}: {peaks[2 * i]:.0f} / {peaks[2 * i + 1]:.0f}" for i, t in enumerate(lengths)))
    if args.top_kernels and args.device == "cuda":
        _print_top_kernels(args, {"static": static, "dynamic": dynamic}, ids_for(lengths[-1]), lengths[-1], one)
    return 0


def _print_top_kernels(args, models, ids, length, one) -> None:
    """--top-kernels: per model, the GPU busy time of one training step at `length` (the sum of its
    kernels' times, copies and fills left out; profiling.py) over 3 profiled steps, and its slowest
    kernels: whether a step is GPU-bound (busy near the step time) or host-bound."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import profiling

    iters = 3
    for name, fn in models.items():
        kernels = profiling.profile_kernels(lambda: one(fn, ids), device="cuda", iters=iters)
        busy, _ = profiling.device_time_per_iter(kernels, iters=iters)
        launches = sum(k.launches for k in kernels.values()) / iters
        print(f"{name} at length {length}: GPU busy {busy / 1e3:.3f} ms per step, {launches:.0f} GPU events per step")
        print("  " + profiling.table(kernels, iters=iters, limit=args.top_kernels, width=100).replace("\n", "\n  "))


if __name__ == "__main__":
    sys.exit(main())
