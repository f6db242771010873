"""AOTAutograd's runtime, rebuilt from an AOT recipe and loaded plans, without tracing.

    fn = build(recipe, fw_plan, bw_plan)   # bw_plan None for an inference recipe
    outputs = fn(*dynamo_graph_inputs)     # a list, as what aot_module_simplified returns
    fn = build(recipe, fw_plan, bw_plan, calls=(run_fw, run_bw))   # run other boxed callables

`calls`: the boxed callables the runtime runs in place of the plans (checked against the plans'
signatures all the same): under CUDA graphs, the plans wrapped in torch's CUDA graph trees
(cudagraphs.py), so that a replayed step pays this runtime's Python instead of AOTAutograd's.

This reproduces what AOTAutograd's runtime wrappers (torch/_functorch/_aot_autograd/
runtime_wrappers.py: RuntimeWrapper, CompiledFunction, the backward prologue) do for the class
of graphs aot_recipe.py captures, and nothing more:

  training   detach the inputs whose gradient is statically None; an autograd.Function whose
             forward runs the fw plan on the flat inputs, saves the tensors the bw plan needs
             (views detached, as AOT does), marks the mutated-input updates and the outputs that
             do not require grad non-differentiable; then, outside the Function, the updated
             values are copied into the mutated inputs. Its backward takes the gradients of the
             differentiable outputs, coerces each to the layout the bw plan was traced with
             (AOT's coerce_to_expected_memory_format), runs the bw plan on saved tensors +
             tangents and returns one gradient per input (None where there is none). It is
             once-differentiable, like AOT's (double backward raises). An output that gets
             no gradient is not materialised as zeros by autograd (_zero_tangents): under CUDA
             graphs the backward runs as a graphed variant that makes them inside its graph
             (cudagraphs.ZeroTangents, TCCD_CUDAGRAPH_ZERO_TANGENTS), else the runtime makes them
             and the plan frees them after their last reader (TCCD_PLAN_ZERO_TANGENTS).
  inference  run the plan with grad disabled, copy the updates into the mutated inputs, return
             the user outputs.
Both run the plans with autocast disabled when it was enabled while tracing (AOT's disable_amp).
A graph with symbolic sizes (aot_recipe.SymbolicRecipe, TCCD_LEAN_SYMBOLIC) also: passes its
integer inputs to the callables in `calls` (which drop them and bind their symbols), keeps the
SymInts its forward returns after the saved tensors on the node (AOT's ctx.symints) and gives
them to the backward first, and marks the user outputs' and saved tensors' symbolic dims for
Dynamo as this torch's AOTAutograd does.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, List, Optional, Tuple

import torch

from . import config as config_mod
from .aot_recipe import Recipe, memory_format
from .runtime import LoadedPlan


def _coercer(layout: dict) -> Callable[[torch.Tensor], torch.Tensor]:
    if "memory_format" in layout:
        fmt = memory_format(layout["memory_format"])

        def coerce(x: torch.Tensor) -> torch.Tensor:
            return x if x.is_contiguous(memory_format=fmt) else x.contiguous(memory_format=fmt)

        return coerce
    size, stride = torch.Size(layout["size"]), tuple(layout["stride"])

    def coerce(x: torch.Tensor) -> torch.Tensor:
        if x.shape == size and x.stride() == stride:
            return x
        out = torch.empty_strided(size, stride, dtype=x.dtype, device=x.device)
        out.copy_(x)
        return out

    return coerce


def _check_count(what: str, got: int, expected: int) -> None:
    if got != expected:
        raise RuntimeError(f"tccd: {what} returned {got} values, its AOT recipe says {expected}")


Boxed = Callable[[List[Any]], Any]


def _plan_call(plan: Optional[LoadedPlan], lean: bool) -> Optional[Boxed]:
    """The plan's boxed call: with TCCD_LEAN_ENTRY a native plan's lean_call where it has one
    (its common case with less Python per call), else the plan itself."""
    lean_call = getattr(plan, "lean_call", None) if lean else None
    return (lean_call() if lean_call is not None else None) or plan


def build(
    recipe: Recipe,
    fw_plan: LoadedPlan,
    bw_plan: Optional[LoadedPlan],
    calls: Optional[Tuple[Boxed, Optional[Boxed]]] = None,
) -> Callable[..., List[Any]]:
    """Checks the plans against the recipe (ValueError if they do not fit) and returns the
    function Dynamo calls in place of AOTAutograd's. `calls`: (forward, backward) boxed
    callables with the plans' signatures to run instead of the plans themselves."""
    # A symbolic graph's plans take its tensors only: the callables in `calls` drop its integer
    # inputs (backend._without_scalar_inputs) and bind their symbols.
    scalars = getattr(recipe, "fw_scalar_inputs", 0)
    symints = getattr(recipe, "num_symints_saved", 0)
    if (scalars or symints) and calls is None:
        raise ValueError("a symbolic recipe needs the callables that drop the integer inputs")
    if fw_plan.num_inputs + scalars != recipe.num_inputs:
        raise ValueError(f"forward plan takes {fw_plan.num_inputs} inputs, recipe {recipe.num_inputs - scalars}")
    returns = len(recipe.mutated_inputs) + recipe.num_outputs
    if len(fw_plan.outputs) != returns + recipe.num_saved + symints:
        raise ValueError(f"forward plan has {len(fw_plan.outputs)} outputs, "
                         f"recipe {returns + recipe.num_saved + symints}")
    lean = config_mod.get().lean_entry
    if calls is None and recipe.kind != "inference" and config_mod.get().shared_saved_constants:
        # The saved tensors are the forward plan's outputs [returns, returns + num_saved): a
        # constant factory only they return (position ids) needs no clone per call. Not under
        # CUDA graphs or for symbolic plans (their callables come in `calls`).
        share = getattr(fw_plan, "share_saved_constants", None)
        if share is not None:
            share(range(returns, returns + recipe.num_saved))
    if calls is not None and recipe.kind != "inference" and config_mod.get().symbolic_saved_aranges:
        # A symbolic forward's saved position ids (a sized arange kernel) kept per size in the
        # runtime instead of launched per call (NativePlan.share_saved_sized_aranges).
        share = getattr(fw_plan, "share_saved_sized_aranges", None)
        if share is not None:
            share(range(returns, returns + recipe.num_saved))
    run_fw, run_bw = calls if calls is not None else (_plan_call(fw_plan, lean), _plan_call(bw_plan, lean))
    if recipe.kind == "inference":
        return _inference(recipe, run_fw, _output_marker(recipe))
    if bw_plan is None:
        raise ValueError("a training recipe needs a backward plan")
    if bw_plan.num_inputs != recipe.num_saved + len(recipe.tangent_sources):
        raise ValueError(f"backward plan takes {bw_plan.num_inputs} inputs")
    if len(bw_plan.outputs) != recipe.num_inputs:
        raise ValueError(f"backward plan has {len(bw_plan.outputs)} outputs, one per input expected")
    if run_bw is None:
        raise ValueError("a training recipe needs a backward callable")
    return _training(recipe, run_fw, run_bw, lean, _zero_tangents(recipe, bw_plan, run_bw, calls is not None))


