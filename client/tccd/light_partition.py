"""AOTAutograd's partitioner without importing Inductor's pattern matcher.

    partition_fn = light_partition.wrap(partitioners.min_cut_rematerialization_partition)

Why: the min-cut partitioner's CSE (torch._functorch.compile_utils.fx_graph_cse) imports two
helpers from torch._inductor.pattern_matcher at every call, and importing that module pulls in
about 200 modules of Inductor (lowering, IR, codegen, jinja2...): 1.5-2.4 s of a cold first step
on an H200 (eighth session's zoo, the `partition` phase), 1.4 s standalone on the dev machine.
A process that compiles with Inductor has paid for that import already; a tccd process would pay
it for two small functions.

How: while the wrapped partitioner runs, and only while the real module is not imported,
sys.modules holds a stand-in for torch._inductor.pattern_matcher. Its functions are torch's own:
their source is read from the installed pattern_matcher.py (never executed as a module) and
compiled here with the module-level definitions they reference, so the partition is the one
torch's code makes, on every torch version (tests/python/test_light_partition.py compares the
graphs with and without the stand-in). The stand-in refuses to be built, and the partitioner
imports the real module as before, when torch's CSE no longer names what it imports from the
pattern matcher or a needed definition reads a global other than torch, re and builtins. Any
other name asked of the stand-in (another thread importing the pattern matcher meanwhile)
imports and returns the real module's.

TCCD_LIGHT_PARTITION=0 turns it off (config.py).
"""

from __future__ import annotations

import __future__
import ast
import builtins
import functools
import importlib
import importlib.util
import inspect
import logging
import sys
import threading
import types
from typing import Any, Callable, Dict, List, Optional, Set

from .stand_ins import real_attribute

log = logging.getLogger("tccd")

PATTERN_MATCHER = "torch._inductor.pattern_matcher"

# Module-level names of pattern_matcher.py a copied definition may read: what it imports as
# `import torch` / `import re`. Anything else (Inductor's config, IR...) refuses the stand-in.
_ALLOWED_GLOBALS = {"torch": "torch", "re": "re"}

_lock = threading.Lock()
_stand_in: Optional[types.ModuleType] = None
_built = False  # _stand_in was built (None then means: refused; use the real import)


def wrap(partition_fn: Callable[..., Any]) -> Callable[..., Any]:
    """partition_fn, run with the pattern-matcher stand-in in place (see the module doc)."""

    @functools.wraps(partition_fn)
    def partition(*args: Any, **kwargs: Any) -> Any:
        if PATTERN_MATCHER in sys.modules:
            return partition_fn(*args, **kwargs)
        stand_in = _get_stand_in()
        if stand_in is None:
            return partition_fn(*args, **kwargs)
        # setdefault: a thread that imported the real module meanwhile wins.
        installed = sys.modules.setdefault(PATTERN_MATCHER, stand_in) is stand_in
        try:
            return partition_fn(*args, **kwargs)
        finally:
            if installed and sys.modules.get(PATTERN_MATCHER) is stand_in:
                del sys.modules[PATTERN_MATCHER]

    return partition


def _get_stand_in() -> Optional[types.ModuleType]:
    global _stand_in, _built
    with _lock:
        if not _built:
            _built = True
            try:
                _stand_in = _build()
            except Exception as e:  # torch's sources changed shape: the real import then
                log.info("tccd: partitioner imports Inductor's pattern matcher (%s: %s)", type(e).__name__, e)
                _stand_in = None
        return _stand_in


def _names_cse_imports() -> List[str]:
    """What torch's fx_graph_cse imports from the pattern matcher (read from its source)."""
    from torch._functorch import compile_utils

    tree = ast.parse(inspect.getsource(compile_utils.fx_graph_cse))
    names = [alias.name for node in ast.walk(tree)
             if isinstance(node, ast.ImportFrom) and node.module == PATTERN_MATCHER for alias in node.names]
    if not names:
        raise LookupError("fx_graph_cse imports nothing from the pattern matcher")
    return names


def _build() -> types.ModuleType:
    wanted = _names_cse_imports()
    spec = importlib.util.find_spec(PATTERN_MATCHER)
    if spec is None or not spec.origin:
        raise LookupError(f"no source for {PATTERN_MATCHER}")
    with open(spec.origin, encoding="utf-8") as f:
        tree = ast.parse(f.read(), spec.origin)
    top: Dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            top[node.name] = node
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            top[node.targets[0].id] = node

    chosen: List[str] = []
    todo = list(wanted)
    while todo:
        name = todo.pop()
        if name in chosen:
            continue
        if name not in top:
            raise LookupError(f"{name} is not a plain module-level definition")
        chosen.append(name)
        for ref in _globals_read(top[name]):
            if ref in top:
                todo.append(ref)
            elif ref not in _ALLOWED_GLOBALS and not hasattr(builtins, ref):
                raise LookupError(f"{name} reads {ref}")

    body = [top[n] for n in sorted(chosen, key=lambda n: top[n].lineno)]  # source order
    for node in body:
        _strip_annotations(node)
    module = types.ModuleType(PATTERN_MATCHER, "tccd's stand-in: torch's definitions of " + ", ".join(wanted))
    namespace = module.__dict__
    namespace.update({alias: importlib.import_module(mod) for alias, mod in _ALLOWED_GLOBALS.items()})
    for node in body:
        _import_attribute_modules(node)
    code = compile(ast.Module(body=body, type_ignores=[]), spec.origin, "exec",
                   flags=__future__.annotations.compiler_flag, dont_inherit=True)
    exec(code, namespace)  # torch's own definitions, read from its installed source
    namespace["__getattr__"] = real_attribute(PATTERN_MATCHER, lambda m: m is _stand_in)
    return module


def _globals_read(node: ast.stmt) -> Set[str]:
    """Names a definition reads and does not bind itself (arguments, assignments); annotations,
    never evaluated, are not read."""
    bound: Set[str] = set()
    read: Set[str] = set()

    class Reads(ast.NodeVisitor):
        def generic_visit(self, sub: ast.AST) -> None:
            if isinstance(sub, ast.arg):
                bound.add(sub.arg)
            elif isinstance(sub, ast.Name):
                (read if isinstance(sub.ctx, ast.Load) else bound).add(sub.id)
            for field, value in ast.iter_fields(sub):
                if field in ("annotation", "returns"):
                    continue
                for child in value if isinstance(value, list) else [value]:
                    if isinstance(child, ast.AST):
                        self.visit(child)

    Reads().visit(node)
    return read - bound


def _strip_annotations(node: ast.AST) -> None:
    """Annotations are never evaluated (postponed), and may name what the stand-in lacks."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.arg):
            sub.annotation = None
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
            sub.returns = None


def _import_attribute_modules(node: ast.AST) -> None:
    """Imports the torch submodules a definition reaches by attribute (torch._higher_order_ops.
    auto_functionalize.AutoFunctionalized): the real pattern matcher's imports made them
    attributes of their packages. Never one of Inductor's."""
    for sub in ast.walk(node):
        parts = _dotted(sub)
        if not parts or parts[0] != "torch" or len(parts) < 3:
            continue
        for end in range(len(parts) - 1, 1, -1):
            name = ".".join(parts[:end])
            if name.startswith("torch._inductor") or name.startswith("torch.ops"):
                break
            if name in sys.modules:
                break
            try:
                importlib.import_module(name)
                break
            except ImportError:
                continue


def _dotted(node: ast.AST) -> Optional[List[str]]:
    parts: List[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or not parts:
        return None
    return [node.id] + parts[::-1]


