"""Micro-benchmark: BERT's three embedding gradients (embedding_dense_backward, issue 7), eager vs
Inductor vs tccd (and optionally a second tccd build), each backend in its own process.

One command on a GPU machine (starts its own daemon(s) from the given binaries, in temp dirs):

  PYTHONPATH=client python deploy/embedding_backward_bench.py [--baseline /path/to/other/tccd]

Per case and backend: device time per call (sum of GPU kernel time from torch.profiler over
--iters calls: tccd's zero fill and scatter kernel, ATen's sort and segment kernels, Inductor's
fill and atomic kernel), the kernels launched, and the gradient's error against a float64
computation next to eager's (float atomics add in a run-dependent order: not bitwise). Cases, the
zoo's BERT train large (batch 16, sequence 512, hidden 768):
  word        f32[16, 512, 768] into [30522, 768], random ids, padding_idx 0
  token_type  f32[16, 512, 768] into [2, 768], every id 0 (the expanded token-type buffer): 8192
              rows into one, the contended case (368 us in session 9's tccd profile)
  position    f32[1, 512, 768] into [512, 768], ids 0..511
  word_bf16   the word case with a bf16 gradient (accumulated in f32, rounded once)
`--device cpu` runs the same on the CPU (a smoke test of the script, not a benchmark).
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "deploy"))
from bench_daemon import BenchDaemon  # noqa: E402


def cases(batch, device):
    import torch

    g = torch.Generator(device=device).manual_seed(0)

    def make(tokens_batch, vocab, dtype, ids):
        grad = torch.randn(tokens_batch, 512, 768, device=device, generator=g).to(dtype)
        return [grad, ids, vocab]

    word_ids = torch.randint(0, 30522, (batch, 512), device=device, generator=g)
    zeros = torch.zeros(1, 512, dtype=torch.long, device=device).expand(batch, 512)
    positions = torch.arange(512, device=device).unsqueeze(0)
    return {
        "word": (0, make(batch, 30522, torch.float32, word_ids)),
        "token_type": (-1, make(batch, 2, torch.float32, zeros)),
        "position": (-1, make(1, 512, torch.float32, positions)),
        "word_bf16": (0, make(batch, 30522, torch.bfloat16, word_ids)),
    }


def worker(spec):
    import torch

    from profiling import device_time_per_iter, profile_kernels

    backend, device = spec["backend"], spec["device"]
    if backend.startswith("tccd"):
        import tccd  # registers the backend
    results = {}
    for name, (padding_idx, (grad, ids, vocab)) in cases(spec["batch"], device).items():
        torch._dynamo.reset()
        seen = len(tccd.last_compile_stats()) if backend.startswith("tccd") else 0

        def fn(g, i):
            return torch.ops.aten.embedding_dense_backward(g, i, vocab, padding_idx, False)

        run = fn if backend == "eager" else torch.compile(fn, backend="tccd" if backend.startswith("tccd") else backend)
        got = run(grad, ids)
        reference = fn(grad.double(), ids)
        scale = reference.abs().max().item() or 1.0
        info = {"rel_error": (got.double() - reference).abs().max().item() / scale}
        if backend.startswith("tccd"):
            import tccd

            stats = tccd.last_compile_stats()[seen:]
            info["tccd_kernels"] = [(k["kind"], k["ops"]) for s in stats for k in s["kernels"]]
            info["fallback"] = [s["fallback"] for s in stats if s["fallback"]]
        if device == "cuda":
            for _ in range(5):
                run(grad, ids)
            torch.cuda.synchronize()
            kernels = profile_kernels(lambda: run(grad, ids), device="cuda", iters=spec["iters"])
            info["us"], info["kernels"] = device_time_per_iter(kernels, spec["iters"], width=60)
        else:
            start = time.perf_counter()
            for _ in range(spec["iters"]):
                run(grad, ids)
            info["us"] = round((time.perf_counter() - start) / spec["iters"] * 1e6, 1)
        results[name] = info
    print("RESULT " + json.dumps(results), flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tccd", default=str(ROOT / "build" / "bin" / "tccd"))
    p.add_argument("--baseline", help="a second tccd binary (e.g. main's build) timed the same way")
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--worker", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        worker(json.loads(args.worker))
        return
    runs = [("eager", None), ("inductor", None), ("tccd", args.tccd)]
    if args.baseline:
        runs.append(("tccd-baseline", args.baseline))
    table = {}
    for backend, binary in runs:
        daemon = BenchDaemon(binary) if binary else None
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "client"), os.environ.get("PYTHONPATH", "")]))
        if daemon:
            env = daemon.client_env(env)
        spec = dict(backend=backend, device=args.device, batch=args.batch, iters=args.iters)
        try:
            out = subprocess.run([sys.executable, __file__, "--worker", json.dumps(spec)], env=env,
                                 capture_output=True, text=True, timeout=1200)
        finally:
            if daemon:
                daemon.close()
        line = next((l for l in out.stdout.splitlines() if l.startswith("RESULT ")), None)
        if line is None:
            print(f"{backend}: failed\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
            continue
        table[backend] = json.loads(line[len("RESULT "):])
    names = list(next(iter(table.values())).keys()) if table else []
    print(f"\n{'case':10s} " + " ".join(f"{b:>14s}" for b in table) + "   (us per call)")
    for name in names:
        print(f"{name:10s} " + " ".join(f"{table[b].get(name, {}).get('us', float('nan')):14.1f}" for b in table))
    print(f"\n{'case':10s} " + " ".join(f"{b:>14s}" for b in table) + "   (max error / max |gradient|, vs float64)")
    for name in names:
        print(f"{name:10s} " + " ".join(f"{table[b].get(name, {}).get('rel_error', float('nan')):14.2e}" for b in table))
    for b, res in table.items():
        for name, r in res.items():
            print(f"\n{b} {name}: kernels {r.get('kernels', {})}")
            if "tccd_kernels" in r:
                print(f"  generated: {r['tccd_kernels']}  fallback: {r['fallback']}")


if __name__ == "__main__":
    main()
