"""The torch.compile backend: torch.compile(model, backend="tccd").

Dynamo hands `tccd` a Torch-level graph; AOTAutograd (torch._dynamo.backends.common.aot_autograd)
turns it into ATen-level forward and backward graphs (or one inference graph) and hands each to
`_GraphCompiler`, which serialises it, gets it compiled (compiler.compile_request) and returns a
boxed callable running the daemon's Plan.

Warm start: before AOTAutograd runs, the AOT recipe cache (aot_cache.py) is asked for the Dynamo
graph. On a hit the plans of its forward and backward graphs come from the local cache and the
runtime AOTAutograd would have built around them is rebuilt from the stored recipe, so the graph
is never traced (its GraphRecords say aot_skipped). On a miss the normal path runs and
`_GraphCompiler` hands every compiled graph to the recipe capture, which stores the recipe once
the backward (or the inference graph) is compiled; from the next call on (TCCD_LEAN_RUNTIME) the
graph runs in the recipe's runtime in this process too. Graphs outside the recipe's simple class
(aliased outputs, mutations of inputs that require grad, subclasses, dynamic shapes, ...) always
take the normal path.

Fallback policy, in one place: if anything goes wrong for a graph (no daemon, no binary, the
daemon rejects the graph, the graph cannot be expressed in tccd.v1), the graph runs eagerly and
exactly one TccdFallbackWarning names the graph and the reason; with TCCD_STRICT=1 a TccdError
is raised instead. Either way last_compile_stats() records it. (A TccdError raised while Dynamo
compiles the forward graph reaches the caller wrapped in torch._dynamo.exc.BackendCompilerFailed,
with the TccdError as its `inner_exception`; the backward graph compiles at the
first .backward(), outside Dynamo, where the TccdError surfaces as is.)

Backward prefetch (TCCD_PREFETCH_BACKWARD, prefetch.py): the partition_fn given to AOTAutograd
hands the backward graph to `_GraphCompiler`, which sends its Compile request in the background
when the forward's compile begins, so the two compile at once and the backward's overlaps the
first forward run; the backward compiler takes the result if its own request hashes the same.

Background compile (TCCD_ASYNC_COMPILE, default on): a forward or inference graph's Compile
request is sent from a background thread (prefetch.py) and the backend returns at once a boxed
callable that takes the plan at its first call; the daemon compiles while Dynamo and AOTAutograd
finish the frame. A compile that fails or passes its deadline takes the fallback policy above at
that first call, recorded and warned about once; the callable never waits longer than the
Compile deadline plus a margin.

Partitioner (TCCD_PARTITIONER): by default Inductor's min_cut_rematerialization_partition, which
recomputes cheap forward ops (pointwise, views) in the backward instead of saving their outputs.
The daemon fuses that recomputation into backward kernels as Inductor does, so the trade is the
same: less activation memory and fewer forward kernels for a little backward arithmetic. On the
model zoo default_partition (save exactly what eager autograd saves) used 12-45% more peak memory
than Inductor on the transformers; it stays available as TCCD_PARTITIONER=default. Before the min
cut the joint graph's detaches are dropped (decompositions.drop_detaches): read through a detach a
forward value counts as materialized in the backward and is saved (GPT-2's f32 GELU tanh).

Decompositions: one, log_softmax -> x - logsumexp(x), so that the partitioner can save one value
per row instead of the f32 log-probabilities (decompositions.py; TCCD_LOG_SOFTMAX_LSE=0 turns it
off). Otherwise the daemon receives the ATen ops the user's program used and decides itself what
to lower and what to run as ExternCalls.

Modes: `mode` enters the compile key and otherwise changes nothing in the daemon's output. With
mode="reduce-overhead" (or "max-autotune", which includes CUDA graphs for Inductor too) the
forward, backward and inference callables of a graph on a CUDA device run under torch's CUDA
graph trees (cudagraphs.py). A graph that cannot (CPU tensors, an op that cannot be captured,
a mutated input that is not a parameter or buffer, a graph tccd could not compile) runs without
CUDA graphs, with one logged warning naming the reason; last_compile_stats() records both
(`cudagraphs`, `cudagraph_skip`). Such graphs capture their AOT recipe for this process only and
switch to its runtime around the wrapped callables as default-mode graphs do
(TCCD_LEAN_CUDAGRAPHS); they never take a warm recipe hit (setting up the graphs needs the
traced graphs).
"""

from __future__ import annotations

import functools
import hashlib
import logging
import threading
import warnings
import weakref
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

from . import config as config_mod
from . import cudagraphs, full_gc
from .errors import CompileFailed, DaemonUnavailable, TccdError, TccdFallbackWarning, Unsupported
from .stats import GraphRecord, record

log = logging.getLogger(__name__)


def _compile_id() -> str:
    try:
        from torch._guards import CompileContext

        compile_id = CompileContext.current_compile_id()
    except Exception:  # deliberately ignored: the id only names graphs in messages
        compile_id = None
    return str(compile_id) if compile_id is not None else "graph"


def _reason(e: BaseException) -> str:
    if isinstance(e, CompileFailed):
        return f"the daemon rejected it: {e}"
    if isinstance(e, (Unsupported, DaemonUnavailable, TccdError)):
        return str(e)
    return f"{type(e).__name__}: {e}"


def _eager(gm: torch.fx.GraphModule) -> Any:
    from torch._functorch.aot_autograd import make_boxed_func

    return make_boxed_func(gm.forward)


def _boxed(plan: Any) -> Any:
    """A plain function with AOTAutograd's boxed convention around a LoadedPlan.

    A function, not the plan object: AOTAutograd wraps the backward callable in
    torch._dynamo.disable, whose functools.wraps copies a function's __dict__ (where
    `_boxed_call` lives) but not a class attribute of a callable object.
    """

    def run(args: List[Any]) -> List[Any]:
        return plan(args)

    run._boxed_call = True  # type: ignore[attr-defined]
    run.plan = plan  # type: ignore[attr-defined]
    return run


def _with_constants(plan: Any, constants: List[Any]) -> Any:
    """A boxed callable that appends the graph's constant inputs to every call's inputs."""

    def run(args: List[Any]) -> List[Any]:
        args.extend(constants)
        return plan(args)

    run._boxed_call = True  # type: ignore[attr-defined]
    run.plan = getattr(plan, "plan", plan)  # type: ignore[attr-defined]
    return run