class _PlanZeros:
    """A missing gradient for a backward plan called directly: zeros in the layout the plan
    declares for that input, made by the runtime (see _zero_tangents)."""

    def __init__(self, layouts: List[Any]):
        self._layouts = layouts

    def variant(self, positions: Tuple[int, ...]) -> None:
        return None  # no other callable: the plan takes the zeros

    def zeros(self, position: int) -> torch.Tensor:
        size, stride, dtype, device = self._layouts[position]
        return torch.empty_strided(size, stride, dtype=dtype, device=device).zero_()


def _zero_tangents(recipe: Recipe, bw_plan: LoadedPlan, run_bw: Boxed, graphed: bool) -> Optional[Any]:
    """What makes a tangent that autograd left None, or None to let autograd materialise it.

    Under CUDA graphs (TCCD_CUDAGRAPH_ZERO_TANGENTS): the graphed backward's ZeroTangents
    (cudagraphs.py), whose variants make the zeros inside their graphs. Without
    (TCCD_PLAN_ZERO_TANGENTS): zeros made here and handed to the plan in its argument list, its
    only reference, so the plan frees them after their last reader (the logits' gradient: early
    in the backward) instead of autograd's `grads` tuple holding them for the whole backward
    (BERT's bf16 logits zeros, 59.6 MiB, were live at its default-mode backward peak)."""
    from . import config as config_mod

    config = config_mod.get()
    if graphed:
        return getattr(run_bw, "with_zero_tangents", None) if config.cudagraph_zero_tangents else None
    if not config.plan_zero_tangents:
        return None
    layouts = getattr(bw_plan, "input_layouts", None)
    first = recipe.num_saved
    if layouts is None or any(layouts[first + j] is None for j in range(len(recipe.tangent_sources))):
        return None
    return _PlanZeros(layouts)


