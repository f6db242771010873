"""Benchmark of the shared cache tier (--shared-cache): prints numbers, asserts nothing.

Starts Debian's redis-server on a loopback port and D tccd daemons (own socket and cache dir
each, all on that Redis), then:
  1. two daemons: daemon 0 compiles a graph, daemon 1 is asked for it -> its compiles counter;
  2. N concurrent identical requests (a graph no daemon has seen), spread round-robin over the
     D daemons, all sent before any answer -> total compiles over all daemons (target: 1),
     wall time, latency percentiles, and how each daemon answered.

  .venv/bin/python tests/tools/shared_tier_bench.py --daemons 4 --requests 1000

Needs build/bin/tccd (or TCCD_TEST_BINARY) and redis-server.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

import torch  # noqa: E402

from conftest import TCCD_BINARY, Daemon, short_tempdir  # noqa: E402
from redis_testlib import RedisServer  # noqa: E402
from tccd.serialize import build_request  # noqa: E402
from tccd_testlib import capture_aot_graphs  # noqa: E402


def graph_request(n: int, name: str):
    def f(x, y):
        return torch.sigmoid(x * y) + torch.tanh(x) * n

    (_, gm, inputs), = capture_aot_graphs(f, torch.randn(16, 32 + n), torch.randn(32 + n))
    return build_request(gm, inputs, graph_name=name, job_id="shared-tier-bench")


def percentile(sorted_values, p):
    return sorted_values[min(len(sorted_values) - 1, int(p / 100 * len(sorted_values)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--daemons", type=int, default=4)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--compile-threads", type=int, default=2)
    args = parser.parse_args()

    redis = RedisServer()
    redis.start()
    daemons, roots = [], []
    try:
        for _ in range(args.daemons):
            root = short_tempdir("tccd-bench-")
            roots.append(root)
            d = Daemon(TCCD_BINARY, root, extra_args=[
                "--shared-cache", redis.url, "--compile-threads", str(args.compile_threads),
                "--log-level", "warn", "--max-concurrent-streams", "4096"])
            d.start()
            daemons.append(d)
        print(f"redis-server {redis.url}, {args.daemons} tccd daemons "
              f"(--compile-threads {args.compile_threads}), binary {TCCD_BINARY}")

        # 1. Two daemons sharing one Redis.
        request = graph_request(1, "two-daemons")
        t = time.perf_counter()
        first = daemons[0].stub().Compile(request, timeout=300)
        t_first = time.perf_counter() - t
        t = time.perf_counter()
        second = daemons[1].stub().Compile(request, timeout=300)
        t_second = time.perf_counter() - t
        s0, s1 = daemons[0].stats(), daemons[1].stats()
        print(f"two daemons: daemon 0 compiled in {t_first * 1e3:.1f} ms "
              f"(compiles={s0['compiles']}); daemon 1 answered in {t_second * 1e3:.1f} ms, "
              f"cache_hit={second.cache_hit}, compiles={s1['compiles']}, "
              f"shared_hits={s1['shared_hits']}, same key={first.manifest.key == second.manifest.key}")

        # 2. N concurrent identical requests over all daemons.
        request = graph_request(2, "stampede")
        before = [d.stats()["compiles"] for d in daemons]
        stubs = [d.stub() for d in daemons]
        start = time.perf_counter()
        futures = []
        for i in range(args.requests):
            sent = time.perf_counter()
            futures.append((sent, stubs[i % len(stubs)].Compile.future(request, timeout=300)))
        latencies, failures, keys = [], 0, set()
        for sent, future in futures:
            try:
                response = future.result()
                keys.add(response.manifest.key)
            except Exception as e:  # noqa: BLE001 - counted and printed
                failures += 1
                print("failed:", e)
            latencies.append(time.perf_counter() - sent)
        wall = time.perf_counter() - start
        after = [d.stats() for d in daemons]
        compiles = sum(a["compiles"] - b for a, b in zip(after, before))
        latencies.sort()
        print(f"stampede: {args.requests} identical requests over {args.daemons} daemons in "
              f"{wall:.2f} s: compiles={compiles} failures={failures} distinct keys={len(keys)}")
        print(f"  latency ms: p50={percentile(latencies, 50) * 1e3:.1f} "
              f"p90={percentile(latencies, 90) * 1e3:.1f} p99={percentile(latencies, 99) * 1e3:.1f} "
              f"max={latencies[-1] * 1e3:.1f}")
        for i, s in enumerate(after):
            print(f"  daemon {i}: compiles={s['compiles']} cache_hits={s['cache_hits']} "
                  f"cache_misses={s['cache_misses']} dedup_waits={s['dedup_waits']} "
                  f"shared_hits={s['shared_hits']} shared_lease_waits={s['shared_lease_waits']} "
                  f"shared_wait_hits={s['shared_wait_hits']}")
        return 0
    finally:
        for d in daemons:
            d.stop()
        for root in roots:
            shutil.rmtree(root, ignore_errors=True)
        redis.stop()


if __name__ == "__main__":
    sys.exit(main())
