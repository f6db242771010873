"""AOT recipes: what it takes to rebuild AOTAutograd's runtime for one Dynamo graph without
tracing it, captured on a cold compile and stored as verified JSON.

    capture = RecipeCapture(key, store, num_inputs)   # the backend, before aot_autograd runs
    capture.forward(gm, plan_key) / capture.inference(gm, plan_key)   # from the fw compiler
    capture.backward(gm, plan_key)                    # from the bw compiler: stores the recipe
    recipe = store.get(key)                           # a later process: Recipe or None

A recipe names the plans of the graphs AOTAutograd produced (by request hash: their manifests
are in the local cache under those names) and the part of AOTAutograd's ViewAndMutationMeta
that its runtime wrappers use. Only the simple, common class is captured (see
`_unsupported`): plain tensors, no output aliasing an input or an intermediate, input mutations
that are data-only mutations of inputs that do not require grad (BatchNorm running stats), no
RNG functionalisation, effect tokens, SymInts or opaque objects saved for backward. Anything
else gets no recipe, and the graph takes the normal AOTAutograd path in every process. The deny
list was reviewed against the field sets in aot_reviewed.py: aot_guard.py turns recipes off
for any torch whose AOTAutograd has fields or wrappers that list does not know of.

Layout under the local cache directory:
    aot-recipes/<key>   "<sha256 of the rest>\\n" + the recipe as JSON
Written to a temporary file and renamed into place; a file whose digest, JSON or schema does not
check out is deleted and is a miss (logged at debug level), never an error.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
from typing import Any, Dict, List, Optional

import torch

from .local_cache import _read, _write_atomic, sha256_hex

log = logging.getLogger(__name__)

# Bump when the meaning of a field changes or fields are added (older files are then misses).
#   1: initial format.
RECIPE_FORMAT = 2  # 2: unsafe_view_outputs

_MEMORY_FORMATS = {
    "contiguous_format": torch.contiguous_format,
    "channels_last": torch.channels_last,
    "channels_last_3d": torch.channels_last_3d,
}
_MEMORY_FORMAT_NAMES = {v: k for k, v in _MEMORY_FORMATS.items()}


@dataclasses.dataclass
class Recipe:
    """Field names follow AOTAutograd's runtime (runtime_wrappers.py)."""

    key: str
    kind: str  # "training" (fw + bw plans, an autograd.Function) or "inference"
    num_inputs: int
    fw_plan: str  # request hash of the forward (or inference) graph
    bw_plan: str  # request hash of the backward graph; "" for inference
    # Inputs whose updated values the forward returns first, in this order, to be copied back.
    mutated_inputs: List[int]
    num_outputs: int  # user outputs, after the mutated inputs
    output_requires_grad: List[bool]  # per user output; False: marked non-differentiable
    # User outputs that alias only an intermediate (AOTAutograd's unsafe_view_alias): training
    # returns them through aten._unsafe_view, as AOTAutograd's CompiledFunction does, so the
    # caller gets a tensor of its own (not a view of a multi-output function's result).
    unsafe_view_outputs: List[int]
    saved_is_input: List[bool]  # per tensor saved for backward: is it a forward input
    # Positions (in the forward's returns: mutated inputs, then user outputs) of the outputs
    # whose gradients the backward takes, and the layout each must be coerced to:
    # {"memory_format": name} or {"size": [...], "stride": [...]}.
    tangent_sources: List[int]
    tangent_layouts: List[Dict[str, Any]]
    detach_inputs: List[int]  # inputs detached before the forward (gradient statically None)
    disable_amp: bool  # autocast was on while tracing: run the plans with it off
    deterministic: bool  # torch.are_deterministic_algorithms_enabled() while tracing

    @property
    def num_saved(self) -> int:
        return len(self.saved_is_input)

    def to_json(self) -> bytes:
        return json.dumps({"format": RECIPE_FORMAT, **dataclasses.asdict(self)}, sort_keys=True).encode()

    @classmethod
    def from_json(cls, data: bytes) -> "Recipe":
        """Parses and checks a recipe; ValueError says what is wrong."""
        try:
            obj = json.loads(data)
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise ValueError(f"not JSON: {e}") from None
        if not isinstance(obj, dict) or obj.pop("format", None) != RECIPE_FORMAT:
            raise ValueError(f"not a format {RECIPE_FORMAT} recipe")
        names = {f.name for f in dataclasses.fields(cls)}
        if set(obj) != names:
            raise ValueError(f"fields {sorted(set(obj) ^ names)} missing or unknown")
        recipe = cls(**obj)
        recipe._check()
        return recipe

    def _check(self) -> None:
        def ints(xs, bound):
            return isinstance(xs, list) and all(type(x) is int and 0 <= x < bound for x in xs)

        def bools(xs):
            return isinstance(xs, list) and all(type(x) is bool for x in xs)

        n = self.num_inputs
        ok = (
            self.kind in ("training", "inference")
            and type(n) is int and n >= 0
            and type(self.num_outputs) is int and self.num_outputs >= 0
            and all(isinstance(s, str) for s in (self.key, self.fw_plan, self.bw_plan))
            and (self.bw_plan != "") == (self.kind == "training")
            and ints(self.mutated_inputs, n)
            and bools(self.output_requires_grad) and len(self.output_requires_grad) == self.num_outputs
            and ints(self.unsafe_view_outputs, self.num_outputs)
            and bools(self.saved_is_input)
            and ints(self.tangent_sources, len(self.mutated_inputs) + self.num_outputs)
            and isinstance(self.tangent_layouts, list)
            and len(self.tangent_layouts) == len(self.tangent_sources)
            and all(_layout_ok(t) for t in self.tangent_layouts)
            and ints(self.detach_inputs, n)
            and type(self.disable_amp) is bool and type(self.deterministic) is bool
        )
        if not ok:
            raise ValueError("fields out of range or of the wrong type")


