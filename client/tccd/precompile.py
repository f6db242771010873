"""torch.compile's ahead-of-time flow for tccd: save a compiled function, load it in a new
process without Dynamo, AOTAutograd or a compile (issue 11 item 3).

    torch._dynamo.config.enable_aot_compile = True     # torch 2.11's default is False
    compiled = torch.compile(fn, backend="tccd", fullgraph=True, dynamic=False)
    aot = compiled.aot_compile(((x, w), {}))          # Dynamo + AOTAutograd + the daemon, once
    aot.save_compiled_function("fn.pt2")
    ...                                                # a new process, any local cache
    fn = torch.compiler.load_compiled_function(open("fn.pt2", "rb"))

torch saves Dynamo's side (guards, bytecode) itself and asks the backend's callable to serialise
itself (torch/_dynamo/aot_compile_types.py: SerializableCallable, in torch 2.11 and 2.15 alike).
Under aot_compile the backend returns a TccdCompiledGraph, whose bytes are JSON: the AOT recipe
(aot_recipe.py: small metadata of AOTAutograd's runtime) and the daemon's compile keys of the
graph's plans. Nothing of tccd is pickled, and no artifact travels in the file: loading asks the
daemon for each manifest by key (GetManifest), fetches the artifacts by digest (or finds them in
the local cache) and rebuilds AOTAutograd's runtime from the recipe (aot_runtime.py). The daemon
compiles nothing; a manifest it no longer holds makes the load fail with an error saying so.

Only graphs an AOT recipe covers can be saved (aot_recipe._unsupported, aot_guard.py); another
graph makes saving fail with the reason. The recipe needs the local cache (TCCD_LOCAL_CACHE=1)
and TCCD_AOT_CACHE=1 while compiling.

Two torch limits on real models, and what to do about them (issue 11):
  - Dynamo cannot save identity guards (ID_MATCH and the guards built on it: the `__code__` of
    a function reached through a decorator's closure, a builtin stored on a module such as
    transformers' GELUActivation.act, the code `inspect.signature` looked at). transformers'
    BERT has such guards on 2.11 and 2.15 alike, so saving fails with "ID_MATCH guard cannot
    be serialized". An object id means nothing in another process anyway: compile with
    options={"guard_filter_fn": tccd.precompile.serializable_guards}, which keeps every other
    guard (tensor, type, global state, shapes).
  - torch 2.11 pickles dynamo.source.DefaultsSource with its two derived fields, and its
    __init__ refuses them when the saved guards load ("DefaultsSource.__init__() takes from 3
    to 4 positional arguments but 6 were given": pytorch/pytorch#174955, fixed by #179511; 2.15
    loads them). Importing this module gives such a torch's source classes a __reduce__ that
    saves only their constructors' fields, as the fix does; a file saved by a 2.11 process
    without tccd's fix must be saved again.
"""

from __future__ import annotations

import json
import logging
from typing import Any, List, Optional

import torch

try:
    from torch._dynamo.aot_compile_types import SerializableCallable
except ImportError:  # a torch without the ahead-of-time flow: precompiling() is never true
    SerializableCallable = object  # type: ignore[misc,assignment]

log = logging.getLogger(__name__)

# Bump when the JSON's meaning changes; other formats fail to load with a message.
#   1: {"format", "recipe" (Recipe JSON), "plan_keys" (daemon keys: forward[, backward])}.
#   2: 1 + "input_check": {"n_args", "inputs": [input_check.facts()]}: the graph inputs whose
#      TENSOR_MATCH guards were not saved (lean_guards, TCCD_AOT_INPUT_CHECK); a tccd that reads
#      only format 1 must refuse such a file rather than run it unchecked. A graph without the
#      check is still written as 1 (Dynamo's packages, TCCD_AOT_INPUT_CHECK=0).
PRECOMPILE_FORMAT = 2
PRECOMPILE_FORMATS = (1, 2)


