"""Dynamo's aot_autograd backend without importing Inductor's debug module.

    with light_aot_logging.scope(enabled):
        compiled = backend(gm, example_inputs)   # backend = torch._dynamo.backends.common.aot_autograd(...)

Why: AotAutograd.__call__ (torch._dynamo.backends.common, torch 2.11 to 2.15) runs
`from torch._inductor.debug import enable_aot_logging` at every call, and importing that module
pulls in Inductor's scheduler, IR, async compile workers and comms (25 modules after Dynamo's
own imports: 0.07 CPU s on the dev machine, inside every cold first step of a tccd process). The
context manager does nothing unless TORCH_COMPILE_DEBUG=1 (it then logs AOTAutograd's graphs to
Inductor's debug directory). A process compiling with Inductor has the module already; a tccd
process would import it for a no-op.

How: while the call starts, and only while the real module is not imported and
TORCH_COMPILE_DEBUG is not "1", sys.modules holds a stand-in for torch._inductor.debug whose
enable_aot_logging is that no-op. The stand-in leaves sys.modules at its first use (the
enable_aot_logging() call, before AOTAutograd traces anything) or when the scope ends, whichever
comes first, so the window covers a few lines of torch's code. Any other name asked of the
stand-in (another thread importing the debug module meanwhile) imports and returns the real
module's, as light_partition.py's stand-in does.

TCCD_LIGHT_AOT_LOGGING=0 turns it off (config.py): the real module is imported as before.
"""

from __future__ import annotations

import contextlib
import os
import sys
import types
from typing import Iterator

from .stand_ins import real_attribute

DEBUG_MODULE = "torch._inductor.debug"


@contextlib.contextmanager
def _no_aot_logging() -> Iterator[None]:
    """What torch's enable_aot_logging does with TORCH_COMPILE_DEBUG unset: nothing."""
    if sys.modules.get(DEBUG_MODULE) is _STAND_IN:
        del sys.modules[DEBUG_MODULE]  # used: later imports get the real module
    yield


_STAND_IN = types.ModuleType(DEBUG_MODULE, "tccd's stand-in: enable_aot_logging without TORCH_COMPILE_DEBUG")
_STAND_IN.enable_aot_logging = _no_aot_logging  # type: ignore[attr-defined]
_STAND_IN.__getattr__ = real_attribute(DEBUG_MODULE, lambda module: module is _STAND_IN)  # type: ignore[attr-defined]


@contextlib.contextmanager
def scope(enabled: bool) -> Iterator[bool]:
    """Installs the stand-in for the block (see the module doc); yields whether it did."""
    if not enabled or DEBUG_MODULE in sys.modules or os.environ.get("TORCH_COMPILE_DEBUG", "0") == "1":
        yield False
        return
    # setdefault: a thread that imported the real module meanwhile wins.
    installed = sys.modules.setdefault(DEBUG_MODULE, _STAND_IN) is _STAND_IN
    try:
        yield installed
    finally:
        if installed and sys.modules.get(DEBUG_MODULE) is _STAND_IN:
            del sys.modules[DEBUG_MODULE]
