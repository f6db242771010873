"""Full garbage collections deferred while tccd compiles (TCCD_DEFER_FULL_GC, default on).

A cold first step allocates millions of long-lived objects (FX graphs, fake tensors, AOTAutograd's
traces), so CPython's collector, which runs a full collection once ten young collections have
passed (threshold2), walks the whole heap several times inside it: T5's first train step on the
H200 (torch 2.11) spent 0.67 s in 2 full collections, most of them in tccd's backend call
(AOTAutograd's trace and partition, the request). Torch 2.14 and later raise threshold2 for a
Dynamo compile (torch._dynamo.config.gc_gen2_threshold_during_compile, TORCH_DYNAMO_GC_GEN2_
THRESHOLD_DURING_COMPILE), and that window contains tccd's backend call; older torch (2.11 on
the GPU machines) does nothing, so there tccd raises it the same way for its backend call. Only
the *full* collections wait: the young ones still run, and one full collection follows the
call (the threshold restored, the count kept). A caller's threshold above ours is kept.

That one full collection is still due; it runs when CPython's thresholds next say, right
after the backend call, i.e. beside the daemon's compile of the forward whose request the call
sent. On torch 2.11 Dynamo's own trace, before the backend call, made another: from the
compile's start (a Dynamo compile callback) to the backend call's end the raise covers that too
(install_compile_deferral, TCCD_DEFER_FULL_GC_COMPILE), so the collections due merge into the one
after the request.

TCCD_WAIT_FULL_GC (default off): `hold` keeps threshold2 raised past the backend call until the
graph's first call, and `collect_while_waiting` runs the due collection while that call (or a
backward waiting for its prefetched plan) waits. Measured on the H200 (T5 cold, session 16): no
gain, +0.5 s: the collection already overlapped the forward's compile where it ran, and run
nearer the compile's end it holds the GIL the plan's fetch and load need.
"""

import contextlib
import gc
import logging
import threading
import time
from typing import Callable, Iterator, Optional, Tuple

log = logging.getLogger(__name__)

# As torch's default for gc_gen2_threshold_during_compile.
GEN2_THRESHOLD = 1000

_lock = threading.Lock()
_depth = 0  # guarded by _lock: nested or concurrent backend calls and holds share one adjustment
_saved: Optional[Tuple[int, int, int]] = None  # guarded by _lock
# Full collections run while a first call waited for its compile, and their seconds (guarded by
# _lock; what the benchmarks report beside the phases).
_waited_collections = 0
_waited_s = 0.0


def _torch_defers() -> bool:
    """Whether Dynamo defers full collections over its compile itself (torch >= 2.14, unless
    switched off with TORCH_DYNAMO_GC_GEN2_THRESHOLD_DURING_COMPILE=0)."""
    import torch._dynamo.config as dynamo_config

    return getattr(dynamo_config, "gc_gen2_threshold_during_compile", None) is not None


@contextlib.contextmanager
def deferred(enabled: bool) -> Iterator[None]:
    """Raises threshold2 to GEN2_THRESHOLD for the block, unless `enabled` is false, torch does
    it already, or the collector is off; reentrant, restored when the outermost block ends."""
    if not enabled or not gc.isenabled() or _torch_defers():
        yield
        return
    _enter()
    try:
        yield
    finally:
        _release()


def _enter() -> None:
    """Starts one block; the outermost raises threshold2 (keeping a caller's higher one)."""
    global _depth, _saved
    with _lock:
        if _depth == 0:
            _saved = gc.get_threshold()
            gen0, gen1, gen2 = _saved
            gc.set_threshold(gen0, gen1, max(gen2, GEN2_THRESHOLD))
        _depth += 1


def _release() -> None:
    """Ends one block or hold; the outermost restores the caller's thresholds."""
    global _depth, _saved
    with _lock:
        _depth -= 1
        if _depth == 0 and _saved is not None:
            gc.set_threshold(*_saved)
            _saved = None