def _has_symbolic_sizes(example_inputs: List[Any]) -> bool:
    for x in example_inputs:
        if isinstance(x, torch.SymInt):
            return True
        if isinstance(x, torch.Tensor) and any(isinstance(d, torch.SymInt) for d in x.shape):
            return True
    return False


def _without_scalar_inputs(plan: Any, scalar_inputs: List[Tuple[int, Optional[str]]]) -> Any:
    """A boxed callable that takes the graph's integer inputs out of every call's inputs and
    passes the values of those that are symbols (sN) to the plan."""
    positions = {position: symbol for position, symbol in scalar_inputs}
    target = getattr(plan, "plan", plan)
    # The integer inputs mostly lead (Dynamo's size arguments, a backward's saved SymInts): the
    # tensors are the list after them, sliced off without a loop, less the few integer inputs
    # further on (a backward's non-symbol ints: deleted by position, last first). A loop over
    # every input cost a few us per backward call of the dynamic bench.
    lead = 0
    while lead in positions:
        lead += 1
    later = sorted((p - lead for p in positions if p > lead), reverse=True)
    named = [(i, symbol) for i, symbol in sorted(positions.items()) if symbol is not None]
    # TCCD_LEAN_SYMBOLIC_ENTRY: a native plan's own call that does this and its call in one
    # function (NativePlan.lean_symbolic_call), where it has one.
    lean = getattr(target, "lean_symbolic_call", None) if config_mod.get().lean_symbolic_entry else None
    call = lean(target.num_inputs + len(positions), lead, later, named) if lean is not None else None
    if call is not None:
        call._boxed_call = True  # type: ignore[attr-defined]
        call.plan = target  # type: ignore[attr-defined]
        return call

    def run(args: List[Any]) -> List[Any]:
        symbols = {symbol: int(args[i]) for i, symbol in named}
        tensors = args[lead:]
        for j in later:
            del tensors[j]
        args.clear()
        return target(tensors, symbols) if symbols else target(tensors)

    run._boxed_call = True  # type: ignore[attr-defined]
    run.plan = target  # type: ignore[attr-defined]
    return run


