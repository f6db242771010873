"""tccd: a torch.compile backend that compiles ATen graphs in the tccd daemon.

    import torch
    model = torch.compile(model, backend="tccd")

The backend is registered through the `torch_dynamo_backends` entry point, so `import tccd` is
not needed once the package is installed; importing it registers the backend too (when torch is
already imported, or on `tccd.register()`).

This module stays light: it imports neither grpc nor torch. The heavy parts load on first use.
"""

from __future__ import annotations

import sys
from typing import Any

from .errors import TccdError, TccdFallbackWarning
from .stats import last_compile_stats, reset_compile_stats

__version__ = "0.1.0"

__all__ = [
    "TccdError",
    "TccdFallbackWarning",
    "last_compile_stats",
    "reset_compile_stats",
    "register",
    "tccd",
    "__version__",
]


def register() -> None:
    """Makes backend="tccd" resolvable in torch._dynamo (idempotent).

    If the entry point was already discovered, Dynamo will load it itself; registering here too
    would make its later register_backend call fail as a duplicate, so then nothing is done.
    """
    from torch._dynamo.backends import registry

    if "tccd" in registry._COMPILER_FNS or registry._BACKENDS.get("tccd") is not None:
        return
    from .backend import tccd as backend_fn

    registry.register_backend(compiler_fn=backend_fn, name="tccd")


def __getattr__(name: str) -> Any:
    if name == "tccd":
        from .backend import tccd as backend_fn

        return backend_fn
    raise AttributeError(f"module 'tccd' has no attribute {name!r}")


# `import tccd` registers the backend when torch is loaded already (the usual order); without
# torch in the process (e.g. `python -m tccd stats`) importing torch just for this would cost a
# second or more, and the entry point covers torch.compile(backend="tccd") anyway.
if "torch" in sys.modules:
    try:
        register()
    except Exception as _e:  # deliberately ignored: the entry point still registers it
        import logging

        logging.getLogger(__name__).debug("tccd: could not register the backend: %s", _e)
