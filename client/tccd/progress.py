"""A Compile call that says what it waits for when it takes long (issue 11 item 5).

    response = progress.compile_with_progress(stub, request, config)

The call runs as a gRPC future. If it has not been answered after TCCD_PROGRESS_AFTER_S seconds,
the daemon is asked GetCompileProgress for this call (CompileRequest.progress_id, a random id)
and one line goes to stderr (and the `tccd` logger):

    tccd: compiling graph "backward" (key 1a2b3c4d5e6f): 12/40 kernels, 6.1 s

and one more every PROGRESS_REPEAT_S while the compile lasts. The daemon logs its own line once
a compile runs past its --progress-log-s. Everything about the numbers lives in the daemon; the
client only asks and prints.
"""

from __future__ import annotations

import logging
import sys
import time
import uuid

import grpc

from .config import Config
from .v1 import tccd_pb2 as pb

log = logging.getLogger("tccd")

# After the first line, one more every this many seconds (a 10-minute compile says so ~20 times).
PROGRESS_REPEAT_S = 30.0
_POLL_TIMEOUT_S = 2.0


def describe(graph_name: str, progress: "pb.CompileProgress | None", elapsed_s: float) -> str:
    """The progress line for a compile of `graph_name` (progress None: the daemon could not say)."""
    graph = graph_name or "-"
    if progress is None or not progress.known:
        return f'tccd: compiling graph "{graph}": {elapsed_s:.1f} s'
    key = progress.key[:12]
    if progress.phase == "queued":
        what = "queued behind other compiles"
    elif progress.kernels_total:
        what = f"{progress.kernels_done}/{progress.kernels_total} kernels"
    else:
        what = "lowering"
    return f'tccd: compiling graph "{graph}" (key {key}): {what}, {progress.elapsed_ms / 1000:.1f} s'


def _ask(stub, progress_id: str) -> "pb.CompileProgress | None":
    try:
        return stub.GetCompileProgress(
            pb.CompileProgressRequest(progress_id=progress_id), timeout=_POLL_TIMEOUT_S
        )
    except grpc.RpcError:  # an older daemon (UNIMPLEMENTED) or a busy one: print what we know
        return None


def compile_with_progress(stub, request: "pb.CompileRequest", config: Config) -> "pb.CompileResponse":
    """stub.Compile(request), printing progress lines while it takes long. Raises grpc.RpcError
    as the plain call does."""
    after_s = config.progress_after_s
    if after_s <= 0:
        return stub.Compile(request, timeout=config.timeout_s)
    request.progress_id = uuid.uuid4().hex
    start = time.monotonic()
    future = stub.Compile.future(request, timeout=config.timeout_s)
    try:
        wait_s = after_s
        while True:
            try:
                return future.result(timeout=wait_s)
            except grpc.FutureTimeoutError:
                pass
            line = describe(request.graph_name, _ask(stub, request.progress_id), time.monotonic() - start)
            print(line, file=sys.stderr, flush=True)
            log.info("%s", line)
            wait_s = PROGRESS_REPEAT_S
    finally:
        future.cancel()  # a no-op once answered; an interrupted wait must not leave the call open
        request.progress_id = ""
