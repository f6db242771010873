"""Warms cuDNN for a backward plan's convolutions before the first .backward() (TCCD_CONV_WARMUP).

The first call of each convolution shape pays cuDNN's set-up in ATen: engine heuristics, the
execution plan's build (kernels compiled at run time for some engines), the lazy load of the
chosen kernels; on the H200 ConvNeXt's first backward call spent 1858 ms of its 2047 in
`aten::convolution_backward`: 22 steps, 8 distinct calls (CUDA census), ~230 ms each. Eager and
Inductor pay the same (on CUDA Inductor's backward calls the same ATen op as an extern kernel),
inside their first backward.

A plan whose steps call `aten::convolution_backward` is a backward plan, loaded before its first
call (the prefetch thread's compile, a warm start's AOT recipe, the ahead-of-time flow's load).
At that load, `start` runs every distinct convolution-backward call of the plan once on scratch
tensors with the plan's sizes, strides, dtypes and arguments, so that the real call finds cuDNN's
plans built; it overlaps the forward's first call, which the backward must wait for anyway.

Where it runs matters: ATen keeps cuDNN's execution plans in a `thread_local` cache
(aten/src/ATen/native/cudnn/Conv_v8.cpp: `thread_local BenchmarkCache ... benchmark_cache`),
and a CUDA backward runs on the autograd engine's worker thread of its device. So the warm-up is
the backward of a one-node autograd graph whose gradient is a CUDA tensor: the engine runs it
on that same worker thread (a background thread calls .backward() and waits). If the real
backward arrives while the warm-up still runs, it waits for the rest of it in the engine's
queue. A gain only where the set-up overlaps work that is not cuDNN's: on the H200 (ConvNeXt,
warm start) the warm-up's set-ups and the forward's own ran no faster side by side than one
after the other (warm-up 3353 ms for what cost 2097 ms in the backward; the forward's
convolutions 775 -> 1366 ms); the first step gained 0.23 s (README, twelfth session).

Safety: the scratch work runs on a stream of its own (no ordering with the step's stream), from
the caching allocator (scratch freed after each shape; its peak is one shape's tensors), with
errors logged and never raised (a failed warm-up leaves the real call to pay as before). Skipped:
plans with run-time sizes, `torch.backends.cudnn.benchmark` (its timing of candidate plans would
run beside the forward's kernels and could pick worse ones), a load inside a backward (the
autograd thread is busy with the real call, which pays the set-up itself; also a prefetched
plan whose backward already waits for it), and shapes warmed already in this process.

    TCCD_CONV_WARMUP  0: off; 1: CUDA plans' convolutions; 2: CPU plans too (tests: the
                      mechanism without a GPU); 3 (default): CUDA plans, cuDNN attention's
                      backward too (see _ATTENTION_TARGETS).

The forward's convolutions (`start_forward`, TCCD_CONV_WARMUP_FORWARD, default 0) run on the
main thread, whose cache a background thread cannot fill; what such a warm-up can take off the
first call is only what cuDNN and CUDA keep per process (cuDNN's own state, lazily loaded
kernels, kernels compiled at run time if cuDNN caches them by process). It runs for a forward
plan loaded by key (a warm start's AOT recipe, the ahead-of-time flow's load), whose first call
comes after main-thread work that is not cuDNN's (Dynamo finishing the frame, the saved guards'
rebuild), on a thread of its own, beside the backward's warm-up (two threads' set-ups overlap:
`deploy/cudnn_setup_probe.py` on the H200). What the probe measured there: ResNet-50's forward
set-up is mostly per process (the main thread paid 0.13 of what a first thread paid), ConvNeXt's
depthwise calls are not (0.34: ~150 ms a call on every thread). In the zoo's one A/B (session
16's r1), with the backward's warm-up then waiting for the forward's, it took ResNet-50's AOT
`plan_calls` from 0.20 to 0.09 s but not its first step, and made ConvNeXt's warm and AOT first
steps 0.5-0.7 s longer; the wait is gone since, and the knob stays off until measured again.

    TCCD_CONV_WARMUP_FORWARD  0: off (default); 1: CUDA forward plans loaded by key; 2: CPU
                      plans too (tests); 3: CUDA plans, their attention calls too (cuDNN's,
                      flash, memory-efficient; without dropout: a call with dropout would
                      draw from the user's generator), not measured either.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import logging
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

from .v1 import tccd_pb2 as pb

log = logging.getLogger(__name__)

_TARGETS = ("aten::convolution_backward.default", "aten::convolution_backward")
_FORWARD_TARGETS = ("aten::convolution.default", "aten::convolution")
# TCCD_CONV_WARMUP_FORWARD=3 also: the fused attentions' forward, by the index of dropout_p in
# the overload's schema (a call whose dropout is not 0 is left out).
_FORWARD_ATTENTION_DROPOUT = {
    "aten::_scaled_dot_product_cudnn_attention.default": 5,
    "aten::_scaled_dot_product_flash_attention.default": 3,
    "aten::_scaled_dot_product_efficient_attention.default": 5,
}
# TCCD_CONV_WARMUP=3 (the default) also: cuDNN attention's backward, whose cuDNN graphs ATen
# caches per thread as well (aten/src/ATen/native/cudnn/MHA.cpp: thread_local ...
# mhagraphbackwardcache). On the H200 (session 20, warm and AOT first steps of GPT-2, Llama, T5,
# ViT) the backward's first call to it fell from 55-105 ms to ~0.5 ms in all 8 cells, while the
# forward's own first attention call, beside the warm-up, took ~25 ms more on average. Calls
# with variable-length sequences (cum_seq_q/cum_seq_k defined: offsets into the batch) are left
# out; every scratch tensor is zeros anyway.
_ATTENTION_TARGETS = ("aten::_scaled_dot_product_cudnn_attention_backward.default",)
_ATTENTION_CUM_SEQ_ARGS = (9, 10)  # cum_seq_q, cum_seq_k in the overload's schema


def _targets(level: int) -> Tuple[str, ...]:
    return _TARGETS + (_ATTENTION_TARGETS if level >= 3 else ())


def _forward_targets(level: int) -> Tuple[str, ...]:
    return _FORWARD_TARGETS + (tuple(_FORWARD_ATTENTION_DROPOUT) if level >= 3 else ())


@dataclasses.dataclass(frozen=True)
class _Scratch:
    """A tensor argument to make: the plan value's sizes, strides, storage offset and dtype."""

    sizes: Tuple[int, ...]
    strides: Tuple[int, ...]
    offset: int
    dtype: torch.dtype
    on_device: bool  # the plan's device; False: a CPU tensor (e.g. attention's philox seed)