def _no_amp(recipe: Recipe) -> Callable[[], Any]:
    return torch._C._DisableAutocast if recipe.disable_amp else contextlib.nullcontext


def _dynamic_marker() -> Callable[[torch.Tensor, set], None]:
    """How this torch's AOTAutograd marks a tensor's symbolic dims for Dynamo (a hint for the
    graph the tensor feeds next, never guarded): 2.15's helper, else the attribute older
    runtime wrappers set themselves."""
    from torch._functorch._aot_autograd import runtime_wrappers

    helper = getattr(runtime_wrappers, "mark_dynamo_propagated_dynamic_indices", None)
    if helper is not None:
        return helper

    def mark(t: torch.Tensor, dims: set) -> None:
        if hasattr(t, "_dynamo_weak_dynamic_indices"):
            t._dynamo_weak_dynamic_indices |= dims
        else:
            t._dynamo_weak_dynamic_indices = dims.copy()

    return mark


def _output_marker(recipe: Recipe) -> Optional[Callable[[List[Any]], None]]:
    """Marks the user outputs' symbolic dims as AOTAutograd's runtime wrapper does (its
    dynamic_outputs), or None when no output has any (every plain recipe)."""
    dims = [(i, set(d)) for i, d in enumerate(getattr(recipe, "output_dynamic_dims", ())) if d]
    if not dims:
        return None
    mark = _dynamic_marker()

    def mark_outputs(user_outputs: List[Any]) -> None:
        for i, d in dims:
            mark(user_outputs[i], d)

    return mark_outputs


def _inference(recipe: Recipe, fw_plan: Boxed, mark_outputs: Optional[Callable[[List[Any]], None]]
               ) -> Callable[..., List[Any]]:
    mutated = recipe.mutated_inputs
    num_mutated = len(mutated)
    returns = num_mutated + recipe.num_outputs
    no_amp = _no_amp(recipe)

    def forward(*args: Any) -> List[Any]:
        with torch.no_grad(), no_amp():
            outs = fw_plan(list(args))
            _check_count("the inference plan", len(outs), returns)
            for i, index in enumerate(mutated):
                args[index].copy_(outs[i])
        outs = outs[num_mutated:]
        if mark_outputs is not None:
            mark_outputs(outs)
        return outs

    return forward


