"""A process-wide record of what tccd did with every graph it was given.

    tccd.last_compile_stats()   -> list of dicts, oldest first (one per graph compile)
    tccd.reset_compile_stats()

Each dict: name ("0/0 forward"), kind (forward/backward/inference), key (the daemon's compile
key, "" on fallback), cache_hit (the daemon served it from its cache), deduplicated,
local_hit (served from the local cache without contacting the daemon), native_kernels (native
steps in the plan), fused_kernels (kernels those steps contain), extern_steps, python_steps (plan
steps run in Python per call: 0 when the native plan runtime runs the whole plan, every step
when the plan is interpreted, native_plan.py), python_step_reasons (why those steps run in Python:
"op: reason" -> steps per call, e.g. an argument or return the stable C ABI cannot carry on this
torch), kernels (per kernel: name, kind, ops, shape: its
iteration space), compile_ms and server_ms (daemon's timings), kernels_compiled and
kernels_reused (distinct kernels the daemon compiled for this graph, and those whose code it
reused from its kernel store; 0 on a cache hit), aot_skipped (the plan was
run from an AOT recipe without tracing the Dynamo graph through AOTAutograd, see aot_cache.py),
fallback (None, or why the graph runs eagerly), cudagraphs (the graph runs under CUDA graphs:
mode="reduce-overhead") and cudagraph_skip (None, or why a mode that asks for CUDA graphs got
none for this graph), prefetched (a backward whose compile was requested when the forward's
began, prefetch.py) and prefetch_wait_ms (how long its first .backward() still waited for it),
eager_calls (calls run eagerly because the background compile was not done yet:
TCCD_EAGER_WHILE_COMPILING), segment_values (values of a symbolic plan kept inside its symbolic
segments, raw pointers into one workspace per call: TCCD_SYMBOLIC_SEGMENTS), dynamo_package
(the graph came with Dynamo's saved package, torch's caching_precompile: no Dynamo trace and no
AOTAutograd ran for it in this process, caching_precompile.py).
"""

from __future__ import annotations

import copy
import dataclasses
import threading
from typing import Any, Dict, List, Optional


@dataclasses.dataclass
class GraphRecord:
    name: str
    kind: str
    key: str = ""
    cache_hit: bool = False
    deduplicated: bool = False
    local_hit: bool = False
    native_kernels: int = 0
    fused_kernels: int = 0
    extern_steps: int = 0
    python_steps: int = 0
    python_step_reasons: Dict[str, int] = dataclasses.field(default_factory=dict)
    kernels: List[Dict[str, Any]] = dataclasses.field(default_factory=list)
    compile_ms: float = 0.0
    server_ms: float = 0.0
    kernels_compiled: int = 0
    kernels_reused: int = 0
    aot_skipped: bool = False
    fallback: Optional[str] = None
    cudagraphs: bool = False
    cudagraph_skip: Optional[str] = None
    prefetched: bool = False
    prefetch_wait_ms: float = 0.0
    eager_calls: int = 0
    segment_values: int = 0
    # When a compile's parts ended, ms after compile_request began (issue 11: where a forward's
    # first call waits): "answered" (the Compile RPC), "fetched" (its artifacts), "loaded" (the
    # shared objects bound, CUDA modules and cuBLASLt set-up included), "native" (the native
    # runtime bound: the plan is ready); for a background compile also "first_call" (when its
    # graph's first call began to wait for it). Empty for a plan the local cache had.
    timeline_ms: Dict[str, float] = dataclasses.field(default_factory=dict)
    dynamo_package: bool = False


_lock = threading.Lock()
_records: List[GraphRecord] = []


def record(entry: GraphRecord) -> None:
    with _lock:
        _records.append(entry)


def last_compile_stats() -> List[Dict[str, Any]]:
    """Every graph compile of this process so far, oldest first, as plain dicts (copies)."""
    with _lock:
        return [copy.deepcopy(dataclasses.asdict(r)) for r in _records]


def reset_compile_stats() -> None:
    with _lock:
        _records.clear()
