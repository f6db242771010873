"""Symbolic sizes on the client: canonical symbol names going out, expression values coming in.

Going out (serialize.py): Dynamo's ShapeEnv names its size symbols after its own counters (s0,
s77, ...). `SymbolNames` renames them s0, s1, ... in the order the graph first mentions them, so
that the compile key does not depend on Dynamo's numbering.

Coming in (runtime.py): a plan of a symbolic graph carries expressions in the daemon's canonical
text (codegen/ir/sym_expr.h: integers, sN, + - * // **, Mod, Max, Min, FloorDiv, parentheses).
`compile_expr` checks one against that grammar with Python's ast (so no other code can ever run)
and returns a function of the symbols' values; `bind_symbols` reads those values from the actual
inputs' sizes at each call.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .errors import ArtifactError, Unsupported

_SYMBOL = re.compile(r"^s(\d+)$")
_NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


def _floordiv(a: int, b: int) -> int:
    return a // b


_FUNCTIONS: Dict[str, Callable[..., int]] = {
    "Mod": lambda a, b: a % b,
    "PythonMod": lambda a, b: a % b,
    "FloorDiv": _floordiv,
    "CleanDiv": _floordiv,
    "Max": max,
    "Min": min,
}
_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.Pow)


def _check(node: ast.AST, text: str) -> None:
    if isinstance(node, ast.Expression):
        _check(node.body, text)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, _BINOPS):
        _check(node.left, text)
        _check(node.right, text)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        _check(node.operand, text)
    elif isinstance(node, ast.Constant) and type(node.value) is int:
        pass
    elif isinstance(node, ast.Name) and _SYMBOL.match(node.id):
        pass
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCTIONS
        and not node.keywords
    ):
        for arg in node.args:
            _check(arg, text)
    else:
        raise ArtifactError(f"symbolic expression {text!r}: {type(node).__name__} is not allowed")


def compile_expr(text: str) -> Callable[[Dict[str, int]], int]:
    """A function of {"s0": value, ...} computing the expression (ArtifactError if not in the
    grammar; at call time a missing symbol raises NameError, which the plan reports)."""
    if len(text) > 4096:
        raise ArtifactError("symbolic expression longer than 4096 characters")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as e:
        raise ArtifactError(f"symbolic expression {text!r}: {e}") from None
    _check(tree, text)
    code = compile(tree, "<tccd-sym>", "eval")
    namespace = {"__builtins__": {}, **_FUNCTIONS}
    return lambda symbols: int(eval(code, namespace, symbols))  # noqa: S307 (checked above)


def symbol_index(text: str) -> Optional[int]:
    """N when `text` is exactly the symbol sN, else None."""
    m = _SYMBOL.match(text.strip())
    return int(m.group(1)) if m else None


class SymbolNames:
    """Renames a graph's sympy symbols s0, s1, ... in first-appearance order."""

    def __init__(self) -> None:
        self.by_original: Dict[Any, Any] = {}  # Dynamo's sympy Symbol -> ours
        self.shape_env: Any = None  # the ShapeEnv of the first symbol seen

    def text(self, value: Any) -> str:
        """The canonical text of a SymInt (or a sympy expression)."""
        import sympy

        node = getattr(value, "node", None)
        expr = getattr(node, "expr", value)
        if self.shape_env is None and node is not None:
            self.shape_env = getattr(node, "shape_env", None)
        if not isinstance(expr, sympy.Basic):
            raise Unsupported(f"symbolic value {value!r} has no sympy expression")
        # First appearance: symbols in the order the expression's text names them.
        names = {str(s): s for s in expr.free_symbols}
        for name in _NAME.findall(str(expr)):
            symbol = names.get(name)
            if symbol is None or symbol in self.by_original:
                continue
            if not name.startswith("s"):
                # Unbacked (u0: data-dependent) or float symbols: no input size to bind them.
                raise Unsupported(f"symbolic size {name} is not an input size (data-dependent?)")
            self.by_original[symbol] = sympy.Symbol(f"s{len(self.by_original)}", integer=True, positive=True)
        if not expr.free_symbols:
            return str(expr)
        return str(expr.xreplace(self.by_original))

    def facts(self) -> List[str]:
        """The ShapeEnv's guards over this graph's symbols, and their value ranges, renamed."""
        import sympy

        env = self.shape_env
        if env is None:
            return []
        ours = set(self.by_original)
        out: List[str] = []
        for guard in getattr(env, "guards", []):
            expr = getattr(guard, "expr", None)
            if isinstance(expr, sympy.Basic) and expr.free_symbols and expr.free_symbols <= ours:
                out.append(str(expr.xreplace(self.by_original)))
        ranges = getattr(env, "var_to_range", {})
        for original, symbol in self.by_original.items():
            r = ranges.get(original)
            if r is None:
                continue
            for bound, op in ((r.lower, ">="), (r.upper, "<=")):
                try:
                    if bound.is_finite:
                        out.append(f"{symbol} {op} {int(bound)}")
                except (TypeError, ValueError, AttributeError):
                    continue  # an unbounded or non-integer end tells kernels nothing
        return sorted(set(out))


def input_bindings(metas: Sequence[Any]) -> List[Tuple[int, int, int, int]]:
    """(input, 0 for sizes or 1 for strides, dim, symbol) for every dim of the plan inputs whose
    expression is a bare symbol: where each call reads the symbols' values."""
    out = []
    for i, meta in enumerate(metas):
        for part, dims in ((0, meta.sizes), (1, meta.strides)):
            for d, dim in enumerate(dims):
                if dim.WhichOneof("kind") == "expr":
                    index = symbol_index(dim.expr)
                    if index is not None:
                        out.append((i, part, d, index))
    return out
