"""Inference outputs of zoo models under bf16 autocast: tccd (and Inductor) against eager, on
one device, with the attention kernels each backend ran.

  TCCD_ADDRESS=unix:/path/tccd.sock PYTHONPATH=client python deploy/infer_numerics_check.py \\
      --models bert,t5 --batch 2 [--backends tccd,inductor]

Per model and backend: the max abs difference of the output (a transformers model's logits)
from eager's, eager's own max abs value, and the CUDA kernels of one step whose names say
attention or f32 gemm (sdpa, fmha, flash, attention, f32 matmuls) with their launch counts: which
attention path ran (codegen/passes/math_attention_to_fused.h turns BERT's and T5's f32 math
attention into one scaled_dot_product_attention call; TCCD_DISABLE_PASSES=math-attention-to-fused
on the daemon keeps the math path). Each backend's model is a deep copy of one initial state.
"""

import argparse
import copy
import os
import sys

import torch

import tccd  # noqa: F401  registers the backend where the entry point is not installed

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo_benchmark  # noqa: E402

_MARKS = ("sdpa", "fmha", "flash", "attention", "f32f32", "sgemm", "softmax")


def _attention_kernels(fn):
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    counts = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA and any(m in e.name.lower() for m in _MARKS):
            counts[e.name[:90]] = counts.get(e.name[:90], 0) + 1
    return counts


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--models", default="bert,t5")
    p.add_argument("--backends", default="tccd")
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--device", default="cuda")
    a = p.parse_args()
    device = a.device
    for name in a.models.split(","):
        torch.manual_seed(0)
        model, batch_fn, _ = zoo_benchmark.build_model(name, tiny=False, dropout=False)
        model = model.to(device).eval()
        batch = batch_fn(a.batch, device)

        def run(m):
            with torch.no_grad(), torch.autocast(device, dtype=torch.bfloat16):
                out = m(**batch) if isinstance(batch, dict) else m(batch)
            return out.logits if hasattr(out, "logits") else out

        expected = run(model).float()
        print(f"{name}: eager max |out| {expected.abs().max().item():.4g}", flush=True)
        for backend in a.backends.split(","):
            torch._dynamo.reset()
            compiled = torch.compile(copy.deepcopy(model), backend=backend, dynamic=False)
            got = run(compiled).float()
            got = run(compiled).float()
            diff = (got - expected).abs().max().item()
            print(f"{name} {backend}: max |out - eager| {diff:.4g}", flush=True)
            if device == "cuda":
                for k, n in sorted(_attention_kernels(lambda: run(compiled)).items()):
                    print(f"    {n:3d} x {k}", flush=True)
        if device == "cuda":
            for k, n in sorted(_attention_kernels(lambda: run(model)).items()):
                print(f"    eager {n:3d} x {k}", flush=True)


if __name__ == "__main__":
    main()
