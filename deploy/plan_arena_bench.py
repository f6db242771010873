"""Per-call host time of a CPU inference plan whose values all die within the call (a chain of
30 matmul + relu layers: 59 short-lived values), to A/B the native runtime's per-call arena:

    for a in 0 1; do TCCD_PLAN_ARENA=$a TCCD_BINARY=build/bin/tccd PYTHONPATH=client \
        python deploy/plan_arena_bench.py; done

Prints the knob's value, then the median and minimum microseconds per call over 40 rounds of
200 calls (tiny tensors: the time is the host's). Run the two settings in separate processes
(a loaded plan keeps the setting it was loaded with) and alternate them on a busy machine.
"""

import os
import statistics
import time

import torch

import tccd  # noqa: F401  (registers the backend)

torch.manual_seed(0)
WEIGHTS = [torch.randn(16, 16) for _ in range(30)]


def chain(x):
    h = x
    for w in WEIGHTS:
        h = torch.relu(h @ w) * 0.5
    return h


def main() -> None:
    x = torch.randn(8, 16)
    f = torch.compile(chain, backend="tccd")
    with torch.no_grad():
        f(x)
        times = []
        for _ in range(40):
            start = time.perf_counter()
            for _ in range(200):
                f(x)
            times.append((time.perf_counter() - start) / 200 * 1e6)
    print(os.environ.get("TCCD_PLAN_ARENA", "0"), round(statistics.median(times), 1), round(min(times), 1))


if __name__ == "__main__":
    main()
