"""One CompileRequest -> a runnable LoadedPlan: local cache, daemon, artifact fetch, load.

    plan = compile_request(request, config, record)

1. The local cache is asked for the request's manifest (by request hash) and its artifacts (by
   digest); if all are there and intact the daemon is never contacted.
2. Otherwise the daemon (started if need be, see channel.py) compiles the request, and every
   artifact the plan runs is fetched by digest, verified and stored locally.
3. The plan is bound to the shared objects (runtime.load_plan).
load_cached_plan(key, ...) is step 1 alone, for a caller that has only the request hash (an
AOT recipe names its plans that way).
Every failure is raised as a TccdError subclass; choosing between raising and running eagerly is
the backend's business, not this module's.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
import time
from typing import Callable, Dict, Optional

import grpc

from . import channel
from .config import Config
from .errors import ArtifactError, CompileFailed
from .local_cache import LocalCache, daemon_identity, request_hash
from . import conv_warmup, native_plan, progress, saved_layouts
from .runtime import LoadedPlan, load_plan
from .stats import GraphRecord
from .v1 import tccd_pb2 as pb

log = logging.getLogger(__name__)

# Artifacts a Plan's NativeCalls load; the others (cubins, text dumps) are for inspection.
_LOADABLE = (pb.CPU_SHARED_OBJECT, pb.CUDA_HOST_OBJECT)


def _rpc_error(what: str, e: grpc.RpcError) -> CompileFailed:
    code = e.code()
    return CompileFailed(f"{what} failed ({code.name}): {e.details()}", code=code)


def _daemon_compile(request: "pb.CompileRequest", config: Config) -> "pb.CompileResponse":
    stub = channel.connect(config)
    try:
        return progress.compile_with_progress(stub, request, config)
    except grpc.RpcError as e:
        if e.code() != grpc.StatusCode.UNAVAILABLE:
            raise _rpc_error("Compile", e) from None
    # The daemon went away between the health check and the call (a restart): once more.
    stub = channel.connect(config)
    try:
        return progress.compile_with_progress(stub, request, config)
    except grpc.RpcError as e:
        raise _rpc_error("Compile", e) from None


def fetch_artifact(config: Config, artifact: "pb.Artifact") -> bytes:
    """The artifact's bytes from the daemon, checked against its size and digest."""
    stub = channel.connect(config)
    parts = []
    received = 0
    try:
        for chunk in stub.FetchArtifact(
            pb.FetchArtifactRequest(digest=artifact.digest), timeout=config.timeout_s
        ):
            if chunk.offset != received:
                raise ArtifactError(
                    f"artifact {artifact.name}: chunk at offset {chunk.offset}, expected {received}"
                )
            parts.append(chunk.data)
            received += len(chunk.data)
    except grpc.RpcError as e:
        raise _rpc_error(f"FetchArtifact({artifact.name})", e) from None
    data = b"".join(parts)
    if artifact.size and len(data) != artifact.size:
        raise ArtifactError(f"artifact {artifact.name}: {len(data)} bytes, manifest says {artifact.size}")
    if hashlib.sha256(data).hexdigest() != artifact.digest:
        raise ArtifactError(f"artifact {artifact.name}: bytes do not match digest {artifact.digest}")
    return data


def _needed_artifacts(manifest: "pb.Manifest", native_runtime: bool) -> Dict[str, "pb.Artifact"]:
    by_name = {a.name: a for a in manifest.artifacts}
    needed = {}
    if native_runtime:
        for a in manifest.artifacts:
            if a.kind in (pb.PLAN_RUNTIME, pb.PLAN_DESCRIPTOR):
                needed[a.name] = a
    for step in manifest.plan.steps:
        kind = step.WhichOneof("kind")
        if kind not in ("native", "segment"):
            continue
        name = getattr(step, kind).artifact
        artifact = by_name.get(name)
        if artifact is None:
            raise ArtifactError(f"plan calls into {name!r}, which the manifest does not list")
        if artifact.kind not in _LOADABLE:
            raise ArtifactError(f"plan calls into {name!r}, a {pb.ArtifactKind.Name(artifact.kind)}")
        needed[name] = artifact
    return needed


def _load(
    manifest: "pb.Manifest",
    config: Config,
    cache: Optional[LocalCache],
    name: str,
    allow_fetch: bool,
    kind: str = "",
    timeline: Optional[Dict[str, float]] = None,
    started: float = 0.0,
) -> Optional[LoadedPlan]:
    """Loads the manifest's plan; None if an artifact is missing and `allow_fetch` is False.
    `kind` "backward" with TCCD_DEFER_BACKWARD_INIT (any kind with 2: a plan loaded by key, whose
    caller goes on with other work, e.g. Dynamo's guards): its CUDA modules load in the background."""
    needed = _needed_artifacts(manifest, config.native_runtime)
    paths: Dict[str, str] = {}
    scratch = None
    timeline = timeline if timeline is not None else {}
    try:
        for artifact_name, artifact in needed.items():
            path = cache.get_artifact_path(artifact.digest) if cache else None
            if path is None:
                if not allow_fetch:
                    return None
                data = fetch_artifact(config, artifact)
                if cache:
                    path = cache.put_artifact(artifact.digest, data)
                else:
                    scratch = scratch or tempfile.mkdtemp(prefix="tccd-artifacts-")
                    path = os.path.join(scratch, artifact.digest)
                    with open(path, "wb") as f:
                        f.write(data)
            paths[artifact_name] = path
        # A backward plan is called after the forward: its modules can load meanwhile. With 2,
        # a forward's too: loaded by key (kind set), what comes before its first call on the
        # main thread (Dynamo finishing the frame, or rebuilding a saved file's guards) overlaps.
        defer = kind != "" and (config.defer_backward_init >= 2
                                or (config.defer_backward_init >= 1 and kind == "backward"))
        _mark(timeline, "fetched", started)
        plan = load_plan(manifest.plan, paths, name, defer_cuda_init=defer)
        _mark(timeline, "loaded", started)
        if config.native_runtime:
            kinds = {a.kind: paths.get(a.name) for a in needed.values()}
            plan = native_plan.load(plan, manifest.plan, kinds.get(pb.PLAN_RUNTIME), kinds.get(pb.PLAN_DESCRIPTOR))
            _mark(timeline, "native", started)
        # The strides the plan gives its outputs: a forward's saved tensors may differ from the
        # trace's, and its backward is compiled for them (saved_layouts.py).
        plan.output_strides = saved_layouts.output_strides(manifest.plan)
        # A forward's convolutions loaded by key (TCCD_CONV_WARMUP_FORWARD), then a backward
        # plan's: cuDNN's set-up now, off the first call's path (the backward's waits for the
        # forward's).
        conv_warmup.start_forward(manifest.plan, name, config.conv_warmup_forward,
                                  by_key=kind in ("forward", "inference"))
        conv_warmup.start(manifest.plan, name, config.conv_warmup)
        return plan
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)  # loaded objects stay mapped


