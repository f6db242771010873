"""What tccd's stand-in modules share (light_partition.py, light_aot_logging.py): a stand-in
sits in sys.modules in place of a heavy torch module and answers a few names itself; any other
name asked of it means someone needs the real module, so the stand-in leaves sys.modules and the
real module is imported and asked instead."""

from __future__ import annotations

import importlib
import sys
from typing import Any, Callable


def real_attribute(module_name: str, is_stand_in: Callable[[Any], bool]) -> Callable[[str], Any]:
    """A stand-in's module __getattr__ for module_name: a name the stand-in lacks is the real
    module's (importing it replaces the stand-in). is_stand_in(module) tells the stand-in from the
    real module at call time (a stand-in may be built after this getter)."""

    def _real_attribute(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if is_stand_in(sys.modules.get(module_name)):
            del sys.modules[module_name]
        return getattr(importlib.import_module(module_name), name)

    return _real_attribute