def serializable_guards(guard_entries: Any) -> List[bool]:
    """A guard_filter_fn for torch.compile(options=...) that drops the guards Dynamo cannot
    save (ID_MATCH and its family, directly or as what a guard was derived from)."""
    from torch._dynamo.guards import CheckFunctionManager

    unsupported = set(getattr(CheckFunctionManager, "UNSUPPORTED_SERIALIZATION_GUARD_TYPES", ()))
    return [
        g.guard_type not in unsupported and not unsupported.intersection(g.derived_guard_types or ())
        for g in guard_entries
    ]


# Guards on an nn.Module's structure rather than on values: the empty hook dicts, attributes
# absent from an instance dict, the key sets and membership of a module's _modules /
# _parameters / _buffers dicts, methods not overridden in a class dict. On a functional training
# step (torch.func.functional_call over a model) they are over half of the guards (ResNet-50:
# 3,007 of 5,483). The modules' TYPE_MATCH guards stay: without them the saved guard state
# leaves module objects out (Dynamo pickles a module only if a kept guard's manager reached it)
# and GPT-2's and BERT's loads failed ("'_Missing' object has no attribute '_parameters'",
# torch 2.15); with them a submodule replaced by another class is noticed too.
MODULE_STRUCTURE_GUARD_TYPES = frozenset({
    "EMPTY_NN_MODULE_HOOKS_DICT",
    "NOT_PRESENT_IN_GENERIC_DICT",
    "DICT_KEYS_MATCH",
    "DICT_CONTAINS",
    "DICT_NOT_CONTAINS",
})


# A module's own attribute dicts (nn.Module.__init__ makes them plain dicts): lean_guards drops
# the TYPE_MATCH guards on them, on a module source. They are a quarter to two fifths of what
# lean keeps besides (ViT-B/16 has 12 blocks of ~22 modules, each guarded as a module and as
# its three dicts), and they guard nothing a user changes: the keys in those dicts are already
# not guarded (DICT_KEYS_MATCH above), what is read through them is (the submodules' types,
# the tensors). The guard managers on the way to a kept guard stay (a child needs its parent's
# accessor), so the saved guard state still reaches every module a kept guard reads.
# lean_guards_keep_dict_types keeps them (lean_guards before this, for A/B).
MODULE_DICT_ATTRS = ("._modules", "._parameters", "._buffers")


def _on_module(entry: Any) -> bool:
    """Whether a guard's source lies inside an nn.Module Dynamo did not specialise (the model
    and its submodules, their dicts and attributes). Unknown (a torch without the method): no."""
    source = getattr(getattr(entry, "orig_guard", None), "source", None)
    check = getattr(source, "is_unspecialized_nn_module", None)
    try:
        return bool(check()) if check is not None else False
    except Exception:  # deliberately ignored: a source that cannot tell keeps its guard
        return False


def lean_guards(guard_entries: Any) -> List[bool]:
    """serializable_guards, less the guards on the modules' structure (MODULE_STRUCTURE_GUARD_TYPES
    on a module source). Kept: every tensor guard (shape, stride, dtype, device, requires_grad
    of the parameters, buffers and inputs, also where Dynamo reaches them through a module),
    aliasing (DUPLICATE_INPUT), global state (grad mode, autocast, deterministic algorithms,
    default device), the inputs' own structure (dict keys of the state and the batch), the
    modules' types and values (TYPE_MATCH; CONSTANT_MATCH / EQUALS_MATCH / SEQUENCE_LENGTH:
    `training`, eps, stride, padding, groups, ...). Dropped, so not noticed by the loaded step:
    a hook registered on a module after the save (it would not run), an instance attribute
    shadowing a method or a class attribute, a module's dicts gaining keys no guard reads. What
    torch's `skip_guard_on_all_nn_modules_unsafe` drops besides these (the tensor guards
    reached through the module, the modules' types and values) stays. Also dropped: the
    TYPE_MATCH guards on a module's `_modules` / `_parameters` / `_buffers` dicts
    (MODULE_DICT_ATTRS). Measured on the CPU: README "Warm start: the AOT load's guards".
    Under aot_compile (TCCD_AOT_INPUT_CHECK, default on) the TENSOR_MATCH guards of the graph's
    inputs are not saved either: the saved graph checks those inputs itself
    (move_tensor_guards, input_check.py)."""
    kept = lean_guards_keep_dict_types(guard_entries)
    kept = [k and not (g.guard_type == "TYPE_MATCH" and str(getattr(g, "name", "")).endswith(MODULE_DICT_ATTRS)
                       and _on_module(g))
            for k, g in zip(kept, guard_entries)]
    move_tensor_guards(guard_entries, kept)
    return kept