@dataclasses.dataclass
class Stats:
    """What the warm-ups of this process did (for tests and benchmarks; `stats()` copies)."""

    plans: int = 0          # plans with a shape not warmed before
    shapes: int = 0         # convolution calls warmed
    failed: int = 0         # calls that raised (logged)
    ms: float = 0.0         # host wall time of the warm-ups' calls (on the autograd thread)
    threads: List[int] = dataclasses.field(default_factory=list)  # idents the calls ran on
    errors: List[str] = dataclasses.field(default_factory=list)
    # warm_while_waiting: convolution calls run while a first call waited for its plan.
    waiting_calls: int = 0
    waiting_ms: float = 0.0
    # start_forward (TCCD_CONV_WARMUP_FORWARD): forward plans' convolutions, on a plain thread.
    forward_plans: int = 0
    forward_shapes: int = 0
    forward_failed: int = 0
    forward_ms: float = 0.0


_lock = threading.Lock()
_stats = Stats()  # guarded by _lock
_seen: set = set()  # call keys started in this process; guarded by _lock
_running: List[threading.Thread] = []  # guarded by _lock
# Set at interpreter exit: a warm-up still running stops after its current call, so that no
# Python runs on the autograd thread while the interpreter finalizes.
_stopping = threading.Event()
# How long exit waits for that call (one cuDNN set-up: ~0.1-0.3 s on the H200).
_EXIT_WAIT_S = 10.0


