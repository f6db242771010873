"""torch's caching_precompile with tccd: a plain torch.compile(model, backend="tccd") whose next
process skips Dynamo's trace (issue 11; TCCD_CACHING_PRECOMPILE, default off).

    TCCD_CACHING_PRECOMPILE=1 python train.py   # compiles; writes Dynamo's package once every
                                                # graph of the function has its AOT recipe
    TCCD_CACHING_PRECOMPILE=1 python train.py   # torch.compile(model) loads it: no Dynamo trace

What torch does (torch/_dynamo/package.py and precompile_context.py, the same in 2.11 and 2.15).
With torch._dynamo.config.caching_precompile on, Dynamo keeps per function given to
torch.compile a package of its output: for every frame it compiled, the guards (a pickled
GuardsState) and the transformed bytecode, and the ids of the graphs that bytecode calls; the
backend records one artifact per graph under that id (gm._backend_id), in PrecompileContext.
torch.compiler.save_cache_artifacts() writes each package to
TORCHINDUCTOR_CACHE_DIR/dynamo/<sha256 of the function's qualname and first line>/entry. A new
process's torch.compile(fn) reads it (eval_frame.py, _optimize_catch_errors.__call__), checks
Python's and torch's versions, the GPU and CUDA, and the source lines of every function Dynamo
inlined, and installs the bytecode and the guards: the first call runs no trace, and a guard
that fails compiles as usual.

tccd's artifact (TccdCacheArtifact) is JSON only: a graph's AOT recipe and the daemon's keys of
its plans (precompile.graph_json, what the ahead-of-time flow saves), the daemon's identity
and the client knobs that shape plans (KNOBS). It loads through precompile.load_graph, as
load_compiled_function loads tccd's graphs: manifests by key, artifacts by digest (or the local
cache), AOTAutograd's runtime rebuilt from the recipe; the daemon compiles nothing. Nothing
pickled goes to the daemon: torch's part, the package file, is local, as Inductor's caches and
the ahead-of-time file are. Only graphs with an AOT recipe have an artifact (not under CUDA
graphs, not with lifted constants or symbolic sizes: aot_recipe.py); a function with another
graph is not written by tccd, so the next process traces it.

When tccd's part loads: after torch read the package and before torch installs it
(_checked_load wraps DiskDynamoCache.load: torch's own checks of the package, then tccd's plans),
because an error raised while torch installs leaves it initialising an initialised package,
which raises out of torch.compile (eval_frame.py, 2.11 and 2.15). So a changed source, another
torch or GPU, a manifest the daemon no longer holds, another daemon build, other plan-shaping
knobs, or a torch the recipe was not reviewed for (aot_guard.py) each make the process trace
as if there were no package, with one warning line.

TCCD_CACHING_PRECOMPILE=1 does (with TORCH_CACHING_PRECOMPILE=1 alone tccd records no artifact,
so torch's save marks tccd's graphs bypassed and the next process traces them: torch's own save
has the gaps below):
  - turns torch._dynamo.config.caching_precompile on at the backend's import, which
    torch.compile(backend="tccd") does before it reads the flag (install());
  - records tccd's artifacts (backend.py, once a graph's recipe is stored or was hit);
  - writes a function's package as soon as each of its graphs has its artifact (save_complete:
    after a training graph's first backward, an inference graph's first call, or right after
    Dynamo's compile of the frame when the graphs' recipes were known: DynamoCache.record_package
    is wrapped), rather than at a save_cache_artifacts() call the script would need; torch's
    save marks a graph whose artifact is missing as bypassed in the live package, which 2.11
    never clears, so tccd writes only complete packages;
  - works around torch's gaps, each in a function of its own below: a decorated function's
    module (_fix_main_module), modules Dynamo bound under names of its own (_carry_globals),
    guards Dynamo cannot save (_drop_unsaveable_guards), 2.11's assertion on them
    (_tolerate_unsaved_guards), 2.11's global names after a load (_mint_unbound_globals), 2.11's
    loaded tensor guards outside autocast (_load_guards_under_saved_autocast);
  - folds torch's warning per dropped guard into one line at the save, and torch's failed-load
    warning (a traceback) into one line with the reason (_OneLineLogs).

Guards: in this mode torch drops the ID_MATCH, CLOSURE_MATCH, WEAKREF_ALIVE and DICT_VERSION
guards and those built on them (MODULE_MATCH, BUILTIN_MATCH, FUNCTION_MATCH, ...) in every
process, the saving one included (guards.py, CheckFunctionManager), and tccd the other guards
Dynamo cannot save: what that misses is in README ("Warm start without Dynamo's trace").
"""