def lean_guards_keep_dict_types(guard_entries: Any) -> List[bool]:
    """lean_guards, but keeping the TYPE_MATCH guards on the modules' attribute dicts
    (MODULE_DICT_ATTRS): lean_guards' previous version, for an A/B of the load. Both save the
    guards they keep without their user stacks (drop_guard_stacks)."""
    kept = serializable_guards(guard_entries)
    kept = [k and not (g.guard_type in MODULE_STRUCTURE_GUARD_TYPES and _on_module(g))
            for k, g in zip(kept, guard_entries)]
    drop_guard_stacks(guard_entries, kept)
    return kept


# The graph aot_compile's backend call just returned and its inputs (wrap), until the guard
# filter of the same frame compile (lean_guards) moves their tensor guards into it. Dynamo
# builds a frame's guards right after its backend call, on the same thread.
_pending: Optional[tuple] = None


def _graph_inputs(gm: Any, example_inputs: Any) -> Optional[List[tuple]]:
    """(id of the real tensor, sizes, strides) of each of Dynamo's graph inputs, by position: the
    backend's example inputs are the real tensors (OutputGraph.example_inputs: each graph
    argument's example, in 2.11 and 2.15 alike), which the guard filter's entries hold as their
    values; sizes and strides are the placeholder's fake example's (None where symbolic). An
    input without both is (None, (), ()). None when the graph's inputs are not passed one per
    placeholder (Dynamo's GmWrapper)."""
    if gm is None or example_inputs is None or isinstance(gm, getattr(torch._dynamo.utils, "GmWrapper", ())):
        return None
    fake_type = getattr(torch._subclasses, "FakeTensor", ())
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(example_inputs):
        return None
    out = []
    for node, real in zip(placeholders, example_inputs):
        example = node.meta.get("example_value")
        if not (type(real) in (torch.Tensor, torch.nn.Parameter) and not isinstance(real, fake_type)
                and isinstance(example, torch.Tensor)):
            out.append((None, (), ()))
            continue
        out.append((id(real), [s if isinstance(s, int) else None for s in example.shape],
                    [s if isinstance(s, int) else None for s in example.stride()]))
    return out


def move_tensor_guards(guard_entries: Any, kept: List[bool]) -> int:
    """Drops the kept TENSOR_MATCH guards of the pending graph's inputs (set by wrap under
    aot_compile) that input_check.covered() accepts, and gives that graph their facts instead:
    its saved form checks them at every call (input_check.py says what each guard checked and
    what checks it now). Matched by identity: the guard's value is the real tensor the graph
    input was traced from. A guard on a tensor that is not one of the graph's inputs (one
    Dynamo only read a size of, an input of another frame) stays. Returns the guards
    moved; 0 with TCCD_AOT_INPUT_CHECK=0 or nothing pending."""
    global _pending
    from . import config as config_mod
    from . import input_check

    pending, _pending = _pending, None
    if pending is None or not config_mod.get().aot_input_check:
        return 0
    # aot_compile builds its guards outside any Dynamo frame compile (no compile id, 2.11 and
    # 2.15); a frame's filter (Dynamo's package, a plain torch.compile) runs inside one. So a
    # graph left pending by an aot_compile whose filter was not lean never lends its inputs to
    # another frame's guards. (A torch that changes this only turns the move off.)
    if torch._guards.CompileContext.current_compile_id() is not None:
        return 0
    graph, inputs = pending
    by_id = {ident: (index, size, stride) for index, (ident, size, stride) in enumerate(inputs) if ident is not None}
    moved = []
    for n, (keep, entry) in enumerate(zip(kept, guard_entries)):
        if not (keep and entry.guard_type == "TENSOR_MATCH" and getattr(entry, "has_value", False)):
            continue
        value = entry.value
        value = value() if callable(value) and not isinstance(value, torch.Tensor) else value  # a TensorWeakRef
        hit = by_id.get(id(value))
        if hit is None:
            continue
        index, size, stride = hit
        if not input_check.covered(value, size, stride):
            continue
        del by_id[id(value)]  # one guard per input (a second source of it keeps its own)
        kept[n] = False
        moved.append(input_check.facts(index, entry.name, value, size, stride))
    if moved:
        graph.input_check = {"n_args": len(inputs), "inputs": sorted(moved, key=lambda f: f["index"])}
        # The saving process runs the same filtered guards: its calls are checked too.
        graph.checker = input_check.InputCheck(graph.input_check["inputs"], len(inputs))
    log.debug("tccd: %d of the graph's %d inputs checked by the saved graph instead of tensor guards",
              len(moved), len(inputs))
    return len(moved)