def _layout_ok(layout: Any) -> bool:
    if not isinstance(layout, dict):
        return False
    if set(layout) == {"memory_format"}:
        return layout["memory_format"] in _MEMORY_FORMATS
    if set(layout) == {"size", "stride"}:
        return all(
            isinstance(v, list) and all(type(d) is int for d in v) for v in layout.values()
        ) and len(layout["size"]) == len(layout["stride"])
    return False


@dataclasses.dataclass
class SymbolicRecipe(Recipe):
    """A recipe of a graph with symbolic sizes (TCCD_LEAN_SYMBOLIC): kept in the process that
    traced it, never stored or shared (its plans' keys and layouts hold symbols), so it needs
    no JSON format. What AOTAutograd's runtime does beyond the plain class for such a graph:
    its integer inputs (the sizes Dynamo passes) go to the plans, which drop them and bind
    their symbols; the forward returns the SymInts the backward needs after the saved tensors
    (`num_symints_saved`, AOT's ctx.symints), which the backward takes first; the user outputs
    and saved tensors with symbolic dims are marked for Dynamo as AOT marks them."""

    fw_scalar_inputs: int = 0  # integer (SymInt) inputs of the forward graph
    num_symints_saved: int = 0  # SymInts the forward saves for the backward, after the tensors
    # Per user output, its dims of symbolic size (AOT's OutputAliasInfo.dynamic_dims), or None.
    output_dynamic_dims: List[Optional[List[int]]] = dataclasses.field(default_factory=list)
    # Saved tensor index -> its dims of symbolic size (AOT's dynamic_saved_tensors_idxs).
    saved_dynamic_dims: Dict[int, List[int]] = dataclasses.field(default_factory=dict)

    def _check(self) -> None:
        super()._check()
        n_saved = len(self.saved_is_input)
        ok = (
            type(self.fw_scalar_inputs) is int and 0 <= self.fw_scalar_inputs <= self.num_inputs
            and type(self.num_symints_saved) is int and self.num_symints_saved >= 0
            and len(self.output_dynamic_dims) == self.num_outputs
            and all(0 <= i < n_saved for i in self.saved_dynamic_dims)
        )
        if not ok:
            raise ValueError("symbolic fields out of range or of the wrong type")


