"""Where a first step goes: exclusive wall time per phase, for the warm-start benchmarks.

Used by `warm_start_bench.py` (CPU, a small LM) and by `zoo_benchmark.py --warm` (the zoo's
real models, CPU or GPU). Phases (seconds):

  dynamo        Dynamo's trace and guards (convert_frame._compile, exclusive of the phases
                nested in it: the backend call, imports)
  import        module imports the step triggers, wherever they happen (Dynamo's trace, the
                backend, AOTAutograd): a first import is paid once per process, and which
                modules a benchmark imported before the step decides who pays it
  backend       inside the backend but outside what is listed below: for tccd AOTAutograd's
                runtime wrappers, the recipe capture, the backend's own code; for Inductor,
                Inductor's compile (AOTAutograd's phases below are split out for both)
  aot_meta      AOTAutograd's metadata pass (a functionalised run of the forward on fake tensors)
  aot_trace     AOTAutograd's trace of the joint forward+backward (or inference) graph
  partition     the partitioner (min-cut rematerialisation) splitting forward and backward
  recipe        tccd's AOT recipe lookup (key, JSON), outside the plan loads it does
  request       tccd: serialising graphs into CompileRequests and their hashes
  compile_rpc   tccd: the Compile round trips made on the main thread (a background compile's
                are on its own thread: not a phase; what the step waited for it is compile_wait)
  compile_wait  tccd: the first call of a graph compiled in the background (TCCD_ASYNC_COMPILE)
                or prefetched (the backward) waiting for its plan, and the full garbage
                collection it runs meanwhile (TCCD_WAIT_FULL_GC)
  fetch         tccd: GetManifest / FetchArtifact round trips and writing the local cache
  load          tccd: dlopen and binding of plans (runtime.load_plan, native_plan.load)
  aot_load      torch.compiler.load_compiled_function (outside its fetch and load)
  plan_calls    tccd: host time inside the plans' calls (on CUDA: lazy module loads, cuBLASLt
                handles and heuristics, launches; the kernels themselves run asynchronously)
  rest          everything else: autograd, the optimizer step, eager ops outside the graphs,
                the final synchronisation (the kernels' device time)

Every phase is exclusive (a timed call's time minus the timed calls nested in it), so the
phases and `rest` sum to the first step's time. Threads: the main thread's calls always count.
Threads that Python did not start (the autograd engine's device threads: a CUDA backward, and
with it the backward graph's first call and compile wait, runs on one while the main thread
waits in .backward()) count only while the main thread is inside no timed call, when they are
time the main thread spends waiting in untimed code (else the same seconds would count twice:
the sum would pass the wall time and `rest` go negative). Threads Python started (tccd's
background compiles and prefetches, torch's pools) never count: they overlap the step; what
it waited for them is `compile_wait`.

PHASE_CLOCK=cpu times every phase in the main thread's CPU time (time.thread_time) instead of
wall time, and counts the main thread only (another thread's CPU time is not in the main
thread's): on a loaded machine wall time moved 2-3x between identical runs, CPU time +-0.5 s.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any, Callable, Dict, List, Optional

PHASES = ("dynamo", "import", "backend", "aot_meta", "aot_trace", "partition", "recipe", "request", "compile_rpc",
          "compile_wait", "fetch", "load", "aot_load", "plan_calls", "rest")


def import_group(module: str) -> str:
    """Whose module an import loaded: torch's by subpackage (torch._inductor, torch._functorch,
    torch.distributed...), anything else by its top-level package (tccd, grpc, google, ...)."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "torch" and len(parts) > 1 else parts[0]