from __future__ import annotations

import collections
import json
import logging
import threading
import types
from typing import Any, Dict, List, Optional

from torch._dynamo.precompile_context import BackendCacheArtifact

from . import config as config_mod

log = logging.getLogger(__name__)

# Client knobs (config.Config fields) that change a graph's plans, its recipe or Dynamo's graph:
# a package saved under other values is not loaded (the next process traces and compiles as it
# would without a package). A knob missing here only makes a package keep older plans, which
# still fit its recipe (both were made together): never a wrong result.
KNOBS = (
    "partitioner",
    "log_softmax_lse",
    "patchify_gemm",
    "drop_detaches",
    "drop_bn_running_stats",
    "fold_scalar_fills",
    "saved_layout",
    "saved_padded",
    "released_inputs",
    "padded_outputs",
    "trace_once_logs",
)

# Loggers whose caching_precompile messages _OneLineLogs folds (install()).
_TORCH_LOGGERS = ("torch._dynamo.guards", "torch._dynamo.package", "torch._dynamo.eval_frame")

_lock = threading.Lock()
# Package key -> (graph ids, guarded codes per frame) when save_complete last wrote it, or why
# it did not (logged once per reason).
_written: Dict[str, Any] = {}
_dropped_guards: "collections.Counter[str]" = collections.Counter()  # guard type -> dropped
_dropped_reported = [0]  # how many of them a warning has named
_lean_dropped = [0]  # structure guards dropped by TCCD_PACKAGE_LEAN_GUARDS (_drop_unsaveable_guards)
_installed = [False]


def knobs(config: Any) -> Dict[str, Any]:
    """The KNOBS of `config`, as an artifact records them."""
    return {name: getattr(config, name) for name in KNOBS}


# While _checked_load reads a package: the artifacts unpickled, to load once the package passed
# torch's checks. None otherwise (each artifact then loads as it is unpickled).
_deferred = threading.local()


class TccdCacheArtifact(BackendCacheArtifact):
    """One tccd graph of Dynamo's package: `key` is the graph's id (gm._backend_id), `content`
    graph_json's bytes. Pickled as those two fields only. A graph read from a package is loaded
    before torch installs the package, so that one that cannot load makes torch trace instead:
    by _checked_load (TCCD_CACHING_PRECOMPILE), else as it is unpickled (torch's read then
    fails, which torch answers by tracing). after_deserialization hands the loaded function."""

    def __getstate__(self) -> Dict[str, Any]:
        return {"key": self.key, "content": self.content}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.key, self.content = state["key"], state["content"]
        pending = getattr(_deferred, "artifacts", None)
        if pending is not None:
            pending.append(self)
        else:
            self.loaded = load(self.key, self.content)

    def __deepcopy__(self, memo: Dict[int, Any]) -> "TccdCacheArtifact":
        # PrecompileContext.record_artifact deep-copies what it records; a loaded graph (plans,
        # modules on the device) is shared, not copied.
        copied = TccdCacheArtifact(self.key, self.content)
        if hasattr(self, "loaded"):
            copied.loaded = self.loaded
        return copied

    def after_deserialization(self) -> Any:
        loaded = getattr(self, "loaded", None)
        if loaded is None:  # recorded in this process, never unpickled: load it now
            loaded = self.loaded = load(self.key, self.content)
        return loaded