def memory_format(name: str) -> torch.memory_format:
    return _MEMORY_FORMATS[name]


# ---------------------------------------------------------------------------------------------
# Store
# ---------------------------------------------------------------------------------------------


class RecipeStore:
    """Thread- and process-safe (atomic renames, verified reads)."""

    def __init__(self, cache_dir: str):
        self.root = os.path.join(cache_dir, "aot-recipes")

    def _path(self, key: str) -> str:
        if len(key) != 64 or any(c not in "0123456789abcdef" for c in key):
            raise ValueError(f"not a lowercase hex SHA-256 key: {key!r}")
        return os.path.join(self.root, key)

    def get(self, key: str) -> Optional[Recipe]:
        path = self._path(key)
        try:
            data = _read(path)
        except OSError as e:
            log.debug("tccd aot cache: cannot read %s: %s", path, e)
            return None
        if data is None:
            return None
        digest, sep, body = data.partition(b"\n")
        try:
            if not sep or digest.decode("ascii") != sha256_hex(body):
                raise ValueError("checksum mismatch")
            recipe = Recipe.from_json(body)
            if recipe.key != key:
                raise ValueError(f"recipe of key {recipe.key[:16]}")
        except ValueError as e:
            log.debug("tccd aot cache: deleting %s: %s", path, e)
            try:
                os.unlink(path)
            except OSError:  # deliberately ignored: a miss either way; put() replaces it
                pass
            return None
        return recipe

    def put(self, recipe: Recipe) -> None:
        body = recipe.to_json()
        _write_atomic(self._path(recipe.key), sha256_hex(body).encode() + b"\n" + body)


# ---------------------------------------------------------------------------------------------
# Capture (cold path, inside AOTAutograd's compilers)
# ---------------------------------------------------------------------------------------------


def _fw_metadata() -> Any:
    """AOTAutograd's ViewAndMutationMeta of the graph being compiled; set on the tracing
    context before the forward/inference compiler is called."""
    ctx = torch._guards.TracingContext.try_get()
    return getattr(ctx, "fw_metadata", None) if ctx is not None else None


