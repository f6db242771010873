"""Automatic-dynamic profiles shared through the daemon, by job id (issue 9 item 2).

Dynamo's automatic dynamic shapes compile a frame static first and recompile it with a dim
symbolic once that dim changes. PyTorch's profile-guided variant (torch/_dynamo/pgo.py) keeps
what it learnt per job id (`torch.compiler.config.job_id`) so a later run compiles those dims
dynamic at once; its own stores are a local file or Redis, holding pickles, per rank. Here the
daemon keeps them instead, in its own protobuf schema (tccd.v1.DynamicProfile) merged across
ranks and runs (a dim dynamic on any rank is dynamic for the job), so a restarted run or another
rank needs no recompile.

The hook is PyTorch's remote PGO cache: with `torch._dynamo.config.automatic_dynamic_remote_pgo`
on, Dynamo reads the profile once per process at the first frame it traces (`get`) and writes it
after every frame compile that changed it (`put`), through the class that
`torch._inductor.remote_cache` names `RemoteDynamoPGOCache` (Redis in stock PyTorch). install()
puts `DaemonProfiles` there and turns the flag on, when the tccd backend is loaded
(torch.compile(backend="tccd") loads it before Dynamo traces anything).

Nothing pickled crosses the wire or enters the store: `put` ignores the pickle torch hands it
and converts torch's in-memory state (pgo._CODE_STATE: CodeId -> CodeState of
FrameStateSizeEntry) to the protobuf; `get` converts the daemon's protobuf back into those
objects and hands them to torch in the form its hook takes (its own pickle, made and read in
this process).

The job id is torch's (`torch.compiler.config.job_id`, env TORCH_COMPILE_JOB_ID): torch's PGO
does nothing without one, and TCCD_JOB_ID (the daemon's job index) does not turn it on, since
PGO changes what gets compiled (and torch then also keeps its local per-rank file).

Off: TCCD_DYNAMIC_PROFILES=0, TORCH_DYNAMO_AUTOMATIC_DYNAMIC_REMOTE_PGO=0, no torch job id, or a
daemon started with --dynamic-profiles=false. A failing daemon never fails a compile: the
profile is then simply not shared (logged at debug level).

Limits: frames are matched as torch matches them (file content hash, first line, name); frames
of closures (torch adds a per-process hash of the closure's code) are not shared. torch reads
its local PGO file (automatic_dynamic_local_pgo, per rank) before the remote one: a rank that
has one uses it and sees other ranks' dims only after TORCH_DYNAMO_AUTOMATIC_DYNAMIC_LOCAL_PGO=0.
torch.compiler.config.cache_key_tag is not part of the daemon's key (one profile per job id).
"""

from __future__ import annotations

import base64
import dataclasses
import logging
import threading
from typing import Any, Dict, List, Optional

from . import config as config_mod

log = logging.getLogger(__name__)

_lock = threading.Lock()
_installed = False
# The last profile this process sent, serialised: torch puts after every changing compile, and
# an unchanged profile need not travel again.
_last_put: Optional[bytes] = None


def job_id() -> str:
    """torch's job id, which keys the profile ("" when unset)."""
    import torch.compiler.config as compiler_config

    return getattr(compiler_config, "job_id", None) or ""


def enabled(config: Any = None) -> bool:
    cfg = config or config_mod.get()
    return cfg.dynamic_profiles and bool(job_id())


def install() -> bool:
    """Routes Dynamo's remote PGO cache to the daemon (idempotent). False when switched off."""
    global _installed
    cfg = config_mod.get()
    if not cfg.dynamic_profiles:
        return False
    import torch._dynamo.config as dynamo_config
    import torch._inductor.remote_cache as remote_cache

    with _lock:
        if _installed:
            return True
        if getattr(dynamo_config, "automatic_dynamic_remote_pgo", None) is False:
            log.info("tccd: dynamic profiles off: automatic_dynamic_remote_pgo is False")
            return False
        if not hasattr(remote_cache, "RemoteDynamoPGOCache"):
            log.info("tccd: dynamic profiles off: this torch has no remote PGO cache hook")
            return False
        remote_cache.RemoteDynamoPGOCache = DaemonProfiles
        dynamo_config.automatic_dynamic_remote_pgo = True
        _installed = True
        return True


