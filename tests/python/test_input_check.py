"""The ahead-of-time flow's input check (client/tccd/input_check.py) and how the lean guard
filter hands a graph's tensor guards to it (precompile.move_tensor_guards), without a daemon:
what a covered input is, what the check refuses and how it says so, which guards move, the
saved JSON's format. The end-to-end refusals of a loaded function: test_e2e_precompile.py."""

import dataclasses
import json
from types import SimpleNamespace

import pytest
import torch

from tccd import config, input_check, precompile


def _facts(index, name, value):
    return input_check.facts(index, name, value, list(value.shape), list(value.stride()))


def _check(*values):
    return input_check.InputCheck([_facts(i, f"t{i}", v) for i, v in enumerate(values)], len(values))


def _refusal(check, *args):
    with pytest.raises(RuntimeError, match="tccd: the loaded function refuses its inputs: ") as e:
        check.check(args)
    return str(e.value)


def test_a_plain_tensor_or_parameter_is_covered_anything_else_keeps_its_guard():
    x = torch.randn(4, 3)
    assert input_check.covered(x, [4, 3], [3, 1])
    assert input_check.covered(torch.nn.Parameter(x), [4, 3], [3, 1])
    assert input_check.covered(x, [None, 3], [3, None])  # symbolic dims: not the check's to compare
    assert not input_check.covered(x, [4, 3], [1, 4])  # not the traced strides
    assert not input_check.covered(x, [4], [1])
    with torch.inference_mode():
        assert not input_check.covered(torch.randn(4, 3), [4, 3], [3, 1])
    conj = torch.randn(4, dtype=torch.complex64).conj()  # the conjugate bit: another dispatch key
    assert not input_check.covered(conj, [4], [1])

    class Sub(torch.Tensor):
        pass

    assert not input_check.covered(x.as_subclass(Sub), [4, 3], [3, 1])
    marked = torch.randn(4, 3)
    torch._dynamo.mark_dynamic(marked, 0)
    assert not input_check.covered(marked, [4, 3], [3, 1])


def test_the_check_passes_the_saved_kinds_of_tensors_and_names_what_differs():
    w = torch.nn.Parameter(torch.randn(4, 3))
    b = torch.randn(5)
    check = _check(w, b)
    assert check.check((torch.nn.Parameter(torch.randn(4, 3)), torch.randn(5))) is None
    assert "tensor 't1' dtype mismatch. expected Float, actual Double" in _refusal(check, w, b.double())
    assert "tensor 't1' size mismatch at index 0. expected 5, actual 6" in _refusal(check, w, torch.randn(6))
    assert "'t1' rank mismatch" in _refusal(check, w, torch.randn(5, 1))
    assert "stride mismatch" in _refusal(_check(torch.randn(4, 3), b), torch.randn(3, 4).t(), b)
    assert "dispatch key set mismatch" in _refusal(check, w, b.to("meta"))  # another device
    assert "requires_grad mismatch" in _refusal(check, torch.nn.Parameter(w.detach(), requires_grad=False), b)
    assert "expected type of 't0'" in _refusal(check, w.detach().requires_grad_(), b)  # a Tensor, not a Parameter
    with torch.inference_mode():
        inference = torch.randn(5)
    assert "dispatch key set mismatch" in _refusal(check, w, inference)
    assert "'t1' is not a tensor" in _refusal(check, w, 5)
    with pytest.raises(RuntimeError, match="saved for 2 graph inputs, called with 1"):
        check.check((w,))


def test_inputs_that_are_not_parameters_must_be_distinct_tensors():
    """Dynamo's NO_TENSOR_ALIASING, which it builds from the TENSOR_MATCH guards the check
    replaces: one tensor passed for two inputs traced as distinct is refused (Parameters too:
    stricter than torch's default, which skips them)."""
    a, b = torch.randn(5), torch.randn(5)
    check = _check(a, b)
    assert check.check((a, b)) is None
    assert "'t0' and 't1' are one tensor" in _refusal(check, a, a)
    p = torch.nn.Parameter(torch.randn(5))
    assert "'t0' and 't1' are one tensor" in _refusal(_check(p, torch.nn.Parameter(torch.randn(5))), p, p)