class _GraphCompiler:
    """fw_compiler/bw_compiler/inference_compiler for the graphs of one Dynamo graph."""

    def __init__(
        self,
        graph_id: str,
        mode: Optional[str],
        options: Optional[Dict[str, Any]],
        capture: Optional[Any] = None,
        cuda_graphs: Optional["cudagraphs.Session"] = None,
    ):
        self.graph_id = graph_id
        self.mode = mode
        self.options = options
        self.capture = capture  # aot_recipe.RecipeCapture, or None: no recipe for this graph
        self.cuda_graphs = cuda_graphs  # None: the mode asks for no CUDA graphs
        self.daemon_keys: Dict[str, str] = {}  # kind -> the daemon's key of its plan (precompile)
        self.plans: Dict[str, Any] = {}  # kind -> its loaded plan, for the lean runtime
        # kind -> the boxed callable given to AOTAutograd, when it is not the plan's own: under
        # CUDA graphs the plan wrapped in the trees, which the lean runtime must run instead.
        self.calls: Dict[str, Any] = {}
        # The backward graph AOTAutograd's partitioner made (set by _remembering_backward), until
        # the forward's compile starts its compile (prefetch.py); then the compile in flight.
        self.backward_graph: Optional[torch.fx.GraphModule] = None
        self.pending_backward: Optional[Any] = None  # prefetch.Pending
        # Guards backward_graph and saved_strides: with saved layouts the forward's compile
        # thread starts the backward prefetch (_forward_manifest_ready), else the main thread.
        self.backward_lock = threading.Lock()
        # A forward whose saved tensors may take the daemon's layout (saved_layouts.py): which
        # outputs are free, (start, stop, saved SymInts) of the saved tensors, and once its plan
        # is there the strides the plan gave them (the backward is compiled for those).
        self.free_outputs: List[int] = []
        # User outputs the daemon may lay out too (padded_outputs.py, TCCD_PADDED_OUTPUTS).
        self.padded_outputs: List[int] = []
        self.saved: Optional[Tuple[int, int, int]] = None
        self.saved_strides: Optional[List[Any]] = None
        # Whether saved_strides came from the forward's plan-only lowering and are not yet
        # checked against its compiled plan (_check_early_strides). Guarded like saved_strides.
        self.strides_from_plan_only = False
        # Set by tccd() before AOTAutograd runs: inside it, precompile.without_aot_autograd_cache
        # hides aot_compile's flags from precompile.precompiling().
        self.precompiling = False
        # The graph's id in Dynamo's package (torch's caching_precompile; caching_precompile.py):
        # its artifact is recorded once its recipe is stored. None: torch asks for none.
        self.package_id: Optional[str] = None
        # False while a forward compiled in the background has not taken its plan (its calls
        # may run eagerly meanwhile): the backward then runs eagerly too, so that the pair's
        # plans are recorded, captured in the AOT recipe and switched to the lean runtime in
        # order, forward first (TCCD_EAGER_WHILE_COMPILING). Set and read on the caller's
        # threads, under the deferred callables' locks' ordering (a forward call precedes its
        # backward).
        self.forward_settled = True

    def __call__(self, kind: str, gm: torch.fx.GraphModule, example_inputs: List[Any]) -> Any:
        config = config_mod.get()
        name = f"{self.graph_id} {kind}"
        entry = GraphRecord(name=name, kind=kind)
        if config.fold_scalar_fills:
            # T5's shifted labels: no lifted constant left, so the graph gets an AOT recipe (the
            # lean runtime) and its fill fuses (scalar_constants.py).
            from . import scalar_constants

            scalar_constants.fold_scalar_fills(gm)
        if kind in ("forward", "inference"):
            self.padded_outputs = []
            if config.padded_outputs:
                from . import padded_outputs

                self.padded_outputs = padded_outputs.free_user_outputs(gm)
        if kind == "forward":
            self._choose_saved_layouts(config, gm)
            if not self.free_outputs and not self._forward_request_first(config, kind):
                self._prefetch_backward(config)
            # else: prefetched once the forward's request is sent (_start_deferred), or once the
            # forward's plan says the saved tensors' strides
        if self._may_defer(kind, config):
            deferred = self._start_deferred(config, name, gm, example_inputs, entry)
            if deferred is not None:
                return deferred
        if kind == "backward" and self._eager_while_compiling(config, kind) is None:
            deferred = self._defer_backward(config, name, gm, example_inputs, entry)
            if deferred is not None:
                return deferred
        try:
            compiled, plan_key = self._compile(config, name, gm, example_inputs, entry)
        except Exception as e:
            return self._failed(config, kind, name, gm, example_inputs, entry, e)
        return self._compiled(kind, name, gm, example_inputs, entry, compiled, plan_key)

    def _failed(self, config, kind, name, gm, example_inputs, entry, e: Exception) -> Any:
        """The fallback policy for a graph whose compile failed: eager, one warning, recorded."""
        entry.fallback = _reason(e)
        record(entry)
        if self.capture:
            self.capture.abandon(f"the {kind} graph runs eagerly")
        if config.strict:
            raise TccdError(f"tccd could not compile graph {name}: {entry.fallback}") from e
        log.debug("tccd: %s runs eagerly", name, exc_info=True)
        warnings.warn(
            f"tccd: graph {name} runs eagerly: {entry.fallback}",
            TccdFallbackWarning,
            stacklevel=3,
        )
        return self._with_cuda_graphs(kind, name, gm, example_inputs, _eager(gm), entry)

    def _compiled(self, kind, name, gm, example_inputs, entry, compiled, plan_key, captured=False) -> Any:
        """A compiled graph: recorded, handed to the AOT recipe capture, boxed. `captured`: the
        capture already read the forward (at compile time, for a background compile)."""
        record(entry)
        self.daemon_keys[kind] = entry.key
        self.plans[kind] = compiled
        if self.capture:
            if kind == "backward":
                self.capture.backward(gm, plan_key)
            elif captured:
                if kind == "inference":
                    self.capture.store_inference()
            else:
                self.capture.forward(gm, plan_key, inference=kind == "inference")
            persisted = self.capture.store is not None  # not an in-process capture (CUDA graphs)
            if self.capture.stored is not None and persisted and kind in ("backward", "inference"):
                # Just captured: shared through the daemon for processes without this cache.
                from . import aot_cache

                kinds = ["inference"] if kind == "inference" else ["forward", "backward"]
                plan_keys = [self.daemon_keys.get(k, "") for k in kinds]
                aot_cache.share(self.capture.stored, plan_keys)
                if self.package_id is not None and all(plan_keys):
                    from . import caching_precompile

                    caching_precompile.record(self.package_id, self.capture.stored, plan_keys)
        compiled = _boxed(compiled)
        log.info(
            "tccd: %s: key %s (%s), %d native kernels, %d extern steps, %d Python steps per call",
            name,
            entry.key[:16],
            "local" if entry.local_hit else ("daemon cache" if entry.cache_hit else "compiled"),
            entry.native_kernels,
            entry.extern_steps,
            entry.python_steps,
        )
        if self.cuda_graphs is None:
            return compiled
        compiled = self._with_cuda_graphs(kind, name, gm, example_inputs, compiled, entry)
        self.calls[kind] = compiled
        return compiled

    def _may_defer(self, kind: str, config) -> bool:
        """TCCD_ASYNC_COMPILE: forward and inference graphs (a backward compiles at .backward(),
        or is prefetched), not under CUDA graphs (their wrapper needs the compiled callable) nor
        for aot_compile (which saves the compiled callables right after the backend returns)."""
        return (
            config.async_compile
            and kind in ("forward", "inference")
            and self.cuda_graphs is None
            and not self.precompiling
        )

    def _forward_request_first(self, config, kind: str) -> bool:
        """TCCD_FORWARD_REQUEST_FIRST: a forward compiled in the background sends its request
        before the backward's is built (_start_deferred). Off, or compiled synchronously (the
        backend then blocks in the forward's compile): the backward's request goes first, so
        that the two still compile at once."""
        return config.forward_request_first and kind == "forward" and self._may_defer(kind, config)

    def _start_deferred(self, config, name, gm, example_inputs, entry) -> Optional[Callable[[List[Any]], Any]]:
        """Starts the compile in the background (prefetch.py) and returns a boxed callable that
        takes its result at the first call, then runs it; or None, for the synchronous path,
        when the request cannot even be built (that path reports why by the usual rules).

        The first call waits at most the Compile deadline plus a margin (Pending.take); a failed
        compile takes the fallback policy there (eager with one warning, or TccdError under
        TCCD_STRICT), as it would have at compile time."""
        from . import prefetch

        keyed = self._keyed_request(config, name, gm, example_inputs, entry.kind, "not compiled in the background")
        kind = entry.kind
        backward_next = not self.free_outputs and self._forward_request_first(config, kind)
        if keyed is None:
            if backward_next:
                self._prefetch_backward(config)  # beside the forward's synchronous compile
            return None
        request, scalar_inputs, key = keyed
        on_manifest = None
        if kind == "forward" and self.saved is not None:
            # The backward waits for the strides this forward's plan gives its saved tensors:
            # they are in the manifest, so its compile starts as soon as that is there, from
            # this compile's thread, not after the fetch, the load and the first call; sooner
            # still from the plan alone (TCCD_EARLY_SAVED_LAYOUT).
            on_manifest = functools.partial(self._forward_manifest_ready, config)
            if config.early_saved_layout:
                self._start_plan_only(config, request, key)
        pending = prefetch.start(request, key, config, kind=kind, on_manifest=on_manifest)
        # TCCD_WAIT_FULL_GC (off by default): the full collection deferred over this backend
        # call waits for the graph's first call, which runs it while it waits for this compile
        # (full_gc.py), instead of right after the backend returns.
        release_gc = full_gc.hold(config.defer_full_gc and config.wait_full_gc)
        if backward_next:
            # Built while the daemon compiles the forward, which the first call waits for: the
            # backward's request (T5: ~0.1-0.2 s of serialising and hashing) is off that wait.
            self._prefetch_backward(config)
        plan_key = key if config.local_cache else None  # as the synchronous path's
        if self.capture:
            # AOTAutograd's metadata is only readable while its compiler runs: the recipe is
            # captured now; an inference recipe is stored once the plan is there.
            self.capture.forward(gm, plan_key, inference=kind == "inference", store=False)
        return self._deferred(config, name, gm, example_inputs, entry, pending, key, request, scalar_inputs,
                              plan_key, captured=True, release_gc=release_gc)

    def _deferred(self, config, name, gm, example_inputs, entry, pending, key, request, scalar_inputs,
                  plan_key, captured: bool, release_gc: Callable[[], None] = lambda: None) -> Callable[[List[Any]], Any]:
        """A boxed callable that takes `pending`'s plan at its first call, then runs it.

        TCCD_EAGER_WHILE_COMPILING: until the compile is done, calls run the ATen graph eagerly
        instead of waiting (counted in the record's eager_calls), except for a forward whose
        saved tensors take its plan's layout: its backward is compiled for that layout only
        once the plan is there (_forward_plan_ready)."""
        kind = entry.kind
        lock = threading.Lock()
        resolved: List[Callable[[List[Any]], Any]] = []
        why_not = self._eager_while_compiling(config, kind)
        if why_not is not None and config.eager_while_compiling:
            log.debug("tccd: %s waits for its compile at its first call: %s", name, why_not)
        eager = _eager(gm) if why_not is None else None
        eager_calls = [0]
        if kind == "forward" and eager is not None:
            self.forward_settled = False

        def ready() -> bool:
            # A backward also waits for its forward's plan (see forward_settled).
            return pending.future.done() and (kind != "backward" or self.forward_settled)

        def resolve() -> Callable[[List[Any]], Any]:
            entry.eager_calls = eager_calls[0]  # final: no eager call once resolving
            # The main thread is idle until the plan is there: the full collection due after
            # the compile runs now, then the thresholds held since the backend call return.
            full_gc.collect_while_waiting(pending.future.done, config.wait_full_gc)
            release_gc()
            if not pending.future.done():
                # Idle until the plan is there: its convolutions' cuDNN set-up, on this thread
                # (the one that makes the plan's first call), instead of in that call.
                from . import conv_warmup

                conv_warmup.warm_while_waiting(gm, pending.future, name, config.wait_conv_warmup)
            try:
                try:
                    plan = pending.take(key, entry, config)
                    if kind == "forward":
                        self._forward_plan_ready(config, plan)
                    compiled, _ = self._wrap_plan(plan, request, scalar_inputs, gm, plan_key)
                except Exception as e:
                    return self._failed(config, kind, name, gm, example_inputs, entry, e)
                return self._compiled(kind, name, gm, example_inputs, entry, compiled, plan_key, captured=captured)
            finally:
                if kind == "forward":
                    self.forward_settled = True

        def run(args: List[Any]) -> Any:
            if not resolved:
                if eager is not None and not ready():
                    release_gc()  # no idle wait to collect in: CPython's thresholds decide
                    with lock:
                        eager_calls[0] += 1
                    if eager_calls[0] == 1:
                        log.info("tccd: %s runs eagerly until its compile is done", name)
                    return eager(args)
                with lock:  # one thread resolves; a strict-mode error leaves it unresolved
                    if not resolved:
                        resolved.append(resolve())
            return resolved[0](args)

        run._boxed_call = True  # type: ignore[attr-defined]
        weakref.finalize(run, release_gc)  # a graph never called does not hold the thresholds
        return run

    def _defer_backward(self, config, name, gm, example_inputs, entry) -> Optional[Callable[[List[Any]], Any]]:
        """TCCD_EAGER_WHILE_COMPILING for a backward whose prefetched compile (of this very
        request) is still running, or whose forward still runs eagerly: a callable that runs it
        eagerly until both plans are there. None: take the synchronous path (no prefetch,
        another request, or plans ready)."""
        pending = self.pending_backward
        if pending is None or (pending.future.done() and self.forward_settled):
            return None
        keyed = self._keyed_request(config, name, gm, example_inputs, entry.kind, "not deferred")
        if keyed is None:
            return None
        request, scalar_inputs, key = keyed
        if key != pending.key:
            return None  # the synchronous path logs the changed graph and compiles it
        self.pending_backward = None
        plan_key = key if config.local_cache else None
        return self._deferred(config, name, gm, example_inputs, entry, pending, key, request, scalar_inputs,
                              plan_key, captured=False)

    def _eager_while_compiling(self, config, kind: str) -> Optional[str]:
        """None when calls of this graph may run eagerly until its background compile is done
        (TCCD_EAGER_WHILE_COMPILING), else why not. Decided per graph: eager calls must leave
        the forward/backward pair consistent, and a plan's result must not depend on whether
        the daemon was fast enough."""
        if not config.eager_while_compiling:
            return "TCCD_EAGER_WHILE_COMPILING=0"
        if self.cuda_graphs is not None or self.precompiling:
            return "CUDA graphs or aot_compile (they need the plan itself)"
        if self.saved is not None:
            # The backward is compiled for the strides the forward's plan gives its saved
            # tensors: an eager forward would hand it others, an eager backward read them.
            return "saved activations in the plan's layout (TCCD_SAVED_LAYOUT)"
        if kind == "forward" and self.pending_backward is None:
            # A backward not prefetched compiles at .backward(), before the forward took its
            # plan: its plan would be recorded (and its AOT recipe shared) without the forward's.
            return "its backward is not prefetched (TCCD_PREFETCH_BACKWARD=0, symbolic sizes)"
        if config.strict:
            # TCCD_STRICT promises that no call runs eagerly unnoticed and that a failed
            # compile raises at the graph's first call.
            return "TCCD_STRICT"
        if torch.are_deterministic_algorithms_enabled():
            # Which calls run eagerly depends on the compile's speed: not reproducible.
            return "torch.use_deterministic_algorithms(True)"
        return None

    def _keyed_request(self, config, name, gm, example_inputs, kind, what: str):
        """(request, integer inputs, request hash) for a path that may start before the
        synchronous compile, or None when the request cannot even be built: then that path is
        not taken (`what`, logged at debug level) and the synchronous path reports the error by
        the usual fallback rules."""
        from .local_cache import daemon_identity, request_hash

        try:
            request, scalar_inputs = self._request(config, name, gm, example_inputs, kind)
            return request, scalar_inputs, request_hash(request, daemon_identity(config))
        except Exception:  # deliberately ignored: the synchronous path reports it
            log.debug("tccd: %s: %s", name, what, exc_info=True)
            return None

    def _with_cuda_graphs(self, kind, name, gm, example_inputs, compiled, entry):
        """The hook of mode="reduce-overhead": everything else is in cudagraphs.py."""
        if self.cuda_graphs is None:
            return compiled
        if _has_symbolic_sizes(example_inputs):
            # A CUDA graph records one size; tccd's cudagraphs wrapper records none per size yet.
            entry.cudagraph_skip = "symbolic sizes (dynamic shapes)"
            log.warning("tccd: %s runs without CUDA graphs: %s", name, entry.cudagraph_skip)
            return compiled
        compiled, entry.cudagraph_skip = self.cuda_graphs.wrap(
            kind, name, gm, example_inputs, compiled, entry.fallback
        )
        entry.cudagraphs = entry.cudagraph_skip is None
        return compiled

    def _request(self, config, name, gm, example_inputs, kind):
        """(request, integer inputs): integer graph inputs (dynamic sizes) are no plan inputs.

        A forward names its saved tensors whose layout the daemon may choose; a backward takes
        the strides the forward's plan gave them (saved_layouts.py)."""
        from . import released_inputs, saved_layouts
        from .serialize import encode_request

        options = self.options
        free = set(self.padded_outputs) if kind in ("forward", "inference") else set()
        free = sorted(free | set(self.free_outputs)) if kind == "forward" else sorted(free)
        if free:
            options = dict(options or {})
            options[saved_layouts.OPTION] = saved_layouts.option_value(free)
        # The backward's saved activations are the plan's to free (released_inputs.py).
        released = released_inputs.released(gm) if kind == "backward" and config.released_inputs else []
        if released:
            options = dict(options or {})
            options[released_inputs.OPTION] = saved_layouts.option_value(released)
        request, scalar_inputs = encode_request(
            gm,
            example_inputs,
            graph_name=name,
            mode=self.mode,
            options=options,
            job_id=config.job_id(),
            rank=config.rank,
        )
        if kind == "backward" and self.saved is not None and self.saved_strides is not None:
            changed = saved_layouts.restride_inputs(request.graph, self.saved_strides, self.saved[2])
            log.debug("tccd: %s: %d saved inputs take the forward plan's layout", name, changed)
        return request, scalar_inputs

    def _choose_saved_layouts(self, config, gm) -> None:
        """For a forward: which saved tensors the daemon may lay out (CUDA graphs with a
        convolution, TCCD_SAVED_LAYOUT; none the backward reads through a view)."""
        from . import saved_layouts

        self.free_outputs, self.saved, self.saved_strides = [], None, None
        self.strides_from_plan_only = False
        if not config.saved_layout:
            return
        saved = saved_layouts.saved_slice(gm, self.backward_graph)
        if saved is None:
            return
        self.free_outputs = saved_layouts.free_outputs(self.backward_graph, *saved)
        if self.free_outputs:
            self.saved = saved

    def _forward_plan_ready(self, config, plan) -> None:
        """The forward's plan is there: its saved tensors' strides, and the backward prefetch
        that waited for them (unless the manifest started it already)."""
        if self.saved is None:
            return
        strides = getattr(plan, "output_strides", None)
        start, stop, _ = self.saved
        real = list(strides[start:stop]) if strides is not None else None
        with self.backward_lock:
            if self.backward_graph is None:
                # Prefetched from the manifest (_forward_manifest_ready), or none to do.
                self._check_early_strides(real)
                return
            self.saved_strides = real
        self._prefetch_backward(config)

    def _forward_manifest_ready(self, config, manifest, plan_only: bool = False) -> None:
        """On the forward's compile thread, as soon as its manifest is known: the saved
        tensors' strides are in its plan (the same the loaded plan reports), so the backward's
        compile starts now rather than at the forward's first call. `plan_only`: the manifest of
        the forward's plan-only request (_start_plan_only), which comes first."""
        from . import saved_layouts

        if self.saved is None:
            return
        start, stop, _ = self.saved
        strides = list(saved_layouts.output_strides(manifest.plan)[start:stop])
        with self.backward_lock:
            if self.backward_graph is None:
                if not plan_only:
                    self._check_early_strides(strides)
                return
            self.saved_strides = strides
            self.strides_from_plan_only = plan_only
        self._prefetch_backward(config)

    def _check_early_strides(self, real: Optional[List[Any]]) -> None:
        """Under backward_lock, with the forward's compiled plan's saved strides: a backward
        prefetched for the plan-only strides keeps them only if they are these. Otherwise the
        backward's request, built again at .backward() with these, no longer hashes as the
        prefetched one, and the backward compiles for them then (prefetch.Pending.take): never a
        plan for other strides than the forward's (a kernel the compile refused and lowered
        again could move a layout)."""
        if not self.strides_from_plan_only:
            return
        self.strides_from_plan_only = False
        if real is not None and real != self.saved_strides:
            log.info("tccd: %s forward: its compiled plan lays out the saved tensors unlike its "
                     "plan-only lowering: the backward compiles again at .backward()", self.graph_id)
            self.saved_strides = real

    def _start_plan_only(self, config, request, key: str) -> None:
        """TCCD_EARLY_SAVED_LAYOUT: asks the daemon for the forward's plan without machine code
        (CompileOptions.extra["tccd_plan_only"], in the key: tens of milliseconds of lowering
        where the kernels take seconds), on a thread of its own, and starts the backward's
        compile from its saved tensors' strides, beside the forward's compile instead of after
        it (ConvNeXt: 2.4 s of backward compile started 1.35 s into the forward's in session
        14's final run). A failed plan-only request changes nothing: the forward's manifest then
        starts the backward as before; a forward whose manifest the local cache has (`key`)
        asks nothing: that manifest comes at once."""
        from .compiler import _daemon_compile
        from .local_cache import LocalCache
        from .serialize import pb

        plan_only = pb.CompileRequest()
        plan_only.CopyFrom(request)  # before the forward's thread sets its progress id
        plan_only.options.extra["tccd_plan_only"] = "1"
        plan_only.graph_name = f"{request.graph_name} plan"

        def run() -> None:
            try:
                if config.local_cache and LocalCache(config.cache_dir).get_manifest(key) is not None:
                    return
                manifest = _daemon_compile(plan_only, config).manifest
            except Exception as e:  # the forward's own manifest starts the backward then
                log.debug("tccd: %s: plan-only request failed: %s", plan_only.graph_name, e)
                return
            self._forward_manifest_ready(config, manifest, plan_only=True)

        threading.Thread(target=run, name=f"tccd-plan {request.graph_name}", daemon=True).start()

    def _prefetch_backward(self, config) -> None:
        """Starts the backward graph's compile now, in the background (prefetch.py).

        Never fails the forward: a backward graph that cannot even be serialised is left to the
        backward's own compile, which reports it by the usual rules.
        """
        from . import prefetch

        with self.backward_lock:  # the forward's compile thread may get here too (saved layouts)
            gm, self.backward_graph = self.backward_graph, None
        if gm is None or not config.prefetch_backward:
            return
        # The placeholders' fake values are what AOTAutograd passes the backward compiler
        # (fx_placeholder_vals) when, as with tccd, the forward reports no output strides.
        example_inputs = [n.meta.get("val") for n in gm.graph.find_nodes(op="placeholder")]
        keyed = self._keyed_request(config, f"{self.graph_id} backward", gm, example_inputs, "backward",
                                    "not prefetched")
        if keyed is None or keyed[1]:
            return  # the backward compiles at .backward() (a symbolic one: where its sizes are bound)
        request, _, key = keyed
        # No one waits for it yet: the daemon compiles it below the forward's priority (outside
        # the request hash, so the backward's own request still matches it).
        request.background = config.background_prefetch
        self.pending_backward = prefetch.start(request, key, config)

    def _compile(self, config, name, gm, example_inputs, entry):
        """(LoadedPlan, request hash or None); the hash names the plan in an AOT recipe."""
        from .compiler import compile_request
        from .local_cache import daemon_identity, request_hash

        request, scalar_inputs = self._request(config, name, gm, example_inputs, entry.kind)
        pending = self.pending_backward if entry.kind == "backward" else None
        self.pending_backward = None if pending else self.pending_backward
        # The hash also tells whether a prefetched backward compiled exactly this request.
        keyed = config.local_cache or pending is not None
        key = request_hash(request, daemon_identity(config)) if keyed else None
        if pending is not None and key == pending.key and not pending.future.done():
            # The autograd thread is idle until the plan is there: the backward's convolution
            # set-ups in cuDNN, on this thread (whose cache the plan's calls read), meanwhile.
            from . import conv_warmup, prefetch

            with prefetch.counted_as_backward_waiting():
                full_gc.collect_while_waiting(pending.future.done, config.wait_full_gc)
                conv_warmup.warm_while_waiting(gm, pending.future, name, config.wait_conv_warmup)
        plan = pending.take(key, entry, config) if pending else None
        if plan is None:
            plan = compile_request(request, config, entry, key=key)
        if entry.kind == "forward":
            self._forward_plan_ready(config, plan)
        return self._wrap_plan(plan, request, scalar_inputs, gm, key)

    def _wrap_plan(self, plan, request, scalar_inputs, gm, key):
        """(callable, key): the plan without the graph's integer inputs and with its constants."""
        if scalar_inputs:
            # Integer inputs (dynamic sizes) are no plan inputs: dropped, their symbols bound.
            # Only a symbolic graph's in-process recipe (TCCD_LEAN_SYMBOLIC) runs with them.
            if self.capture and not self.capture.symbolic:
                self.capture.abandon("the graph has integer (symbolic size) inputs")
            plan = _without_scalar_inputs(plan, scalar_inputs)
        if len(request.graph.constants):
            # The plan's last inputs are the graph's constants: the caller passes the others.
            from .serialize import constant_tensors

            if self.capture:  # an AOT recipe rebuilds a runtime from plan keys only
                self.capture.abandon("the graph has lifted constants")
            return _with_constants(plan, constant_tensors(gm)), key
        return plan, key