def drop_guard_stacks(guard_entries: Any, kept: List[bool]) -> int:
    """Clears the stacks Dynamo recorded for the kept guards (`user_stack`, `stack`: where in
    the user's code each guard came from), unless TCCD_AOT_GUARD_STACKS=1. They are only ever
    printed (a guard failure's message, TORCH_LOGS=guards: "# file:line" after the guard's
    code), but a saved function carries one per guard and its load unpickles them and formats
    each into the guard's verbose code part (torch/_dynamo/guards.py get_verbose_code_part:
    shorten_filename, os.path.commonpath per guard): ~0.25 of the ~0.85 CPU s of ResNet-50's
    guard build on the CPU (README, sixteenth session). The filter's entries carry the guards
    Dynamo then builds and pickles (GuardFilterEntry.orig_guard), so clearing them there is
    what is saved. Returns the guards cleared."""
    from . import config as config_mod

    if config_mod.get().aot_guard_stacks:
        return 0
    cleared = 0
    for keep, entry in zip(kept, guard_entries):
        guard = getattr(entry, "orig_guard", None)
        if not keep or guard is None or not (getattr(guard, "user_stack", None) or getattr(guard, "stack", None)):
            continue
        try:
            guard.user_stack = None
            guard.stack = None
            cleared += 1
        except AttributeError:  # deliberately ignored: a torch whose guards lack the fields
            pass
    return cleared


def _fix_defaults_source_pickle() -> bool:
    """Gives Dynamo's sources a __reduce__ of their constructor's fields where this torch
    pickles derived (init=False) fields too (2.11's dataclass_with_cached_hash; see the module
    doc). DefaultsSource is the probe; every source class with derived fields gets the fix, as
    torch's own (#179511) fixes the decorator. True if patched; a fixed torch is left alone."""
    import dataclasses
    import pickle

    try:
        import torch._dynamo.source as sources

        pickle.loads(pickle.dumps(sources.DefaultsSource(sources.LocalSource("tccd_probe"), 0)))
        return False
    except TypeError:
        pass
    except Exception:  # deliberately ignored: a torch without these classes has nothing to fix
        return False

    def reduce(self: Any) -> Any:
        return type(self), tuple(getattr(self, f.name) for f in dataclasses.fields(self) if f.init)

    for cls in vars(sources).values():
        if (isinstance(cls, type) and issubclass(cls, sources.Source) and dataclasses.is_dataclass(cls)
                and "__reduce__" in vars(cls)
                and any(not f.init for f in dataclasses.fields(cls))):
            cls.__reduce__ = reduce  # type: ignore[method-assign]
    log.debug("tccd: Dynamo sources pickle their constructor's fields only (torch before #179511)")
    return True


_fix_defaults_source_pickle()


# The FakeTensorMode the loaded guards' tensors are rebuilt in (_share_fake_mode_in_guard_loads).
_guard_load_fake_mode: Any = None