class DaemonProfiles:
    """The RemoteCache interface (get/put of JSON-able values) torch's pgo.py uses."""

    def __init__(self, name: str = "dynamo-pgo") -> None:
        self.name = name

    def get(self, key: str) -> Optional[Dict[str, Any]]:
        try:
            if not _is_main_key(key):
                return None  # pgo_extra_read_key: not kept by tccd
            profile = fetch()
            if profile is None:
                return None
            state = to_code_state(profile)
            if not state:
                return None
            import pickle

            # torch's hook takes its own pickle; it never leaves this process.
            return {"data": base64.b64encode(pickle.dumps(state)).decode("ascii")}
        except Exception as e:  # deliberately ignored: a lost profile costs recompiles only
            log.debug("tccd: reading the dynamic profile failed: %s", e, exc_info=True)
            return None

    def put(self, key: str, value: Any) -> None:
        del value  # torch's pickle of pgo._CODE_STATE; the state itself is read instead
        try:
            if not _is_main_key(key):
                return
            from torch._dynamo import pgo

            state = getattr(pgo, "_CODE_STATE", None)
            if state:
                store(from_code_state(state))
        except Exception as e:  # deliberately ignored, as in get
            log.debug("tccd: storing the dynamic profile failed: %s", e, exc_info=True)


def _is_main_key(key: str) -> bool:
    from torch._dynamo import pgo

    return enabled() and key == pgo.get_cache_key()


def fetch(config: Any = None) -> Optional[Any]:
    """The job's profile from the daemon (tccd.v1.DynamicProfile), None when it has none."""
    import grpc

    from . import channel
    from .v1 import tccd_pb2 as pb

    cfg = config or config_mod.get()
    try:
        return channel.connect(cfg).GetDynamicProfile(
            pb.DynamicProfileRequest(job_id=job_id()), timeout=cfg.timeout_s)
    except grpc.RpcError as e:
        if e.code() != grpc.StatusCode.NOT_FOUND:
            log.debug("tccd: GetDynamicProfile failed: %s", e)
        return None


def store(profile: Any, config: Any = None) -> Optional[Any]:
    """Merges `profile` into the job's in the daemon; the merged profile, or None on failure."""
    global _last_put
    import grpc

    from . import channel

    cfg = config or config_mod.get()
    profile.job_id = job_id()
    payload = profile.SerializeToString()
    if payload == _last_put:
        return None
    try:
        merged = channel.connect(cfg).PutDynamicProfile(profile, timeout=cfg.timeout_s)
    except grpc.RpcError as e:
        log.debug("tccd: PutDynamicProfile failed: %s", e)
        return None
    _last_put = payload
    return merged


# --- torch's FrameStateSizeEntry <-> tccd.v1 ------------------------------------------------


def _atom_to_pb(x: Any, out: Any) -> None:
    from torch._dynamo import pgo

    from .v1 import tccd_pb2 as pb

    infer_stride = getattr(pgo, "InferStride", None)
    if x is pgo.auto_unset:
        out.kind = pb.ProfileAtom.UNSET
    elif x is pgo.auto_dynamic:
        out.kind = pb.ProfileAtom.DYNAMIC
    elif infer_stride is not None and isinstance(x, infer_stride):
        out.kind = pb.ProfileAtom.INFER_STRIDE
        out.value = int(x.dim)
    elif type(x) is int:
        out.kind = pb.ProfileAtom.STATIC
        out.value = x
    else:
        raise ValueError(f"unknown PGO value {x!r}")


def _dims_to_pb(xs: Any, out: Any) -> None:
    from torch._dynamo import pgo

    from .v1 import tccd_pb2 as pb

    if xs is pgo.auto_unset:
        out.kind = pb.ProfileDims.UNSET
    elif xs is pgo.auto_dynamic:
        out.kind = pb.ProfileDims.DYNAMIC
    elif isinstance(xs, tuple):
        out.kind = pb.ProfileDims.DIMS
        for x in xs:
            _atom_to_pb(x, out.dims.add())
    else:
        raise ValueError(f"unknown PGO sizes {xs!r}")


def _atom_from_pb(atom: Any) -> Any:
    from torch._dynamo import pgo

    from .v1 import tccd_pb2 as pb

    if atom.kind == pb.ProfileAtom.UNSET:
        return pgo.auto_unset
    if atom.kind == pb.ProfileAtom.DYNAMIC:
        return pgo.auto_dynamic
    if atom.kind == pb.ProfileAtom.STATIC:
        return int(atom.value)
    if atom.kind == pb.ProfileAtom.INFER_STRIDE and hasattr(pgo, "InferStride"):
        return pgo.InferStride(int(atom.value))
    return pgo.auto_dynamic  # a kind this torch cannot say: the safe side is dynamic