def _remembering_backward(partition_fn: Callable[..., Any], compiler: _GraphCompiler) -> Callable[..., Any]:
    """partition_fn, handing the backward graph it returns to `compiler` (for the prefetch)."""

    @functools.wraps(partition_fn)
    def partition(*args: Any, **kwargs: Any) -> Any:
        fw_module, bw_module = partition_fn(*args, **kwargs)
        if config_mod.get().fold_scalar_fills:
            # As _GraphCompiler.__call__ does, before the backward's prefetch sends it: the
            # prefetched plan's key must be the one the backward's own call asks for.
            from . import scalar_constants

            scalar_constants.fold_scalar_fills(bw_module)
        if compiler.cuda_graphs is not None and config_mod.get().pack_saved:
            # TCCD_PACK_SAVED: fewer saved tensors for the trees and autograd per replayed step.
            from .saved_packing import pack_small_saved

            pack_small_saved(fw_module, bw_module)
        compiler.backward_graph = bw_module
        return fw_module, bw_module

    return partition


def _lean_once_recipe_stored(traced: Callable[..., Any], capture: Any, compiler: _GraphCompiler) -> Callable[..., Any]:
    """TCCD_LEAN_RUNTIME: the function Dynamo calls, which runs AOTAutograd's `traced` until the
    graph's AOT recipe is stored (its first backward compiled, or its inference plan loaded) and
    from the next call on the recipe's runtime around the same plans (aot_runtime.build), as a
    warm start runs them. That runtime does only what AOTAutograd's wrappers do for the recipe's
    class of graphs, with less Python per call. If it cannot be built, `traced` stays."""
    state: List[Any] = [traced, False]  # the function called, whether the switch was tried

    def run(*args: Any) -> Any:
        # Not before the plans are loaded: a symbolic graph's recipe may be stored before its
        # first call (AOTAutograd compiled the backward at once) while its forward, compiled
        # in the background, is taken at that call.
        if not state[1] and capture.stored is not None and _plans_loaded(capture.stored, compiler):
            state[1] = True
            state[0] = _recipe_runtime(capture.stored, compiler) or traced
        return state[0](*args)

    run.__dict__.update(traced.__dict__)  # aot_module_simplified's attributes (zero_grad, ...)
    return run


