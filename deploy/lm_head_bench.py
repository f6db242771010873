"""Device time of an LM head's vocabulary projection when the vocabulary is not a multiple of 8
(GPT-2's 50257, BERT's 30522), forward and the gradient's pad, and what Inductor does with it.

Forward, logits = hidden[T, H] @ W[V, H]^T, bf16 (H is aligned; only the result's row length V is
odd, so only the output's leading dimension is unaligned):
  odd-ld          the contiguous [T, V] result written directly (what eager runs)
  padded+clone    W zero-padded to [V8, H], the [T, V8] product, its first V columns cloned back
                  to contiguous (what tccd's pad-matmul-operands emits for a graph output)
  padded view     the same product, the logits returned as the strided view [:, :V] (row stride
                  V8) with no copy (tccd with TCCD_PADDED_OUTPUTS=1)
  inductor        torch.compile(h @ w.t()) with Inductor's defaults: its time, its kernels and
                  the strides it returns (does it pad, copy, or return padded strides?)
Backward: the zero-pad copy of the [T, V] gradient to [T, V8] alone (the copy the padded
gradient GEMMs pay when the gradient arrives contiguous; deploy/gemm_alignment_bench.py has the
GEMMs).

Each line: microseconds per call and the kernels one call launched (torch.profiler).

  python deploy/lm_head_bench.py [--tokens 8192] [--vocab 50257] [--hidden 768]
"""

import argparse

import torch

from profiling import profile_kernels


def time_us(fn, iters=20) -> float:
    for _ in range(3):
        fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1000 / iters


def kernels(fn) -> str:
    """The CUDA kernels one call launches (in launch order; "xN" where one launched N times), with
    their device time."""
    fn()
    torch.cuda.synchronize()
    rows = []
    for name, k in profile_kernels(fn, device="cuda").items():
        times = f" x{k.launches}" if k.launches > 1 else ""
        rows.append(f"{name[:90]}{times} {k.us:.0f}us")
    return "; ".join(rows)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tokens", type=int, default=8192)
    p.add_argument("--vocab", type=int, default=50257)
    p.add_argument("--hidden", type=int, default=768)
    p.add_argument("--no-inductor", action="store_true")
    a = p.parse_args()
    t, v, h = a.tokens, a.vocab, a.hidden
    vp = (v + 7) // 8 * 8
    bf = dict(device="cuda", dtype=torch.bfloat16)
    hidden = torch.randn(t, h, **bf)
    w = torch.randn(v, h, **bf) / h**0.5
    w_padded = torch.nn.functional.pad(w, (0, 0, 0, vp - v))
    g = torch.randn(t, v, **bf)
    print(f"T={t} H={h} V={v} (padded {vp}); {torch.__version__}, {torch.cuda.get_device_name()}", flush=True)

    def odd_ld():
        return hidden @ w.t()

    def padded_clone():
        return (hidden @ w_padded.t())[:, :v].clone()

    def padded_view():
        return (hidden @ w_padded.t())[:, :v]

    def pad_gradient():
        return torch.nn.functional.pad(g, (0, vp - v))

    ref = hidden.float() @ w.float().t()
    cases = [("odd-ld", odd_ld), ("padded+clone", padded_clone), ("padded view", padded_view)]
    if not a.no_inductor:
        compiled = torch.compile(lambda x, y: x @ y.t())
        out = compiled(hidden, w)
        print(f"inductor output: sizes {tuple(out.shape)} strides {out.stride()} "
              f"(storage {out.untyped_storage().nbytes() // 2} elements)", flush=True)
        cases.append(("inductor", lambda: compiled(hidden, w)))
    for name, fn in cases:
        out = fn()
        err = ((out.float() - ref).abs().max() / ref.abs().max()).item()
        print(f"forward {name:14s} {time_us(fn):8.1f} us  stride {out.stride()}  max rel err {err:.1e}", flush=True)
        print(f"   kernels: {kernels(fn)}", flush=True)
    print(f"backward pad gradient {time_us(pad_gradient):8.1f} us", flush=True)
    print(f"   kernels: {kernels(pad_gradient)}", flush=True)


if __name__ == "__main__":
    main()
