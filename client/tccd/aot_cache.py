"""The AOT recipe cache: a warm start that skips AOTAutograd's trace of a Dynamo graph.

    hit, capture = lookup(gm, example_inputs, mode=..., options=..., partitioner=..., graph_id=...)

On a hit `hit` is the function to give Dynamo: both plans come from the local cache and
aot_runtime.py rebuilds AOTAutograd's runtime around them, so AOTAutograd never runs (its trace
is most of a warm start's time). Otherwise `hit` is None and `capture` (None when the graph
cannot have a recipe) is to be given the graphs AOTAutograd compiles, so that the next process
hits. The pieces: aot_key.py (the key: what decides AOTAutograd's output), aot_recipe.py (what
is stored, captured from AOTAutograd's metadata, verified JSON), aot_runtime.py (the rebuilt
runtime).

Nothing here may break a compile: every failure is a miss, logged at debug level, after which
the normal path runs (and its capture overwrites the recipe). A torch whose AOTAutograd is not
the one the recipe was reviewed against gets no recipes at all (aot_guard.py, one log line). TCCD_STRICT=1 raises instead.
Off with TCCD_AOT_CACHE=0, or with the local cache (TCCD_LOCAL_CACHE=0), which holds the plans.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any, Callable, List, Optional, Sequence, Tuple

import torch

from . import config as config_mod
from .errors import TccdError
from .stats import GraphRecord, record

log = logging.getLogger(__name__)


def lookup(
    gm: torch.fx.GraphModule,
    example_inputs: Sequence[Any],
    *,
    mode: Optional[str],
    options: Optional[dict],
    partitioner: str,
    graph_id: str,
    hits: bool = True,
) -> Tuple[Optional[Callable[..., List[Any]]], Optional[Any]]:
    """(the warm function, None) on a hit; (None, a RecipeCapture or None) otherwise.

    hits=False (a graph under CUDA graphs, whose setup needs the traced graphs): never a hit;
    the capture is for this process's lean runtime only (TCCD_LEAN_CUDAGRAPHS), neither stored
    nor shared."""
    config = config_mod.get()
    if not (config.aot_cache and config.local_cache):
        return None, None
    try:
        from .aot_guard import refusal
        from .aot_key import recipe_key
        from .aot_recipe import RecipeCapture, RecipeStore

        if refusal() is not None:  # logged once by refusal(); neither used nor captured
            return None, None

        key, why_not = recipe_key(
            gm, example_inputs, mode=mode, options=options, partitioner=partitioner
        )
        if key is None:
            log.debug("tccd aot cache: graph %s gets no recipe: %s", graph_id, why_not)
            return None, None
        # A recipe names plans by request hash, which depends on the daemon's compiler identity:
        # so does the recipe (another daemon build gets its own recipes and plans).
        from .local_cache import daemon_identity

        key = hashlib.sha256(f"{key}\n{daemon_identity(config)}".encode()).hexdigest()
        if not hits:
            return None, RecipeCapture(key, None, len(example_inputs))
        store = RecipeStore(config.cache_dir)
        recipe = store.get(key)
        if recipe is not None:
            hit = _load(recipe, config, graph_id)
            if hit is not None:
                return hit, None
        if config.aot_share:
            try:
                hit = _from_daemon(key, config, graph_id)
            except Exception as e:  # a bad or stale shared recipe: trace, and capture anew
                if config.strict:
                    raise
                log.debug("tccd aot cache: graph %s: the daemon's recipe is unusable: %s", graph_id, e)
                hit = None
            if hit is not None:
                return hit, None
        return None, RecipeCapture(key, store, len(example_inputs))
    except Exception as e:
        if config.strict:
            raise TccdError(f"tccd AOT recipe cache failed for graph {graph_id}: {e}") from e
        log.debug("tccd aot cache: graph %s: lookup failed, tracing it", graph_id, exc_info=True)
        return None, None


def share(recipe: Any, plan_keys: List[str]) -> None:
    """Gives the daemon a freshly captured recipe with the daemon's keys of its plans, so that
    processes with an empty local cache hit too (_from_daemon). Best effort: a daemon that
    refuses (--aot-recipes=false, an older daemon) or fails only costs them the trace."""
    import grpc

    from . import channel
    from .v1 import tccd_pb2 as pb

    config = config_mod.get()
    if not config.aot_share:
        return
    try:
        channel.connect(config).PutAotRecipe(
            pb.AotRecipe(key=recipe.key, recipe=recipe.to_json(), plan_keys=plan_keys),
            timeout=config.timeout_s,
        )
    except (grpc.RpcError, TccdError) as e:
        log.debug("tccd aot cache: the daemon did not take recipe %s: %s", recipe.key[:16], e)


def _from_daemon(key: str, config: Any, graph_id: str) -> Optional[Callable[..., List[Any]]]:
    """The warm function from a recipe the daemon holds (another process shared it), or None."""
    import grpc

    from . import channel
    from .aot_recipe import Recipe
    from .v1 import tccd_pb2 as pb

    try:
        shared = channel.connect(config).GetAotRecipe(pb.AotRecipeRequest(key=key), timeout=config.timeout_s)
    except grpc.RpcError as e:
        if e.code() != grpc.StatusCode.NOT_FOUND:
            log.debug("tccd aot cache: graph %s: GetAotRecipe failed: %s", graph_id, e)
        return None
    recipe = Recipe.from_json(shared.recipe)  # ValueError: a miss (lookup logs it)
    kinds = ["inference"] if recipe.kind == "inference" else ["forward", "backward"]
    if recipe.key != key or len(shared.plan_keys) != len(kinds):
        raise ValueError(f"the daemon's recipe {key[:16]} does not fit its key or plans")
    from .precompile import load_plan_by_key

    plans = [load_plan_by_key(k, f"{graph_id} {kind}", kind) for k, kind in zip(shared.plan_keys, kinds)]
    from .aot_runtime import build

    fn = build(recipe, plans[0], plans[1] if len(plans) > 1 else None)
    fn.tccd_recipe = recipe  # type: ignore[attr-defined]
    fn.tccd_plan_keys = list(shared.plan_keys)  # type: ignore[attr-defined]
    log.info("tccd: graph %s: AOT recipe %s from the daemon, AOTAutograd skipped", graph_id, key[:16])
    return fn


def _load(recipe: Any, config: Any, graph_id: str) -> Optional[Callable[..., List[Any]]]:
    """The warm function, or None if a plan the recipe names is not in the local cache."""
    from .aot_runtime import build
    from .compiler import load_cached_plan

    kinds = [("inference", recipe.fw_plan)] if recipe.kind == "inference" else [
        ("forward", recipe.fw_plan),
        ("backward", recipe.bw_plan),
    ]
    entries, plans = [], []
    for kind, plan_key in kinds:
        entry = GraphRecord(name=f"{graph_id} {kind}", kind=kind, aot_skipped=True)
        plan = load_cached_plan(plan_key, config, entry.name, entry)
        if plan is None:
            log.debug(
                "tccd aot cache: graph %s: the %s plan %s of recipe %s is not in the local cache",
                graph_id, kind, plan_key[:16], recipe.key[:16],
            )
            return None
        entries.append(entry)
        plans.append(plan)
    fn = build(recipe, plans[0], plans[1] if len(plans) > 1 else None)
    # What precompile.py saves of a hit: the recipe and the daemon's keys of its plans.
    fn.tccd_recipe = recipe  # type: ignore[attr-defined]
    fn.tccd_plan_keys = [entry.key for entry in entries]  # type: ignore[attr-defined]
    for entry in entries:
        record(entry)
        log.info(
            "tccd: %s: key %s (local, AOTAutograd skipped), %d native kernels, %d extern steps, "
            "%d Python steps per call",
            entry.name, entry.key[:16], entry.native_kernels, entry.extern_steps, entry.python_steps,
        )
    return fn