def _plans_loaded(recipe: Any, compiler: _GraphCompiler) -> bool:
    kinds = ("inference",) if recipe.kind == "inference" else ("forward", "backward")
    return all(kind in compiler.plans for kind in kinds)


def _recipe_runtime(recipe: Any, compiler: _GraphCompiler) -> Optional[Callable[..., Any]]:
    """The recipe's runtime around the plans `compiler` loaded, or None (logged at debug level)."""
    from .aot_runtime import build

    kinds = ["inference"] if recipe.kind == "inference" else ["forward", "backward"]
    plans = [compiler.plans.get(kind) for kind in kinds]
    calls = None
    if getattr(recipe, "fw_scalar_inputs", 0) or getattr(recipe, "num_symints_saved", 0):
        # A symbolic graph: the callables AOTAutograd was given take its integer inputs, drop
        # them and bind their symbols (_without_scalar_inputs); the plans under them are checked.
        calls = [compiler.plans.get(kind) for kind in kinds]
        plans = [getattr(call, "plan", call) for call in calls]
    elif compiler.cuda_graphs is not None:
        # The callables AOTAutograd was given (the plans under the CUDA graph trees, or a
        # backward that tells the trees it ran without graphs): the same trees' functions, so
        # a graph warmed up or recorded under AOTAutograd's runtime replays under this one.
        calls = [compiler.calls.get(kind) for kind in kinds]
    try:
        if any(plan is None for plan in plans):
            raise ValueError(f"no loaded plan for {[k for k, p in zip(kinds, plans) if p is None]}")
        if calls is not None:
            if any(call is None for call in calls):
                raise ValueError(f"no CUDA graph callable for {[k for k, c in zip(kinds, calls) if c is None]}")
            calls = (calls[0], calls[1] if len(calls) > 1 else None)
        fn = build(recipe, plans[0], plans[1] if len(plans) > 1 else None, calls=calls)
    except Exception:  # deliberately ignored: AOTAutograd's runtime stays, as correct
        log.debug("tccd: %s keeps AOTAutograd's runtime", compiler.graph_id, exc_info=True)
        return None
    log.debug("tccd: %s runs in its AOT recipe's runtime from now on", compiler.graph_id)
    return fn


