"""The AOT recipe's guard (client/tccd/aot_guard.py): recipes only on a reviewed AOTAutograd.

Unit tests here need no daemon; test_e2e_aot_guard.py checks that a refused recipe is a clean
miss with correct results against the real daemon.
"""

import copy
import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch._dynamo  # noqa: F401  (runtime_wrappers imports cleanly only after Dynamo)
from torch._functorch._aot_autograd import runtime_wrappers, schemas

from tccd import aot_guard
from tccd.aot_reviewed import REVIEWED

REPO = Path(__file__).resolve().parents[2]
TOOL = REPO / "tests" / "tools" / "aot_field_sets.py"


@pytest.fixture(autouse=True)
def _fresh_guard():
    aot_guard.refusal.cache_clear()
    yield
    aot_guard.refusal.cache_clear()


def add_field(monkeypatch, cls, name):
    """Makes dataclasses.fields(cls) list one more field, as a new torch would. It is not an
    __init__ argument and reads as None, so that AOTAutograd's own replace()/asdict() of the
    class keep working in this process."""
    field = copy.copy(dataclasses.fields(cls)[0])
    field.name = name
    field.init = False
    monkeypatch.setitem(cls.__dataclass_fields__, name, field)
    monkeypatch.setattr(cls, name, None, raising=False)


def test_the_installed_torch_is_a_reviewed_one():
    minor = aot_guard.torch_minor(torch.__version__)
    assert minor in aot_guard.TESTED_TORCH_MINORS, (
        f"CI runs torch {torch.__version__}: review the AOT recipe against it (aot_guard.py says how)"
    )
    assert aot_guard.refusal() is None


def test_every_tested_minor_has_a_snapshot():
    assert set(aot_guard.TESTED_TORCH_MINORS) == set(REVIEWED)


def test_the_snapshot_tool_reads_the_sources_as_the_guard_reads_the_live_torch():
    # The 2.11 snapshot was made by the tool from sources that cannot be imported here; this is
    # what makes it comparable with what the guard computes at run time.
    out = subprocess.run([sys.executable, str(TOOL), str(Path(torch.__file__).parent)],
                         capture_output=True, text=True, check=True).stdout
    import json

    from_sources = {k: tuple(v) for k, v in json.loads(out).items()}
    live = aot_guard.live_field_sets()
    assert {k: live[k] for k in from_sources} == from_sources


def test_an_untested_torch_minor_is_refused():
    live = aot_guard.live_field_sets()
    why = aot_guard.check("2.16.0", live)
    assert why and "torch 2.16.0 is not a tested minor" in why
    assert aot_guard.check("2.15.1+cpu", {k: v for k, v in REVIEWED["2.15"].items()}) is None


def test_a_new_metadata_field_is_refused_naming_it(monkeypatch, caplog):
    add_field(monkeypatch, schemas.ViewAndMutationMeta, "new_aot_feature")
    why = aot_guard.refusal()
    assert why and "schemas.ViewAndMutationMeta gained new_aot_feature" in why
    aot_guard.refusal()  # cached: logged once
    lines = [r for r in caplog.records if "AOT recipes are off" in r.getMessage()]
    assert len(lines) == 1 and "new_aot_feature" in lines[0].getMessage()


def test_a_removed_field_a_new_wrapper_and_a_new_enum_member_are_refused(monkeypatch):
    monkeypatch.delitem(schemas.InputAliasInfo.__dataclass_fields__, "mutates_data")
    NewWrapper = type("NewWrapper", (), {"__module__": runtime_wrappers.__name__})
    monkeypatch.setattr(runtime_wrappers, "NewWrapper", NewWrapper, raising=False)
    live = aot_guard.live_field_sets()
    live["schemas.OutputType"] = live["schemas.OutputType"] + ("alias_of_something_new",)
    why = aot_guard.check(torch.__version__, live)
    assert "schemas.InputAliasInfo lost mutates_data" in why
    assert "runtime_wrappers gained NewWrapper" in why
    assert "schemas.OutputType gained alias_of_something_new" in why
