"""Compile time of transformer blocks (forward + backward graphs) in tccd: cold with one kernel
thread (the serial compile) and with N, and warm-kernel (a second model that shares kernels).

    python deploy/kernel_cache_bench.py --tccd build/bin/tccd [--baseline OLD/bin/tccd]
        [--threads N] [--target cpu|cuda] [--layers 1,4]

Each scenario starts a fresh daemon (own socket and store) and sends the captured AOT graphs as
Compile requests, timing the daemon's compile_ms. Scenarios:
  baseline      --baseline's binary (e.g. a build before per-kernel objects), cold, both models
  cold-serial   this binary, TCCD_KERNEL_THREADS=1, cold
  cold-parallel this binary, TCCD_KERNEL_THREADS=N, cold
  warm-kernels  this binary, N threads: the first model compiled, then the second one timed
                (a model of more layers: same kernels, other graphs)
For --target cuda the graphs are retargeted to an H100 (NVRTC needs no GPU). Prints a table and
one JSON line; the machine's core count is part of both (parallel speed-ups need cores).
"""

import argparse
import json
import os
import sys
from pathlib import Path

import torch
import torch.nn as nn

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "python"))  # capture_aot_graphs, the test's graph capture
sys.path.insert(0, str(ROOT / "deploy"))
from bench_daemon import BenchDaemon  # noqa: E402


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


def requests_for(layers: int, target: str):
    from tccd.serialize import build_request
    from tccd_testlib import capture_aot_graphs

    torch.manual_seed(0)
    model = nn.Sequential(*[Block() for _ in range(layers)])
    x = torch.randn(2, 64, 256, requires_grad=True)
    graphs = capture_aot_graphs(model, x, backward=True)
    out = []
    for i, (kind, gm, inputs) in enumerate(graphs):
        request = build_request(gm, inputs, graph_name=f"{layers}L-{kind}-{i}")
        if target == "cuda":
            retarget_to_cuda(request)
        out.append(request)
    return out


def retarget_to_cuda(request):
    from tccd.v1 import tccd_pb2 as pb

    def visit(message):
        for field, value in message.ListFields():
            if field.type != field.TYPE_MESSAGE:
                continue
            for item in [value] if hasattr(value, "ListFields") else list(value):
                if not hasattr(item, "ListFields"):
                    continue
                if item.DESCRIPTOR.name == "Device":
                    item.type = pb.CUDA
                    item.index = 0
                else:
                    visit(item)

    visit(request.graph)
    request.target.Clear()
    request.target.device_type = pb.CUDA
    request.target.cuda_device_name = "NVIDIA H100 80GB HBM3"
    request.target.cuda_cc_major = 9
    request.target.cuda_cc_minor = 0


def compile_all(daemon, requests):
    """(compile ms summed, kernels compiled, kernels reused) of `requests`, one after another."""
    stub = daemon.stub()
    ms, compiled, reused = 0.0, 0, 0
    for request in requests:
        response = stub.Compile(request, timeout=900)
        ms += response.compile_ms
        compiled += getattr(response, "kernels_compiled", 0)
        reused += getattr(response, "kernels_reused", 0)
    return ms, compiled, reused


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tccd", default=str(ROOT / "build" / "bin" / "tccd"))
    parser.add_argument("--baseline", help="another tccd binary to time cold (e.g. before this change)")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--target", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--layers", default="1,4", help="first model's and second model's layer counts")
    args = parser.parse_args()
    first_layers, second_layers = (int(v) for v in args.layers.split(","))
    first = requests_for(first_layers, args.target)
    second = requests_for(second_layers, args.target)

    rows = []

    def scenario(name, binary, threads, warmup, timed):
        with BenchDaemon(binary, env={"TCCD_KERNEL_THREADS": str(threads)},
                         args=["--compile-time-limit-s", "600"], prefix="tccd-kbench-") as d:
            if warmup:
                compile_all(d, warmup)
            ms, compiled, reused = compile_all(d, timed)
        rows.append({"scenario": name, "threads": threads, "graphs": len(timed), "compile_ms": round(ms, 1),
                     "kernels_compiled": compiled, "kernels_reused": reused})
        print(f"{name:14s} threads={threads:2d} graphs={len(timed)} compile_ms={ms:9.1f} "
              f"kernels_compiled={compiled} kernels_reused={reused}", flush=True)

    print(f"target={args.target} cores={os.cpu_count()} first model {first_layers} layer(s), "
          f"second {second_layers}", flush=True)
    if args.baseline:
        scenario("baseline", args.baseline, 1, None, first)
        scenario(f"baseline-{second_layers}L", args.baseline, 1, None, second)
    scenario("cold-serial", args.tccd, 1, None, first)
    scenario("cold-parallel", args.tccd, args.threads, None, first)
    scenario(f"cold-{second_layers}L", args.tccd, args.threads, None, second)
    scenario(f"warm-{second_layers}L", args.tccd, args.threads, first, second)
    print(json.dumps({"target": args.target, "cores": os.cpu_count(), "layers": [first_layers, second_layers],
                      "rows": rows}))


if __name__ == "__main__":
    main()