def _dims_from_pb(dims: Any) -> Any:
    from torch._dynamo import pgo

    from .v1 import tccd_pb2 as pb

    if dims.kind == pb.ProfileDims.DIMS:
        return tuple(_atom_from_pb(a) for a in dims.dims)
    if dims.kind == pb.ProfileDims.DYNAMIC:
        return pgo.auto_dynamic
    return pgo.auto_unset


def from_code_state(state: Any) -> Any:
    """tccd.v1.DynamicProfile (job_id unset) of pgo's CodeId -> CodeState mapping."""
    from .v1 import tccd_pb2 as pb

    profile = pb.DynamicProfile()
    for code_id, code_state in state.items():
        if getattr(code_id, "closure_hash", None) is not None:
            continue  # a per-process hash: no other process could match it (module doc)
        frame = pb.ProfileFrame(
            filename=code_id.filename,
            first_line=int(code_id.firstlineno),
            name=code_id.name,
            file_hash=str(getattr(code_id, "file_hash", "") or ""),
        )
        for source, entry in code_state.automatic_dynamic.items():
            out = pb.ProfileEntry(source=source)
            try:
                _atom_to_pb(entry.scalar, out.scalar)
                _dims_to_pb(entry.size, out.size)
                _dims_to_pb(entry.stride, out.stride)
            except ValueError as e:
                log.debug("tccd: %s %s not shared: %s", code_id, source, e)
                continue
            frame.entries.append(out)
        if frame.entries:
            profile.frames.append(frame)
    return profile


def _code_id(frame: Any) -> Any:
    from torch._dynamo import pgo

    fields = {f.name for f in dataclasses.fields(pgo.CodeId)}
    kwargs: Dict[str, Any] = dict(
        filename=frame.filename, firstlineno=frame.first_line, name=frame.name)
    if "file_hash" in fields:
        # A profile from a torch without file hashes: hash this process's file the same way.
        kwargs["file_hash"] = frame.file_hash or pgo._hash_containing_file(frame.filename)
    if "closure_hash" in fields:
        kwargs["closure_hash"] = None
    return pgo.CodeId(**kwargs)


def to_code_state(profile: Any) -> Any:
    """pgo's defaultdict(CodeState) of a tccd.v1.DynamicProfile. Frames torch considers the same
    (one file at two paths) are joined as torch joins them."""
    from collections import defaultdict

    from torch._dynamo import pgo

    state = defaultdict(pgo.CodeState)
    for frame in profile.frames:
        automatic = state[_code_id(frame)].automatic_dynamic
        for entry in frame.entries:
            fs = pgo.FrameStateSizeEntry(
                scalar=_atom_from_pb(entry.scalar),
                size=_dims_from_pb(entry.size),
                stride=_dims_from_pb(entry.stride),
            )
            if entry.source in automatic:
                automatic[entry.source] |= fs
            else:
                automatic[entry.source] = fs
    return state


def describe(profile: Any) -> List[str]:
    """Lines for `python -m tccd job`: per frame, per input, its sizes with `?` for a dynamic dim
    (torch's own notation) and what a scalar is."""
    from .v1 import tccd_pb2 as pb

    def atom(a: Any) -> str:
        if a.kind == pb.ProfileAtom.DYNAMIC:
            return "?"
        if a.kind == pb.ProfileAtom.STATIC:
            return str(a.value)
        if a.kind == pb.ProfileAtom.INFER_STRIDE:
            return f"S({a.value})"
        return "-"

    def dims(d: Any) -> str:
        if d.kind == pb.ProfileDims.DIMS:
            return "[" + ", ".join(atom(a) for a in d.dims) + "]"
        return "?" if d.kind == pb.ProfileDims.DYNAMIC else "-"

    lines = []
    for frame in profile.frames:
        lines.append(f"{frame.filename}:{frame.first_line} {frame.name}")
        for e in frame.entries:
            if e.size.kind == pb.ProfileDims.DIMS:
                what = f"size={dims(e.size)} stride={dims(e.stride)}"
            elif e.scalar.kind != pb.ProfileAtom.UNSET:
                what = f"scalar {atom(e.scalar)}"
            else:
                what = f"size={dims(e.size)}"
            lines.append(f"  {e.source}: {what}")
    return lines
