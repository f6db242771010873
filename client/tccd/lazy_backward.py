"""The min-cut partitioner's reordered backward as a lazy graph module (TCCD_LAZY_BACKWARD_MODULE).

    partition_fn = lazy_backward.wrap(partitioners.min_cut_rematerialization_partition)

Why: AOTAutograd's graph modules are lazy under Dynamo (torch.fx._lazy_graph_module: their
Python code is generated and compiled only when someone calls or prints them), except the one
the partitioner's last passes make: reordering_to_mimic_autograd_engine rebuilds the backward
as a plain `torch.fx.GraphModule(gm, new_graph)`, which generates and compiles the backward's
Python code at once, and raise_getitems' recompile of it does it again. tccd never runs that
code (the daemon compiles the graph; an eager fallback calls the module, which then compiles
it), yet it sat on the path to the forward's compile request: T5's partition took 0.47-0.48 s of
CPU on torch 2.11 and 0.26-0.28 s with the backward lazy (4 alternating runs, the zoo's T5 at
seq 64), and its graph modules' code was generated nowhere else in the first step.

How: while the wrapped partitioner runs, torch._functorch.partitioners.reordering_to_mimic_
autograd_engine (looked up by the partitioner as a module global at its call) is the same
function, torch's own code object, run with globals in which `torch.fx.GraphModule` is
_LazyGraphModule (a subclass: isinstance checks hold). The graph is the one torch builds, node
for node; only the generation of its Python code waits until it is needed. Nothing outside
that function sees the substitution. Refused (torch's function runs as it is) when the function
no longer names torch.fx.GraphModule, has a closure, or torch has no _LazyGraphModule.

TCCD_LAZY_BACKWARD_MODULE=0 turns it off (config.py).
"""

from __future__ import annotations

import functools
import logging
import threading
import types
from typing import Any, Callable, Optional

log = logging.getLogger("tccd")

_lock = threading.Lock()
_built = False  # guarded by _lock: _lazy was built (None then means: refused)
_lazy: Optional[Callable[..., Any]] = None  # guarded by _lock


def wrap(partition_fn: Callable[..., Any]) -> Callable[..., Any]:
    """partition_fn, its backward reordered into a lazy graph module (module doc)."""

    @functools.wraps(partition_fn)
    def partition(*args: Any, **kwargs: Any) -> Any:
        from torch._functorch import partitioners

        lazy = _get_lazy()
        original = getattr(partitioners, "reordering_to_mimic_autograd_engine", None)
        if lazy is None or original is not lazy.__wrapped__:  # type: ignore[attr-defined]
            return partition_fn(*args, **kwargs)
        partitioners.reordering_to_mimic_autograd_engine = lazy
        try:
            return partition_fn(*args, **kwargs)
        finally:
            if partitioners.reordering_to_mimic_autograd_engine is lazy:
                partitioners.reordering_to_mimic_autograd_engine = original

    return partition


def _get_lazy() -> Optional[Callable[..., Any]]:
    global _lazy, _built
    with _lock:
        if not _built:
            _built = True
            try:
                _lazy = _build()
            except Exception as e:  # torch's function changed shape: it runs as it is
                log.info("tccd: the partitioner's backward stays a plain graph module (%s: %s)", type(e).__name__, e)
                _lazy = None
        return _lazy


class _Delegate(types.ModuleType):
    """A module's attributes, with some replaced."""

    def __init__(self, real: types.ModuleType, **replaced: Any) -> None:
        super().__init__(real.__name__)
        self.__dict__.update(replaced)
        self._real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


def _build() -> Callable[..., Any]:
    import torch
    from torch._functorch import partitioners
    from torch.fx._lazy_graph_module import _LazyGraphModule

    original = partitioners.reordering_to_mimic_autograd_engine
    code = original.__code__
    if original.__closure__ or not {"torch", "fx", "GraphModule"} <= set(code.co_names):
        raise LookupError("reordering_to_mimic_autograd_engine no longer builds torch.fx.GraphModule itself")
    torch_lazy = _Delegate(torch, fx=_Delegate(torch.fx, GraphModule=_LazyGraphModule))

    def lazy(*args: Any, **kwargs: Any) -> Any:
        # The partitioner module's globals as they are now (a test may have patched one), with
        # `torch` the delegate: a copy per call, a few microseconds.
        namespace = dict(partitioners.__dict__, torch=torch_lazy)
        fn = types.FunctionType(code, namespace, original.__name__, original.__defaults__, None)
        fn.__kwdefaults__ = original.__kwdefaults__
        return fn(*args, **kwargs)

    functools.update_wrapper(lazy, original)  # __wrapped__: the function it stands in for
    return lazy
