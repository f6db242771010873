"""The field sets of AOTAutograd's classes that tccd's AOT recipe reads, for a torch source tree.

    python tests/tools/aot_field_sets.py TORCH_PACKAGE_DIR     # e.g. .venv/lib/python3.11/site-packages/torch

Prints the snapshot as JSON (one torch minor's entry of client/tccd/aot_reviewed.py). It reads
the sources with `ast` (no import), so it works on a torch that cannot be imported here, such
as another architecture's wheel unpacked to read torch 2.11's sources. The result is what
client/tccd/aot_guard.py computes from the live torch with dataclasses.fields();
tests/python/test_aot_guard.py checks that both agree on the installed torch.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import sys
from typing import Dict, List

# Mirrors aot_guard.WATCHED (kept apart so that this tool runs without torch).
SCHEMAS = "_functorch/_aot_autograd/schemas.py"
RUNTIME_WRAPPERS = "_functorch/_aot_autograd/runtime_wrappers.py"
SCHEMA_CLASSES = ("ViewAndMutationMeta", "InputAliasInfo", "OutputAliasInfo", "PlainTensorMeta", "MemoryFormatMeta")
SCHEMA_ENUMS = ("MutationType", "OutputType")


def _is_dataclass(node: ast.ClassDef) -> bool:
    for d in node.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name == "dataclass":
            return True
    return False


def _own_fields(node: ast.ClassDef) -> List[str]:
    out = []
    for stmt in node.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            ann = ast.unparse(stmt.annotation)
            if "ClassVar" in ann or "InitVar" in ann or ann.endswith("KW_ONLY"):
                continue
            out.append(stmt.target.id)
    return out


def _tree(path: str) -> ast.Module:
    with open(path, encoding="utf-8") as f:
        return ast.parse(f.read())


def _classes(path: str) -> Dict[str, ast.ClassDef]:
    return {n.name: n for n in _tree(path).body if isinstance(n, ast.ClassDef)}


def _functional_enums(path: str) -> Dict[str, List[str]]:
    """`Name = Enum("Name", ("a", "b", ...))` at module level: name -> members."""
    out = {}
    for n in _tree(path).body:
        if (isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
                and getattr(n.value.func, "id", "") == "Enum" and len(n.value.args) == 2
                and isinstance(n.value.args[1], (ast.Tuple, ast.List))):
            out[n.targets[0].id] = [e.value for e in n.value.args[1].elts if isinstance(e, ast.Constant)]
    return out


def _fields(name: str, classes: Dict[str, ast.ClassDef]) -> List[str]:
    """dataclasses.fields() order: bases first (those defined in the same module)."""
    node = classes[name]
    out: List[str] = []
    for base in node.bases:
        base_name = base.id if isinstance(base, ast.Name) else None
        if base_name in classes and _is_dataclass(classes[base_name]):
            for f in _fields(base_name, classes):
                if f not in out:
                    out.append(f)
    for f in _own_fields(node):
        if f not in out:
            out.append(f)
    return out


def _enum_members(node: ast.ClassDef) -> List[str]:
    out = []
    for stmt in node.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            out.append(stmt.targets[0].id)
    return out


def field_sets(torch_dir: str) -> Dict[str, List[str]]:
    schemas = _classes(os.path.join(torch_dir, SCHEMAS))
    wrappers = _classes(os.path.join(torch_dir, RUNTIME_WRAPPERS))
    snap: Dict[str, List[str]] = {}
    for name in SCHEMA_CLASSES:
        snap[f"schemas.{name}"] = sorted(_fields(name, schemas))
    functional = _functional_enums(os.path.join(torch_dir, SCHEMAS))
    for name in SCHEMA_ENUMS:
        members = _enum_members(schemas[name]) if name in schemas else functional[name]
        snap[f"schemas.{name}"] = sorted(members)
    # Every class of the runtime wrappers module (a new wrapper is a new runtime behaviour), and
    # the fields of its dataclasses.
    snap["runtime_wrappers"] = sorted(wrappers)
    for name, node in sorted(wrappers.items()):
        if _is_dataclass(node):
            snap[f"runtime_wrappers.{name}"] = sorted(_fields(name, {**schemas, **wrappers}))
    return snap


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("torch_dir")
    args = parser.parse_args()
    json.dump(field_sets(args.torch_dir), sys.stdout, indent=1, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