def stats() -> Dict[str, Any]:
    with _lock:
        return dataclasses.asdict(_stats)


def reset() -> None:
    """Forgets the warmed shapes and the counters (tests)."""
    with _lock:
        global _stats
        _stats = Stats()
        _seen.clear()


def wait_all(timeout_s: Optional[float] = None) -> None:
    """Waits for the warm-ups started so far (tests, benchmarks)."""
    with _lock:
        threads = list(_running)
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    for t in threads:
        t.join(None if deadline is None else max(0.0, deadline - time.monotonic()))


def _static(meta: "pb.TensorMeta") -> Optional[_Scratch]:
    dims = list(meta.sizes) + list(meta.strides) + [meta.storage_offset]
    if any(d.WhichOneof("kind") == "expr" for d in dims):
        return None
    from .serialize import PROTO_TO_DTYPE

    dtype = PROTO_TO_DTYPE.get(meta.dtype)
    if dtype is None or len(meta.sizes) != len(meta.strides):
        return None
    return _Scratch(tuple(d.value for d in meta.sizes), tuple(d.value for d in meta.strides),
                    meta.storage_offset.value, dtype, meta.device.type != pb.CPU)


def _arg(value: "pb.Value", plan: "pb.Plan") -> Any:
    """An argument with tensor refs as _Scratch; raises LookupError for what cannot be made."""
    kind = value.WhichOneof("kind")
    if kind == "ref":
        node = value.ref.node
        if not 0 <= node < len(plan.values):
            raise LookupError(f"value {node} outside the plan")
        scratch = _static(plan.values[node])
        if scratch is None:
            raise LookupError("run-time sizes")
        return scratch
    if kind == "list":
        return tuple(_arg(item, plan) for item in value.list.items)
    if kind == "sym_expr":
        raise LookupError("run-time sizes")
    from .runtime import decode_value

    return decode_value(value)


def _calls(plan: "pb.Plan", targets: Tuple[str, ...] = _TARGETS) -> List[Tuple[str, tuple, tuple, tuple]]:
    """The plan's distinct calls of `targets`: (target, args, kwargs, key) with _Scratch for
    tensors; a call that has run-time sizes (or variable-length attention) is left out."""
    calls, keys = [], set()
    for step in plan.steps:
        if step.WhichOneof("kind") != "extern_call" or step.extern_call.target not in targets:
            continue
        call = step.extern_call
        try:
            args = tuple(_arg(v, plan) for v in call.args)
            kwargs = tuple((kv.name, _arg(kv.value, plan)) for kv in call.kwargs)
        except LookupError:
            continue
        if call.target in _ATTENTION_TARGETS and any(
                i >= len(args) or args[i] is not None for i in _ATTENTION_CUM_SEQ_ARGS):
            continue
        if call.target in _FORWARD_ATTENTION_DROPOUT:
            at = _FORWARD_ATTENTION_DROPOUT[call.target]
            dropout = dict(kwargs).get("dropout_p", args[at] if at < len(args) else 0.0)
            if dropout != 0:
                continue
        key = (call.target, _hashable(args), _hashable(kwargs))
        if key not in keys:
            keys.add(key)
            calls.append((call.target, args, kwargs, key))
    return calls


def _hashable(obj: Any) -> Any:
    if isinstance(obj, (list, tuple)):
        return tuple(_hashable(x) for x in obj)
    return obj if isinstance(obj, (_Scratch, int, float, bool, str, type(None))) else repr(obj)


def _device(plan: "pb.Plan") -> Optional[torch.device]:
    """The plan's device as the runtime loads it (runtime._plan_cuda_device): its first CUDA
    value's; None for a CPU plan."""
    for meta in plan.values:
        if meta.device.type == pb.CUDA:
            return torch.device("cuda", max(meta.device.index, 0))
    return None


