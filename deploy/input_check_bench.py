"""Per-call host cost of the ahead-of-time flow's input check (client/tccd/input_check.py), on
the CPU: the check a loaded ResNet-50 / ViT training step runs before every call, built from a
zoo model's parameters, buffers and batch (the graph inputs of the zoo's functional step),
timed alone and as the cost a TccdCompiledGraph call adds (issue 11; README "Warm start: the
AOT flow's tensor guards as one input check").

    PYTHONPATH=client python deploy/input_check_bench.py --model resnet50 [--tiny] [--calls 20000]
"""

from __future__ import annotations

import argparse
import os
import sys
import time


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="resnet50")
    p.add_argument("--tiny", action="store_true")
    p.add_argument("--calls", type=int, default=20000)
    a = p.parse_args(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import torch

    import zoo_benchmark as zb
    from tccd import input_check, precompile

    model, batch_fn, _ = zb.build_model(a.model, a.tiny, False)
    kind = "vision" if a.model in zb.VISION else "lm"
    batch = batch_fn((zb.TINY_BATCH if a.tiny else zb.BATCH)["small"][kind], torch.device("cpu"))
    tensors = [*model.parameters(), *model.buffers(), *[t for t in batch.values() if isinstance(t, torch.Tensor)]]
    facts = [input_check.facts(i, f"t{i}", t, list(t.shape), list(t.stride())) for i, t in enumerate(tensors)]
    check = input_check.InputCheck(facts, len(tensors))
    args = tuple(tensors)
    graph = precompile.TccdCompiledGraph(lambda *xs: None, checker=check)
    bare = precompile.TccdCompiledGraph(lambda *xs: None)

    def per_call_us(fn) -> float:
        for _ in range(200):
            fn()
        best = float("inf")
        for _ in range(5):  # the best of 5 rounds: a shared machine's noise only adds
            t0 = time.perf_counter()
            for _ in range(a.calls // 5):
                fn()
            best = min(best, (time.perf_counter() - t0) / (a.calls // 5))
        return best * 1e6

    t0 = time.perf_counter()
    input_check.InputCheck(facts, len(tensors))
    build_ms = (time.perf_counter() - t0) * 1e3
    alone = per_call_us(lambda: check.check(args))
    with_check = per_call_us(lambda: graph(*args))
    without = per_call_us(lambda: bare(*args))
    print(f"{a.model}{' (tiny)' if a.tiny else ''}: {len(tensors)} graph inputs; the check built in {build_ms:.2f} ms; "
          f"check() {alone:.1f} us a call ({alone * 1e3 / len(tensors):.0f} ns an input); a TccdCompiledGraph "
          f"call {with_check:.1f} us with it, {without:.1f} us without: +{with_check - without:.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
