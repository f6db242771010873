"""Warm-start time of a small transformer block (d=256, 4 heads, batch 2, seq 64) on CPU.

    python deploy/warm_start_bench.py --cache-dir DIR [--profile OUT.txt]

One training step (forward, backward, SGD) under torch.compile(backend="tccd") in this process,
timed from the first call. Run it once to populate DIR (cold), then again in new processes
(warm), with and without TCCD_AOT_CACHE=0, to compare. Prints one JSON line.
"""

import argparse
import cProfile
import io
import json
import os
import pstats
import time

import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, d=256, heads=4):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cache-dir", required=True)
    parser.add_argument("--profile", help="write the cProfile of the first step here")
    args = parser.parse_args()
    os.environ["TCCD_CACHE_DIR"] = args.cache_dir
    import tccd

    torch.manual_seed(0)
    model = Block()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(2, 64, 256)
    compiled = torch.compile(model, backend="tccd", dynamic=False)
    profiler = cProfile.Profile() if args.profile else None
    start = time.perf_counter()
    if profiler:
        profiler.enable()
    loss = compiled(x).square().mean()
    loss.backward()
    opt.step()
    if profiler:
        profiler.disable()
    first_step_s = time.perf_counter() - start
    if profiler:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(40)
        with open(args.profile, "w") as f:
            f.write(out.getvalue())
    stats = tccd.last_compile_stats()
    print(json.dumps({
        "first_step_s": round(first_step_s, 4),
        "graphs": [(s["name"], s["aot_skipped"], s["local_hit"], s["fallback"] is None) for s in stats],
    }))


if __name__ == "__main__":
    main()