def _symbolic_capture(example_inputs: List[Any], config: Any, graph_id: str) -> Optional[Any]:
    """TCCD_LEAN_SYMBOLIC: a graph with symbolic sizes gets no stored recipe (aot_key refuses
    it), but the process that traces it may still switch to the recipe's runtime after its
    first backward, from a recipe kept here (aot_recipe.SymbolicRecipe): AOTAutograd's
    wrappers cost such a graph ~300 Python calls per training step more than that runtime
    (the transformer block of deploy/dynamic_shapes_bench.py, cProfile, torch 2.15)."""
    from . import precompile

    if not (config.lean_runtime and config.lean_symbolic) or precompile.precompiling():
        return None
    if not _has_symbolic_sizes(example_inputs):
        return None
    from .aot_guard import refusal
    from .aot_recipe import RecipeCapture

    if refusal() is not None:  # an AOTAutograd the recipe was not reviewed against
        return None
    key = hashlib.sha256(f"symbolic {graph_id} {id(example_inputs)}".encode()).hexdigest()
    return RecipeCapture(key, None, len(example_inputs), symbolic=True)


def _partitioner() -> Tuple[str, Callable[..., Any], Dict[Any, Callable[..., Any]]]:
    """(name in AOT recipe keys, AOTAutograd partition_fn, decompositions) chosen by
    TCCD_PARTITIONER, TCCD_LOG_SOFTMAX_LSE and TCCD_DROP_DETACHES (decompositions.py)."""
    from torch._functorch import partitioners

    from . import decompositions, light_partition

    config = config_mod.get()
    table = decompositions.table(config.log_softmax_lse, config.patchify_gemm)
    # "+released": backward requests name their saved activations (released_inputs.py), which
    # changes the backward's plan; recipes (they name plans by request) stay apart.
    suffix = ("+released" if config.released_inputs else "") + ("+log_softmax_lse" if config.log_softmax_lse else "")
    if config.patchify_gemm != "0":
        suffix += f"+patchify_gemm_{config.patchify_gemm}"
    if config.partitioner == "default":
        return "default_partition" + suffix, partitioners.default_partition, table
    # "+no_detach": the joint graph's detaches are dropped before the min cut (drop_detaches),
    # which changes what it saves; recipes of the two forms stay apart.
    partition_fn = partitioners.min_cut_rematerialization_partition
    if config.light_partition:
        partition_fn = light_partition.wrap(partition_fn)
    if config.fast_min_cut:
        # The same cut as networkx's, without its residual graph's overhead (min_cut.py): no
        # change to the recipe's name.
        from . import min_cut

        partition_fn = min_cut.wrap(partition_fn)
    if config.lazy_backward_module:
        # The reordered backward's Python code generated when needed, not in the partition
        # (lazy_backward.py): the same graph.
        from . import lazy_backward

        partition_fn = lazy_backward.wrap(partition_fn)
    # "+no_bn_stats": batch-norm backwards take no running statistics (drop_bn_running_stats),
    # which changes what is saved too.
    partition_fn = decompositions.with_joint_cleanup(partition_fn, lse=bool(table), detaches=config.drop_detaches,
                                                     bn_running_stats=config.drop_bn_running_stats)
    name = ("min_cut_rematerialization_partition" + ("+no_detach" if config.drop_detaches else "")
            + ("+no_bn_stats" if config.drop_bn_running_stats else ""))
    return name + suffix, partition_fn, table