def _make(scratch: _Scratch, device: torch.device) -> torch.Tensor:
    extent = 1 + sum((n - 1) * s for n, s in zip(scratch.sizes, scratch.strides)) if all(scratch.sizes) else 0
    # Zeros, not garbage: no value a kernel could read as an index or offset out of bounds.
    base = torch.zeros(scratch.offset + extent, dtype=scratch.dtype,
                       device=device if scratch.on_device else torch.device("cpu"))
    return base.as_strided(scratch.sizes, scratch.strides, scratch.offset)


def _materialize(obj: Any, device: torch.device) -> Any:
    if isinstance(obj, _Scratch):
        return _make(obj, device)
    if isinstance(obj, tuple):
        return [_materialize(x, device) for x in obj]
    return obj


def _run_calls(calls, device: torch.device, name: str, forward: bool = False) -> None:
    """Runs each call once; on the thread it is called on (the autograd engine's, see start;
    start_forward's own for `forward`)."""
    from .runtime import resolve_op

    t0 = time.monotonic()
    done = failed = 0
    errors = []
    for target, args, kwargs, _ in calls:
        if _stopping.is_set():
            break
        try:
            op = resolve_op(target)
            op(*_materialize(args, device), **{k: _materialize(v, device) for k, v in kwargs})
            done += 1
        except Exception as e:  # deliberately ignored: the real call will pay the set-up
            failed += 1
            errors.append(f"{name}: {target}: {e}"[:300])
            log.warning("tccd: %s: warming %s failed (its first real call pays the set-up): %s",
                        name, target, e)
    with _lock:
        if forward:
            _stats.forward_shapes += done
            _stats.forward_failed += failed
            _stats.forward_ms += (time.monotonic() - t0) * 1e3
        else:
            _stats.shapes += done
            _stats.failed += failed
            _stats.ms += (time.monotonic() - t0) * 1e3
        _stats.threads.append(threading.get_ident())
        _stats.errors.extend(errors)