def load(backend_id: str, content: bytes) -> Any:
    """The function Dynamo's bytecode calls for graph `backend_id` (RuntimeError, saying why,
    when it cannot be loaded into this process)."""
    from .local_cache import daemon_identity
    from .precompile import load_graph

    name = f"package {backend_id.replace('__compiled_fn_', '')[:12]}"
    try:
        obj = json.loads(content)
        config = config_mod.get()
        if not isinstance(obj, dict):
            raise RuntimeError("not a tccd graph")
        saved_knobs, live_knobs = obj.get("knobs"), knobs(config)
        if saved_knobs != live_knobs:
            changed = sorted(k for k in KNOBS if (saved_knobs or {}).get(k) != live_knobs[k])
            raise RuntimeError(f"saved under other client knobs ({', '.join(changed)})")
        live_daemon = daemon_identity(config)
        if obj.get("daemon") != live_daemon:
            raise RuntimeError(f"saved with daemon {str(obj.get('daemon'))[:24]!r}, this one is {live_daemon[:24]!r}")
        return load_graph(obj, name, package=True).fn
    except Exception as e:
        raise RuntimeError(f"tccd: graph {name} of Dynamo's package cannot be loaded: {e}") from e


def backend_id(gm: Any) -> Optional[str]:
    """The id Dynamo gave `gm` in its package: set only while torch's caching_precompile is on
    and the frame has a package (output_graph.py)."""
    value = getattr(gm, "_backend_id", None)
    return value if isinstance(value, str) and value else None


def record(graph_id: str, recipe: Any, plan_keys: List[str]) -> None:
    """Records graph `graph_id`'s artifact for Dynamo's package (its recipe and plans), then
    writes the packages that are complete. Never fails a compile: a graph without its artifact
    is traced by the next process."""
    from torch._dynamo.precompile_context import PrecompileContext

    from .local_cache import daemon_identity
    from .precompile import graph_json

    config = config_mod.get()
    try:
        content = graph_json(recipe, plan_keys, daemon=daemon_identity(config), knobs=knobs(config))
        PrecompileContext.record_artifact(TccdCacheArtifact(graph_id, content))
    except Exception as e:  # deliberately ignored: that graph's function is traced next time
        log.warning("tccd: graph %s gets no artifact in Dynamo's package: %s", graph_id, e)
        return
    save_complete()


def save_complete() -> List[str]:
    """Writes Dynamo's package of every function whose graphs all have their artifact and that
    changed since its last write (a recompile adds frames and graphs); returns their keys."""
    from torch._dynamo.package import DynamoCache, PrecompileCacheEntry
    from torch._dynamo.precompile_context import PrecompileContext

    written = []
    with _lock:
        artifacts = dict(PrecompileContext._backend_artifacts_by_key)
        for key, entry in list(PrecompileContext._dynamo_cache_entries.items()):
            ids = tuple(sorted(entry.backend_ids))
            state = (ids, tuple(len(code.guarded_codes) for code in entry.codes))
            if not ids or any(i not in artifacts for i in ids) or _written.get(key) == state:
                continue
            why_not = _carry_globals(entry)
            if why_not is not None:
                if _written.get(key) != why_not:
                    log.warning("tccd: Dynamo's package of %s is not written: %s; the next process traces it",
                                entry.fn_name, why_not)
                _written[key] = why_not
                continue
            try:
                DynamoCache.write(PrecompileCacheEntry(dynamo=entry, backends={i: artifacts[i] for i in ids}), key)
            except Exception as e:  # deliberately ignored: the next process traces this function
                log.warning("tccd: Dynamo's package of %s was not written: %s", entry.fn_name, e)
                continue
            _written[key] = state
            written.append(key)
            log.info("tccd: wrote Dynamo's package of %s (%d graphs) under %s; %d structure guards left out "
                     "(TCCD_PACKAGE_LEAN_GUARDS)", entry.fn_name, len(ids), DynamoCache.path_prefix(), _lean_dropped[0])
        dropped = sum(_dropped_guards.values())
        if written and dropped > _dropped_reported[0]:
            _dropped_reported[0] = dropped
            log.warning("tccd: caching_precompile: torch dropped %d identity guards of the compiled functions (%s): "
                        "the loaded code does not notice such an object replaced by another of its type "
                        "(README, TCCD_CACHING_PRECOMPILE)", dropped,
                        ", ".join(f"{t} {n}" for t, n in _dropped_guards.most_common()))
    return written


