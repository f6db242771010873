"""Once-per-process log calls run while Dynamo traces, instead of splitting the graph
(TCCD_TRACE_ONCE_LOGS, default on).

transformers adds `warning_once` and `info_once` to `logging.Logger`: an lru_cache over the
logger and the arguments, so a message prints once per process. Dynamo cannot trace a logger
method: `logger.warning_once(...)` inside a compiled region is a graph break, and a break inside
an inlined call restarts the frame's analysis, so everything before it is traced twice. GPT-2
of the zoo hits one in its `loss_function` property on every step ("`loss_type=None` was set in
the config but it is unrecognized"): Dynamo traced the whole model twice and made two graphs
(CPU, full-size GPT-2 with a no-op backend: 4.3-4.5 CPU s of trace, 2.0 without the break).

With this on, Dynamo's handling of a `*_once` logger method called with constant arguments and no
keyword arguments calls the real method while it traces and records nothing in the graph. That is
what the program does eagerly: the message prints at the first call, once (the lru_cache makes a
second trace, a recompile or a later eager call print nothing). Every other logger call is
Dynamo's as before. Torch's own options would not do here: `ignore_logging_functions` drops the
message, and `reorderable_logging_functions` (logger methods only on torch >= 2.15) dropped a
reordered call made inside an inlined function on 2.15 (GPT-2's is in a property of the model).

Process-wide once installed (the backend's import, which torch.compile(backend="tccd") does
before Dynamo traces): a function compiled by another backend in the same process gets it too.
It patches Dynamo's private LoggingLoggerVariable.call_method; a torch without it is left alone.
"""

from __future__ import annotations

from typing import Any, List

# transformers' once-per-process logger methods (transformers/utils/logging.py).
ONCE_METHODS = ("warning_once", "info_once")

_installed = False


def install() -> bool:
    """Patches Dynamo's logger-method handling (idempotent). Returns whether it is in place."""
    global _installed
    if _installed:
        return True
    try:
        from torch._dynamo.variables import misc
        from torch._dynamo.variables.constant import ConstantVariable
    except ImportError:
        return False
    cls = getattr(misc, "LoggingLoggerVariable", None)
    original = getattr(cls, "call_method", None)
    if original is None:
        return False

    def call_method(self: Any, tx: Any, name: str, args: List[Any], kwargs: Any, *rest: Any) -> Any:
        if name in ONCE_METHODS and not kwargs and not getattr(tx, "export", False):
            method = getattr(getattr(self, "value", None), name, None)
            try:
                values = [a.as_python_constant() for a in args]
            except Exception:  # deliberately ignored: a non-constant argument: Dynamo's handling
                values = None
            if callable(method) and values is not None:
                method(*values)
                return ConstantVariable.create(None)
        return original(self, tx, name, args, kwargs, *rest)

    call_method.__wrapped__ = original  # type: ignore[attr-defined]
    cls.call_method = call_method
    _installed = True
    return True


def uninstall() -> None:
    """Puts Dynamo's own handling back (tests)."""
    global _installed
    try:
        from torch._dynamo.variables import misc
    except ImportError:
        return
    cls = getattr(misc, "LoggingLoggerVariable", None)
    current = getattr(cls, "call_method", None)
    if current is not None and hasattr(current, "__wrapped__"):
        cls.call_method = current.__wrapped__
    _installed = False
