"""Benchmark: cache-hit latency over TLS (mTLS + bearer token) at a fixed request rate.

Starts tccd on a loopback TCP port with --tls-cert/--tls-key/--tls-client-ca/--tokens
(certificates made with the openssl CLI in a temp dir), compiles one graph, then sends Compile
requests for it at --rate per second for --seconds (open loop: each request is sent at its
scheduled time whether or not earlier ones were answered) over --channels channels, and prints
latency percentiles measured from the scheduled send time. Prints numbers, asserts nothing.

  .venv/bin/python tests/tools/tls_hit_latency_bench.py --rates 200,500,1000 --runs 3

The load comes from build/bin/tccd_hit_bench (tests/tools/hit_bench.cc, C++: a few us of CPU
per request, so that the daemon, not the client, is measured); it gets the CompileRequest the
Python client sends for this graph, serialized to a file. --client python sends from this
process instead (grpcio futures: its own CPU saturates a core near 1,000/s). --tccd picks the
daemon binary (e.g. another build, for a before/after comparison on the same machine).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

import grpc  # noqa: E402
import torch  # noqa: E402

from conftest import TCCD_BINARY, Daemon, short_tempdir  # noqa: E402
from redis_testlib import free_port  # noqa: E402
from tccd.serialize import build_request  # noqa: E402
from tccd.v1 import tccd_pb2 as pb  # noqa: E402
from tccd.v1 import tccd_pb2_grpc as pb_grpc  # noqa: E402
from tccd_testlib import capture_aot_graphs  # noqa: E402
from test_e2e_auth import _make_certs  # noqa: E402

TOKEN = "bench-token-0123456789abcdef"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=1000.0)
    parser.add_argument("--rates", default="", help="comma-separated rates, run in this order "
                        "against one daemon (overrides --rate)")
    parser.add_argument("--runs", type=int, default=1, help="runs per rate")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--channels", type=int, default=4)
    parser.add_argument("--plaintext", action="store_true", help="no TLS, no token (baseline)")
    parser.add_argument("--client", choices=["cpp", "python"], default="cpp")
    parser.add_argument("--hit-bench", default=str(TCCD_BINARY.parent / "tccd_hit_bench"))
    parser.add_argument("--tccd", default=str(TCCD_BINARY), help="the daemon binary")
    parser.add_argument("--daemon-args", default="", help="extra tccd flags, space-separated")
    args = parser.parse_args()
    rates = [float(r) for r in args.rates.split(",")] if args.rates else [args.rate]

    root = short_tempdir("tccd-tlsbench-")
    certs = os.path.join(root, "certs")
    os.makedirs(certs)
    _make_certs(certs)
    tokens = os.path.join(root, "tokens")
    with open(tokens, "w") as f:
        f.write(f"{TOKEN} compile\n")
    os.chmod(tokens, 0o600)
    port = free_port()
    security = [] if args.plaintext else [
        "--tls-cert", os.path.join(certs, "server.pem"), "--tls-key",
        os.path.join(certs, "server.key"), "--tls-client-ca", os.path.join(certs, "good-ca.pem"),
        "--tokens", tokens]
    d = Daemon(Path(args.tccd), root, extra_args=["--listen", f"127.0.0.1:{port}", "--log-level",
                                                  "warn", *security, *args.daemon_args.split()])
    d.start()
    try:
        def read(name):
            with open(os.path.join(certs, name), "rb") as f:
                return f.read()

        def make_stub():
            if args.plaintext:
                return pb_grpc.TccdStub(grpc.insecure_channel(f"127.0.0.1:{port}"))
            creds = grpc.ssl_channel_credentials(read("good-ca.pem"), read("client.key"),
                                                 read("client.pem"))
            return pb_grpc.TccdStub(grpc.secure_channel(f"127.0.0.1:{port}", creds))

        metadata = [] if args.plaintext else [("authorization", f"Bearer {TOKEN}")]
        stubs = [make_stub() for _ in range(args.channels)]

        def f(x, y):
            return torch.sigmoid(x * y) + 1

        (_, gm, inputs), = capture_aot_graphs(f, torch.randn(8, 32), torch.randn(32))
        request = build_request(gm, inputs, graph_name="tls-bench", job_id="tls-bench")
        assert not stubs[0].Compile(request, metadata=metadata, timeout=120).cache_hit
        for stub in stubs:  # connections and TLS handshakes before the clock starts
            assert stub.Compile(request, metadata=metadata, timeout=60).cache_hit

        with open(os.path.join(root, "request.pb"), "wb") as f:
            f.write(request.SerializeToString())
        for rate in rates:
            for run in range(args.runs):
                print(f"-- rate {rate:.0f}/s, run {run + 1}/{args.runs}", flush=True)
                if args.client == "cpp":
                    _run_cpp(args, rate, root, certs, port, d.proc.pid)
                else:
                    _run_python(args, rate, stubs, request, metadata)
        return 0
    finally:
        d.stop()
        shutil.rmtree(root, ignore_errors=True)


def _run_cpp(args, rate, root, certs, port, daemon_pid) -> None:
    command = [args.hit_bench, f"--target=127.0.0.1:{port}",
               f"--request={os.path.join(root, 'request.pb')}", f"--rate={rate}",
               f"--seconds={args.seconds}", f"--channels={args.channels}",
               f"--daemon_pid={daemon_pid}"]
    if not args.plaintext:
        command += [f"--tls_ca={os.path.join(certs, 'good-ca.pem')}",
                    f"--tls_cert={os.path.join(certs, 'client.pem')}",
                    f"--tls_key={os.path.join(certs, 'client.key')}", f"--token={TOKEN}"]
    subprocess.run(command, check=False)


def _run_python(args, rate, stubs, request, metadata) -> None:
    total = int(rate * args.seconds)
    latencies = [None] * total
    failures = [0]
    done = threading.Semaphore(0)
    lock = threading.Lock()
    start = time.perf_counter()
    for i in range(total):
        scheduled = start + i / rate
        delay = scheduled - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        future = stubs[i % len(stubs)].Compile.future(request, metadata=metadata, timeout=30)

        def finished(fut, i=i, scheduled=scheduled):
            latency = time.perf_counter() - scheduled
            ok = fut.exception() is None and fut.result().cache_hit
            with lock:
                latencies[i] = latency
                if not ok:
                    failures[0] += 1
            done.release()

        future.add_done_callback(finished)
    send_end = time.perf_counter()
    for _ in range(total):
        done.acquire()
    values = sorted(v for v in latencies if v is not None)

    def pct(p):
        return values[min(len(values) - 1, int(p / 100 * len(values)))] * 1e3

    mode = "plaintext, no token" if args.plaintext else "mTLS + bearer token"
    print(f"{mode}: {total} cache hits at {rate:.0f}/s target over {args.channels} "
          f"channels; sent in {send_end - start:.2f} s (achieved "
          f"{total / (send_end - start):.0f}/s); failures={failures[0]}")
    print(f"  latency ms from scheduled send: p50={pct(50):.2f} p90={pct(90):.2f} "
          f"p99={pct(99):.2f} p99.9={pct(99.9):.2f} max={values[-1] * 1e3:.2f}")


if __name__ == "__main__":
    sys.exit(main())