def _share_fake_mode_in_guard_loads() -> bool:
    """Makes torch rebuild a loaded function's guarded tensors in one FakeTensorMode of the
    process instead of a new one per tensor (GuardsStatePickler._unpickle_tensor, 2.11 and
    2.15 alike: FakeTensorMode() per tensor, whose __init__ extracts the Python stack, deep
    inside the unpickler). The tensors are the saved guard state's examples (each a fake tensor
    of the saved dtype, device, sizes, strides, type and dispatch keys): the guards read their
    metadata, no operation runs on them, and a mode holds no reference to its fake tensors, so
    one mode serves them all, as one Dynamo trace's inputs share one. ResNet-50's AOT load
    (tiny config, CPU, 322 tensors): ~0.03 of ~0.3 main-thread CPU s (README "Warm start: the
    AOT flow's tensor guards as one input check"). TCCD_AOT_SHARED_FAKE_MODE=0: torch's own, a
    mode per tensor. Both flows' loads (the AOT flow and Dynamo's package) unpickle through
    it. True if patched; a torch whose function differs in shape is left alone."""
    import inspect

    try:
        from torch._dynamo.guards import GuardsStatePickler
        from torch._subclasses.fake_tensor import FakeTensorConverter, FakeTensorMode
    except ImportError:  # deliberately ignored: a torch without saved guards has nothing to share
        return False
    original = GuardsStatePickler.__dict__.get("_unpickle_tensor")
    func = getattr(original, "__func__", None)
    if func is None or getattr(func, "tccd_shared_fake_mode", False) or list(inspect.signature(func).parameters) != [
            "cls", "meta_tensor", "device", "pytype", "dispatch_keys_raw", "grad"]:
        return False

    def _unpickle_tensor(cls: Any, meta_tensor: Any, device: Any, pytype: Any, dispatch_keys_raw: int,
                         grad: Any) -> Any:
        global _guard_load_fake_mode
        from . import config as config_mod

        if not config_mod.get().aot_shared_fake_mode:
            return func(cls, meta_tensor, device, pytype, dispatch_keys_raw, grad)
        if _guard_load_fake_mode is None:
            _guard_load_fake_mode = FakeTensorMode()
        ret = FakeTensorConverter().from_meta_and_device(_guard_load_fake_mode, meta_tensor, device, pytype,
                                                         torch._C.DispatchKeySet.from_raw_repr(dispatch_keys_raw))
        # As torch's: a .grad the guards never read comes as a sentinel, not a tensor.
        ret.grad = grad if isinstance(grad, torch.Tensor) else None
        return ret

    _unpickle_tensor.tccd_shared_fake_mode = True  # type: ignore[attr-defined]
    GuardsStatePickler._unpickle_tensor = classmethod(_unpickle_tensor)  # type: ignore[method-assign]
    return True


_share_fake_mode_in_guard_loads()


def precompiling() -> bool:
    """True inside torch's aot_compile (aot_compile_fullgraph patches exactly these functorch
    flags around the backend call, in 2.11 and 2.15)."""
    cfg = torch._functorch.config
    return SerializableCallable is not object and bool(
        getattr(cfg, "bundled_autograd_cache", False)
        and getattr(cfg, "force_non_lazy_backward_lowering", False)
        and getattr(cfg, "bypass_autograd_cache_key", False)
    )


def without_aot_autograd_cache() -> Any:
    """aot_compile asks AOTAutograd for its own serialisable cache entry, which holds Inductor's
    OutputCode only (autograd_cache.make_entry asserts it, 2.11 and 2.15): tccd saves its recipe
    and plan keys instead, so that entry is turned off around tccd's AOTAutograd call. The
    backward is still compiled at once (force_non_lazy_backward_lowering stays on), so the
    recipe is complete when the backend returns."""
    return torch._functorch.config.patch(bundled_autograd_cache=False, force_autograd_cache=False)