def hold(enabled: bool) -> Callable[[], None]:
    """Inside a `deferred` block that raised threshold2: keeps it raised after the block ends,
    until the returned function is called (once; later calls do nothing). Elsewhere, or with
    `enabled` false, a function that does nothing."""
    global _depth
    with _lock:
        if not enabled or _depth == 0 or _saved is None:
            return lambda: None
        _depth += 1
    released = [False]  # guarded by _lock

    def release() -> None:
        with _lock:
            if released[0]:
                return
            released[0] = True
        _release()

    return release


# Whether the compile callbacks raised threshold2 for the Dynamo compile in progress (guarded by
# _lock; Dynamo runs its start and end callbacks for the outermost compile only).
_compile_entered = False
_callbacks: Optional[Tuple[Callable[..., None], Callable[..., None]]] = None  # guarded by _lock


def install_compile_deferral(enabled: Callable[[], bool]) -> bool:
    """Defers full collections over every Dynamo frame compile, as torch 2.14+ does itself, on
    a torch that does not (TCCD_DEFER_FULL_GC_COMPILE): Dynamo's own trace (before tccd's
    backend is called) made one full collection of its own in T5's cold first step (0.2 s on
    the CPU, torch 2.11); raised from the compile's start, the collections due merge into the
    one run while the first call waits (TCCD_WAIT_FULL_GC). Through Dynamo's compile callbacks
    (torch._dynamo.callback, DYNAMO trigger only: not AOTAutograd's lazy backward compile);
    `enabled()` is read at each compile's start (the first installation's is kept). Process-
    wide once installed, as torch's own deferral is; idempotent, and it puts the callbacks back
    after torch._dynamo.reset() removed them. Returns whether they are in place (a torch
    without compile callbacks: False)."""
    global _callbacks
    try:
        from torch._dynamo.callback import CallbackTrigger, callback_handler
    except ImportError:
        return False
    with _lock:
        if _callbacks is not None:
            # torch._dynamo.reset() clears every compile callback: put ours back (the tccd
            # backend calls this at each compile, so compiles after a reset's first one are
            # covered again).
            start, end = _callbacks
            if start not in callback_handler.start_callbacks:
                callback_handler.register_start_callback(start)
            if end not in callback_handler.end_callbacks:
                callback_handler.register_end_callback(end)
            return True

    def start(args) -> None:
        global _compile_entered
        if getattr(args, "callback_trigger", None) is not CallbackTrigger.DYNAMO:
            return
        if not enabled() or not gc.isenabled() or _torch_defers():
            return
        _enter()
        with _lock:
            _compile_entered = True

    def end(args) -> None:
        end_compile_deferral()

    with _lock:
        _callbacks = (start, end)
        callback_handler.register_start_callback(start)
        callback_handler.register_end_callback(end)
    return True


def end_compile_deferral() -> None:
    """Ends the raise the compile callbacks made for the compile in progress, if any (at the
    compile's end, or earlier: tccd's backend call ends it at its return, once the forward's
    request is out, so that the collections due run while the daemon compiles instead of
    after Dynamo's compile, nearer the first call that waits for the plan)."""
    global _compile_entered
    with _lock:
        entered, _compile_entered = _compile_entered, False
    if entered:
        _release()


def _due_threshold2() -> int:
    """threshold2 as the caller set it (ours raised it inside `deferred` and `hold`)."""
    with _lock:
        return _saved[2] if _saved is not None else gc.get_threshold()[2]


def collect_while_waiting(done: Callable[[], bool], enabled: bool) -> bool:
    """Runs a full collection now if one is due (as many young-generation collections passed
    since the last full one as threshold2 allows) and `done()` says the awaited compile is not
    finished: the caller is about to wait for it, so the collection costs no wall time up to the
    wait's length. Returns whether it collected."""
    global _waited_collections, _waited_s
    if not enabled or not gc.isenabled() or done():
        return False
    if gc.get_count()[2] < _due_threshold2():
        return False
    start = time.perf_counter()
    gc.collect()
    seconds = time.perf_counter() - start
    with _lock:
        _waited_collections += 1
        _waited_s += seconds
    log.debug("tccd: a full garbage collection (%.0f ms) ran while waiting for a compile", seconds * 1e3)
    return True


def waited_collections() -> Tuple[int, float]:
    """(full collections run while waiting for a compile, their seconds) in this process."""
    with _lock:
        return _waited_collections, _waited_s
