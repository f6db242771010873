"""Full garbage collections deferred while tccd's backend runs (TCCD_DEFER_FULL_GC, default on).

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

That one full collection is still due (T5's on the H200: ~0.3 s, and 0.2-0.3 s on every zoo
model), and restored at the backend's return it ran inside Dynamo's rest of the compile (guards,
bytecode), on the first step's path. A first call that waits for its background compile has the
main thread idle meanwhile, so the collection is run there instead (TCCD_WAIT_FULL_GC, default
on): `hold` keeps threshold2 raised past the backend call until the graph's first call, and
`collect_while_waiting` runs the due collection while that call (or a backward waiting for its
prefetched plan) waits. Where the compile is already done, nothing is collected and the
collection comes when CPython's own thresholds say, as before.
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
    global _depth, _saved
    if not enabled or not gc.isenabled() or _torch_defers():
        yield
        return
    with _lock:
        if _depth == 0:
            _saved = gc.get_threshold()
            gen0, gen1, gen2 = _saved
            gc.set_threshold(gen0, gen1, max(gen2, GEN2_THRESHOLD))
        _depth += 1
    try:
        yield
    finally:
        _release()


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