def _training(recipe: Recipe, fw_plan: Boxed, bw_plan: Boxed, lean: bool,
              zero_tangents: Optional[Any]) -> Callable[..., List[Any]]:
    mutated = recipe.mutated_inputs
    num_mutated = len(mutated)
    num_returns = num_mutated + recipe.num_outputs
    # A symbolic graph's forward returns the SymInts the backward needs after the saved tensors.
    num_symints = getattr(recipe, "num_symints_saved", 0)
    end_saved = num_returns + recipe.num_saved
    num_fw_outs = end_saved + num_symints
    mark_outputs = _output_marker(recipe)
    # The saved tensors' symbolic dims matter only to compiled autograd, which traces the
    # backward with them as inputs: marked only while it is on (17 calls per step less for the
    # transformer block of deploy/dynamic_shapes_bench.py).
    saved_dims = [(i, set(d)) for i, d in getattr(recipe, "saved_dynamic_dims", {}).items()]
    mark = _dynamic_marker() if saved_dims else None
    from torch._dynamo import compiled_autograd
    non_differentiable = list(range(num_mutated)) + [
        num_mutated + i for i, rg in enumerate(recipe.output_requires_grad) if not rg
    ]
    unsafe_views = [num_mutated + i for i in recipe.unsafe_view_outputs]
    saved_is_input = recipe.saved_is_input
    tangents = list(zip(recipe.tangent_sources, [_coercer(t) for t in recipe.tangent_layouts]))
    detach = recipe.detach_inputs
    nondeterministic = not recipe.deterministic
    disable_amp = recipe.disable_amp
    # zero_tangents (_zero_tangents): autograd hands None for an output that got no gradient
    # (set_materialize_grads(False) below) and the runtime makes those zeros: inside a graphed
    # variant of the backward under CUDA graphs, else as the plan's own argument.

    def backward_args(saved: List[torch.Tensor], grads: tuple) -> Tuple[List[Any], Boxed]:
        """(the backward's arguments, the callable to run on them)."""
        if zero_tangents is None:
            return saved + [coerce(grads[i]) for i, coerce in tangents], bw_plan
        first = len(saved)
        missing = tuple(first + j for j, (i, _) in enumerate(tangents) if grads[i] is None)
        if not missing:
            return saved + [coerce(grads[i]) for i, coerce in tangents], bw_plan
        variant = zero_tangents.variant(missing)
        if variant is not None:
            return saved + [coerce(grads[i]) for i, coerce in tangents if grads[i] is not None], variant
        made = [zero_tangents.zeros(first + j) if grads[i] is None else coerce(grads[i])
                for j, (i, coerce) in enumerate(tangents)]
        return saved + made, bw_plan

    def run_backward(saved: List[torch.Tensor], grads: tuple) -> tuple:
        if nondeterministic and torch.are_deterministic_algorithms_enabled():
            raise RuntimeError(
                "This compiled backward function is being run with "
                "torch.use_deterministic_algorithms(True), but it was previously generated during "
                "the forward function while torch.use_deterministic_algorithms(False) was set."
            )
        args, call = backward_args(saved, grads)
        saved.clear()  # the boxed plan call below owns the saved tensors: freed at their last use
        if not disable_amp:
            return tuple(call(args))
        with torch._C._DisableAutocast():
            return tuple(call(args))

    # As AOTAutograd does with its compiled backward: Dynamo must not trace into it when a
    # backward runs inside a compiled region. Only there is Dynamo's eval-frame callback set; a
    # backward run from eager code (the usual loss.backward()) calls the function itself and
    # skips the disable wrapper's frames (per-step Python of a small CPU training step).
    run_backward_undisabled = run_backward
    run_backward_disabled = torch._dynamo.disable(run_backward)
    eval_frame_callback = torch._C._dynamo.eval_frame.get_eval_frame_callback

    # TCCD_LEAN_ENTRY: the forward saves without a list comprehension's frame; the backward is
    # one frame (lean_backward below) that the autograd engine calls directly.
    saved_views = [k for k, is_input in enumerate(saved_is_input) if not is_input]

    def forward_plan(ctx: Any, *args: Any) -> Any:
        if disable_amp:
            with torch._C._DisableAutocast():
                outs = fw_plan(list(args))
        else:
            outs = fw_plan(list(args))
        if len(outs) != num_fw_outs:
            _check_count("the forward plan", len(outs), num_fw_outs)
        if lean:
            saved = outs[num_returns:end_saved]
            for k in saved_views:  # views detached, as AOT saves them
                x = saved[k]
                if x._is_view():
                    saved[k] = x.detach()
        else:
            saved = [
                x if is_input or not x._is_view() else x.detach()
                for x, is_input in zip(outs[num_returns:end_saved], saved_is_input)
            ]
        if saved_dims and compiled_autograd.compiled_autograd_enabled:
            for i, dims in saved_dims:
                mark(saved[i], dims)
        ctx.save_for_backward(*saved)
        if num_symints:
            ctx.symints = outs[end_saved:]
        if lean:
            del outs[num_returns:]
            returns = outs
        else:
            returns = outs[:num_returns]
        for i in unsafe_views:
            o = returns[i]
            returns[i] = torch.ops.aten._unsafe_view(o, o.shape)
        if non_differentiable:
            ctx.mark_non_differentiable(*[returns[i] for i in non_differentiable])
        ctx._materialize_non_diff_grads = False
        if zero_tangents is not None:
            ctx.set_materialize_grads(False)
        return tuple(returns)

    class TccdCompiledFunction(torch.autograd.Function):
        forward = staticmethod(forward_plan)

        @staticmethod
        def backward(ctx: Any, *grads: Any) -> Any:
            # A backward without create_graph runs with grad disabled, where once_differentiable
            # (AOT's wrapper: run under no_grad, and make a double backward raise) has nothing to
            # do; only a create_graph backward pays its wrapper (a step's Python, lean runtime).
            if torch.is_grad_enabled():
                return once_differentiable_backward(ctx, *grads)
            return backward_plan(ctx, *grads)

    def backward_plan(ctx: Any, *grads: Any) -> Any:
        saved = [*ctx.symints, *ctx.saved_tensors] if num_symints else list(ctx.saved_tensors)
        # As AOTAutograd's CompiledFunction.backward: the node's saved variables are released
        # now (unless the graph is kept), so that each saved activation is freed at its last
        # use in the backward plan, not after the whole backward (holding them raised the
        # training peak of ConvNeXt by ~1.1 GiB on the H200 with TCCD_LEAN_RUNTIME=1).
        clear = getattr(ctx, "maybe_clear_saved_tensors", None)
        if clear is not None:
            clear()
        if eval_frame_callback() is None:
            return run_backward_undisabled(saved, grads)
        return run_backward_disabled(saved, grads)

    once_differentiable_backward = torch.autograd.function.once_differentiable(backward_plan)

    def lean_backward(ctx: Any, *grads: Any) -> Any:
        """TccdCompiledFunction.backward and backward_plan in one frame, run_backward's work
        inline for a backward from eager code: what the autograd engine calls as the node's
        `apply` (in place of BackwardCFunction.apply, which looks the backward up per call)."""
        if is_grad_enabled():  # create_graph: once_differentiable's wrapper, as above
            return once_differentiable_backward(ctx, *grads)
        if eval_frame_callback() is not None:  # inside a compiled region: Dynamo's disable
            return backward_plan(ctx, *grads)
        saved = [*ctx.symints, *ctx.saved_tensors] if num_symints else list(ctx.saved_tensors)
        if clear_saved:
            ctx.maybe_clear_saved_tensors()  # as backward_plan: freed at their last use
        if nondeterministic and deterministic_algorithms():
            return run_backward(saved, grads)  # raises there, with AOT's message
        if zero_tangents is None:
            for i, coerce in tangents:
                saved.append(coerce(grads[i]))
            call = bw_plan
        else:  # a tangent autograd left None: zeros made by the runtime (backward_args)
            saved, call = backward_args(saved, grads)
        if disable_amp:
            with torch._C._DisableAutocast():
                return tuple(call(saved))
        return tuple(call(saved))

    apply = TccdCompiledFunction.apply
    if lean:
        is_grad_enabled = torch.is_grad_enabled
        deterministic_algorithms = torch._C._get_deterministic_algorithms
        clear_saved = hasattr(torch._C._FunctionBase, "maybe_clear_saved_tensors")
        TccdCompiledFunction._backward_cls.apply = lean_backward

    def forward(*args: Any) -> List[Any]:
        if detach:
            args = list(args)
            for i in detach:
                args[i] = args[i].detach()
        if torch.is_grad_enabled():  # as Dynamo guards it: no grad-mode context to pay
            returns = apply(*args)
        else:
            with torch.enable_grad():
                returns = apply(*args)
        if mutated:
            with torch.no_grad():
                for i, index in enumerate(mutated):
                    args[index].copy_(returns[i])
        outs = list(returns[num_mutated:])
        if mark_outputs is not None:
            mark_outputs(outs)
        return outs

    return forward
