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
