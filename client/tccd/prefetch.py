"""The backward graph's compile, requested when the forward's begins (TCCD_PREFETCH_BACKWARD).

AOTAutograd partitions the joint graph, compiles the forward, and compiles the backward only at
the first .backward(). The backward graph is final before the forward's compile begins (the
partitioner made it; token unlifting and saved-tensor hooks have run), so the backend sends its
Compile request then, from a background thread: the daemon compiles forward and backward at
the same time, and the backward's compile, artifact fetch and load also overlap the first
forward run. Without it a cold first step waits for the two compiles one after the other.

    pending = prefetch.start(request, key, config)     # at the forward's compile
    plan = pending.take(key, record, config)           # at the backward's: plan or None

`take` hands the plan over only if the backward's request, built again from the graph
AOTAutograd passes to the backward compiler, has the same request hash as the prefetched one;
otherwise (AOTAutograd changed the graph after partitioning) it returns None and the backward
compiles as it always did, so a prefetch can cost the daemon work but never change a result.
An error of the prefetched compile is raised by `take`, at the backward, where the backend's
fallback rules apply as to any compile error. Waiting is bounded by the Compile deadline
(TCCD_TIMEOUT_S) plus a margin, so a lost thread cannot hang the backward.

A backward that never runs (a forward under grad mode, never differentiated) still got compiled
by the daemon: its plan lands in the caches, the thread ends, nothing else happens.

The same machinery compiles forward and inference graphs in the background (TCCD_ASYNC_COMPILE,
backend.py): the backend returns at once a callable that takes the plan at its first call, so
the daemon's compile overlaps what Dynamo and AOTAutograd still do before that call (guards,
bytecode, runtime wrappers). Dynamo traces the graph after a graph break only when the frame
runs past it, i.e. after the first graph's first call, so that trace cannot overlap the first
graph's compile without running that call eagerly (not done).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import logging
import threading
import time
import weakref
from typing import Any, Callable, Optional

from .config import Config
from .stats import GraphRecord

log = logging.getLogger(__name__)

# Beyond the Compile deadline: artifact fetches and the load, which have deadlines of their own.
_WAIT_MARGIN_S = 60.0


class Pending:
    """One backward compile in flight (or done). Thread-safe: the future is."""

    def __init__(self, key: str, name: str, kind: str = "backward"):
        self.key = key
        self.record = GraphRecord(name=name, kind=kind)
        self.future: "concurrent.futures.Future[Any]" = concurrent.futures.Future()
        self.started = time.monotonic()

    def take(self, key: str, record: GraphRecord, config: Config) -> Optional[Any]:
        """The prefetched plan if `key` is the prefetched request's hash, else None.

        Copies what the compile recorded into `record` and marks it `prefetched`, with the time
        the backward waited for it in `prefetch_wait_ms`. Raises what the compile raised, or
        TimeoutError after the deadline.
        """
        if key != self.key:
            log.info(
                "tccd: %s: the backward graph changed after partitioning (request %s, prefetched "
                "%s): compiling it again",
                record.name,
                key[:16],
                self.key[:16],
            )
            return None
        waited = time.monotonic()
        # When the graph's first call came, on the compile's timeline (it began just after
        # self.started; GraphRecord.timeline_ms): copied into `record` below.
        self.record.timeline_ms["first_call"] = round((waited - self.started) * 1e3, 1)
        # Only a backward's wait: a forward's first call also takes its background compile here.
        counted = 1 if self.record.kind == "backward" else 0
        global _backwards_waiting
        with _started_lock:
            _backwards_waiting += counted
        try:
            plan = self.future.result(timeout=config.timeout_s + _WAIT_MARGIN_S)
        finally:
            with _started_lock:
                _backwards_waiting -= counted
        for field in dataclasses.fields(GraphRecord):
            if field.name not in ("name", "kind", "eager_calls"):  # the caller's own counts
                setattr(record, field.name, getattr(self.record, field.name))
        record.prefetched = True
        record.prefetch_wait_ms = (time.monotonic() - waited) * 1e3
        return plan


_started_lock = threading.Lock()
_started: "weakref.WeakSet[Pending]" = weakref.WeakSet()
# Backward compiles waiting in `take` now (guarded by _started_lock): a backward is running then,
# on the autograd thread, and the plan loading for it will run right after on that thread
# (conv_warmup.py starts nothing then: its work would queue behind the real calls).
_backwards_waiting = 0


@contextlib.contextmanager
def counted_as_backward_waiting():
    """A backward that waits for its prefetched plan but does something meanwhile on its thread
    (conv_warmup.warm_while_waiting): counted as waiting, so that no warm-up thread queues work
    behind it on the autograd engine's thread."""
    global _backwards_waiting
    with _started_lock:
        _backwards_waiting += 1
    try:
        yield
    finally:
        with _started_lock:
            _backwards_waiting -= 1


def backward_waiting() -> bool:
    """Whether some backward is waiting for its prefetched plan at this moment."""
    with _started_lock:
        return _backwards_waiting > 0


def wait_all(timeout_s: Optional[float] = None) -> int:
    """Waits until every background compile started so far has ended (compiled or failed);
    returns how many were waited for. For benchmarks that must time plans, not the eager calls
    TCCD_EAGER_WHILE_COMPILING makes while compiles run; errors stay for the graphs' calls."""
    with _started_lock:
        pending = list(_started)
    concurrent.futures.wait([p.future for p in pending], timeout=timeout_s)
    return len(pending)


def start(request: Any, key: str, config: Config, kind: str = "backward",
          on_manifest: Optional[Callable[[Any], None]] = None) -> Pending:
    """Compiles, fetches and loads `request` (whose request hash is `key`) in a new thread;
    `on_manifest` runs on that thread once the manifest is known, before the fetch and load
    (compiler.compile_request).

    A daemon thread: a process that exits while a prefetch is in flight does not wait for it.
    """
    from .compiler import compile_request

    pending = Pending(key, request.graph_name, kind)
    with _started_lock:
        _started.add(pending)

    def run() -> None:
        try:
            plan = compile_request(request, config, pending.record, key=key, on_manifest=on_manifest,
                                   started=pending.started)
        except BaseException as e:  # handed to the backward, which decides (take re-raises)
            pending.future.set_exception(e)
        else:
            pending.future.set_result(plan)

    threading.Thread(target=run, name=f"tccd-prefetch {request.graph_name}", daemon=True).start()
    if kind != "backward" and config.prewarm_cuda:
        _prewarm_cuda_for(request)
    return pending


def _prewarm_cuda_for(request: Any) -> None:
    """TCCD_PREWARM_CUDA: a forward or inference graph for CUDA, compiling in the background: the
    process-wide part of loading its plan (runtime.prewarm_cuda) on a thread of its own now,
    beside the daemon's compile, instead of after its answer on the step's path."""
    from .serialize import pb

    if request.target.device_type != pb.CUDA or not torch_cuda_available():
        return
    device = 0
    for meta in request.graph.inputs:
        if meta.device.type == pb.CUDA:
            device = max(meta.device.index, 0)
            break
    from . import runtime

    threading.Thread(target=runtime.prewarm_cuda, args=(device,), name="tccd-prewarm-cuda",
                     daemon=True).start()


def torch_cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()
