"""Device time of one training batch norm + relu, forward and backward, at ResNet-50's shapes:
bf16 input (as under autocast), f32 parameters. One backend per process (the tccd backend needs a
running daemon: TCCD_ADDRESS). Prints microseconds of kernel time per iteration and the kernels.

  python deploy/batch_norm_bench.py eager
  TCCD_ADDRESS=unix:/path/tccd.sock PYTHONPATH=client python deploy/batch_norm_bench.py tccd
  python deploy/batch_norm_bench.py inductor
"""

import argparse

import torch
import torch.nn.functional as F

from profiling import device_time_per_iter, profile_kernels

SHAPES = [(8, 64, 56, 56), (8, 256, 56, 56), (8, 128, 28, 28), (8, 512, 28, 28), (8, 256, 14, 14),
          (8, 1024, 14, 14), (8, 512, 7, 7), (8, 2048, 7, 7), (64, 256, 28, 28), (64, 1024, 14, 14)]


def norm_relu(x, w, b, rm, rv):
    return F.batch_norm(x, rm, rv, w, b, training=True).relu()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("backend", choices=["eager", "inductor", "tccd"])
    p.add_argument("--iters", type=int, default=10)
    args = p.parse_args()
    if args.backend == "tccd":
        import tccd  # noqa: F401  (registers the backend)
    for shape in SHAPES:
        torch._dynamo.reset()
        c = shape[1]
        x = torch.randn(shape, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        w = torch.randn(c, device="cuda", requires_grad=True)
        b = torch.randn(c, device="cuda", requires_grad=True)
        rm, rv = torch.zeros(c, device="cuda"), torch.ones(c, device="cuda")
        fn = norm_relu if args.backend == "eager" else torch.compile(norm_relu, backend=args.backend)
        g = torch.randn(shape, device="cuda", dtype=torch.bfloat16)
        for _ in range(3):
            fn(x, w, b, rm, rv).backward(g)
        torch.cuda.synchronize()
        step = lambda: fn(x, w, b, rm, rv).backward(g)  # noqa: E731
        us, kernels = device_time_per_iter(profile_kernels(step, device="cuda", iters=args.iters), args.iters, width=40)
        print(f"{args.backend:8s} {str(shape):20s} {us:8.1f} us/iter  {kernels}", flush=True)


if __name__ == "__main__":
    main()