class TccdCompiledGraph(SerializableCallable):
    """The function Dynamo calls for one graph, and what it takes to rebuild it elsewhere."""

    def __init__(self, fn: Any, recipe: Any = None, plan_keys: Optional[List[str]] = None,
                 why_not: Optional[str] = None, checker: Any = None):
        self.fn = fn
        self.recipe = recipe  # aot_recipe.Recipe, or None: cannot be saved (why_not)
        self.plan_keys = list(plan_keys or [])
        self.why_not = why_not
        # Saved with the graph (move_tensor_guards): {"n_args", "inputs": [facts]}, or None.
        self.input_check: Optional[dict] = None
        # A loaded graph's input_check.InputCheck: run before every call.
        self.checker = checker

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.checker is not None:
            self.checker.check(args)
        return self.fn(*args, **kwargs)

    @classmethod
    def serialize_compile_artifacts(cls, fn: "TccdCompiledGraph") -> bytes:
        if fn.recipe is None:
            raise RuntimeError(f"tccd cannot save this compiled graph: {fn.why_not}")
        return graph_json(fn.recipe, fn.plan_keys, input_check=fn.input_check)

    @classmethod
    def deserialize_compile_artifacts(cls, data: bytes) -> "TccdCompiledGraph":
        return load_graph(json.loads(data), "precompiled")


def graph_json(recipe: Any, plan_keys: List[str], input_check: Optional[dict] = None, **extra: Any) -> bytes:
    """A compiled graph as the JSON both of torch's saving flows keep (PRECOMPILE_FORMAT, or 1
    without `input_check`); `extra`: more top-level fields, which load_graph ignores
    (caching_precompile.py's checks)."""
    obj = {**extra, "format": 1, "recipe": json.loads(recipe.to_json()), "plan_keys": list(plan_keys)}
    if input_check:
        obj.update(format=PRECOMPILE_FORMAT, input_check=input_check)
    return json.dumps(obj, sort_keys=True).encode()


def load_graph(obj: Any, name: str, package: bool = False) -> TccdCompiledGraph:
    """The TccdCompiledGraph of graph_json's parsed `obj`: its plans fetched by key from the
    daemon (or the local cache), AOTAutograd's runtime rebuilt from its recipe. `name` prefixes
    the plans' GraphRecords ("NAME forward"); `package`: they came from Dynamo's package
    (caching_precompile.py). RuntimeError or the fetch's own errors when it cannot load."""
    from .aot_guard import refusal
    from .aot_recipe import Recipe

    if not isinstance(obj, dict) or obj.get("format") not in PRECOMPILE_FORMATS:
        raise RuntimeError(f"not a tccd precompiled graph of format {' or '.join(map(str, PRECOMPILE_FORMATS))}")
    why = refusal()
    if why:
        raise RuntimeError(f"tccd cannot load a precompiled graph into this process: {why}")
    settle_trace_log()
    recipe = Recipe.from_json(json.dumps(obj["recipe"]).encode())
    keys = obj["plan_keys"]
    kinds = ["inference"] if recipe.kind == "inference" else ["forward", "backward"]
    if not (isinstance(keys, list) and len(keys) == len(kinds) and all(isinstance(k, str) for k in keys)):
        raise RuntimeError("tccd precompiled graph: plan_keys do not fit its recipe")
    plans = [load_plan_by_key(key, f"{name} {kind}", kind, package=package) for key, kind in zip(keys, kinds)]
    from .aot_runtime import build

    fn = build(recipe, plans[0], plans[1] if len(plans) > 1 else None)
    checker = None
    if obj.get("input_check"):
        from .input_check import InputCheck

        checker = InputCheck(obj["input_check"]["inputs"], int(obj["input_check"]["n_args"]))
    loaded = TccdCompiledGraph(fn, recipe, keys, checker=checker)
    loaded.input_check = obj.get("input_check")
    return loaded


