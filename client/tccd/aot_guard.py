"""The AOT recipe's guard: recipes only where AOTAutograd is the one the recipe was reviewed against.

    why = refusal()   # None: recipes may be used and captured; else why not (logged once)

An AOT recipe (aot_recipe.py) rebuilds AOTAutograd's runtime wrappers (aot_runtime.py) for the
graphs whose metadata passes a deny list. A new AOTAutograd feature is a new metadata field or
a new runtime wrapper, which that deny list would not know of: the recipe would then run the
graph without the new behaviour and give wrong results instead of a miss. So the recipe is used
only when

  - the torch minor is one it was tested on (TESTED_TORCH_MINORS), and
  - the live field sets of what it reads (ViewAndMutationMeta, InputAliasInfo, OutputAliasInfo,
    PlainTensorMeta, MemoryFormatMeta, the MutationType and OutputType members) and of the
    runtime wrappers module (every class it defines, every field of its dataclasses) are exactly
    the reviewed ones for that minor (aot_reviewed.py);

otherwise every graph takes AOTAutograd's own path (a miss, always correct), and one log line
says why. Supporting a new torch minor: run tests/tools/aot_field_sets.py on its sources, read
what changed against aot_recipe._unsupported and aot_runtime (deny or reproduce every new field
and wrapper), then add the minor here and its output to aot_reviewed.py.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import inspect
import logging
from typing import Dict, List, Optional, Tuple

import torch

from .aot_reviewed import REVIEWED

log = logging.getLogger(__name__)

# Torch minors the recipe was run against: 2.11 on the GPU machine (zoo benchmark, GPU tests),
# 2.15 in CI (tests/python/test_e2e_aot_cache.py).
TESTED_TORCH_MINORS = ("2.11", "2.15")


def torch_minor(version: str) -> str:
    """"2.15.0+cu132" -> "2.15"."""
    return ".".join(version.split("+")[0].split(".")[:2])


def live_field_sets() -> Dict[str, Tuple[str, ...]]:
    """The live torch's entries for every key of the reviewed snapshots (a missing class: ())."""
    from torch._functorch._aot_autograd import runtime_wrappers, schemas

    modules = {"schemas": schemas, "runtime_wrappers": runtime_wrappers}
    keys = {k for snapshot in REVIEWED.values() for k in snapshot}
    out: Dict[str, Tuple[str, ...]] = {}
    for key in sorted(keys):
        if key == "runtime_wrappers":
            out[key] = tuple(sorted(
                name for name, value in vars(runtime_wrappers).items()
                if inspect.isclass(value) and value.__module__ == runtime_wrappers.__name__
            ))
            continue
        module, _, name = key.partition(".")
        cls = getattr(modules[module], name, None)
        if inspect.isclass(cls) and issubclass(cls, enum.Enum):
            out[key] = tuple(sorted(m.name for m in cls))
        elif cls is not None and dataclasses.is_dataclass(cls):
            out[key] = tuple(sorted(f.name for f in dataclasses.fields(cls)))
        else:
            out[key] = ()
    return out


def differences(reviewed: Dict[str, Tuple[str, ...]], live: Dict[str, Tuple[str, ...]]) -> List[str]:
    """What differs, one phrase per class: "schemas.InputAliasInfo gained x, lost y"."""
    out = []
    for key in sorted(set(reviewed) | set(live)):
        was, now = set(reviewed.get(key, ())), set(live.get(key, ()))
        if key not in live or (was and not now):
            out.append(f"{key} is gone")
            continue
        parts = []
        if now - was:
            parts.append("gained " + ", ".join(sorted(now - was)))
        if was - now:
            parts.append("lost " + ", ".join(sorted(was - now)))
        if parts:
            out.append(f"{key} {' and '.join(parts)}")
    return out


def check(version: str, live: Dict[str, Tuple[str, ...]]) -> Optional[str]:
    """Why recipes may not be used with torch `version` whose field sets are `live`, or None."""
    minor = torch_minor(version)
    if minor not in TESTED_TORCH_MINORS or minor not in REVIEWED:
        return (f"torch {version} is not a tested minor ({', '.join(TESTED_TORCH_MINORS)}) of "
                "tccd's AOT recipe")
    reviewed = {k: v for k, v in REVIEWED[minor].items()}
    live = {k: v for k, v in live.items() if k in reviewed}
    diffs = differences(reviewed, live)
    if diffs:
        return f"torch {version}'s AOTAutograd differs from the reviewed {minor}: " + "; ".join(diffs)
    return None


@functools.lru_cache(maxsize=None)
def refusal() -> Optional[str]:
    """check() for this process's torch, computed and logged once (refusal.cache_clear() redoes
    both; tests)."""
    try:
        why = check(torch.__version__, live_field_sets())
    except Exception as e:  # deliberately broad: an AOTAutograd we cannot even inspect is refused
        why = f"cannot inspect AOTAutograd's metadata classes: {type(e).__name__}: {e}"
    if why:
        log.warning("tccd: AOT recipes are off in this process (AOTAutograd traces every graph): %s", why)
    return why
