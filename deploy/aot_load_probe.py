"""Where the ahead-of-time flow's load goes: save a zoo model's functional training step with a
guard filter, then load it in a new process and time the load (wall and main-thread CPU), the
guards kept, and optionally a cProfile of the load (issue 11; README "Warm start: the AOT load's
guards").

    # against a daemon (TCCD_ADDRESS), each command a new process, the load with an empty local cache
    PYTHONPATH=client python deploy/aot_load_probe.py save /tmp/r50.pt2 --model resnet50 --tiny --guards lean
    TCCD_CACHE_DIR=$(mktemp -d) PYTHONPATH=client python deploy/aot_load_probe.py load /tmp/r50.pt2 --model resnet50 --tiny

--profile N prints cProfile's top N of the load by cumulative time; PROBE_PROFILE_FILTER (a
regular expression over the file and function, e.g. "tccd|grpc") keeps only the matching rows.

The step is the zoo's `--aot` cell's (zoo_benchmark._functional_loss: functional_call over the
model, the state and the batch as inputs, the model as external data); --guards: lean
(tccd.precompile.lean_guards), lean-dict-types (lean_guards_keep_dict_types: lean before the
modules' dict type guards went), serializable (tccd.precompile.serializable_guards), tensors
(serializable and torch's keep_tensor_guards_unsafe: a floor for scale, not a safe filter).
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import gc
import io
import os
import pstats
import sys
import time
from typing import Any, Dict, List


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=["save", "load"])
    p.add_argument("path")
    p.add_argument("--model", default="resnet50")
    p.add_argument("--tiny", action="store_true", help="the zoo's tiny config (same module tree)")
    p.add_argument("--device", default="cuda" if os.environ.get("CUDA_VISIBLE_DEVICES") != "" else "cpu")
    p.add_argument("--guards", default="lean", choices=["lean", "lean-dict-types", "serializable", "tensors"])
    p.add_argument("--list-guards", metavar="FILE",
                   help="save: write every guard Dynamo made (kept or not, type, source name) to FILE, one a line")
    p.add_argument("--profile", type=int, default=0, metavar="N", help="load: print cProfile's top N")
    p.add_argument("--guard-check-calls", type=int, default=0, metavar="N",
                   help="load: after the first step, time N evaluations of the loaded function's guards "
                        "(torch's guard_check) and of tccd's input checks (per call, us)")
    p.add_argument("--gc-freeze", action="store_true",
                   help="load: gc.freeze() before it (what the set-up allocated is never scanned again)")
    a = p.parse_args(argv)

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import torch  # noqa

    import tccd
    import tccd.precompile
    import zoo_benchmark as zb

    device = torch.device(a.device if a.device == "cpu" or torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    model, batch_fn, fwd = zb.build_model(a.model, a.tiny, False)
    model.to(device).train(True)
    kind = "vision" if a.model in zb.VISION else "lm"
    batch = batch_fn((zb.TINY_BATCH if a.tiny else zb.BATCH)["small"][kind], device)
    zb._without_loss_type_warning(model)
    state = {**dict(model.named_parameters()), **dict(model.named_buffers())}
    loss_fn = zb._functional_loss(model, fwd)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)

    if a.what == "save":
        torch._dynamo.config.enable_aot_compile = True  # torch 2.11's default is False
        pc = tccd.precompile

        def keep(entries):
            if a.guards == "lean":
                return pc.lean_guards(entries)
            if a.guards == "lean-dict-types":
                return pc.lean_guards_keep_dict_types(entries)
            kept = pc.serializable_guards(entries)
            if a.guards == "tensors":
                kept = [k and t for k, t in zip(kept, torch.compiler.keep_tensor_guards_unsafe(entries, True))]
            return kept

        def counting(entries):
            kept = keep(entries)
            by_type = collections.Counter(e.guard_type for e, k in zip(entries, kept) if k)
            print(f"guards kept {sum(map(bool, kept))} of {len(kept)}: {dict(by_type.most_common())}")
            if a.list_guards:
                with open(a.list_guards, "w") as out:
                    for e, k in zip(entries, kept):
                        out.write(f"{'kept' if k else 'dropped'}\t{e.guard_type}\t{e.name}\n")
            return kept

        compiled = torch.compile(loss_fn, backend="tccd", fullgraph=True, dynamic=False,
                                 options={"guard_filter_fn": counting})
        t0 = time.perf_counter()
        fn = compiled.aot_compile(((state, batch), {}))
        fn.save_compiled_function(a.path, external_data={"model": model})
        print(f"saved in {time.perf_counter() - t0:.2f} s")
        return 0

    # Garbage collections during the load and the first step: count by generation and seconds.
    collections_seen: List[List[float]] = []

    def on_gc(phase: str, info: Dict[str, Any]) -> None:
        if phase == "start":
            collections_seen.append([info["generation"], time.perf_counter()])
        elif collections_seen:
            collections_seen[-1][1] = time.perf_counter() - collections_seen[-1][1]

    def gc_report(what: str) -> None:
        full = [t for g, t in collections_seen if g == 2]
        print(f"{what}: {len(collections_seen)} collections, {sum(t for _, t in collections_seen):.3f} s; "
              f"full: {len(full)}, {sum(full):.3f} s")
        collections_seen.clear()

    if a.gc_freeze:
        gc.freeze()
    gc.callbacks.append(on_gc)
    profiler = cProfile.Profile() if a.profile else None
    wall, cpu = time.perf_counter(), time.thread_time()
    if profiler:
        profiler.enable()
    with open(a.path, "rb") as f:
        fn = torch.compiler.load_compiled_function(f, external_data={"model": model})
    if profiler:
        profiler.disable()
    print(f"load wall {time.perf_counter() - wall:.3f} s, main-thread CPU {time.thread_time() - cpu:.3f} s")
    gc_report("garbage collection in the load")
    wall, cpu = time.perf_counter(), time.thread_time()
    loss = fn(state, batch)
    loss.backward()
    sync()
    print(f"first step wall {time.perf_counter() - wall:.3f} s, main-thread CPU {time.thread_time() - cpu:.3f} s, "
          f"loss {float(loss.detach()):.6f}")
    gc_report("garbage collection in the first step")
    if a.guard_check_calls:
        # What every call of the loaded function pays before its plans: torch's guards, then
        # (inside the compiled code) tccd's input check of the graph's inputs, if saved with one.
        assert fn.guard_check(state, batch)
        t0 = time.perf_counter()
        for _ in range(a.guard_check_calls):
            fn.guard_check(state, batch)
        guards_us = (time.perf_counter() - t0) / a.guard_check_calls * 1e6
        from tccd.precompile import TccdCompiledGraph

        checks = [o for o in gc.get_objects() if isinstance(o, TccdCompiledGraph) and o.checker is not None]
        inputs = [*model.parameters(), *model.buffers(), *batch.values()]
        check_us = 0.0
        for graph in checks:
            args = tuple(inputs[:graph.checker.n_args]) if graph.checker.n_args == len(inputs) else None
            if args is None:
                continue
            try:
                graph.checker.check(args)
            except RuntimeError:  # the graph's inputs in another order than the model's: not timed
                continue
            t0 = time.perf_counter()
            for _ in range(a.guard_check_calls):
                graph.checker.check(args)
            check_us += (time.perf_counter() - t0) / a.guard_check_calls * 1e6
        print(f"per call: torch's guards {guards_us:.1f} us, tccd's input check {check_us:.1f} us "
              f"({len(checks)} checked graph(s))")
    if profiler:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(os.environ.get("PROBE_PROFILE_FILTER", ""), a.profile)
        print(out.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
