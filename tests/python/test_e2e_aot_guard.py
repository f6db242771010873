"""End to end against the real daemon: a recipe refused by the guard (aot_guard.py) is a clean
miss: AOTAutograd traces the graph, the results stay right, one log line says why.

The guard is made to refuse by changing AOTAutograd's field sets in this process, as a new torch
would: a field added to ViewAndMutationMeta, or one removed (tangent_source_stack_traces, a
debugging field with a default, so that AOTAutograd itself keeps working without it).
"""

import logging

import pytest
import torch
from torch._functorch._aot_autograd import schemas

import tccd
from tccd import aot_guard
from test_aot_guard import add_field
from test_e2e_aot_cache import _check_training_twice, _recipe_files


@pytest.fixture(autouse=True)
def _fresh_guard():
    aot_guard.refusal.cache_clear()
    yield
    aot_guard.refusal.cache_clear()


# A field with a default to remove: the debugging field where this torch has it (2.15), else
# another defaulted one (torch 2.11 has no tangent_source_stack_traces).
_REMOVED = ("tangent_source_stack_traces"
            if "tangent_source_stack_traces" in schemas.ViewAndMutationMeta.__dataclass_fields__
            else "mutated_inp_stream_indices")


@pytest.mark.parametrize("change", ["field_added", "field_removed"])
def test_refused_recipe_is_a_miss_and_results_stay_right(daemon_env, monkeypatch, caplog, change):
    # A reviewed torch: the recipe is stored, and the second compile uses it.
    stats = _check_training_twice(daemon_env)
    assert [s["aot_skipped"] for s in stats] == [False, False, True, True]
    assert len(_recipe_files(daemon_env)) == 1

    if change == "field_added":
        add_field(monkeypatch, schemas.ViewAndMutationMeta, "new_aot_feature")
    else:
        monkeypatch.delitem(schemas.ViewAndMutationMeta.__dataclass_fields__, _REMOVED)
    aot_guard.refusal.cache_clear()
    caplog.set_level(logging.INFO, logger="tccd")
    tccd.reset_compile_stats()

    # The stored recipe is not used (AOTAutograd traces both times) and results match eager
    # (_check_training_twice compares outputs and gradients); the plans still come from the
    # local cache.
    stats = _check_training_twice(daemon_env)
    assert len(stats) == 4 and not any(s["aot_skipped"] or s["fallback"] for s in stats), stats
    assert all(s["local_hit"] for s in stats)
    lines = [r.getMessage() for r in caplog.records if "AOT recipes are off" in r.getMessage()]
    assert len(lines) == 1, lines
    assert ("gained new_aot_feature" if change == "field_added" else f"lost {_REMOVED}") in lines[0]
