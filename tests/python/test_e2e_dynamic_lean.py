"""End to end against the real daemon: graphs with symbolic sizes in the lean AOT runtime
(TCCD_LEAN_SYMBOLIC, client/tccd/aot_runtime.py with an aot_recipe.SymbolicRecipe).

A graph whose sizes are symbols gets no stored AOT recipe, but the process that traces it
switches from AOTAutograd's runtime wrappers to the recipe's runtime once its plans are loaded
and its backward compiled, from a recipe it keeps in memory: the integer inputs Dynamo passes go
to the plans (which drop them and bind their symbols), the SymInts the forward saves come back
to the backward first, and the outputs' symbolic dims are marked for Dynamo as AOTAutograd
marks them. Checked here: the transformer block of test_e2e_dynamic_shapes.py trained over nine
sizes (batch and length both symbolic) matches eager at every size, runs in the recipe's
runtime (TccdCompiledFunctionBackward) after the switch, with a recipe that carries saved
SymInts; the same with TCCD_LEAN_SYMBOLIC=0 keeps AOTAutograd's runtime throughout; an
inference loop switches too; the output's dynamic-dim marks are AOTAutograd's.
"""

import copy

import pytest
import torch

import tccd
from test_e2e_dynamic_shapes import ATOL, RTOL, Block

SIZES = [(3, 12), (5, 7), (2, 20), (4, 5), (3, 16), (5, 9), (2, 31), (4, 24), (3, 3)]
_MARKS = ("_dynamo_propagated_dynamic_indices", "_dynamo_weak_dynamic_indices")


def _ids(step: int) -> torch.Tensor:
    b, t = SIZES[step]
    return torch.randint(0, 50, (b, t), generator=torch.Generator().manual_seed(200 + step))


def _marks(t: torch.Tensor):
    return {name: set(getattr(t, name)) for name in _MARKS if hasattr(t, name)}


@pytest.fixture
def built_recipes(monkeypatch):
    """The recipes aot_runtime.build was given (the lean switches of this test)."""
    from tccd import aot_runtime

    recipes = []
    real = aot_runtime.build

    def spy(recipe, *args, **kwargs):
        recipes.append(recipe)
        return real(recipe, *args, **kwargs)

    monkeypatch.setattr(aot_runtime, "build", spy)
    return recipes


@pytest.mark.parametrize("lean", [True, False])
def test_symbolic_training_switches_to_the_recipe_runtime_and_matches_eager(daemon_env, monkeypatch,
                                                                             built_recipes, lean):
    monkeypatch.setenv("TCCD_LEAN_SYMBOLIC", "1" if lean else "0")
    tccd.config.reload()
    torch._dynamo.reset()
    tccd.reset_compile_stats()
    torch.manual_seed(0)
    model = Block(20)  # a width test_e2e_dynamic_shapes.py does not use: it counts daemon compiles
    eager = copy.deepcopy(model)
    compiled = torch.compile(model, backend="tccd", dynamic=True)
    runtimes, marks = [], []
    for step in range(len(SIZES)):
        ids = _ids(step)
        out = compiled(ids)
        ref = eager(ids)
        runtimes.append(type(out.grad_fn).__name__)
        marks.append((_marks(out), _marks(ref)))
        torch.testing.assert_close(out, ref, rtol=RTOL, atol=ATOL)
        out.float().pow(2).mean().backward()
        ref.float().pow(2).mean().backward()
        for (name, p), q in zip(model.named_parameters(), eager.parameters()):
            torch.testing.assert_close(p.grad, q.grad, rtol=RTOL, atol=ATOL, msg=f"{name} at {SIZES[step]}")
            p.grad = q.grad = None
    stats = tccd.last_compile_stats()
    assert all(s["fallback"] is None for s in stats), stats
    assert {s["kind"] for s in stats} == {"forward", "backward"}
    lean_runtime = "TccdCompiledFunctionBackward"
    if not lean:
        assert lean_runtime not in runtimes, runtimes
        assert built_recipes == []
        return
    # Dynamo's first graphs may specialise (e.g. b == t) and recompile; the last graph, whose
    # sizes cover the later steps, runs in the recipe's runtime from its third call on.
    assert runtimes[-1] == lean_runtime and runtimes.count(lean_runtime) >= 3, runtimes
    assert built_recipes and all(r.kind == "training" for r in built_recipes)
    recipe = built_recipes[-1]
    assert recipe.fw_scalar_inputs >= 1, recipe  # the batch and length Dynamo passes as ints
    assert recipe.num_symints_saved >= 1, recipe  # the block's backward needs sizes
    assert recipe.output_dynamic_dims and recipe.output_dynamic_dims[0], recipe
    # The output's marks for Dynamo are what AOTAutograd's runtime set at the first call.
    first = marks[0][0]
    assert first, "AOTAutograd's runtime marked no dynamic dims on the output"
    assert marks[-1][0] == first, marks


def test_symbolic_inference_switches_to_the_recipe_runtime_and_matches_eager(daemon_env, monkeypatch,
                                                                             built_recipes):
    monkeypatch.setenv("TCCD_LEAN_SYMBOLIC", "1")
    tccd.config.reload()
    torch._dynamo.reset()
    tccd.reset_compile_stats()
    torch.manual_seed(0)
    model = Block(20).eval()
    compiled = torch.compile(model, backend="tccd", dynamic=True)
    with torch.no_grad():
        for step in range(len(SIZES)):
            ids = _ids(step)
            torch.testing.assert_close(compiled(ids), model(ids), rtol=RTOL, atol=ATOL)
    stats = tccd.last_compile_stats()
    assert [s["kind"] for s in stats if s["fallback"] is None] == [s["kind"] for s in stats]
    assert built_recipes and all(r.kind == "inference" for r in built_recipes), built_recipes
    assert built_recipes[-1].fw_scalar_inputs >= 1


@pytest.mark.parametrize("positions", [[(0, "s0"), (1, "s1")], [(0, "s0"), (1, None)], [(1, "s1"), (3, "s0")],
                                       [(0, "s0"), (1, "s1"), (3, None)], [(0, "s1"), (2, None), (4, "s0")]])
def test_integer_inputs_are_dropped_and_their_symbols_passed(positions):
    """backend._without_scalar_inputs: the integer inputs leading the list (sliced off) and
    anywhere after (deleted by position: a backward's non-symbol ints) leave the tensors in order
    and the symbols by name."""
    from tccd.backend import _without_scalar_inputs

    calls = []

    def plan(tensors, symbols=None):
        calls.append((tensors, symbols))
        return []

    run = _without_scalar_inputs(plan, positions)
    args = ["t0", "t1", "t2", "t3", "t4"]
    for position, _ in positions:
        args[position] = 10 + position
    given = list(args)
    run(given)
    assert given == []  # boxed: the callee owns the inputs
    tensors, symbols = calls[0]
    assert tensors == [a for i, a in enumerate(args) if i not in dict(positions)]
    assert (symbols or {}) == {name: 10 + position for position, name in positions if name is not None}