def test_only_covered_inputs_are_checked_and_other_positions_pass_through():
    x = torch.randn(3)
    check = input_check.InputCheck([_facts(1, "x", x)], 3)
    assert not check.all_args
    assert check.check((7, x, "anything")) is None
    assert "dtype mismatch" in _refusal(check, 7, x.double(), None)


def _filter_entry(guard_type, value):
    return SimpleNamespace(guard_type=guard_type, name=f"v{id(value) % 1000}", has_value=True, value=value,
                           derived_guard_types=(), orig_guard=None)


def _graph_module(*examples):
    graph = torch.fx.Graph()
    for i, example in enumerate(examples):
        graph.placeholder(f"a{i}").meta["example_value"] = example
    graph.output(None)
    return torch.fx.GraphModule(torch.nn.Module(), graph)


def test_the_filter_moves_the_graph_inputs_tensor_guards_into_the_saved_graph(monkeypatch):
    x, w, other = torch.randn(2, 3), torch.nn.Parameter(torch.randn(3, 4)), torch.randn(7)
    with torch.inference_mode():
        frozen = torch.randn(3)
    graph = precompile.TccdCompiledGraph(None, recipe=object(), plan_keys=["k"])
    entries = [_filter_entry("TENSOR_MATCH", x), _filter_entry("TENSOR_MATCH", w),
               _filter_entry("TENSOR_MATCH", other),  # a guarded tensor that is no graph input
               _filter_entry("TENSOR_MATCH", frozen),  # an input the check does not cover
               _filter_entry("TYPE_MATCH", x)]
    examples = [torch.empty_strided(t.shape, t.stride(), device="meta") for t in (x, w, frozen)]
    precompile._pending = (graph, precompile._graph_inputs(_graph_module(*examples), [x, w, frozen]))
    kept = [True] * len(entries)
    assert precompile.move_tensor_guards(entries, kept) == 2
    assert kept == [False, False, True, True, True]
    assert [(f["index"], f["parameter"], f["size"]) for f in graph.input_check["inputs"]] == [
        (0, False, [2, 3]), (1, True, [3, 4])]
    assert graph.input_check["n_args"] == 3 and precompile._pending is None
    assert graph.checker is not None and graph.checker.check((x, w, frozen)) is None  # the saving process checks too
    saved = json.loads(precompile.graph_json(SimpleNamespace(to_json=lambda: "{}"), ["k"], graph.input_check))
    assert saved["format"] == 2 and saved["input_check"] == graph.input_check
    assert json.loads(precompile.graph_json(SimpleNamespace(to_json=lambda: "{}"), ["k"]))["format"] == 1

    # Inside a Dynamo frame compile (a package's or a plain torch.compile's filter): nothing moves.
    graph.input_check = None
    precompile._pending = (graph, precompile._graph_inputs(_graph_module(*examples), [x, w, frozen]))
    kept = [True] * len(entries)
    compile_id = torch._guards.CompileId(frame_id=0, frame_compile_id=0)
    with torch._guards.compile_context(torch._guards.CompileContext(compile_id)):
        assert precompile.move_tensor_guards(entries, kept) == 0 and all(kept) and graph.input_check is None

    # TCCD_AOT_INPUT_CHECK=0: every tensor guard stays, nothing is handed over.
    monkeypatch.setattr(config, "_config", dataclasses.replace(config.get(), aot_input_check=False))
    graph.input_check = None
    precompile._pending = (graph, precompile._graph_inputs(_graph_module(*examples), [x, w, frozen]))
    kept = [True] * len(entries)
    assert precompile.move_tensor_guards(entries, kept) == 0 and all(kept) and graph.input_check is None


def test_a_file_of_an_unknown_format_is_refused():
    with pytest.raises(RuntimeError, match="not a tccd precompiled graph of format 1 or 2"):
        precompile.load_graph({"format": 3}, "precompiled")