def settle_trace_log() -> bool:
    """Logs one small structured-trace event before torch rebuilds a loaded function's guards.
    torch installs its lazy trace handler whether or not TORCH_TRACE is set; trace_structured
    builds an event's payload whenever a handler is installed, and the handler removes itself
    only while emitting its first event (torch/_logging/_internal.py: LazyTraceHandler). In a
    process whose first event is the loaded guard manager's text (the ahead-of-time flow: no
    Dynamo trace ran before it), that text is built for nobody: ~0.3 CPU s of a ViT-B/16
    load, profiled on the CPU. After this cheap event the handler is gone (TORCH_TRACE unset)
    or the event is in the user's trace (set). TCCD_AOT_SETTLE_TRACE_LOG=0: not done. True if
    an event was logged."""
    from . import config as config_mod

    if not config_mod.get().aot_settle_trace_log:
        return False
    try:
        from torch._logging._internal import trace_log
    except ImportError:  # deliberately ignored: a torch without structured tracing has nothing to settle
        return False
    if not trace_log.handlers:
        return False
    torch._logging.trace_structured("artifact", metadata_fn=lambda: {"name": "tccd_precompiled_load",
                                                                     "encoding": "string"},
                                    payload_fn=lambda: "tccd: loading a precompiled function",
                                    expect_trace_id=False, record_logging_overhead=False)
    return True


def load_plan_by_key(key: str, name: str, kind: str, package: bool = False) -> Any:
    """The plan of the daemon's manifest `key`: its artifacts from the local cache, else fetched.
    `package`: recorded as loaded from Dynamo's package (GraphRecord.dynamo_package)."""
    import grpc

    from . import channel, config as config_mod
    from .compiler import _describe, _load, _rpc_error
    from .local_cache import LocalCache
    from .stats import GraphRecord, record
    from .v1 import tccd_pb2 as pb

    config = config_mod.get()
    try:
        manifest = channel.connect(config).GetManifest(pb.ManifestRequest(key=key), timeout=config.timeout_s)
    except grpc.RpcError as e:
        raise _rpc_error(f"GetManifest({key[:16]})", e) from None
    cache = LocalCache(config.cache_dir) if config.local_cache else None
    entry = GraphRecord(name=name, kind=kind, aot_skipped=True, dynamo_package=package)
    plan = _load(manifest, config, cache, name, allow_fetch=True, kind=kind)
    _describe(entry, manifest, plan)
    record(entry)
    return plan


def wrap(fn: Any, capture: Any, graph_compiler: Any, gm: Any = None, example_inputs: Any = None) -> TccdCompiledGraph:
    """What the backend returns under aot_compile. `fn`: the function for Dynamo; an AOT recipe
    hit carries its recipe and plan keys (aot_cache._load), a traced graph has them from
    `capture` (aot_recipe.RecipeCapture, stored once AOTAutograd compiled its graphs; None when
    the graph gets no recipe) and `graph_compiler` (backend._GraphCompiler: the plans' keys).
    `gm`, `example_inputs`: Dynamo's graph and its real inputs, whose tensor guards the frame's
    guard filter may move into the saved graph (move_tensor_guards)."""
    global _pending
    graph = _wrapped(fn, capture, graph_compiler)
    inputs = _graph_inputs(gm, example_inputs) if graph.recipe is not None else None
    _pending = (graph, inputs) if inputs else None
    return graph


def _wrapped(fn: Any, capture: Any, graph_compiler: Any) -> TccdCompiledGraph:
    recipe = getattr(fn, "tccd_recipe", None)
    if recipe is not None:
        return TccdCompiledGraph(fn, recipe, getattr(fn, "tccd_plan_keys", []))
    if capture is None:
        return TccdCompiledGraph(fn, why_not="the graph gets no AOT recipe (see the tccd debug log: "
                                 "TCCD_AOT_CACHE=0, TCCD_LOCAL_CACHE=0, an untested torch, or a graph "
                                 "outside the recipe's class)")
    if capture.stored is None:
        return TccdCompiledGraph(fn, why_not=f"the graph gets no AOT recipe: {capture.why_not or 'not captured'}")
    kinds = ["inference"] if capture.stored.kind == "inference" else ["forward", "backward"]
    keys = [graph_compiler.daemon_keys.get(kind, "") for kind in kinds]
    if not all(keys):
        return TccdCompiledGraph(fn, why_not="a graph of it was not compiled by the daemon")
    return TccdCompiledGraph(fn, capture.stored, keys)
