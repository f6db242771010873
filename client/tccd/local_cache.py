"""The client's on-disk cache: request hash -> manifest, and artifacts by digest.

With it, a process that compiles a graph this machine has compiled before never talks to the
daemon: it finds the manifest under the request's hash and the artifacts under their digests.

Layout under the cache directory:
    manifests/<request hash>   "<sha256 of the rest>\n" + serialized tccd.v1.Manifest
    artifacts/<d[:2]>/<d>      the artifact bytes, whose SHA-256 is d

Integrity: every read re-hashes what it read; a file that does not match is deleted and
reported as a miss (so the caller refetches), never served. Writes go to a temporary file in
the same directory and are renamed into place, so readers never see a partial file and
concurrent writers of one entry both succeed.
"""

from __future__ import annotations

import hashlib
import logging
import os
import json
import tempfile
import threading
from typing import Dict, Optional

from .v1 import tccd_pb2 as pb

log = logging.getLogger(__name__)

# Bump when what enters request_hash changes, or when the meaning of a cached manifest does.
#   1: initial layout.
#   2: the daemon's compiler identity enters the hash.
REQUEST_HASH_VERSION = 2

# File in the cache directory: the compiler identity each daemon address last reported, so that
# entries stay usable while the daemon is down.
_IDENTITY_FILE = "daemon-identities.json"
_identities: Dict[str, str] = {}  # address -> identity, asked once per process
_identities_lock = threading.Lock()


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def daemon_identity(config) -> str:
    """The compiler identity of the daemon at config.address (GetInfo's compiler_fingerprint:
    its build and the debugging knobs that change code), asked once per process and address.

    It enters request_hash, so a local cache never serves what another daemon build (an upgraded
    service, a daemon bisecting with TCCD_DISABLE_PASSES) produced. While no daemon answers, the
    identity the address last reported (kept in the cache directory) stands in, so cached graphs
    still load; "" when there is none (such entries are then only found under "").
    """
    with _identities_lock:
        known = _identities.get(config.address)
        if known is not None:
            return known
        path = os.path.join(config.cache_dir, _IDENTITY_FILE)
        try:
            with open(path) as f:
                saved = json.load(f)
            saved = saved if isinstance(saved, dict) else {}
        except (OSError, ValueError):
            saved = {}
        identity = None
        try:
            from . import channel

            info = channel.connect(config).GetInfo(pb.InfoRequest(), timeout=10)
            identity = info.compiler_fingerprint or f"version:{info.tccd_version}"
        except Exception as e:  # noqa: BLE001 - any failure: fall back to the saved identity
            log.debug("tccd: no daemon identity from %s (%s); using the last one seen", config.address, e)
        if identity is None:
            return str(saved.get(config.address, ""))  # not remembered: ask again next time
        if saved.get(config.address) != identity:
            saved[config.address] = identity
            try:
                os.makedirs(config.cache_dir, exist_ok=True)
                _write_json_atomic(path, saved)
            except OSError as e:
                log.debug("tccd: cannot remember the daemon identity in %s: %s", path, e)
        _identities[config.address] = identity
        return identity


def _write_json_atomic(path: str, value: Dict[str, str]) -> None:
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".identities-")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(value, f)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def request_hash(request: "pb.CompileRequest", daemon_identity: str = "") -> str:
    """SHA-256 over exactly what determines the daemon's output for `request`.

    In: the graph (minus informational fields), the target, the options, the shape facts, the
    client version (it decides how a Plan is interpreted), the daemon's compiler identity
    (daemon_identity()) and REQUEST_HASH_VERSION. Out: job id, rank, graph name, client info,
    and per-tensor requires_grad and device index, which the daemon's compile key leaves out as
    well.
    """
    from . import __version__

    keyed = pb.CompileRequest()
    keyed.graph.CopyFrom(request.graph)
    keyed.target.CopyFrom(request.target)
    keyed.options.CopyFrom(request.options)
    keyed.shape_env.CopyFrom(request.shape_env)
    metas = list(keyed.graph.inputs) + [m for n in keyed.graph.nodes for m in n.outputs]
    for meta in metas:
        meta.requires_grad = False
        meta.device.index = 0
    h = hashlib.sha256()
    h.update(f"tccd-request-hash/{REQUEST_HASH_VERSION}/{__version__}/{daemon_identity}\n".encode())
    h.update(keyed.SerializeToString(deterministic=True))
    return h.hexdigest()


def _write_atomic(path: str, data: bytes) -> None:
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _read(path: str) -> Optional[bytes]:
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def _discard(path: str, why: str) -> None:
    log.warning("tccd local cache: deleting %s: %s", path, why)
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


class LocalCache:
    """Thread- and process-safe (atomic renames, verified reads)."""

    def __init__(self, root: str):
        self.root = root

    def _manifest_path(self, key: str) -> str:
        return os.path.join(self.root, "manifests", key)

    def artifact_path(self, digest: str) -> str:
        if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            raise ValueError(f"not a lowercase hex SHA-256 digest: {digest!r}")
        return os.path.join(self.root, "artifacts", digest[:2], digest)

    # Manifests ---------------------------------------------------------------------------

    def get_manifest(self, key: str) -> Optional["pb.Manifest"]:
        path = self._manifest_path(key)
        data = _read(path)
        if data is None:
            return None
        digest, sep, body = data.partition(b"\n")
        if not sep or digest.decode("ascii", "replace") != sha256_hex(body):
            _discard(path, "manifest checksum mismatch")
            return None
        manifest = pb.Manifest()
        try:
            manifest.ParseFromString(body)
        except Exception as e:  # DecodeError; any parse failure is corruption
            _discard(path, f"unparsable manifest: {e}")
            return None
        return manifest

    def put_manifest(self, key: str, manifest: "pb.Manifest") -> None:
        body = manifest.SerializeToString(deterministic=True)
        _write_atomic(self._manifest_path(key), sha256_hex(body).encode() + b"\n" + body)

    # Artifacts ---------------------------------------------------------------------------

    def get_artifact_path(self, digest: str) -> Optional[str]:
        """The path of the verified artifact `digest`, or None (absent, or corrupt and deleted)."""
        path = self.artifact_path(digest)
        data = _read(path)
        if data is None:
            return None
        if sha256_hex(data) != digest:
            _discard(path, "artifact digest mismatch")
            return None
        return path

    def put_artifact(self, digest: str, data: bytes) -> str:
        if sha256_hex(data) != digest:
            raise ValueError(f"artifact bytes do not match digest {digest}")
        path = self.artifact_path(digest)
        _write_atomic(path, data)
        return path