def _unsupported(md: Any, num_inputs: int, symbolic: bool = False) -> Optional[str]:
    """Why this metadata is outside the class a recipe reproduces, or None. `symbolic`: a
    graph with symbolic sizes (SymbolicRecipe), whose outputs may have dynamic dims and whose
    forward may save SymInts for the backward."""
    from torch._functorch._aot_autograd.schemas import MutationType, OutputType

    if md is None:
        return "AOTAutograd's metadata is not on the tracing context"
    if len(md.input_info) != num_inputs:
        return f"{len(md.input_info)} AOT inputs for {num_inputs} graph inputs"
    metas = list(md.subclass_inp_meta) + list(md.subclass_fw_graph_out_meta) + list(md.subclass_tangent_meta)
    if any(type(m).__name__ == "SubclassCreationMeta" for m in metas):
        return "tensor subclasses"
    if md.num_intermediate_bases:
        return "outputs alias intermediates"
    for i, out in enumerate(md.output_info):
        # unsafe_view_alias: an output that aliased only an intermediate, which AOTAutograd's
        # trace already hid behind aten._unsafe_view; its runtime treats it exactly as
        # non_alias (runtime_wrappers' _HANDLER_MAP: NoopAliasHandler), and so does ours.
        if out.output_type not in (OutputType.non_alias, OutputType.unsafe_view_alias):
            return f"output {i} is {out.output_type.name}"
        if not (isinstance(out.raw_type, type) and issubclass(out.raw_type, torch.Tensor)):
            return f"output {i} is a {out.raw_type}"
        if getattr(out, "dynamic_dims", None) and not symbolic:
            return f"output {i} has dynamic dims"
    for i, inp in enumerate(md.input_info):
        if not (inp.mutates_data or inp.mutates_metadata):
            continue
        # A data mutation of a no-grad input: in the graph (copy_ nodes the plan runs: the
        # backend keeps such mutations in the graph) or, where AOTAutograd could not keep it
        # there, copied back after the forward like AOTAutograd's epilogue does.
        if (
            inp.mutates_metadata
            or inp.requires_grad
            or getattr(inp, "mutates_storage_metadata", False)
            or getattr(inp, "mutation_inductor_storage_resize", False)
            or inp.mutation_type not in (MutationType.MUTATED_OUT_GRAPH, MutationType.MUTATED_IN_GRAPH)
        ):
            return f"input {i} has a mutation other than a data mutation of a no-grad input"
    expected = [i for i, inp in enumerate(md.input_info)
                if inp.mutates_data and inp.mutation_type == MutationType.MUTATED_OUT_GRAPH]
    if list(md.mutated_inp_runtime_indices) != expected:
        return "unexpected mutated input order"
    if md.is_rng_op_functionalized or getattr(md, "num_graphsafe_rng_states", 0):
        return "functionalised RNG"
    if getattr(md, "act_input_paths", None):
        return "inputs with activation paths (AsyncCollectiveTensor)"
    if any(s is not None for s in getattr(md, "mutated_inp_stream_indices", None) or ()):
        return "input mutations on user streams"
    if md.tokens or getattr(md, "num_backward_tokens", 0):
        return "effect tokens"
    if getattr(md, "grad_enabled_mutation", None) is not None:
        return "the graph changes grad mode"
    if getattr(md, "indices_of_inputs_that_requires_grad_with_mutations_in_bw", None):
        return "input mutations in the backward"
    fields = ["num_opaque_objects_saved_for_bw", "num_tensors_saved_with_no_vc_check"]
    if not symbolic:
        fields.insert(0, "num_symints_saved_for_bw")
    for field in fields:
        if getattr(md, field, 0):
            return f"{field} = {getattr(md, field)}"
    return None


def _tangent_layout(meta: Any) -> Optional[Dict[str, Any]]:
    """A PlainTensorMeta's expected tangent layout as JSON, or None if there is none."""
    mf = getattr(meta, "memory_format", None)
    if isinstance(mf, torch.memory_format):  # older torch: the memory format itself
        return {"memory_format": _MEMORY_FORMAT_NAMES[mf]}
    if mf is None:
        return None
    if getattr(mf, "memory_format", None) is not None:
        return {"memory_format": _MEMORY_FORMAT_NAMES[mf.memory_format]}
    size, stride = getattr(mf, "size", None), getattr(mf, "stride", None)
    if size is None or stride is None:
        return None
    return {"size": [int(d) for d in size], "stride": [int(d) for d in stride]}


def _output_nodes(gm: torch.fx.GraphModule) -> List[Any]:
    return list(gm.graph.output_node().args[0])


def _placeholders(gm: torch.fx.GraphModule) -> List[Any]:
    return [n for n in gm.graph.nodes if n.op == "placeholder"]


def _is_sym(node: Any) -> bool:
    """A graph value that is an integer size (a SymInt, or an int Dynamo specialised)."""
    return isinstance(node, torch.fx.Node) and isinstance(node.meta.get("val"), (torch.SymInt, int))


def _symbolic_dims(value: torch.Tensor) -> List[int]:
    return [d for d, size in enumerate(value.shape) if not isinstance(size, int)]


class _NoRecipe(Exception):
    pass


