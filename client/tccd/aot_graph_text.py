"""AOTAutograd's graph text, skipped in tccd's compiles when nothing reads it
(TCCD_SKIP_AOT_GRAPH_TEXT, default on).

At every compile AOTAutograd renders the joint graph and then the forward and backward graphs
(or the inference graph) as Python source (`GraphModule.print_readable`, with strides and
devices), logging or not: the strings feed its `aot_joint_graph` / `aot_graphs` logs, the
structured trace (tlparse) and Inductor's AOTAutogradCache entry. In tccd's compiles the cache
entry is never made (it takes Inductor's compiled code only), so with those logs off the text is
thrown away: sampled on the CPU (the zoo's T5, torch 2.11), rendering it was ~65 % of the
`backend` phase, i.e. ~0.17 s of T5's cold first step.

install() wraps AOTAutograd's three logging helpers (torch._functorch._aot_autograd.
graph_compile: _log_joint_graph, _log_fw_bw_graphs, _log_inference_graph; a torch without them
is left alone). Inside `skipping()` (tccd's backend call, not under aot_compile), and while
neither the structured trace nor those artifact logs are on, the helpers run with AOTConfig's
`enable_log` off, their own switch for all of it, and return no text, as they do for a caller
that turned logging off. Everywhere else (Inductor's compiles in the same process, a tccd
compile with TORCH_LOGS=aot_graphs or TORCH_TRACE set) they run as before.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import logging
from typing import Any, Callable, Iterator

log = logging.getLogger(__name__)

_HELPERS = ("_log_joint_graph", "_log_fw_bw_graphs", "_log_inference_graph")
# The artifact logs whose text the helpers render (TORCH_LOGS names).
_ARTIFACTS = ("aot_joint_graph", "aot_graphs", "aot_graphs_effects")

_inside = contextvars.ContextVar("tccd_skip_aot_graph_text", default=False)
_installed = False


def _text_wanted() -> bool:
    """Whether a log or the structured trace would read the text now (True when unsure)."""
    try:
        from torch._logging import _internal
    except ImportError:
        return True
    trace_log = getattr(_internal, "trace_log", None)
    state = getattr(_internal, "log_state", None)
    if trace_log is None or state is None or not hasattr(state, "is_artifact_enabled"):
        return True
    # torch keeps a LazyTraceHandler without a directory on the trace log until its first
    # record, when it removes itself (no TORCH_TRACE): no reader.
    lazy = getattr(_internal, "LazyTraceHandler", ())
    readers = [h for h in trace_log.handlers if not (isinstance(h, lazy) and getattr(h, "root_dir", 1) is None)]
    return bool(readers) or any(state.is_artifact_enabled(name) for name in _ARTIFACTS)


def _without_log(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def helper(*args: Any, **kwargs: Any) -> Any:
        if not _inside.get() or _text_wanted():
            return fn(*args, **kwargs)
        from torch._functorch._aot_autograd.schemas import AOTConfig

        def off(value: Any) -> Any:
            if isinstance(value, AOTConfig) and value.enable_log:
                return dataclasses.replace(value, enable_log=False)
            return value

        return fn(*[off(a) for a in args], **{k: off(v) for k, v in kwargs.items()})

    helper.__wrapped__ = fn  # type: ignore[attr-defined]
    return helper


def install() -> bool:
    """Wraps the helpers (idempotent). Returns whether they are wrapped."""
    global _installed
    if _installed:
        return True
    try:
        from torch._functorch._aot_autograd import graph_compile
        from torch._functorch._aot_autograd.schemas import AOTConfig
    except ImportError:
        return False
    if not any(f.name == "enable_log" for f in dataclasses.fields(AOTConfig)):
        return False
    helpers = [name for name in _HELPERS if callable(getattr(graph_compile, name, None))]
    if not helpers:
        return False
    for name in helpers:
        setattr(graph_compile, name, _without_log(getattr(graph_compile, name)))
    _installed = True
    return True


def uninstall() -> None:
    """Puts AOTAutograd's helpers back (tests)."""
    global _installed
    try:
        from torch._functorch._aot_autograd import graph_compile
    except ImportError:
        return
    for name in _HELPERS:
        current = getattr(graph_compile, name, None)
        if current is not None and hasattr(current, "__wrapped__"):
            setattr(graph_compile, name, current.__wrapped__)
    _installed = False


@contextlib.contextmanager
def skipping(enabled: bool) -> Iterator[None]:
    """The block is a tccd compile whose graph text nothing reads (unless a log is on)."""
    if not enabled or not install():
        yield
        return
    token = _inside.set(True)
    try:
        yield
    finally:
        _inside.reset(token)
