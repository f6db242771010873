"""Matmul autotuning's choices shared through the daemon (issue 7; server/gemm_tune_store.h).

With the daemon's TCCD_GEMM_AUTOTUNE=n, each static cuBLASLt matmul times n candidate
algorithms when its library loads and keeps the fastest (codegen/cuda_host/runtime/
tccd_cuda_tune.h). Timing picks per process: two processes (two ranks of a job) may keep
different algorithms and compute different bits. Here the choices become content-addressed
records in the daemon: key = the GPU model and compute capability, the cuBLASLt version and the
matmul's full description (the runtime's tune key without the device ordinal: sizes, layouts,
dtypes, epilogue, alpha, candidates and workspace), value = the serialised cublasLtMatmulAlgo_t,
its workspace, whether it is the swapped formulation, and its timings. The first process that
stores a matmul's choice wins; every later process and rank loads that one.

Per device and process (under `lock`, so that no Python write meets a load's C reads):
  before_load: the first time, the daemon's table of this identity is written into the
      runtime's table (tccd_rt_tune_table), replacing what the local cache had: a library
      then loads those algorithms without timing them.
  after_load: entries the daemon did not confirm (timed by this load, or read from the local
      cache) are put; the daemon answers with its whole table, which is written back. True
      when an entry changed (another process stored its choice first): the caller then calls
      tccd_cuda_set_tune_table again, which re-reads the table for the gemms already loaded.

A daemon that fails (or an old one without the RPCs) never fails a load: the choices then stay
in the process (logged at debug level). Off: TCCD_GEMM_TUNES_SHARED=0.

Limit: the Python writes are ordered against loads made through runtime._init_cuda_library only.
A module the runtime loads by itself at a first launch (a launch that beats a deferred
background load, TCCD_DEFER_BACKWARD_INIT) reads and writes the table under the runtime's own
spin lock, which Python cannot take; such a load racing with a write here could read a torn
entry (its algorithm is still checked with cublasLtMatmulAlgoCheck before use).
"""

from __future__ import annotations

import logging
import struct
import threading
from typing import Any, Dict, Optional, Set, Tuple

from . import config as config_mod
from . import runtime as _rt

log = logging.getLogger(__name__)

# The entry's fields after the key (tccd_cuda_tune.h struct tccd_rt_tune_entry).
_ALGO_OFFSET = _rt._TUNE_KEY_WORDS * 8
_WORKSPACE_OFFSET = _ALGO_OFFSET + 8 * 8
_USED_SWAPPED = 0x100  # TCCD_RT_TUNE_USED_SWAPPED
_GEMM_WORDS = _rt._TUNE_KEY_WORDS - 1  # the key without the device ordinal
_MASK = (1 << 64) - 1
# Deadline of one tune RPC: a load waits for it, so shorter than a compile's.
_RPC_TIMEOUT_S = 10.0

Words = Tuple[int, ...]


def _slot(words: Words) -> int:
    """tccd_rt_tune_slot: FNV-1a over the key without the device word."""
    h = 1469598103934665603
    for w in words[:_GEMM_WORDS]:
        h ^= w
        h = (h * 1099511628211) & _MASK
    return (h ^ (h >> 29)) % _rt._TUNE_SLOTS


def _offset(index: int) -> int:
    return _rt._TUNE_HEADER.size + index * _rt._TUNE_ENTRY_BYTES


def _find(buffer: Any, key: Words) -> Optional[int]:
    """tccd_rt_tune_find: the entry holding `key` (all 14 words), or the free one where it goes,
    or None when the table is full."""
    first = _slot(key)
    for probe in range(_rt._TUNE_SLOTS):
        index = (first + probe) % _rt._TUNE_SLOTS
        off = _offset(index)
        if not struct.unpack_from("<Q", buffer, off + _rt._TUNE_USED_OFFSET)[0]:
            return index
        if struct.unpack_from(f"<{_rt._TUNE_KEY_WORDS}Q", buffer, off) == key:
            return index
    return None


def used_entries(buffer: Any) -> Dict[Words, Any]:
    """gemm words (13) -> (algo words, workspace, swapped, chosen_ms, first_ms) of every used
    entry of the table in `buffer`."""
    out = {}
    for index in range(_rt._TUNE_SLOTS):
        off = _offset(index)
        used = struct.unpack_from("<Q", buffer, off + _rt._TUNE_USED_OFFSET)[0]
        if not used:
            continue
        key = struct.unpack_from(f"<{_rt._TUNE_KEY_WORDS}Q", buffer, off)
        algo = struct.unpack_from("<8Q", buffer, off + _ALGO_OFFSET)
        workspace = struct.unpack_from("<Q", buffer, off + _WORKSPACE_OFFSET)[0]
        chosen_ms, first_ms = struct.unpack_from("<ff", buffer, off + _rt._TUNE_TIMES_OFFSET)
        out[key[:_GEMM_WORDS]] = (algo, workspace, bool(used & _USED_SWAPPED), chosen_ms, first_ms)
    return out