def _checked_load(read_package: Any, fn: Any) -> Any:
    """DiskDynamoCache.load, then torch's own checks of the package (Python's, torch's and the
    GPU's versions, the inlined sources: CompilePackage.initialize), then tccd's graphs loaded:
    the package, or None (one warning line: torch compiles the function as if there were none).
    Without this, the graphs loaded while torch unpickled, before its checks: a package whose
    source had changed loaded its plans for nothing."""
    from torch._dynamo.package import CompilePackage
    from torch._dynamo.utils import counters

    _deferred.artifacts = []
    try:
        result = read_package(fn)
        artifacts, _deferred.artifacts = _deferred.artifacts, None
    finally:
        _deferred.artifacts = None
    if result is None:
        return None
    try:
        CompilePackage(fn, result.dynamo)  # raises RuntimeError where initialize() will
        for artifact in artifacts:
            artifact.loaded = load(artifact.key, artifact.content)
    except Exception as e:
        counters["dynamo_cache"]["dynamo_cache_hit"] -= 1
        counters["dynamo_cache"]["dynamo_cache_error"] += 1
        log.warning("tccd: Dynamo's package of %s is not used: %s; Dynamo traces the function (TCCD_CACHING_PRECOMPILE)",
                    getattr(fn, "__qualname__", fn), e)
        return None
    return result


def _code_names(code: Any) -> set:
    """Every name a code object and the code objects nested in it load by name."""
    names = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _code_names(const)
    return names


def _carry_globals(entry: Any) -> Optional[str]:
    """Makes the package carry the globals Dynamo bound for its bytecode, or says which one it
    cannot carry (then it is not written). Dynamo binds names in the frame's module (OutputGraph
    install_global*, owned by CleanupHooks): the package installs the compiled graphs, the resume
    functions and the `__import_*` aliases again, but not a module Dynamo loads under a name of
    its own (codegen.create_load_python_module: `___module_collections_<id>_c0`, which
    transformers' ModelOutput, an OrderedDict, needs on GPT-2's return): the loaded bytecode
    raised NameError at its first call (torch 2.15; 2.11 binds them the same way). Such a module
    is added to the entry's import aliases, which install() binds; any other name Dynamo bound
    (RNG state functions, a warnings wrapper, ...) keeps the package from being written."""
    import sys

    from torch._dynamo.package import SerializedCode
    from torch._dynamo.utils import CleanupManager

    installed: Dict[int, set] = {}
    for hooks in list(CleanupManager.instance.values.values()):
        for hook in hooks:
            installed.setdefault(id(hook.scope), set()).add(hook.name)
    carried = {name for code in entry.codes if code.install_to_global for name in code.function_names}
    for code in entry.codes:
        module = sys.modules.get(code.python_module)
        if module is None:
            return f"module {code.python_module} is not loaded"
        bound = installed.get(id(module.__dict__), set())
        names = set()
        for guarded in code.guarded_codes:
            names |= _code_names(SerializedCode.to_code_object(guarded.dynamo_code))
        for name in sorted(names & bound):
            if name in code.import_sources or name in code.backend_ids or name in carried or \
                    name.startswith("__builtins_dict__"):
                continue
            value = module.__dict__.get(name)
            if isinstance(value, types.ModuleType):
                code.import_sources[name] = value.__name__
                continue
            return f"its bytecode reads {name}, a global Dynamo bound that a package cannot carry"
    return None


