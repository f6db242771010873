"""The AOT recipe key (aot_key.py) and the recipe store (aot_recipe.py), without a daemon."""

import dataclasses
import warnings

import pytest
import torch

from tccd.aot_key import recipe_key
from tccd.aot_recipe import Recipe, RecipeStore
from tccd.local_cache import sha256_hex


def dynamo_graph(fn, *args):
    """(GraphModule, example inputs) Dynamo hands a backend for fn(*args)."""
    captured = []

    def backend(gm, example_inputs):
        captured.append((gm, list(example_inputs)))
        return gm.forward

    torch._dynamo.reset()
    torch.compile(fn, backend=backend, dynamic=False)(*args)
    assert len(captured) == 1
    return captured[0]


def key_of(fn, *args, options=None):
    gm, inputs = dynamo_graph(fn, *args)
    return recipe_key(gm, inputs, mode=None, options=options, partitioner="default_partition")


def f(x, y):
    return torch.relu(x) * y + torch.nn.functional.max_pool1d(x, 2).sum()


def test_key_is_stable_and_covers_what_changes_aot_output():
    x, y = torch.randn(4, 6), torch.randn(6)
    base, why = key_of(f, x, y)
    assert why is None and len(base) == 64
    assert key_of(f, x.clone(), y.clone())[0] == base  # values and identity do not matter
    different = {
        "shape": key_of(f, torch.randn(4, 8), torch.randn(8))[0],
        "stride": key_of(f, torch.randn(6, 4).t(), y)[0],
        "dtype": key_of(f, x.double(), y.double())[0],
        "requires_grad": key_of(f, x.clone().requires_grad_(), y)[0],
        "options": key_of(f, x, y, options={"a": 1})[0],
        "graph": key_of(lambda x, y: torch.relu(x) * y - 1, x, y)[0],
    }
    with torch.no_grad():
        different["grad_mode"] = key_of(f, x, y)[0]
    with torch.autocast("cpu", dtype=torch.bfloat16):
        different["autocast"] = key_of(f, x, y)[0]
    for what, key in different.items():
        assert key is not None and key != base, what
    assert len(set(different.values())) == len(different)


def test_key_does_not_generate_the_graphs_code():
    """Dynamo's graph modules generate their Python code lazily; on a recipe hit nothing but the
    key would ask for it (0.04 CPU s of GPT-2's warm backend call): the key reads the nodes."""
    from torch.fx._lazy_graph_module import _LazyGraphModule

    x, y = torch.randn(4, 6), torch.randn(6)
    seen = []

    def backend(gm, example_inputs):  # as tccd's: the key before anything runs the graph
        lazy = isinstance(gm, _LazyGraphModule) and gm._needs_recompile()
        key, why = recipe_key(gm, example_inputs, mode=None, options=None, partitioner="default_partition")
        seen.append((lazy, key, why, isinstance(gm, _LazyGraphModule) and gm._needs_recompile()))
        return gm.forward

    torch._dynamo.reset()
    torch.compile(f, backend=backend, dynamic=False)(x, y)
    (lazy, key, why, still_lazy), = seen
    if not lazy:
        pytest.skip("this torch's Dynamo hands over graph modules whose code exists already")
    assert why is None and still_lazy  # no code generated for the key
    assert key_of(f, x, y)[0] == key


def test_key_covers_the_graphs_constants_and_argument_structure():
    x = torch.randn(4, 6)
    keys = {
        "add1": key_of(lambda a: a + 1, x)[0],
        "add2": key_of(lambda a: a + 2, x)[0],
        "add1.0": key_of(lambda a: a + 1.0, x)[0],
        "sum_dim0": key_of(lambda a: a.sum(0), x)[0],
        "sum_dim1": key_of(lambda a: a.sum(1), x)[0],
        "sum_keepdim": key_of(lambda a: a.sum(1, keepdim=True), x)[0],
        "view": key_of(lambda a: a.view(6, 4), x)[0],
        "view_t": key_of(lambda a: a.view(2, 12), x)[0],
        "to_f64": key_of(lambda a: a.to(torch.float64), x)[0],
        "to_bf16": key_of(lambda a: a.to(torch.bfloat16), x)[0],
    }
    assert all(k is not None for k in keys.values()), keys
    assert len(set(keys.values())) == len(keys)
    assert key_of(lambda a: a + 1, x.clone())[0] == keys["add1"]


