"""client/tccd/dynamic_profiles.py without a daemon: torch's PGO state converts to the daemon's
schema and back unchanged (what torch's automatic dynamic compares), frames of closures are not
shared, and the `job` command's lines use torch's notation."""

from collections import defaultdict

import pytest
from torch._dynamo import pgo

from tccd import dynamic_profiles as dp
from tccd.v1 import tccd_pb2 as pb


def _state():
    state = defaultdict(pgo.CodeState)
    code = pgo.CodeId.make(_state.__code__, None)
    state[code].automatic_dynamic["L['x']"] = pgo.FrameStateSizeEntry.make_tensor((4, 32, 64), (2048, 64, 1))
    # What a recompile after a new sequence length leaves: dim 1 dynamic, strides inferred.
    state[code].automatic_dynamic["L['y']"] = pgo.FrameStateSizeEntry(
        scalar=pgo.auto_dynamic, size=(4, pgo.auto_dynamic, 64),
        stride=(pgo.InferStride(1), pgo.InferStride(2), 1) if hasattr(pgo, "InferStride") else pgo.auto_unset)
    state[code].automatic_dynamic["L['n']"] = pgo.FrameStateSizeEntry.make_scalar(7)
    state[code].automatic_dynamic["L['m']"] = pgo.FrameStateSizeEntry(
        scalar=pgo.auto_dynamic, size=pgo.auto_dynamic, stride=pgo.auto_dynamic)
    return state


def test_round_trip_keeps_what_torch_compares():
    state = _state()
    profile = dp.from_code_state(state)
    assert len(profile.frames) == 1
    frame = profile.frames[0]
    assert frame.name == "_state" and frame.first_line == _state.__code__.co_firstlineno
    back = dp.to_code_state(pb.DynamicProfile.FromString(profile.SerializeToString()))
    assert back == state  # CodeId equality and FrameStateSizeEntry equality, torch's own


def test_frames_of_closures_are_not_shared():
    state = _state()
    closure_id = pgo.CodeId.make(test_frames_of_closures_are_not_shared.__code__, None)
    if "closure_hash" not in {f.name for f in __import__("dataclasses").fields(pgo.CodeId)}:
        pytest.skip("this torch has no closure hashes")
    closure_id = pgo.CodeId(closure_id.filename, closure_id.firstlineno, closure_id.name,
                            closure_id.file_hash, closure_hash=1234)
    state[closure_id].automatic_dynamic["L['z']"] = pgo.FrameStateSizeEntry.make_size((3,))
    assert [f.name for f in dp.from_code_state(state).frames] == ["_state"]


def test_describe_marks_dynamic_dims():
    lines = dp.describe(dp.from_code_state(_state()))
    assert lines[0].endswith(" _state")
    assert "  L['x']: size=[4, 32, 64] stride=[2048, 64, 1]" in lines
    assert any(line.startswith("  L['y']: size=[4, ?, 64]") for line in lines)
    assert "  L['n']: scalar 7" in lines
    assert "  L['m']: scalar ?" in lines


def test_unknown_kinds_read_as_dynamic():
    profile = dp.from_code_state(_state())
    profile.frames[0].entries[0].size.dims[0].kind = 99  # a newer daemon's kind
    back = dp.to_code_state(profile)
    (entries,) = [cs.automatic_dynamic for cs in back.values()]
    assert list(entries.values())[0].size[0] is pgo.auto_dynamic