def _drop_unsaveable_guards() -> None:
    """The guards Dynamo cannot save (CheckFunctionManager.UNSUPPORTED_SERIALIZATION_GUARD_TYPES
    and those built on them: precompile.serializable_guards) are dropped while a frame is
    packaged, after the user's guard_filter_fn, as torch's caching_precompile already drops the
    ID_MATCH family. Torch's own filter misses a CLASS_MATCH (or NN_MODULE, FUNCTION_MATCH,
    MODULE_MATCH) guard not built on ID_MATCH: T5's frame then failed to save ("CLASS_MATCH
    guard cannot be serialized") and its next process traced it. They are identity checks of
    the same kind as those torch drops (README).

    TCCD_PACKAGE_LEAN_GUARDS=1 (the default) also drops what the ahead-of-time flow's
    precompile.lean_guards drops: the guards on the modules' structure (empty hook dicts,
    attributes absent from an instance dict, the keys of their _modules / _parameters /
    _buffers and those dicts' types), and saves the kept guards without their user stacks. On
    ResNet-50 they are most of the package's guards and of its load (README, "Warm start: the
    package's guards"). Every tensor guard, type, constant and global-state guard stays."""
    import inspect

    import torch
    from torch._dynamo.guards import CheckFunctionManager

    from .precompile import lean_guards, serializable_guards

    init = CheckFunctionManager.__init__
    signature = inspect.signature(init)

    def saveable(user_filter: Any) -> Any:
        def keep(entries: Any) -> List[bool]:
            kept = list(user_filter(entries)) if user_filter is not None else [True] * len(entries)
            saved = serializable_guards(entries)
            for k, s, entry in zip(kept, saved, entries):
                if k and not s:
                    _dropped_guards[str(entry.guard_type)] += 1
            kept = [k and s for k, s in zip(kept, saved)]
            if config_mod.get().package_lean_guards:
                lean = lean_guards(entries)
                _lean_dropped[0] += sum(k and not l for k, l in zip(kept, lean))
                kept = [k and l for k, l in zip(kept, lean)]
            return kept

        return keep

    def init_with_saveable_guards(self: Any, *args: Any, **kwargs: Any) -> None:
        bound = signature.bind(self, *args, **kwargs)
        if (bound.arguments.get("save_guards") and not bound.arguments.get("strict_error")
                and torch._dynamo.config.caching_precompile):
            bound.arguments["guard_filter_fn"] = saveable(bound.arguments.get("guard_filter_fn"))
        init(*bound.args, **bound.kwargs)

    CheckFunctionManager.__init__ = init_with_saveable_guards


def _mint_unbound_globals() -> None:
    """A frame traced after a package was installed binds its globals under names the package
    did not bind already. Torch 2.11 names `install_global`'s globals from a per-process counter
    (`__builtins_dict___0`, ...): a process that loaded a package (whose install bound the
    saving process's names) and then traced a frame of the same module (a guard that failed)
    made the same name again, and CleanupHook.create asserted: every warm-pre cell of session
    16's first GPU run crashed so. 2.15 mints names free in the scope (unique_id_unbound_in);
    here 2.11 gets the same. `install_global_by_id` (`<prefix>_<id>_c<compile id>`) can meet a
    package's name too (the same object at the same address in a deterministic process): a name
    bound to the same object is reused, one bound to another gets a suffix."""
    from torch._dynamo import bytecode_transformation
    from torch._dynamo.output_graph import OutputGraph

    if not hasattr(bytecode_transformation, "unique_id_unbound_in"):
        def install_global(self: Any, prefix: str, value: Any) -> str:
            name = bytecode_transformation.unique_id(prefix)
            while name in self.global_scope:
                name = bytecode_transformation.unique_id(prefix)
            self.install_global_unsafe(name, value)
            return name

        OutputGraph.install_global = install_global

    by_id = OutputGraph.install_global_by_id

    def install_global_by_id(self: Any, prefix: str, value: Any) -> str:
        name = f"{prefix}_{id(value)}_c{self.compile_id}"
        if name in self.global_scope and name not in self.installed_globals:
            if self.global_scope[name] is value:  # bound by a package's install: the same object
                self.installed_globals.add(name)
                return name
            return self.install_global(f"{name}_", value)
        return by_id(self, prefix, value)

    OutputGraph.install_global_by_id = install_global_by_id


# Autocast device types whose enabled flag _load_guards_under_saved_autocast sets, by their
# index in GlobalStateGuard's autocast_state (c10's _AUTOCAST_SUPPORTED_DEVICES: CPU, CUDA, ...;
# checked at run time by toggling each).
_AUTOCAST_DEVICES = ("cpu", "cuda")


def _autocast_indices() -> Dict[str, int]:
    """Device type -> its index in the global state guard's autocast_state["enabled"]."""
    import torch

    def enabled() -> List[bool]:
        return json.loads(torch._C._dynamo.guards.GlobalStateGuard().__getstate__())["autocast_state"]["enabled"]

    out = {}
    for device in _AUTOCAST_DEVICES:
        was = torch.is_autocast_enabled(device)
        before = enabled()
        torch.set_autocast_enabled(device, not was)
        try:
            flipped = [i for i, (a, b) in enumerate(zip(before, enabled())) if a != b]
        finally:
            torch.set_autocast_enabled(device, was)
        if len(flipped) == 1:
            out[device] = flipped[0]
    return out


