"""What cuBLASLt's workspace does to ConvNeXt-T stage 1's weight-gradient GEMMs (issue 7).

ATen's bf16 `mm` goes through cuBLAS (cublasGemmEx) with a 32 MiB workspace on Hopper; tccd
passed cuBLASLt 8 MiB until the thirteenth session (kGemmWorkspaceBytes, TCCD_GEMM_WORKSPACE_MB).
This times the same two weight gradients, dW = dY^T X over k = tokens (batch 64: 200704):
  [384 x T] @ [T x 96]  (fc1's weight gradient)   and   [96 x T] @ [T x 384]  (fc2's),
each in a process of its own per configuration, since torch reads the knobs once:
  cublas        ATen's default (cuBLAS, its own workspace: Inductor's kernels)
  lt-8mib       TORCH_BLAS_PREFER_CUBLASLT=1, CUBLASLT_WORKSPACE_SIZE=8192 (KiB): cuBLASLt's
                heuristic with what tccd gave it before
  lt-32mib      the same with 32768 KiB: what tccd gives it now
and prints microseconds per GEMM and the kernel each ran (torch.profiler).

  python deploy/gemm_workspace_bench.py [--tokens 200704] [--iters 20]
"""

import argparse
import json
import os
import subprocess
import sys

CONFIGS = {
    "cublas": {},
    "lt-8mib": {"TORCH_BLAS_PREFER_CUBLASLT": "1", "CUBLASLT_WORKSPACE_SIZE": "8192"},
    "lt-32mib": {"TORCH_BLAS_PREFER_CUBLASLT": "1", "CUBLASLT_WORKSPACE_SIZE": "32768"},
}
SHAPES = {"fc1.weight": (384, 96), "fc2.weight": (96, 384)}  # dW [out x in] = dY^T X


def worker(tokens: int, iters: int) -> dict:
    import torch
    from torch.profiler import ProfilerActivity, profile

    bf = dict(device="cuda", dtype=torch.bfloat16)
    out = {}
    for name, (o, i) in SHAPES.items():
        dy, x = torch.randn(tokens, o, **bf), torch.randn(tokens, i, **bf)
        fn = lambda: torch.mm(dy.t(), x)  # noqa: E731  (dW, as autograd computes it)
        for _ in range(3):
            fn()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        start.record()
        for _ in range(iters):
            fn()
        end.record()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        kernels = sorted({e.name for e in prof.events() if e.device_type.name == "CUDA"})
        out[name] = {"us": start.elapsed_time(end) * 1000 / iters, "kernels": kernels}
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tokens", type=int, default=64 * 56 * 56)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--configs", default=",".join(CONFIGS))
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.worker:
        print(json.dumps(worker(a.tokens, a.iters)))
        return
    print(f"weight gradients over k = {a.tokens} tokens, bf16, us per GEMM")
    for config in a.configs.split(","):
        env = dict(os.environ, **CONFIGS[config])
        run = subprocess.run([sys.executable, __file__, "--worker", "--tokens", str(a.tokens),
                              "--iters", str(a.iters)], env=env, capture_output=True, text=True)
        if run.returncode != 0:
            print(f"{config:10s} failed: {run.stderr[-600:]}")
            continue
        result = json.loads(run.stdout.strip().splitlines()[-1])
        for name, r in result.items():
            print(f"{config:10s} {name:11s} {r['us']:8.1f}  {' | '.join(k[:90] for k in r['kernels'])}")


if __name__ == "__main__":
    main()
