"""Device time of the vocabulary-projection gradient GEMMs when the vocabulary is odd (GPT-2's
50257), for three layouts of the [tokens, vocabulary] gradient G:
  odd-ld      G contiguous: its rows start at odd bf16 offsets (cuBLAS picks align-1 kernels)
  padded      G and W zero-padded to a multiple of 8 (what PadMatmulOperands emits: two pad
              copies, K and M padded)
  strided     G written with a padded row stride (a view [:, :V] of a [T, V+pad] buffer), K and
              M left odd: no copies, if cuBLAS takes aligned kernels for it
Each: grad_hidden = G @ W and grad_W = G^T @ hidden, bf16. Prints microseconds per pair.

  python deploy/gemm_alignment_bench.py [--tokens 1024] [--vocab 50257] [--hidden 768]
"""

import argparse

import torch


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


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tokens", type=int, default=1024)
    p.add_argument("--vocab", type=int, default=50257)
    p.add_argument("--hidden", type=int, default=768)
    a = p.parse_args()
    t, v, h = a.tokens, a.vocab, a.hidden
    vp = (v + 7) // 8 * 8
    bf = dict(device="cuda", dtype=torch.bfloat16)
    g = torch.randn(t, v, **bf)
    w = torch.randn(v, h, **bf)
    hidden = torch.randn(t, h, **bf)
    g_buffer = torch.zeros(t, vp, **bf)
    g_buffer[:, :v] = g
    g_strided = g_buffer[:, :v]
    w_padded = torch.zeros(vp, h, **bf)
    w_padded[:v] = w

    def odd_ld():
        g @ w
        g.t() @ hidden

    def padded():  # includes the two pad copies, as the plan runs them
        gp = torch.nn.functional.pad(g, (0, vp - v))
        wp = torch.nn.functional.pad(w, (0, 0, 0, vp - v))
        gp @ wp
        (gp.t() @ hidden)[:v]

    def padded_gemms_only():
        g_buffer @ w_padded
        (g_buffer.t() @ hidden)[:v]

    def strided():
        g_strided @ w
        g_strided.t() @ hidden

    ref = (g.float() @ w.float(), g.float().t() @ hidden.float())
    for name, fn, out in (("odd-ld", odd_ld, (g @ w, g.t() @ hidden)),
                          ("strided", strided, (g_strided @ w, g_strided.t() @ hidden))):
        err = max(((o.float() - r).abs().max() / r.abs().max()).item() for o, r in zip(out, ref))
        print(f"{name:20s} {time_us(fn):8.1f} us   max rel err {err:.1e}", flush=True)
    print(f"{'padded (+copies)':20s} {time_us(padded):8.1f} us", flush=True)
    print(f"{'padded gemms only':20s} {time_us(padded_gemms_only):8.1f} us", flush=True)


if __name__ == "__main__":
    main()