def tccd(gm: torch.fx.GraphModule, example_inputs: List[Any], **kwargs: Any) -> Any:
    """The Dynamo backend. kwargs: mode and options from torch.compile (options enter the key).

    Returns what aot_module_simplified returns, a function Dynamo calls with the graph's inputs
    unboxed, returning a list of outputs: AOTAutograd's, or on an AOT recipe hit one rebuilt
    from the recipe (aot_runtime.py).
    """
    # Puts the compile callbacks back if torch._dynamo.reset() removed them, for the compiles
    # after this one (the first after a reset has this call's deferral only).
    _install_compile_gc_deferral()
    with full_gc.deferred(config_mod.get().defer_full_gc):
        try:
            return _traced_and_compiled(gm, example_inputs, **kwargs)
        finally:
            # The forward's request is out: the collections deferred since the compile's start
            # (Dynamo's trace included) may run now, beside the daemon's compile, rather than
            # after Dynamo's compile (on the GPU the forward's compile is the longer path; a
            # collection nearer its end holds the GIL its fetch and load need).
            full_gc.end_compile_deferral()


def _traced_and_compiled(gm: torch.fx.GraphModule, example_inputs: List[Any], **kwargs: Any) -> Any:
    from torch._dynamo.backends.common import aot_autograd

    from . import aot_cache, light_aot_logging, precompile

    mode = kwargs.pop("mode", None)
    options = kwargs.pop("options", None)
    kwargs.pop("name", None)  # torch.compile(name=...) (newer torch): only a label
    if kwargs:
        log.warning("tccd backend: ignoring unknown arguments %s", sorted(kwargs))
    graph_id = _compile_id()
    # Dynamo's package asks for this graph's artifact (torch's caching_precompile), and tccd
    # gives it under TCCD_CACHING_PRECOMPILE only: torch's own save has bugs the knob works
    # around (caching_precompile.py); without the knob the next process traces the graph.
    package_id = getattr(gm, "_backend_id", None) if caching_precompile_on() else None
    partitioner_name, partition_fn, decomposition_table = _partitioner()
    graphs = cudagraphs.Session(len(example_inputs)) if cudagraphs.wanted(mode) else None
    capture = None
    config = config_mod.get()
    if graphs is None:
        warm, capture = aot_cache.lookup(
            gm, example_inputs, mode=mode, options=options, partitioner=partitioner_name, graph_id=graph_id
        )
        if warm is not None:
            if package_id:
                from . import caching_precompile

                caching_precompile.record(package_id, warm.tccd_recipe, warm.tccd_plan_keys)
            return precompile.wrap(warm, None, None, gm, example_inputs) if precompile.precompiling() else warm
        if capture is None:
            capture = _symbolic_capture(example_inputs, config, graph_id)
    elif config.lean_runtime and config.lean_cudagraphs and not precompile.precompiling():
        # Setting up CUDA graphs needs the traced graphs (cudagraphs.decide), so a graph under
        # them always takes the traced path (a warm recipe hit would have none); but once its
        # recipe is captured it switches to the recipe's runtime around the same wrapped
        # callables, as a default-mode graph does (TCCD_LEAN_CUDAGRAPHS).
        _, capture = aot_cache.lookup(
            gm, example_inputs, mode=mode, options=options, partitioner=partitioner_name, graph_id=graph_id,
            hits=False,
        )
    compiler = _GraphCompiler(graph_id, mode, options, capture, graphs)
    compiler.precompiling = precompile.precompiling()
    compiler.package_id = package_id or None
    backend = aot_autograd(
        fw_compiler=functools.partial(compiler, "forward"),
        bw_compiler=functools.partial(compiler, "backward"),
        inference_compiler=functools.partial(compiler, "inference"),
        partition_fn=_remembering_backward(partition_fn, compiler),
        decompositions=decomposition_table,
        # Data mutations of inputs that autograd does not see (batch norm's running statistics)
        # stay in the graph as copy_ nodes the plan runs, as Inductor has them, instead of an
        # epilogue of one Python copy_ per buffer after every forward (ResNet-50: 159 per step).
        keep_inference_input_mutations=True,
    )
    if not precompile.precompiling():
        from . import aot_graph_text

        # AOTAutograd's graph text (print_readable of the joint, forward and backward graphs)
        # feeds only logs here: not rendered unless a log reads it (aot_graph_text.py).
        with aot_graph_text.skipping(config.skip_aot_graph_text), light_aot_logging.scope(config.light_aot_logging):
            compiled = backend(gm, example_inputs)
        # A GmWrapper (Dynamo's flatten_graph_inputs) makes AOTAutograd's function take one list
        # of inputs; the recipe's runtime takes them unpacked, so such graphs keep AOTAutograd's.
        boxed = isinstance(gm, getattr(torch._dynamo.utils, "GmWrapper", ()))
        if capture is not None and config.lean_runtime and not boxed:
            return _lean_once_recipe_stored(compiled, capture, compiler)
        return compiled
    # torch.compile(...).aot_compile(...): a callable torch can save (precompile.py), without
    # AOTAutograd's own cache entry, which only takes Inductor's compiled code.
    with precompile.without_aot_autograd_cache(), light_aot_logging.scope(config.light_aot_logging):
        compiled = backend(gm, example_inputs)
    return precompile.wrap(compiled, capture, compiler, gm, example_inputs)