class _OnAutogradThread(torch.autograd.Function):
    """Identity whose backward runs the warm-up: on a CUDA tensor, the engine runs it on the
    device's worker thread, the one that runs the plan's real backward."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, work: Any) -> torch.Tensor:
        ctx.work = work
        return x.clone()

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> Any:
        try:
            ctx.work()
        except Exception:  # deliberately ignored, as in _run_calls
            log.warning("tccd: convolution warm-up failed", exc_info=True)
        return grad, None


def start(plan: "pb.Plan", name: str, level: int) -> bool:
    """Starts the warm-up of `plan`'s convolution-backward calls (level: TCCD_CONV_WARMUP) on a
    thread of its own; returns whether it started (its shapes warmed before are skipped there,
    `stats()` counts a plan with one new shape at least). Never raises."""
    try:
        return _start(plan, name, level)
    except Exception:  # deliberately ignored: an optimisation only
        log.warning("tccd: %s: convolution warm-up not started", name, exc_info=True)
        return False


def _start(plan: "pb.Plan", name: str, level: int) -> bool:
    # Cheap checks only on the loading thread (a warm start's is the main thread); decoding the
    # calls runs on the warm-up's own thread.
    targets = _targets(level)
    if level <= 0 or not any(s.WhichOneof("kind") == "extern_call" and s.extern_call.target in targets
                             for s in plan.steps):
        return False
    device = _device(plan)
    if device is None and level != 2:
        return False
    device = device or torch.device("cpu")
    if device.type == "cuda" and torch.backends.cudnn.benchmark:
        return False
    if torch._C._current_graph_task_id() != -1:
        return False  # loaded inside a backward: its real calls are next on this thread
    from .prefetch import backward_waiting

    if backward_waiting():
        # A prefetched plan loaded while its backward waits for it (a cold first step): the
        # autograd thread is in that backward, so the warm-up would run after the real calls.
        return False

    def run() -> None:
        calls = _claim_unseen(plan, targets, "plans")
        if not calls:
            return
        stream = torch.cuda.Stream(device) if device.type == "cuda" else None
        x = torch.zeros((), device=device, requires_grad=True)
        with torch.enable_grad(), (torch.cuda.stream(stream) if stream is not None else contextlib.nullcontext()):
            # The node's stream is the one current at its forward: the backward runs there.
            y = _OnAutogradThread.apply(x, lambda: _run_calls(calls, device, name))
        y.backward()

    return _launch(run, f"tccd-conv-warmup {name}", f"{name}: convolution warm-up")


def _claim_unseen(plan: "pb.Plan", targets: Any, counter: str) -> List[Any]:
    """The plan's warm-up calls no warm-up of this process has claimed yet, claimed now (one
    warm-up per distinct call); counts the plan in _stats.<counter> if any are left."""
    with _lock:
        calls = [c for c in _calls(plan, targets) if c[3] not in _seen]
        _seen.update(c[3] for c in calls)
        if calls:
            setattr(_stats, counter, getattr(_stats, counter) + 1)
    return calls


def _launch(work: Callable[[], None], thread_name: str, what: str) -> bool:
    """Runs `work` on a daemon thread of its own, listed in _running while it runs (wait() and
    the tests join it); a failure is logged, never raised: a warm-up is an optimisation only."""

    def run() -> None:
        try:
            work()
        except Exception:  # deliberately ignored, as in _run_calls
            log.warning("tccd: %s failed", what, exc_info=True)
        finally:
            with _lock:
                _running.remove(threading.current_thread())

    thread = threading.Thread(target=run, name=thread_name, daemon=True)
    with _lock:
        _running.append(thread)
    thread.start()
    return True


def start_forward(plan: "pb.Plan", name: str, level: int, by_key: bool) -> bool:
    """Starts the warm-up of a forward (or inference) plan's convolutions (level:
    TCCD_CONV_WARMUP_FORWARD) on a thread of its own, for a plan loaded by key (`by_key`: its
    first call comes after other main-thread work); returns whether it started. Never raises."""
    try:
        return _start_forward(plan, name, level, by_key)
    except Exception:  # deliberately ignored: an optimisation only
        log.warning("tccd: %s: forward convolution warm-up not started", name, exc_info=True)
        return False


def _start_forward(plan: "pb.Plan", name: str, level: int, by_key: bool) -> bool:
    targets = _forward_targets(level)
    if level <= 0 or not by_key or not any(
            s.WhichOneof("kind") == "extern_call" and s.extern_call.target in targets for s in plan.steps):
        return False
    device = _device(plan)
    if device is None and level != 2:
        return False
    device = device or torch.device("cpu")
    if device.type == "cuda" and torch.backends.cudnn.benchmark:
        return False  # its timing of candidates would run beside the step's kernels

    def run() -> None:
        calls = _claim_unseen(plan, targets, "forward_plans")
        if not calls:
            return
        stream = torch.cuda.Stream(device) if device.type == "cuda" else None
        # A stream of its own: the scratch work is ordered with nothing of the step's.
        with torch.no_grad(), (torch.cuda.stream(stream) if stream is not None else contextlib.nullcontext()):
            _run_calls(calls, device, name, forward=True)

    return _launch(run, f"tccd-conv-warmup-forward {name}", f"{name}: forward convolution warm-up")


# Per op the call's leading tensor arguments, and of those the activations laid out channels-last
# in the first variant (convolution: input; convolution_backward: grad_output, input).
_WAIT_OPS = {
    torch.ops.aten.convolution.default: (3, (0,)),
    torch.ops.aten.convolution_backward.default: (3, (0, 1)),
}


def _graph_calls(gm: Any, level: int) -> List[Tuple[tuple, torch.device]]:
    """The graph's distinct 2-D convolutions (forward graph) or convolution backwards (backward
    graph) as (key, device), key = (op, tensor specs, other arguments), each twice: first with its
    activations channels-last (how the daemon lays out 16-bit convolutions' activations on CUDA,
    passes/channels_last_layout.h), then with the traced strides; all channels-last ones first."""
    first, second = [], []
    for node in gm.graph.nodes:
        if node.op != "call_function" or node.target not in _WAIT_OPS:
            continue
        count, activations = _WAIT_OPS[node.target]
        args = list(node.args)
        transposed = args[6] if node.target is torch.ops.aten.convolution.default else args[7]
        if transposed or node.kwargs:  # transposed convolutions are left out
            continue
        metas = [a.meta.get("val") if isinstance(a, torch.fx.Node) else a for a in args[:count]]
        if any(m is not None and not isinstance(m, torch.Tensor) for m in metas):
            continue
        if any(not isinstance(metas[i], torch.Tensor) or metas[i].dim() != 4 for i in activations):
            continue
        tensors = [t for t in metas if t is not None]
        if any(not isinstance(d, int) for t in tensors for d in (*t.shape, *t.stride())):
            continue  # symbolic sizes
        device = tensors[0].device
        if device.type != "cuda" and level < 2:
            continue
        rest = tuple(tuple(v) if isinstance(v, (list, tuple)) else v for v in args[count:])

        def spec(i, channels_last):
            t = metas[i]
            if t is None:
                return None
            strides = tuple(t.stride())
            if channels_last and i in activations:
                n, c, h, w = t.shape
                strides = (h * w * c, 1, w * c, c)
            return (tuple(t.shape), strides, t.dtype)

        for out, channels_last in ((first, True), (second, False)):
            out.append(((node.target, tuple(spec(i, channels_last) for i in range(count)), rest), device))
    seen, calls = set(), []
    for key, device in first + second:
        if key not in seen:
            seen.add(key)
            calls.append((key, device))
    return calls


def warm_while_waiting(gm: Any, future: Any, name: str, level: int) -> int:
    """While `future` (a graph's compile in the background: a forward's, or the prefetched
    backward's its first call waits for, prefetch.Pending.future) is not done, runs the graph's
    convolutions (or convolution backwards) once each on scratch tensors, on this thread: the one
    that will make the plan's first call (ATen's cuDNN plan cache is thread-local: the main
    thread for a forward, the autograd engine's for a backward), idle otherwise until the plan is
    there. Stops at the first check after the future is done (one call's set-up at most: ~0.1-0.3
    s on the H200). Returns the calls run. Never raises.

    level (TCCD_WAIT_CONV_WARMUP): 0 off, 1 CUDA graphs, 2 CPU graphs too (tests). Skipped
    under torch.backends.cudnn.benchmark (its timing would pick plans on zeros), and for calls
    warmed before in this process."""
    if level <= 0 or future.done():
        return 0
    try:
        calls = _graph_calls(gm, level)
    except Exception:  # deliberately ignored: an optimisation only
        log.warning("tccd: %s: convolution warm-up while waiting not started", name, exc_info=True)
        return 0
    if not calls or (torch.backends.cudnn.benchmark and any(d.type == "cuda" for _, d in calls)):
        return 0
    t0 = time.monotonic()
    done = 0
    streams: Dict[torch.device, Any] = {}
    for key, device in calls:
        if future.done() or _stopping.is_set():
            break
        with _lock:
            if ("waiting", key) in _seen:
                continue
            _seen.add(("waiting", key))
        op, specs, rest = key
        try:
            if device.type == "cuda" and device not in streams:
                streams[device] = torch.cuda.Stream(device)
            # A stream of its own: the scratch work is ordered with nothing of the step's.
            ctx = torch.cuda.stream(streams[device]) if device.type == "cuda" else contextlib.nullcontext()
            with ctx, torch.no_grad():
                made = [None if t is None else _make(_Scratch(t[0], t[1], 0, t[2], True), device) for t in specs]
                op(*made, *rest)
            done += 1
        except Exception as e:  # deliberately ignored: the real call pays its set-up
            log.debug("tccd: %s: warming %s while waiting failed: %s", name, op, e)
    with _lock:
        _stats.waiting_calls += done
        _stats.waiting_ms += (time.monotonic() - t0) * 1e3
    if done:
        log.debug("tccd: %s: %d convolution call(s) warmed while its compile ran", name, done)
    return done


@atexit.register
def _stop_at_exit() -> None:
    _stopping.set()
    wait_all(timeout_s=_EXIT_WAIT_S)