def _load_guards_under_saved_autocast() -> None:
    """torch 2.11 rebuilds a loaded package's tensor guards with the dispatch keys of the
    thread's state at load time, the torch.compile() call, usually outside the autocast region
    the compiled model is called in: the saving process built them inside it (AutocastCUDA in
    the expected key set), so every guard set of a model trained under autocast failed at the
    first call and Dynamo traced again (the zoo's GPU cells; reproduced with torch 2.11 on the
    CPU under CPU autocast; 2.15 keeps the saved keys). Here the guards are built with the
    autocast flags the package's own global-state guard saved, then the thread's are restored."""
    import contextlib

    import torch
    import torch._dynamo.package as package

    from .aot_guard import torch_minor

    if torch_minor(torch.__version__) != "2.11":
        return
    try:
        indices = _autocast_indices()
    except Exception as e:  # deliberately ignored: guards built as torch builds them
        log.debug("tccd: autocast state not readable: %s", e)
        return
    build = package.load_guard_manager

    @contextlib.contextmanager
    def saved_autocast(guards_state: Any) -> Any:
        was = {device: torch.is_autocast_enabled(device) for device in indices}
        try:
            saved = json.loads(guards_state.output_graph.global_state_guard.__getstate__())["autocast_state"]
            for device, index in indices.items():
                torch.set_autocast_enabled(device, bool(saved["enabled"][index]))
        except Exception as e:  # deliberately ignored: guards built as torch builds them
            log.debug("tccd: the package's autocast state not applied: %s", e)
        try:
            yield
        finally:
            for device, flag in was.items():
                torch.set_autocast_enabled(device, flag)

    def load_guard_manager(guards_state: Any, *args: Any, **kwargs: Any) -> Any:
        with saved_autocast(guards_state):
            return build(guards_state, *args, **kwargs)

    package.load_guard_manager = load_guard_manager  # install()'s lookup of the module's name


def _build_loaded_guards_once() -> None:
    """A loaded package's guards are built once, not twice. While caching_precompile is on,
    CheckFunctionManager always has a guard filter (its own, which drops the ID_MATCH family),
    and with a filter it builds every guard twice: once to make the filter's entries, then the
    kept ones (guards.py, 2.11:3837-3885, 2.15:5223-5285). A loaded package's guards were saved
    after that filter ran in the saving process (serialize_guards pickles the filtered list), so
    at load the filter keeps all of them and the first build is thrown away: about half of
    torch's `precompile_build_guards` (ResNet-50 on the CPU: README "Warm start: the package's
    guards"). Here torch's flag is off while a loaded function's guards are built (no filter,
    one build, the same guards); tccd's own filter (_drop_unsaveable_guards) runs only where
    guards are saved. torch's config is process-wide: a frame Dynamo traces on another thread
    during that build (~0.1 s inside torch.compile() or load_compiled_function) sees the flag
    off, as if caching_precompile were not on for it. TCCD_LOADED_GUARDS_ONCE=0: as torch does."""
    import torch
    import torch._dynamo.package as package

    build = package.load_guard_manager

    def load_guard_manager(*args: Any, **kwargs: Any) -> Any:
        if not config_mod.get().loaded_guards_once:
            return build(*args, **kwargs)
        with torch._dynamo.config.patch(caching_precompile=False):
            return build(*args, **kwargs)

    package.load_guard_manager = load_guard_manager  # install()'s and aot_compile's lookup of the module's name


def _tolerate_unsaved_guards() -> None:
    """A frame whose guards cannot be saved (PackageError from serialize_guards) leaves the
    package, as torch 2.15 does, instead of failing the compile as torch 2.11 does: 2.11's
    CheckFunctionManager drops the package (bypass_package) but leaves guards_state None, and
    convert_frame then asserts it is not None (2.11 convert_frame.py:1641-1643, which tests its
    local `package`, not the output graph's). Here the frame is bypassed the same way and given
    empty guard bytes, which a bypassed entry never stores (add_guarded_code returns at once).
    Only while caching_precompile packages the frame: aot_compile's save still raises."""
    import torch
    from torch._dynamo import exc
    from torch._dynamo.guards import CheckFunctionManager

    serialize = CheckFunctionManager.serialize_guards

    def serialize_or_bypass(self: Any, builder: Any, sorted_guards: Any, output_graph: Any) -> bytes:
        try:
            return serialize(self, builder, sorted_guards, output_graph)
        except exc.PackageError as e:
            if (torch._dynamo.config.strict_precompile or not torch._dynamo.config.caching_precompile
                    or getattr(output_graph, "package", None) is None):
                raise
            output_graph.bypass_package(f"Guard evaluation failed: {e}")
            return b""

    CheckFunctionManager.serialize_guards = serialize_or_bypass


