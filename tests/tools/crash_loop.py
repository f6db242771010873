#!/usr/bin/env python3
"""Crash consistency: kill -9 the daemon at random moments during concurrent compiles, restart it
on the same store, and check that every acknowledged compile survives and nothing corrupt is
served.

Each cycle starts the real tccd on one store, runs --clients compile clients that send distinct
small CPU graphs (so that entries are being written when the kill lands), SIGKILLs the daemon
after a random delay, restarts it on the same store, and verifies every compile the daemon had
acknowledged in that cycle (the client got OK with a manifest): the same request must be a cache
hit with the same key, and every artifact fetched must match the manifest's size and SHA-256
digest (checked here, not trusted to the daemon). At the end every entry acknowledged in any
cycle is verified once more.

    PYTHONPATH=client tests/tools/crash_loop.py --binary build/bin/tccd --cycles 200

Prints one line per 10 cycles and a summary `cycles=... acknowledged=... lost=0 corrupt=0 ...`;
exit status 0 only when nothing acknowledged was lost and nothing corrupt was served.
tests/python/test_e2e_crash_consistency.py runs a bounded version in CI.
"""

import argparse
import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import List, Tuple

import grpc

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))


class Daemon:
    def __init__(self, binary: str, root: str, extra_args: List[str]):
        self.binary = binary
        self.address = f"unix:{root}/tccd.sock"
        self.db = f"{root}/db"
        self.log = f"{root}/tccd.log"
        self.extra_args = extra_args
        self.proc = None

    def start(self, timeout_s: float = 60.0) -> None:
        from tccd import channel

        with open(self.log, "ab") as log:
            # Its own session, so that cleanup can reach worker processes too.
            self.proc = subprocess.Popen([self.binary, "--listen", self.address, "--cache-dir", self.db,
                                          "--log-level", "warn"] + self.extra_args,
                                         stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         start_new_session=True)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"tccd exited with {self.proc.returncode}:\n{self.log_tail()}")
            if channel.ping(self.address, timeout_s=1.0) is None:
                return
            time.sleep(0.02)
        raise RuntimeError(f"tccd did not answer within {timeout_s}s:\n{self.log_tail()}")

    def kill9(self) -> None:
        """SIGKILL to the daemon alone, as the OOM killer or a crash would; its workers must cope."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def cleanup(self) -> None:
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()

    def log_tail(self, limit: int = 3000) -> str:
        try:
            with open(self.log, "rb") as f:
                return f.read()[-limit:].decode("utf-8", "replace")
        except OSError:
            return ""


def make_request_factory():
    """Requests for relu(x * y) + c with a distinct constant c each: distinct keys, one capture."""
    import torch
    from tccd.serialize import build_request
    from tccd_testlib import capture_aot_graphs

    def f(x, y):
        return torch.relu(x * y) + 1.5

    (_, gm, inputs), = capture_aot_graphs(f, torch.randn(4, 8), torch.randn(8))
    template = build_request(gm, inputs, graph_name="crash-loop", job_id="crash-loop")
    add = template.graph.nodes[-1]
    assert add.target == "aten::add.Tensor" and add.args[1].float_value == 1.5, add

    def make(n: int):
        request = type(template)()
        request.CopyFrom(template)
        request.graph.nodes[-1].args[1].float_value = 1000.0 + n * 0.25
        return request

    return make


def fetch_verified(stub, artifact) -> str:
    """'' when the artifact arrives intact, otherwise what was wrong."""
    from tccd.v1 import tccd_pb2 as pb

    data = bytearray()
    try:
        for chunk in stub.FetchArtifact(pb.FetchArtifactRequest(digest=artifact.digest), timeout=60):
            if chunk.offset != len(data):
                return f"chunk at offset {chunk.offset}, expected {len(data)}"
            data += chunk.data
    except grpc.RpcError as e:
        return f"fetch failed: {e.code().name} {e.details()}"
    if artifact.size and len(data) != artifact.size:
        return f"{len(data)} bytes, manifest says {artifact.size}"
    if hashlib.sha256(data).hexdigest() != artifact.digest:
        return "bytes do not match the digest"
    return ""


def verify(stub, request, key: str) -> Tuple[bool, List[str]]:
    """(lost, corruptions) for one acknowledged entry."""
    response = stub.Compile(request, timeout=300)
    if not response.cache_hit or response.manifest.key != key:
        return True, []
    problems = []
    for artifact in response.manifest.artifacts:
        why = fetch_verified(stub, artifact)
        if why:
            problems.append(f"{key[:12]} {artifact.name}: {why}")
    return False, problems


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.environ.get("TCCD_BINARY", "build/bin/tccd"))
    parser.add_argument("--cycles", type=int, default=200)
    parser.add_argument("--clients", type=int, default=3, help="concurrent compile clients per cycle")
    parser.add_argument("--min-kill-s", type=float, default=0.05, help="earliest kill after the daemon answers")
    parser.add_argument("--max-kill-s", type=float, default=1.5, help="latest kill after the daemon answers")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the store and log for inspection")
    parser.add_argument("daemon_args", nargs="*", help="extra tccd flags, after --")
    args = parser.parse_args(argv)

    from tccd import channel

    rng = random.Random(args.seed)
    make = make_request_factory()
    root = tempfile.mkdtemp(prefix="tccd-crash-", dir="/tmp")
    daemon = Daemon(args.binary, root, args.daemon_args)
    acknowledged: List[Tuple[int, str]] = []  # (request number, manifest key)
    lost: List[int] = []
    corrupt: List[str] = []
    next_number = [0]
    lock = threading.Lock()
    started = time.monotonic()
    try:
        daemon.start()
        for cycle in range(args.cycles):
            stub = channel.stub_for(daemon.address)
            acked_this_cycle: List[Tuple[int, str]] = []
            stop = threading.Event()

            def client() -> None:
                while not stop.is_set():
                    with lock:
                        n = next_number[0]
                        next_number[0] += 1
                    try:
                        response = stub.Compile(make(n), timeout=120)
                    except grpc.RpcError:
                        return  # the kill landed: this one was never acknowledged
                    if response.manifest.key:
                        with lock:
                            acked_this_cycle.append((n, response.manifest.key))

            threads = [threading.Thread(target=client, daemon=True) for _ in range(args.clients)]
            for t in threads:
                t.start()
            time.sleep(rng.uniform(args.min_kill_s, args.max_kill_s))
            daemon.kill9()
            stop.set()
            for t in threads:
                t.join(timeout=150)
            daemon.start()
            stub = channel.stub_for(daemon.address)
            with lock:
                fresh = list(acked_this_cycle)
            acknowledged.extend(fresh)
            for n, key in fresh:
                was_lost, problems = verify(stub, make(n), key)
                if was_lost:
                    lost.append(n)
                corrupt.extend(problems)
            if (cycle + 1) % 10 == 0 or lost or corrupt:
                print(f"cycle={cycle + 1} acknowledged={len(acknowledged)} lost={len(lost)} "
                      f"corrupt={len(corrupt)} seconds={time.monotonic() - started:.0f}", flush=True)
            if lost or corrupt:
                break
        # Everything once more: later cycles' writes and compactions must not have lost older entries.
        stub = channel.stub_for(daemon.address)
        final_lost = 0
        for n, key in acknowledged:
            was_lost, problems = verify(stub, make(n), key)
            final_lost += was_lost
            corrupt.extend(problems)
        for problem in corrupt[:20]:
            print("CORRUPT", problem, flush=True)
        print(f"cycles={cycle + 1} acknowledged={len(acknowledged)} lost={len(lost)} "
              f"lost_at_end={final_lost} corrupt={len(corrupt)} seconds={time.monotonic() - started:.0f}",
              flush=True)
        if lost or final_lost or corrupt:
            print(daemon.log_tail(), flush=True)
            return 1
        return 0
    finally:
        daemon.cleanup()
        if args.keep:
            print(f"store and log kept in {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