class RecipeCapture:
    """Collects one Dynamo graph's recipe from AOTAutograd's compiler calls and stores it.

    Any surprise ends the capture (no recipe, a debug log), never the compile: the recipe is an
    optimisation of later processes only.
    """

    def __init__(self, key: str, store: Optional[RecipeStore], num_inputs: int, symbolic: bool = False):
        self.key = key
        # A graph with symbolic sizes: captures a SymbolicRecipe, for this process only.
        self.symbolic = symbolic
        if symbolic and store is not None:
            raise ValueError("a symbolic graph's recipe is never stored")
        # None: the recipe is for this process only (the recipe's runtime under CUDA graphs,
        # which a later process cannot take: it needs the traced graphs to set up the graphs),
        # so it is neither written nor shared.
        self.store = store
        self.num_inputs = num_inputs
        self.pending: Optional[Recipe] = None
        self.stored: Optional[Recipe] = None  # the recipe, once stored (precompile.py saves it)
        self.why_not: Optional[str] = None  # why there is none, once abandoned
        self.input_grad_info: List[Any] = []  # (requires_grad, is_leaf) per input, for backward
        self.done = False

    def abandon(self, why: str) -> None:
        if not self.done:
            log.debug("tccd aot cache: no recipe for %s: %s", self.key[:16], why)
            self.why_not = why
        self.done = True
        self.pending = None

    def forward(self, gm: torch.fx.GraphModule, plan_key: str, inference: bool, store: bool = True) -> None:
        """Captures from the forward (or inference) graph; AOTAutograd's metadata is read now, so
        call it while its compiler runs. store=False keeps an inference recipe until
        store_inference() (a graph compiling in the background: stored once its plan is)."""
        if self.done:
            return
        try:
            recipe = self._from_forward(gm, plan_key, inference)
            if inference and store:
                self._store(recipe)
            else:
                self.pending = recipe
        except _NoRecipe as e:
            self.abandon(str(e))
        except Exception as e:  # deliberately broad: see the class comment
            log.debug("tccd aot cache: capture failed", exc_info=True)
            self.abandon(f"{type(e).__name__}: {e}")

    def store_inference(self) -> None:
        """Stores the inference recipe forward(..., store=False) captured."""
        if self.done or self.pending is None or self.pending.kind != "inference":
            return
        try:
            self._store(self.pending)
        except Exception as e:  # deliberately broad: see the class comment
            log.debug("tccd aot cache: capture failed", exc_info=True)
            self.abandon(f"{type(e).__name__}: {e}")

    def backward(self, gm: torch.fx.GraphModule, plan_key: str) -> None:
        if self.done or self.pending is None:
            return
        try:
            self._store(self._with_backward(self.pending, gm, plan_key))
        except _NoRecipe as e:
            self.abandon(str(e))
        except Exception as e:  # deliberately broad: see the class comment
            log.debug("tccd aot cache: capture failed", exc_info=True)
            self.abandon(f"{type(e).__name__}: {e}")

    def _store(self, recipe: Recipe) -> None:
        recipe._check()
        if self.store is not None:
            self.store.put(recipe)
        self.stored = recipe
        self.done = True
        self.pending = None
        log.debug("tccd aot cache: stored the %s recipe %s", recipe.kind, self.key[:16])

    def _from_forward(self, gm: torch.fx.GraphModule, plan_key: str, inference: bool) -> Recipe:
        from torch._functorch._aot_autograd.schemas import OutputType

        md = _fw_metadata()
        why = _unsupported(md, self.num_inputs, self.symbolic)
        if why:
            raise _NoRecipe(why)
        if len(_placeholders(gm)) != self.num_inputs:
            raise _NoRecipe(f"the forward graph takes {len(_placeholders(gm))} inputs")
        mutated = list(md.mutated_inp_runtime_indices)
        num_outputs = len(md.output_info)
        returns = len(mutated) + num_outputs
        outs = _output_nodes(gm)
        # A symbolic graph's forward returns the SymInts the backward needs last (AOT's
        # symints_saved_for_backwards_slice); a plain one returns none.
        num_symints = int(getattr(md, "num_symints_saved_for_bw", 0) or 0) if self.symbolic else 0
        if num_symints and not all(_is_sym(node) for node in outs[len(outs) - num_symints:]):
            raise _NoRecipe("the forward's last outputs are not the SymInts it saves")
        saved = outs[returns:len(outs) - num_symints]
        if inference and saved:
            raise _NoRecipe(f"the inference graph returns {len(outs)} values, not {returns}")
        saved_is_input = []
        for node in saved:
            value = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
            if not isinstance(value, torch.Tensor) or node.meta.get("saved_tensor_with_no_vc_check"):
                raise _NoRecipe("the forward saves something other than plain tensors")
            saved_is_input.append(node.op == "placeholder")
        # The gradients the backward takes: outputs that require grad (mutated inputs never
        # do in this class), in the order of AOTAutograd's tangent metadata.
        sources = [
            len(mutated) + i
            for i, out in enumerate(md.output_info)
            if getattr(out, "requires_grad_for_backward", out.requires_grad)
        ]
        self.input_grad_info = [(inp.requires_grad, inp.is_leaf) for inp in md.input_info]
        layouts = []
        if not inference:
            if len(sources) != len(md.subclass_tangent_meta):
                raise _NoRecipe(f"{len(sources)} differentiable outputs, {len(md.subclass_tangent_meta)} tangents")
            for meta in md.subclass_tangent_meta:
                layout = _tangent_layout(meta)
                if layout is None:
                    raise _NoRecipe("no expected tangent layout in the metadata")
                layouts.append(layout)
        recipe = Recipe(
            key=self.key,
            kind="inference" if inference else "training",
            num_inputs=self.num_inputs,
            fw_plan=plan_key,
            bw_plan="",
            mutated_inputs=mutated,
            num_outputs=num_outputs,
            output_requires_grad=[bool(o.requires_grad) for o in md.output_info],
            unsafe_view_outputs=[
                i for i, o in enumerate(md.output_info) if o.output_type == OutputType.unsafe_view_alias
            ],
            saved_is_input=saved_is_input,
            tangent_sources=sources if not inference else [],
            tangent_layouts=layouts,
            detach_inputs=[],
            disable_amp=bool(torch._C._is_any_autocast_enabled()),
            deterministic=bool(getattr(md, "deterministic", None) or False),
        )
        if not self.symbolic:
            return recipe
        placeholders = _placeholders(gm)
        return SymbolicRecipe(
            **dataclasses.asdict(recipe),
            fw_scalar_inputs=sum(not isinstance(n.meta.get("val"), torch.Tensor) for n in placeholders),
            num_symints_saved=num_symints,
            output_dynamic_dims=[sorted(o.dynamic_dims) if getattr(o, "dynamic_dims", None) else None
                                 for o in md.output_info],
            saved_dynamic_dims={
                i: dims for i, dims in enumerate(_symbolic_dims(node.meta["val"]) for node in saved) if dims
            },
        )

    def _with_backward(self, recipe: Recipe, gm: torch.fx.GraphModule, plan_key: str) -> Recipe:
        placeholders = _placeholders(gm)
        num_in = len(placeholders)
        # A symbolic graph's backward takes the saved SymInts first (AOT's ctx.symints).
        num_symints = getattr(recipe, "num_symints_saved", 0)
        if num_in != num_symints + recipe.num_saved + len(recipe.tangent_sources):
            raise _NoRecipe(f"the backward graph takes {num_in} inputs, expected saved + tangents")
        if not all(_is_sym(node) for node in placeholders[:num_symints]):
            raise _NoRecipe("the backward's first inputs are not the saved SymInts")
        grads = _output_nodes(gm)
        if len(grads) != recipe.num_inputs:
            raise _NoRecipe(f"the backward graph returns {len(grads)} gradients")
        # AOTAutograd's _compute_indices_of_inps_to_detach, for this class (no in-graph mutations).
        detach = [
            i
            for i, (g, (requires_grad, is_leaf)) in enumerate(zip(grads, self.input_grad_info))
            if g is None and requires_grad and not is_leaf
        ]
        return dataclasses.replace(recipe, bw_plan=plan_key, detach_inputs=detach)