class Timers:
    """Exclusive time per phase: a wrapped call's time minus that of wrapped calls inside it;
    which threads count: the module doc."""

    def __init__(self, clock: str = "") -> None:
        self.total: Dict[str, float] = {p: 0.0 for p in PHASES}
        self.local = threading.local()  # .stack per thread: per open call, its nested calls' time
        self.wrapped: List[Any] = []  # (owner, attr, original), for restore()
        self.cpu = (clock or os.environ.get("PHASE_CLOCK", "wall")) == "cpu"
        self.now = time.thread_time if self.cpu else time.perf_counter
        self.main = threading.main_thread()
        self.main_open = 0  # timed calls open on the main thread
        # The main thread's CPU seconds in the dynamo phase (exclusive, as the phase; not a
        # phase itself): next to its wall time it says whether the trace ran or waited for a core.
        self.dynamo_cpu = 0.0
        self.cpu_stack: List[float] = []  # per open main-thread call, its nested calls' CPU time
        self.skipped_s = 0.0  # other threads' timed time not counted (main thread inside a phase)
        self.open_phases: List[str] = []  # the main thread's open timed calls, innermost last
        # The import phase by what was imported (import_group: tccd, grpc, google, torch._inductor,
        # torch._functorch, ...), exclusive of nested imports: its values sum to the phase.
        self.imports: Dict[str, float] = {}
        import importlib._bootstrap as bootstrap
        import torch._dynamo.convert_frame as convert_frame

        self.dynamo_wrapped = hasattr(convert_frame, "_compile")
        if self.dynamo_wrapped:
            self.wrap(convert_frame, "_compile", "dynamo")
        # Every import statement's first load goes through _find_and_load, looked up on the
        # module at each call (CPython's import.c), so wrapping it times all of them.
        self.wrap(bootstrap, "_find_and_load", "import")

    def current_phase(self) -> str:
        """The phase the main thread is in now ("rest" outside every timed call)."""
        return self.open_phases[-1] if self.open_phases else "rest"

    def begin(self) -> None:
        """The first step starts: what was timed before (imports while the benchmark set up,
        torch.compile's own setup) is not part of it."""
        self.total = {p: 0.0 for p in PHASES}
        self.skipped_s = 0.0
        self.dynamo_cpu = 0.0
        self.imports = {}

    def timed(self, fn: Callable[..., Any], phase: str) -> Callable[..., Any]:
        timers = self

        def timed(*args: Any, **kwargs: Any) -> Any:
            thread = threading.current_thread()
            on_main = thread is timers.main
            # Threads Python did not start (_DummyThread: the autograd engine's) may be the
            # step's; threads Python started (tccd's, torch's pools) run beside it.
            if not on_main and (timers.cpu or not isinstance(thread, threading._DummyThread)):
                return fn(*args, **kwargs)
            stack = timers.local.__dict__.setdefault("stack", [])
            # Another thread's outermost call counts if the main thread is in no phase then.
            counts = timers.local.__dict__.setdefault("counts", True)
            if not stack and not on_main:
                counts = timers.local.counts = timers.main_open == 0
            stack.append(0.0)
            if on_main:
                timers.main_open += 1
                timers.open_phases.append(phase)
                timers.cpu_stack.append(0.0)
                cpu_start = time.thread_time()
            start = timers.now()
            try:
                return fn(*args, **kwargs)
            finally:
                elapsed = timers.now() - start
                if on_main:
                    timers.main_open -= 1
                    timers.open_phases.pop()
                    cpu = time.thread_time() - cpu_start
                    cpu_nested = timers.cpu_stack.pop()
                    if phase == "dynamo":
                        timers.dynamo_cpu += cpu - cpu_nested
                    if timers.cpu_stack:
                        timers.cpu_stack[-1] += cpu
                nested = stack.pop()
                if counts:
                    timers.total[phase] += elapsed - nested
                    if phase == "import" and args:
                        group = import_group(str(args[0]))
                        timers.imports[group] = timers.imports.get(group, 0.0) + elapsed - nested
                elif not stack:
                    timers.skipped_s += elapsed
                if stack:
                    stack[-1] += elapsed

        return timed

    def wrap(self, owner: Any, attr: str, phase: str) -> Callable[..., Any]:
        original = getattr(owner, attr)
        self.wrapped.append((owner, attr, original))
        setattr(owner, attr, self.timed(original, phase))
        return original

    def restore(self) -> None:
        """Undoes every wrap (after the first step: the plan-call wrapper would otherwise add
        a few microseconds to every later call). The backend returned by instrument_tccd stays
        timed where torch.compile holds it; it only runs when Dynamo compiles."""
        for owner, attr, original in reversed(self.wrapped):
            setattr(owner, attr, original)
        self.wrapped.clear()

    def wrap_factory(self, owner: Any, attr: str, phase: str, optional: bool = False) -> None:
        """Times the function that `owner.attr(...)` returns (AOTAutograd's metadata pass is
        run_functionalized_fw_and_collect_metadata(...)(*args))."""
        original = getattr(owner, attr)
        self.wrapped.append((owner, attr, original))
        timers = self

        def factory(*args: Any, **kwargs: Any) -> Any:
            made = original(*args, **kwargs)
            if made is None and optional:  # the factory declined (lean_call: no lean path)
                return None
            if not optional:
                return timers.timed(made, phase)
            # A callable kept past the first step (lean_call's, held by the runtime): timed only
            # while the wraps are in place, one plain call after restore().
            timed_made = timers.timed(made, phase)
            return lambda *a, **k: timed_made(*a, **k) if timers.wrapped else made(*a, **k)

        setattr(owner, attr, factory)

    def instrument_aot_autograd(self) -> None:
        """AOTAutograd's metadata pass, joint trace and partitioner, where this torch has them
        (module layout of torch 2.11 and 2.15; a missing name is simply not split out)."""
        import importlib

        for module, attr, phase, factory in (
            ("torch._functorch.aot_autograd", "run_functionalized_fw_and_collect_metadata", "aot_meta", True),
            ("torch._functorch._aot_autograd.graph_compile", "aot_dispatch_autograd_graph", "aot_trace", False),
            ("torch._functorch._aot_autograd.graph_compile", "aot_dispatch_base_graph", "aot_trace", False),
            ("torch._functorch.partitioners", "min_cut_rematerialization_partition", "partition", False),
            ("torch._functorch.partitioners", "default_partition", "partition", False),
        ):
            try:
                owner = importlib.import_module(module)
            except ImportError:
                continue
            if hasattr(owner, attr):
                (self.wrap_factory if factory else self.wrap)(owner, attr, phase)

    def instrument_tccd(self, aot_autograd: bool = True) -> Callable[..., Any]:
        """Wraps the client's phases; returns the tccd backend, timed as `backend`.
        aot_autograd=False: AOTAutograd's phases are not wrapped, and its modules not imported
        for it: the ahead-of-time flow's load (instrument_aot_load) never imports or runs
        AOTAutograd, and importing it only to wrap it put ~1 s into the GPU host's AOT first
        steps (session 16's r1: `import` 1.02-1.33 s, 0.03-0.05 before the wrapping moved into
        the timed step; on the CPU 0.18 of the 0.28 s of first imports in ResNet-50's load). Also for a start that
        never runs AOTAutograd at all (Dynamo's package, the zoo's "warm-pre")."""
        import tccd  # noqa: F401  (registers the backend)
        from tccd import aot_cache, compiler, local_cache, native_plan, prefetch, runtime, serialize

        try:
            from tccd import full_gc
        except ImportError:  # an older client
            full_gc = None

        if aot_autograd:
            self.instrument_aot_autograd()
        self.wrap(serialize, "build_request", "request")
        self.wrap(serialize, "encode_request", "request")
        self.wrap(local_cache, "request_hash", "request")
        self.wrap(compiler, "_daemon_compile", "compile_rpc")
        self.wrap(prefetch.Pending, "take", "compile_wait")
        if full_gc is not None and hasattr(full_gc, "collect_while_waiting"):
            # The full collection a first call runs while it waits (TCCD_WAIT_FULL_GC) is wait.
            self.wrap(full_gc, "collect_while_waiting", "compile_wait")
        self.wrap(compiler, "fetch_artifact", "fetch")
        self.wrap(compiler, "load_plan", "load")
        self.wrap(native_plan, "load", "load")
        self.wrap(native_plan.NativePlan, "__call__", "plan_calls")
        if hasattr(native_plan.NativePlan, "lean_call"):
            # TCCD_LEAN_ENTRY: the runtime binds each plan's lean call once, when it is built
            # (inside the first step): time the calls it returns.
            self.wrap_factory(native_plan.NativePlan, "lean_call", "plan_calls", optional=True)
        self.wrap(runtime.LoadedPlan, "__call__", "plan_calls")
        self.wrap(aot_cache, "lookup", "recipe")
        # tccd.backend by module path, imported if need be (a bare `import tccd` does not);
        # in the zoo's cells it is imported before the timed step, so this costs them nothing.
        import importlib

        return self.timed(importlib.import_module("tccd.backend").tccd, "backend")

    def lazy_tccd(self) -> Callable[..., Any]:
        """The tccd backend for torch.compile, instrumented at its first call: inside the first
        step, as instrument_inductor is, so the imports the wrapping does (tccd's client
        modules, AOTAutograd's) are timed where a user's process pays them. Session 15 found
        instrument_tccd called at torch.compile() time: 0.9-1.9 s per GPU cell outside tccd's
        first step (the zoo's `compile_call_s`) that Inductor's cells paid inside theirs."""
        backend: Optional[Callable[..., Any]] = None

        def tccd_backend(*args: Any, **kwargs: Any) -> Any:
            nonlocal backend
            if backend is None:
                backend = self.instrument_tccd()
            return backend(*args, **kwargs)

        return tccd_backend

    def instrument_aot_load(self) -> None:
        """torch's load_compiled_function (the ahead-of-time flow's warm start), outside the
        tccd phases nested in it."""
        import torch

        self.wrap(torch.compiler, "load_compiled_function", "aot_load")

    def instrument_inductor(self) -> None:
        import torch._inductor.compile_fx as compile_fx

        self.instrument_aot_autograd()
        # compile_fx bound the partitioner at its import, before the wrap above.
        if hasattr(compile_fx, "min_cut_rematerialization_partition"):
            self.wrap(compile_fx, "min_cut_rematerialization_partition", "partition")
        self.wrap(compile_fx, "compile_fx", "backend")

    def finish(self, first_step_s: float, compiled: bool) -> Dict[str, float]:
        """The phases of a first step that took first_step_s (in this clock) since begin();
        `rest` is what no phase took."""
        if compiled and not self.dynamo_wrapped:  # a torch without convert_frame._compile
            from torch._dynamo.utils import compilation_time_metrics as m

            self.total["dynamo"] = (sum(m.get("_compile.compile_inner", []))
                                    - sum(m.get("OutputGraph.call_user_compiler", [])))
        self.total["rest"] = first_step_s - sum(v for k, v in self.total.items() if k != "rest")
        return {k: round(v, 4) for k, v in self.total.items()}
