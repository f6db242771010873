"""One warm first step of a zoo model on the CPU, split into phases in CPU time (issue 11).

    TCCD_ADDRESS=unix:/tmp/w/tccd.sock TCCD_CACHE_DIR=$(mktemp -d) \
        python deploy/warm_phase_probe.py --model bert --backend tccd [--profile out.prof]
    TORCHINDUCTOR_CACHE_DIR=/tmp/w/ind python deploy/warm_phase_probe.py --model bert --backend inductor
    python deploy/warm_phase_probe.py --model bert --backend eager      # Dynamo's floor

The zoo's model (deploy/zoo_benchmark.py, random weights, float32) at its small batch but with a
short sequence (--seq, LMs) or image (vision): the trace is the model's, the arithmetic small.
Run it once to fill the caches (tccd's daemon, Inductor's local caches), then again in new
processes. The torch.compile() call is timed apart (compile_call_*; with_compile_call_cpu_s adds
it to the first step): with Dynamo's package (TCCD_CACHING_PRECOMPILE=1, caching_precompile.py)
a warm process loads it there, and `dynamo_cache` says whether it did. Phases are timed in the main thread's CPU time (phase_timers.py, PHASE_CLOCK=cpu):
on this shared 2-core machine wall time moved 2-3x between identical runs. Prints one JSON
line: the phases, the first step's wall and CPU seconds, Dynamo's frames compiled, and the
garbage collector's collections and CPU seconds during the step. --profile writes a cProfile
(thread CPU time) of the step for a breakdown of the Dynamo phase.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ["PHASE_CLOCK"] = "cpu"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="bert")
    p.add_argument("--backend", default="tccd", help="tccd, inductor, eager, aot_eager, aot_eager_decomp_partition (Inductor's "
                   "decompositions and partitioner, no codegen)")
    p.add_argument("--seq", type=int, default=64, help="sequence length (LMs) or image size (vision)")
    p.add_argument("--profile", help="write a cProfile of the first step here")
    args = p.parse_args()

    import torch

    import zoo_benchmark as zoo
    from phase_timers import Timers

    torch.set_num_threads(1)
    torch.manual_seed(0)
    model, _, fwd = zoo.build_model(args.model, False, False)
    vision = args.model in zoo.VISION
    make = zoo._vision_batch(args.seq) if vision else zoo._lm_batch(model.config.vocab_size, args.seq)
    batch = make(zoo.BATCH["small"]["vision" if vision else "lm"], "cpu")
    model.train(True)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    timers = Timers(clock="cpu")
    backend = args.backend
    if backend == "tccd":
        backend = timers.instrument_tccd()
    elif backend == "inductor":
        timers.instrument_inductor()
    elif backend.startswith("aot_"):  # aot_eager, aot_eager_decomp_partition: AOTAutograd's phases
        timers.instrument_aot_autograd()
    # With Dynamo's package (TCCD_CACHING_PRECOMPILE=1 / TORCH_CACHING_PRECOMPILE=1) a warm
    # process loads it here, in torch.compile(): timed, and reported beside the first step.
    cc0, ct0 = time.thread_time(), time.perf_counter()
    compiled = torch.compile(model, backend=backend)
    compile_call = (time.perf_counter() - ct0, time.thread_time() - cc0)

    collections = []
    gc.callbacks.append(lambda phase, info: collections.append((phase, info["generation"], time.thread_time())))
    profile = cProfile.Profile(time.thread_time) if args.profile else None
    timers.begin()
    c0, t0 = time.thread_time(), time.perf_counter()
    if profile:
        profile.enable()
    loss = fwd(compiled, batch, True)
    loss.backward()
    opt.step()
    if profile:
        profile.disable()
    wall, cpu = time.perf_counter() - t0, time.thread_time() - c0
    gc_cpu: dict = {}
    for (phase, gen, t), (phase2, _, t2) in zip(collections, collections[1:]):
        if phase == "start" and phase2 == "stop":
            n, s = gc_cpu.get(gen, (0, 0.0))
            gc_cpu[gen] = (n + 1, round(s + t2 - t, 4))
    from torch._dynamo.utils import compilation_time_metrics as metrics

    out = {"model": args.model, "compiler": args.backend, "loss": float(loss.detach()), "first_step_wall_s": round(wall, 3),
           "first_step_cpu_s": round(cpu, 3), "frames": len(metrics.get("_compile.compile_inner", [])),
           "gc": gc_cpu, "compile_call_wall_s": round(compile_call[0], 3),
           "compile_call_cpu_s": round(compile_call[1], 3),
           "with_compile_call_cpu_s": round(cpu + compile_call[1], 3)}
    from torch._dynamo.utils import counters

    out["dynamo_cache"] = dict(counters["dynamo_cache"])  # the package: hit, miss or error
    # The package's guards: unpickled and rebuilt in the torch.compile() call (wall s).
    out["precompile_guards"] = {k: round(sum(v), 3) for k, v in metrics.items() if k.startswith("precompile_") and v}
    out.update(timers.finish(cpu, compiled=True))
    print(json.dumps(out))
    if profile:
        profile.dump_stats(args.profile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