def test_graph_text_names_unusual_arguments_by_type():
    from collections import namedtuple

    from tccd.aot_key import _arg_text

    P = namedtuple("P", "a b")
    assert _arg_text((1, [2.5, None], {"k": torch.float16})) == "(1, [2.5, None], {'k': torch.float16})"
    assert _arg_text(P(1, 2)).startswith(f"{__name__}.P:")
    assert _arg_text(slice(None, 2)) == "slice(None, 2, None)"


def _with_autocast_region(x, y, dtype=torch.bfloat16):
    with torch.autocast("cpu", dtype=dtype):
        return torch.relu(x) @ y


def test_autocast_region_inside_the_graph_gets_a_key_that_covers_its_arguments():
    x, y = torch.randn(4, 6), torch.randn(6, 3)
    gm, _ = dynamo_graph(_with_autocast_region, x, y)
    assert any("_enter_autocast" in str(n.target) for n in gm.graph.nodes)  # what this test is about
    key, why = key_of(_with_autocast_region, x, y)
    assert why is None and len(key) == 64
    assert key_of(_with_autocast_region, x, y)[0] == key
    other, _ = key_of(lambda x, y: _with_autocast_region(x, y, torch.float16), x, y)
    assert other is not None and other != key


@pytest.mark.parametrize(
    "case, why",
    [
        ("aliasing_inputs", "alias"),
        ("scalar_input", "not a plain tensor"),
        ("tensor_constant", "get_attr"),
    ],
)
def test_unsafe_graphs_get_no_key(case, why):
    if case == "aliasing_inputs":
        base = torch.randn(8)
        key, reason = key_of(lambda a, b: a * b, base[:4], base[4:])
    elif case == "scalar_input":
        gm, inputs = dynamo_graph(lambda a: a * 2, torch.randn(3))
        key, reason = recipe_key(gm, inputs + [3], mode=None, options=None, partitioner="p")
    else:
        gm, inputs = dynamo_graph(lambda a: a * 2, torch.randn(3))
        gm.c = torch.randn(3)  # a plain attribute, as Dynamo lifts tensor constants
        with warnings.catch_warnings():  # "no underlying reference": intended here
            warnings.simplefilter("ignore")
            with gm.graph.inserting_before(next(iter(gm.graph.find_nodes(op="output")))):
                gm.graph.get_attr("c")
        gm.recompile()
        key, reason = recipe_key(gm, inputs, mode=None, options=None, partitioner="p")
    assert key is None and why in reason, reason


def _recipe(key="ab" * 32):
    return Recipe(
        key=key, kind="training", num_inputs=3, fw_plan="f" * 64, bw_plan="b" * 64,
        mutated_inputs=[2], num_outputs=1, output_requires_grad=[True], unsafe_view_outputs=[0],
        saved_is_input=[True, False], tangent_sources=[1],
        tangent_layouts=[{"size": [4, 5], "stride": [5, 1]}], detach_inputs=[],
        disable_amp=False, deterministic=False,
    )


def test_store_round_trip_and_atomic_layout(tmp_path):
    store = RecipeStore(str(tmp_path))
    recipe = _recipe()
    assert store.get(recipe.key) is None
    store.put(recipe)
    assert store.get(recipe.key) == recipe
    assert [p.name for p in (tmp_path / "aot-recipes").iterdir()] == [recipe.key]


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b'{"format": 1}',
        b'{"format": 99}',
        # Well-formed JSON, fields of the wrong type or out of range:
        _recipe().to_json().replace(b'"mutated_inputs": [2]', b'"mutated_inputs": [7]'),
        _recipe().to_json().replace(b'"num_outputs": 1', b'"num_outputs": "1"'),
        _recipe().to_json().replace(b'"stride": [5, 1]', b'"stride": [5]'),
        _recipe(key="cd" * 32).to_json(),  # another key's recipe under this name
    ],
)
def test_bad_recipe_is_a_miss_and_is_deleted(tmp_path, body):
    store = RecipeStore(str(tmp_path))
    key = _recipe().key
    path = tmp_path / "aot-recipes" / key
    path.parent.mkdir()
    path.write_bytes(sha256_hex(body).encode() + b"\n" + body)
    assert store.get(key) is None
    assert not path.exists()


def test_checksum_mismatch_is_a_miss(tmp_path):
    store = RecipeStore(str(tmp_path))
    recipe = _recipe()
    store.put(recipe)
    path = tmp_path / "aot-recipes" / recipe.key
    path.write_bytes(path.read_bytes().replace(b'"num_outputs": 1', b'"num_outputs": 2'))
    assert store.get(recipe.key) is None


def test_recipe_json_has_every_field():
    recipe = _recipe()
    assert Recipe.from_json(recipe.to_json()) == recipe
    assert dataclasses.replace(recipe, detach_inputs=[0]) != recipe
