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
"""

import contextlib
import gc
import threading
from typing import Iterator, Optional, Tuple

# As torch's default for gc_gen2_threshold_during_compile.
GEN2_THRESHOLD = 1000

_lock = threading.Lock()
_depth = 0  # guarded by _lock: nested or concurrent backend calls share one adjustment
_saved: Optional[Tuple[int, int, int]] = None  # guarded by _lock


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
        with _lock:
            _depth -= 1
            if _depth == 0 and _saved is not None:
                gc.set_threshold(*_saved)
                _saved = None