def compile_request(
    request: "pb.CompileRequest",
    config: Config,
    record: GraphRecord,
    key: Optional[str] = None,
    on_manifest: Optional[Callable[["pb.Manifest"], None]] = None,
    started: Optional[float] = None,
) -> LoadedPlan:
    """`key`: request_hash(request) when the caller computed it already (it names the manifest
    in the local cache). `on_manifest`: called once with the manifest as soon as it is known,
    before its artifacts are fetched and loaded (a forward's saved-tensor strides are in its
    plan: its backward's compile can start then); what it raises is logged, not raised.
    `started`: the time.monotonic() that record.timeline_ms counts from (default: now)."""
    cache = LocalCache(config.cache_dir) if config.local_cache else None
    if cache and key is None:
        key = request_hash(request, daemon_identity(config))
    manifest = cache.get_manifest(key) if cache else None
    plan = None
    if manifest is not None:
        _tell(on_manifest, manifest)
        plan = _load(manifest, config, cache, request.graph_name, allow_fetch=False)
        record.local_hit = plan is not None
    if plan is None and manifest is not None:
        # Known manifest, but an artifact is gone or was corrupt: fetch it again.
        plan = _load(manifest, config, cache, request.graph_name, allow_fetch=True)
    if plan is None:
        started = time.monotonic() if started is None else started
        response = _daemon_compile(request, config)
        _mark(record.timeline_ms, "answered", started)
        manifest = response.manifest
        _tell(on_manifest, manifest)
        record.cache_hit = response.cache_hit
        record.deduplicated = response.deduplicated
        record.compile_ms = response.compile_ms
        record.kernels_compiled = response.kernels_compiled
        record.kernels_reused = response.kernels_reused
        record.server_ms = response.server_ms
        plan = _load(manifest, config, cache, request.graph_name, allow_fetch=True,
                     timeline=record.timeline_ms, started=started)
        if cache:
            cache.put_manifest(key, manifest)  # after its artifacts, which _load stored
    _describe(record, manifest, plan)
    return plan


def _mark(timeline: Dict[str, float], what: str, started: float) -> None:
    """GraphRecord.timeline_ms[what]: ms since `started` (time.monotonic())."""
    timeline[what] = round((time.monotonic() - started) * 1e3, 1)


def _tell(on_manifest: Optional[Callable[["pb.Manifest"], None]], manifest: "pb.Manifest") -> None:
    if on_manifest is None:
        return
    try:
        on_manifest(manifest)
    except Exception:  # deliberately ignored: the caller's early start is an optimisation
        log.warning("tccd: %s: acting on the manifest before its load failed", manifest.key[:16], exc_info=True)


def load_cached_plan(key: str, config: Config, name: str, record: GraphRecord) -> Optional[LoadedPlan]:
    """The plan of the manifest the local cache holds under request hash `key`, or None.

    For a caller that knows the request hash but has no request (an AOT recipe, aot_cache.py):
    without the manifest there is nothing to ask the daemon, so None. Artifacts missing locally
    are fetched from the daemon by digest.
    """
    cache = LocalCache(config.cache_dir)
    manifest = cache.get_manifest(key)
    if manifest is None:
        return None
    plan = _load(manifest, config, cache, name, allow_fetch=False, kind=record.kind)
    record.local_hit = plan is not None
    if plan is None:
        plan = _load(manifest, config, cache, name, allow_fetch=True, kind=record.kind)
    _describe(record, manifest, plan)
    return plan


def _describe(record: GraphRecord, manifest: "pb.Manifest", plan: LoadedPlan) -> None:
    record.key = manifest.key
    record.native_kernels = plan.num_native
    record.fused_kernels = plan.num_fused_kernels
    record.extern_steps = plan.num_extern
    record.python_steps = plan.python_steps
    record.segment_values = getattr(plan, "segment_values", 0)
    record.python_step_reasons = dict(getattr(plan, "python_step_reasons", None) or {})
    record.kernels = [
        {"name": k.name, "kind": k.kind, "ops": list(k.ops), "shape": list(k.shape)}
        for step in manifest.plan.steps
        if step.WhichOneof("kind") in ("native", "segment")
        for k in getattr(step, step.WhichOneof("kind")).kernels
    ]