def _fix_main_module(package: Any) -> None:
    """The module whose globals the compiled function's own code runs with, for its package
    entry. torch records the function's __module__ (CompilePackage.initialize, 2.11 and 2.15),
    which functools.wraps copies from the wrapped function: transformers' forwards are
    `wrapper` of transformers.utils.generic (can_return_tuple) with the model's module as
    __module__, so a new process built the guards over the model module's globals (a KeyError
    on generic's `_is_torch_available`: every guard set failed, GPT-2 traced again) and would
    install the bytecode's globals there. The code's own globals say where it runs."""
    fn = getattr(package, "_innermost_fn", None)
    entry = getattr(package, "_codes", {}).get(getattr(fn, "__code__", None))
    module = getattr(fn, "__globals__", {}).get("__name__")
    if entry is not None and isinstance(module, str) and entry.python_module != module:
        log.debug("tccd: Dynamo's package of %s: its code runs in %s, not %s", getattr(fn, "__qualname__", fn),
                  module, entry.python_module)
        entry.python_module = module


class _OneLineLogs(logging.Filter):
    """torch's caching_precompile messages as one line each: the per-guard "... is dropped with
    caching_precompile=True" warnings counted (save_complete names them once), a failed load's
    traceback folded into its message."""

    def filter(self, record: logging.LogRecord) -> bool:
        msg = record.msg if isinstance(record.msg, str) else ""
        if "is dropped with caching_precompile" in msg:
            guard_type = record.args[0] if isinstance(record.args, tuple) and record.args else "?"
            _dropped_guards[str(guard_type)] += 1
            return False
        if msg.startswith("Failed to load") and record.exc_info and record.exc_info[1] is not None:
            try:
                text = record.getMessage()
            except (TypeError, ValueError):
                text = msg
            error = str(record.exc_info[1])
            # torch 2.15 wraps the error in one that repeats the message's own words.
            text = error if error.startswith(text) else f"{text}: {error}"
            record.msg = f"{text}; Dynamo traces the function (TCCD_CACHING_PRECOMPILE)"
            record.args = ()
            record.exc_info = None
            record.exc_text = None
        return True


def install() -> bool:
    """TCCD_CACHING_PRECOMPILE=1: torch's caching_precompile on (idempotent), and its messages
    one line each. Returns whether it is on. Called at the backend's import."""
    if _installed[0]:
        return True
    if not config_mod.get().caching_precompile:
        return False
    import torch._dynamo.config as dynamo_config

    if not hasattr(dynamo_config, "caching_precompile"):
        log.warning("tccd: TCCD_CACHING_PRECOMPILE=1, but this torch has no caching_precompile: ignored")
        return False
    from torch._dynamo.package import DynamoCache

    # Torch's flag goes on last: if a step below raises (a torch whose internals moved), the
    # knob has no effect (backend.py logs why) rather than half of it.
    read_package = DynamoCache.load
    DynamoCache.load = lambda fn: _checked_load(read_package, fn)  # eval_frame's lookup, at torch.compile()
    # Dynamo records a frame's package entry after the backend returned (convert_frame.py): a
    # graph whose artifact came at once (an AOT recipe hit) completes its package only then.
    record_package = DynamoCache.record_package

    def record_and_save(package: Any) -> None:
        _fix_main_module(package)
        record_package(package)
        save_complete()

    DynamoCache.record_package = record_and_save  # the instance's attribute: convert_frame's lookup
    _drop_unsaveable_guards()
    _tolerate_unsaved_guards()
    _mint_unbound_globals()
    _load_guards_under_saved_autocast()
    _build_loaded_guards_once()
    one_line = _OneLineLogs()
    for name in _TORCH_LOGGERS:
        logging.getLogger(name).addFilter(one_line)
    dynamo_config.caching_precompile = True
    _installed[0] = True
    log.debug("tccd: torch's caching_precompile is on (TCCD_CACHING_PRECOMPILE=1)")
    return True
