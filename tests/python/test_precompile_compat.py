"""torch compatibility pieces of the ahead-of-time flow (client/tccd/precompile.py), without a
daemon: the guard filter that drops the identity guards Dynamo cannot save, and the
DefaultsSource pickling fix for torch 2.11 (pytorch/pytorch#174955)."""

import dataclasses
import pickle
from types import SimpleNamespace

import torch
from torch._dynamo.guards import CheckFunctionManager
from torch._dynamo.source import DefaultsSource, LocalSource

from tccd import precompile


def _entry(guard_type, derived=()):
    return SimpleNamespace(guard_type=guard_type, derived_guard_types=derived)


def test_the_filter_drops_identity_guards_and_what_was_derived_from_them():
    unsupported = sorted(CheckFunctionManager.UNSUPPORTED_SERIALIZATION_GUARD_TYPES)
    assert "ID_MATCH" in unsupported
    entries = [
        _entry("TENSOR_MATCH"),
        _entry("TYPE_MATCH"),
        _entry("GLOBAL_STATE"),
        _entry("ID_MATCH"),
        # transformers' GELUActivation.act and a decorated forward's __code__ (BERT, 2.11/2.15)
        _entry("BUILTIN_MATCH", ("ID_MATCH",)),
        _entry("CONSTANT_MATCH", ("ID_MATCH",)),
        _entry("CONSTANT_MATCH", ()),
    ] + [_entry(t) for t in unsupported]
    kept = precompile.serializable_guards(entries)
    assert kept[:7] == [True, True, True, False, False, False, True]
    assert not any(kept[7:])


def test_defaults_source_survives_pickling():
    for source in (DefaultsSource(LocalSource("f"), 0), DefaultsSource(LocalSource("f"), "k", True)):
        back = pickle.loads(pickle.dumps(source))
        assert back == source and back.name == source.name


def test_the_defaults_source_fix_applies_where_torch_pickles_derived_fields():
    """Simulates torch 2.11's __reduce__ (every field, derived ones too) on this torch."""
    import torch._dynamo.source as sources

    saved = {c: vars(c)["__reduce__"] for c in vars(sources).values()
             if isinstance(c, type) and issubclass(c, sources.Source) and "__reduce__" in vars(c)}

    def reduce_all_fields(self):
        return type(self), tuple(getattr(self, f.name) for f in dataclasses.fields(self))

    DefaultsSource.__reduce__ = reduce_all_fields
    try:
        source = DefaultsSource(LocalSource("f"), 1)
        try:
            pickle.loads(pickle.dumps(source))
            broken = False
        except TypeError:
            broken = True
        assert broken, "the simulated 2.11 pickling should fail to load"
        assert precompile._fix_defaults_source_pickle() is True
        assert pickle.loads(pickle.dumps(source)) == source
        assert precompile._fix_defaults_source_pickle() is False  # fixed: left alone
    finally:
        for c, r in saved.items():
            c.__reduce__ = r
        if DefaultsSource not in saved:
            del DefaultsSource.__reduce__


def _on(guard_type, module, derived=(), name="m"):
    """A guard entry whose source is (module=True) or is not inside an nn.Module."""
    source = SimpleNamespace(is_unspecialized_nn_module=lambda: module)
    return SimpleNamespace(guard_type=guard_type, derived_guard_types=derived, name=name,
                           orig_guard=SimpleNamespace(source=source))


def test_lean_guards_drop_the_type_guards_of_a_modules_own_dicts():
    """lean_guards drops TYPE_MATCH on a module's _modules / _parameters / _buffers (always
    dicts); lean_guards_keep_dict_types (the previous lean) keeps them. The module's own type,
    a submodule's, and a dict-named attribute of something not a module stay."""
    entries = [
        _on("TYPE_MATCH", True, name="model._modules['blocks']._modules['0']._buffers"),
        _on("TYPE_MATCH", True, name="model._modules['blocks']._modules['0']._modules"),
        _on("TYPE_MATCH", True, name="model._modules['blocks']._modules['0']._parameters"),
        _on("TYPE_MATCH", True, name="model._modules['blocks']._modules['0']"),
        _on("TYPE_MATCH", True, name="model._modules['blocks']._modules['0']._modules['attn']"),
        _on("CONSTANT_MATCH", True, name="model._modules['blocks']._modules['0']._buffers"),
        _on("TYPE_MATCH", False, name="L['state']._buffers"),
    ]
    assert precompile.lean_guards(entries) == [False, False, False, True, True, True, True]
    assert precompile.lean_guards_keep_dict_types(entries) == [True] * 7


