"""Where a first step goes: exclusive wall time per phase, for the warm-start benchmarks.

Used by `warm_start_bench.py` (CPU, a small LM) and by `zoo_benchmark.py --warm` (the zoo's
real models, CPU or GPU). Phases (seconds):

  dynamo        Dynamo's trace and guards (torch's compile_inner minus the backend call)
  backend       inside the backend but outside what is listed below: AOTAutograd's trace and
                partitioning (tccd), AOTAutograd + Inductor (inductor)
  recipe        tccd's AOT recipe lookup (key, JSON), outside the plan loads it does
  request       tccd: serialising graphs into CompileRequests and their hashes
  compile_rpc   tccd: the Compile round trips (the daemon answers from its cache)
  fetch         tccd: GetManifest / FetchArtifact round trips and writing the local cache
  load          tccd: dlopen and binding of plans (runtime.load_plan, native_plan.load)
  aot_load      torch.compiler.load_compiled_function (includes its fetch and load)
  rest          everything else: the first calls themselves (CUDA module loads, cuBLAS/cuDNN
                set-up, the kernels), autograd, the optimizer step

PHASE_CLOCK=cpu times every phase in the main thread's CPU time (time.thread_time) instead of
wall time, and then measures `dynamo` with a wrapper of Dynamo's convert_frame._compile (its
exclusive time, the backend's nested calls subtracted) instead of Dynamo's own wall-clock
metrics: on a loaded machine wall time moved 2-3x between identical runs, CPU time +-0.5 s.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any, Callable, Dict, List

PHASES = ("dynamo", "backend", "recipe", "request", "compile_rpc", "fetch", "load", "aot_load", "rest")


class Timers:
    """Exclusive time per phase: a wrapped call's time minus that of wrapped calls inside it.

    Main thread only: calls on other threads (tccd's backward prefetch) overlap the step, so
    they are not a phase of it; what the step still waited for them is in `rest`.
    """

    def __init__(self, clock: str = "") -> None:
        self.total: Dict[str, float] = {p: 0.0 for p in PHASES}
        self.stack: List[float] = []  # per open call: time spent in nested wrapped calls
        self.cpu = (clock or os.environ.get("PHASE_CLOCK", "wall")) == "cpu"
        self.now = time.thread_time if self.cpu else time.perf_counter
        if self.cpu:
            import torch._dynamo.convert_frame as convert_frame

            self.wrap(convert_frame, "_compile", "dynamo")

    def timed(self, fn: Callable[..., Any], phase: str) -> Callable[..., Any]:
        timers = self

        def timed(*args: Any, **kwargs: Any) -> Any:
            if threading.current_thread() is not threading.main_thread():
                return fn(*args, **kwargs)
            timers.stack.append(0.0)
            start = timers.now()
            try:
                return fn(*args, **kwargs)
            finally:
                elapsed = timers.now() - start
                nested = timers.stack.pop()
                timers.total[phase] += elapsed - nested
                if timers.stack:
                    timers.stack[-1] += elapsed

        return timed

    def wrap(self, owner: Any, attr: str, phase: str) -> Callable[..., Any]:
        original = getattr(owner, attr)
        setattr(owner, attr, self.timed(original, phase))
        return original

    def instrument_tccd(self) -> Callable[..., Any]:
        """Wraps the client's phases; returns the tccd backend, timed as `backend`."""
        import tccd  # noqa: F401  (registers the backend)
        from tccd import aot_cache, compiler, local_cache, native_plan, serialize

        self.wrap(serialize, "build_request", "request")
        self.wrap(local_cache, "request_hash", "request")
        self.wrap(compiler, "_daemon_compile", "compile_rpc")
        self.wrap(compiler, "fetch_artifact", "fetch")
        self.wrap(compiler, "load_plan", "load")
        self.wrap(native_plan, "load", "load")
        self.wrap(aot_cache, "lookup", "recipe")
        return self.timed(sys.modules["tccd.backend"].tccd, "backend")

    def instrument_inductor(self) -> None:
        import torch._inductor.compile_fx as compile_fx

        self.wrap(compile_fx, "compile_fx", "backend")

    def finish(self, first_step_s: float, compiled: bool) -> Dict[str, float]:
        """The phases of a first step that took first_step_s (in this clock); `rest` is what no
        phase took."""
        if compiled and not self.cpu:
            from torch._dynamo.utils import compilation_time_metrics as m

            self.total["dynamo"] = (sum(m.get("_compile.compile_inner", []))
                                    - sum(m.get("OutputGraph.call_user_compiler", [])))
        self.total["rest"] = first_step_s - sum(v for k, v in self.total.items() if k != "rest")
        return {k: round(v, 4) for k, v in self.total.items()}