def write_entry(buffer: Any, gemm: Words, device_index: int, algo: Words, workspace: int,
                swapped: bool, chosen_ms: float = 0.0, first_ms: float = 0.0) -> bool:
    """Writes one choice into the table in `buffer` for `device_index` (a new entry, or over the
    one of the same key). True when the table changed."""
    key = tuple(gemm) + (device_index,)
    index = _find(buffer, key)
    if index is None:
        return False  # full: this choice stays the daemon's only
    off = _offset(index)
    used = struct.unpack_from("<Q", buffer, off + _rt._TUNE_USED_OFFSET)[0]
    new_used = 1 | (_USED_SWAPPED if swapped else 0)
    if used and struct.unpack_from("<8Q", buffer, off + _ALGO_OFFSET) == tuple(algo) and \
            (used & _USED_SWAPPED) == (new_used & _USED_SWAPPED):
        return False
    struct.pack_into(f"<{_rt._TUNE_KEY_WORDS}Q", buffer, off, *key)
    struct.pack_into("<8Q", buffer, off + _ALGO_OFFSET, *algo)
    struct.pack_into("<Q", buffer, off + _WORKSPACE_OFFSET, workspace)
    struct.pack_into("<ff", buffer, off + _rt._TUNE_TIMES_OFFSET, chosen_ms, first_ms)
    struct.pack_into("<Q", buffer, off + _rt._TUNE_USED_OFFSET, new_used)
    if not used:
        magic, entry_bytes, slots, lock, filled = _rt._TUNE_HEADER.unpack_from(buffer, 0)
        _rt._TUNE_HEADER.pack_into(buffer, 0, magic, entry_bytes, slots, lock, filled + 1)
    return True


class Sharing:
    """One device's sharing state: its identity, and the choices the daemon confirmed."""

    def __init__(self, identity: Optional[Tuple[str, int, int]]):
        self.identity = identity  # (gpu name, sm, cuBLASLt version); None: not shared
        self.fetched = False
        self.confirmed: Set[Tuple[Words, Words, bool]] = set()  # (gemm, algo, swapped)
        self.lock = threading.Lock()

    def _import(self, buffer: Any, table: Any, device_index: int) -> bool:
        changed = False
        for e in table.entries:
            gemm, algo = tuple(e.gemm), tuple(e.algo)
            changed |= write_entry(buffer, gemm, device_index, algo, e.workspace_bytes, e.swapped,
                                   e.chosen_us / 1000.0, e.heuristic_us / 1000.0)
            self.confirmed.add((gemm, algo, e.swapped))
        return changed

    def before_load(self, buffer: Any, device_index: int) -> None:
        if self.identity is None or self.fetched:
            return
        self.fetched = True
        table = _call("GetGemmTunes", _request(self.identity))
        if table is not None:
            self._import(buffer, table, device_index)

    def after_load(self, buffer: Any, device_index: int) -> bool:
        if self.identity is None:
            return False
        from .v1 import tccd_pb2 as pb

        put = pb.GemmTuneTable(gpu_name=self.identity[0], sm=self.identity[1],
                               cublaslt_version=self.identity[2])
        for gemm, (algo, workspace, swapped, chosen_ms, first_ms) in sorted(
                used_entries(buffer).items()):
            if (gemm, algo, swapped) in self.confirmed:
                continue
            put.entries.add(gemm=gemm, algo=algo, workspace_bytes=workspace, swapped=swapped,
                            chosen_us=max(chosen_ms, 0.0) * 1000.0,
                            heuristic_us=max(first_ms, 0.0) * 1000.0)
        if not put.entries:
            return False
        stored = _call("PutGemmTunes", put)
        return stored is not None and self._import(buffer, stored, device_index)


def _request(identity: Tuple[str, int, int]) -> Any:
    from .v1 import tccd_pb2 as pb

    return pb.GemmTuneRequest(gpu_name=identity[0], sm=identity[1], cublaslt_version=identity[2])


def _call(method: str, request: Any) -> Optional[Any]:
    """The daemon's answer, or None (NOT_FOUND, or a failure: logged, the choices then stay in
    the process)."""
    import grpc

    from . import channel

    cfg = config_mod.get()
    try:
        return getattr(channel.connect(cfg), method)(request,
                                                      timeout=min(cfg.timeout_s, _RPC_TIMEOUT_S))
    except grpc.RpcError as e:
        if e.code() != grpc.StatusCode.NOT_FOUND:
            log.debug("tccd: %s failed: %s", method, e)
    except Exception as e:  # a daemon that cannot be reached never fails a load
        log.debug("tccd: %s failed: %s", method, e)
    return None


_sharing: Dict[int, Sharing] = {}
_sharing_lock = threading.Lock()


def sharing(device_index: int) -> Sharing:
    """The device's sharing state (identity None when TCCD_GEMM_TUNES_SHARED=0 or cuBLASLt's
    version is unknown)."""
    with _sharing_lock:
        state = _sharing.get(device_index)
        if state is None:
            state = _sharing[device_index] = Sharing(_identity(device_index))
        return state


def _identity(device_index: int) -> Optional[Tuple[str, int, int]]:
    if not config_mod.get().gemm_tunes_shared:
        return None
    version = _rt._cublaslt_version()
    if version is None:
        # Not loaded yet (torch loads it with libtorch_cuda, so this is rare): the runtime's own
        # fallback, a normal load by soname, which its first library load would make anyway.
        import ctypes

        for name in ("libcublasLt.so.13", "libcublasLt.so.12"):
            try:
                ctypes.CDLL(name)
                break
            except OSError:
                continue
        version = _rt._cublaslt_version()
    if version is None:
        return None
    import torch

    props = torch.cuda.get_device_properties(device_index)
    return props.name, props.major * 10 + props.minor, version