def test_lean_guards_drop_the_module_structure_and_keep_values_tensors_and_state():
    entries = [
        # a module's structure: dropped
        _on("EMPTY_NN_MODULE_HOOKS_DICT", True),
        _on("NOT_PRESENT_IN_GENERIC_DICT", True),
        _on("DICT_KEYS_MATCH", True),
        _on("DICT_CONTAINS", True),
        _on("DICT_NOT_CONTAINS", True),
        # tensors reached through a module, the modules' types and values: kept
        _on("TYPE_MATCH", True),
        _on("TENSOR_MATCH", True),
        _on("CONSTANT_MATCH", True),
        _on("EQUALS_MATCH", True),
        _on("SEQUENCE_LENGTH", True),
        # the inputs' own structure, aliasing, global state: kept
        _on("DICT_KEYS_MATCH", False),
        _on("TYPE_MATCH", False),
        _on("DUPLICATE_INPUT", False),
        _on("GLOBAL_STATE", False),
        # what serializable_guards drops stays dropped
        _on("ID_MATCH", False),
        _on("CONSTANT_MATCH", True, ("ID_MATCH",)),
    ]
    assert precompile.lean_guards(entries) == [False] * 5 + [True] * 9 + [False, False]


def test_lean_guards_keep_a_guard_whose_source_cannot_tell():
    """A torch without Source.is_unspecialized_nn_module (or one that raises): nothing extra dropped."""
    def raises():
        raise RuntimeError("no")

    entries = [_entry("DICT_KEYS_MATCH"),
               SimpleNamespace(guard_type="DICT_KEYS_MATCH", derived_guard_types=(),
                               orig_guard=SimpleNamespace(source=SimpleNamespace(is_unspecialized_nn_module=raises)))]
    assert precompile.lean_guards(entries) == [True, True]


def test_lean_guards_on_a_real_functional_step_keep_the_parameters_tensor_guards():
    """Dynamo's own entries for a functional_call over a module: every TENSOR_MATCH stays (the
    parameters are guarded through the module's _parameters), the hook dicts go."""
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4))
    state = dict(model.named_parameters()) | dict(model.named_buffers())
    seen = {}

    def record(entries):
        seen["all"] = [e.guard_type for e in entries]
        seen["kept"] = [e.guard_type for e, k in zip(entries, precompile.lean_guards(entries)) if k]
        seen["all_named"] = [(e.guard_type, e.name) for e in entries]
        seen["kept_named"] = [(e.guard_type, e.name) for e, k in zip(entries, precompile.lean_guards(entries)) if k]
        return [True] * len(entries)

    def step(state, x):
        return torch.func.functional_call(model, state, (x,)).sum()

    torch._dynamo.reset()
    torch.compile(step, backend="eager", fullgraph=True, options={"guard_filter_fn": record})(state, torch.randn(3, 4))
    assert seen["kept"].count("TENSOR_MATCH") == seen["all"].count("TENSOR_MATCH") >= len(state)
    assert "EMPTY_NN_MODULE_HOOKS_DICT" in seen["all"] and "EMPTY_NN_MODULE_HOOKS_DICT" not in seen["kept"]
    assert len(seen["kept"]) < len(seen["all"])
    # The modules' dict type guards are among Dynamo's entries, and lean drops every one.
    assert any(n.endswith(precompile.MODULE_DICT_ATTRS) for t, n in seen["all_named"] if t == "TYPE_MATCH")
    assert not any(n.endswith(precompile.MODULE_DICT_ATTRS) for t, n in seen["kept_named"] if t == "TYPE_MATCH")
    assert "TYPE_MATCH" in seen["kept"]  # the modules' own types stay


def test_settle_trace_log_removes_torchs_lazy_trace_handler_before_a_load(monkeypatch):
    """Without TORCH_TRACE, torch's LazyTraceHandler goes away at its first event: settle_trace_log
    is that event, so the guard manager's text a load logs next is never built.
    TCCD_AOT_SETTLE_TRACE_LOG=0: nothing logged, the handler stays."""
    from torch._logging import _internal

    from tccd import config

    handler = _internal.LazyTraceHandler(None)  # TORCH_TRACE unset: root_dir None
    monkeypatch.setattr(_internal.trace_log, "handlers", [handler])
    monkeypatch.setattr(config, "_config", dataclasses.replace(config.get(), aot_settle_trace_log=False))
    assert precompile.settle_trace_log() is False
    assert _internal.trace_log.handlers == [handler]
    monkeypatch.setattr(config, "_config", dataclasses.replace(config.get(), aot_settle_trace_log=True))
    assert precompile.settle_trace_log() is True
    assert _internal.trace_log.handlers == []  # torch's own handler removed itself at the event
    assert precompile.settle_trace_log() is False  # no handler left: nothing to do