# torch._dynamo.reset() calls its backends' reset(): free the CUDA graph trees with the code caches.
tccd.reset = cudagraphs.reset  # type: ignore[attr-defined]


def _install_dynamic_profiles() -> None:
    # Loading this module is what torch.compile(backend="tccd") does before Dynamo traces the
    # first frame, which is when Dynamo reads its PGO profile (dynamic_profiles.py).
    try:
        from . import dynamic_profiles

        dynamic_profiles.install()
    except Exception as e:  # deliberately ignored: without profiles, recompiles as before
        log.warning("tccd: dynamic profiles are not shared: %s", e)


_install_dynamic_profiles()


def _install_once_logs() -> None:
    # Before Dynamo traces the first frame, as above: transformers' once-per-process log calls
    # run at trace time instead of breaking the graph (once_logs.py, TCCD_TRACE_ONCE_LOGS).
    if not config_mod.get().trace_once_logs:
        return
    try:
        from . import once_logs

        if not once_logs.install():
            log.debug("tccd: this torch has no LoggingLoggerVariable.call_method; once-logs break graphs")
    except Exception as e:  # deliberately ignored: Dynamo's own handling (a graph break) stays
        log.warning("tccd: once-per-process log calls keep breaking graphs: %s", e)


_install_once_logs()


def caching_precompile_on() -> bool:
    """TCCD_CACHING_PRECOMPILE=1 and torch's flag still on (a script may turn it off)."""
    return config_mod.get().caching_precompile and bool(getattr(torch._dynamo.config, "caching_precompile", False))


def _install_caching_precompile() -> None:
    # Before torch.compile reads torch's flag (it imports the backend first): TCCD_CACHING_PRECOMPILE.
    if not config_mod.get().caching_precompile:
        return
    try:
        from . import caching_precompile

        caching_precompile.install()
    except Exception as e:  # deliberately ignored: every process traces, as without the knob
        log.warning("tccd: TCCD_CACHING_PRECOMPILE=1 has no effect: %s", e)


_install_caching_precompile()
def _full_gc_compile_deferral_enabled() -> bool:
    config = config_mod.get()
    return config.defer_full_gc and config.defer_full_gc_compile


def _install_compile_gc_deferral() -> None:
    # Before Dynamo traces the first frame, as above: on a torch that does not defer full
    # collections over a compile itself, tccd does, from the compile's start (full_gc.py).
    try:
        full_gc.install_compile_deferral(_full_gc_compile_deferral_enabled)
    except Exception as e:  # deliberately ignored: the backend call's own deferral stays
        log.warning("tccd: full collections are deferred over tccd's backend call only: %s", e)


_install_compile_gc_deferral()