def _with_stacks(guard_type, module):
    entry = _on(guard_type, module)
    entry.orig_guard.user_stack = ["frame"]
    entry.orig_guard.stack = "traceback"
    return entry


def test_lean_guards_save_the_kept_guards_without_their_stacks(monkeypatch):
    """TCCD_AOT_GUARD_STACKS=0 (default): a kept guard loses the user stack only messages
    print; a dropped one is left as it was (it is not saved); =1 keeps every stack."""
    import tccd

    monkeypatch.delenv("TCCD_AOT_GUARD_STACKS", raising=False)
    tccd.config.reload()
    entries = [_with_stacks("EMPTY_NN_MODULE_HOOKS_DICT", True), _with_stacks("TENSOR_MATCH", True)]
    assert precompile.lean_guards(entries) == [False, True]
    assert entries[0].orig_guard.user_stack == ["frame"] and entries[0].orig_guard.stack == "traceback"
    assert entries[1].orig_guard.user_stack is None and entries[1].orig_guard.stack is None

    monkeypatch.setenv("TCCD_AOT_GUARD_STACKS", "1")
    tccd.config.reload()
    try:
        entries = [_with_stacks("TENSOR_MATCH", True)]
        assert precompile.lean_guards(entries) == [True]
        assert entries[0].orig_guard.user_stack == ["frame"]
        assert precompile.drop_guard_stacks(entries, [True]) == 0
    finally:
        monkeypatch.delenv("TCCD_AOT_GUARD_STACKS")
        tccd.config.reload()


def test_dynamos_own_guards_lose_their_stacks_and_the_step_still_runs():
    """On Dynamo's real entries: the guards carry user stacks, lean clears the kept ones, the
    guard manager builds from them and the compiled step returns eager's result."""
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4))
    state = dict(model.named_parameters()) | dict(model.named_buffers())
    seen = {}

    def record(entries):
        seen["with_stack"] = sum(1 for e in entries if e.orig_guard.user_stack)
        kept = precompile.lean_guards(entries)
        seen["kept_with_stack"] = sum(1 for e, k in zip(entries, kept) if k and e.orig_guard.user_stack)
        return kept

    def step(state, x):
        return torch.func.functional_call(model, state, (x,)).sum()

    torch._dynamo.reset()
    x = torch.randn(3, 4)
    got = torch.compile(step, backend="eager", fullgraph=True, options={"guard_filter_fn": record})(state, x)
    torch.testing.assert_close(got, step(state, x))
    assert seen["with_stack"] > 0 and seen["kept_with_stack"] == 0, seen


def test_a_loads_guarded_tensors_share_one_fake_mode(monkeypatch):
    """GuardsStatePickler._unpickle_tensor (what a loaded function's guard state rebuilds its
    tensors with): with TCCD_AOT_SHARED_FAKE_MODE (default) every tensor comes back in one
    FakeTensorMode, with the saved dtype, device, sizes, strides, type and dispatch keys; =0
    gives torch's own, a mode per tensor. A whole guard state through the pickler: the
    end-to-end loads of test_e2e_precompile.py."""
    from torch._dynamo.guards import GuardsStatePickler

    from tccd import config

    param = torch.nn.Parameter(torch.randn(3, 4))
    keys = torch._C._dispatch_keys(param).raw_repr()

    def rebuilt():
        meta = torch.empty_strided((3, 4), (1, 3), device="meta")
        return GuardsStatePickler._unpickle_tensor(meta, torch.device("cpu"), torch.nn.Parameter, keys, None)

    a, b = rebuilt(), rebuilt()
    assert a.fake_mode is b.fake_mode
    assert (a.dtype, a.device, a.shape, a.stride(), a.pytype) == (
        torch.float32, torch.device("cpu"), (3, 4), (1, 3), torch.nn.Parameter)
    assert a.dispatch_keys == torch._C._dispatch_keys(param) and a.grad is None
    monkeypatch.setattr(config, "_config", dataclasses.replace(config.get(), aot_shared_fake_mode=False))
    c, d = rebuilt(), rebuilt()
    assert c.fake_mode is not d.fake_mode and c.fake_mode is not a.fake_mode
    assert (c.shape, c.stride(), c.pytype) == (a.shape, a.stride(), a.pytype)
