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

--loss: the loss rows instead (issue 7): cross-entropy of bf16 logits as the LMs compute it
(logits.float(), mean over the tokens, ignore_index -100 on every 16th target), forward and
backward (the logits' bf16 gradient), eager vs Inductor vs tccd, each backend in its own process
with its own daemon (deploy/column_bench.py's harness); per case: device time per fwd+bwd step,
its kernels by time and the relative error of the loss and the gradient against eager:

  PYTHONPATH=client python deploy/lm_head_bench.py --loss [--tccd build/bin/tccd] \
      [--cases llama,t5,bert,gpt2] [--backends eager,inductor,tccd,tccd-persistent] \
      [--variant NAME:ENV=V[+ENV=V...]] [--device cpu]

Last run (H200, four lanes on one host, twelfth session; us per fwd+bwd step, Inductor / tccd /
tccd-persistent / tccd-unroll0): llama 702.7 / 580.4 / 814.2 / 812.5, t5 365.6 / 299.6 / 414.5 /
419.9 (deploy/results/loss-2026-11-27-session12/).

Cases (tokens x vocabulary, as the zoo's train large runs them): llama 8192 x 32000, t5 4096 x
32128, bert 8192 x 30522, gpt2 8192 x 50257. tccd-persistent is this binary with
TCCD_ALIGNED_ROW_LOOPS=0 (rows the 16-byte vector divides, Llama's and T5's, in the persistent
form, as before the looped form took them); tccd-unroll0 TCCD_ROW_LOOP_UNROLL=0 (the looped
form with its loops unrolled as ptxas likes: 78 registers for the backward over 32000, one block
per SM, where `#pragma unroll 1` gives 32); tccd-unroll2 TCCD_ROW_LOOP_UNROLL=2. Bytes: the
forward reads the bf16 logits once (2 bytes per element), the backward reads them and writes
their gradient (4 bytes): tokens x vocabulary x 6 bytes a step at best.
"""

import argparse
import json
import os
import subprocess
import sys
import time

import torch

from profiling import profile_kernels

LOSS_CASES = {"llama": (8192, 32000), "t5": (4096, 32128), "bert": (8192, 30522), "gpt2": (8192, 50257)}
LOSS_VARIANTS = {"tccd": {}, "tccd-persistent": {"TCCD_ALIGNED_ROW_LOOPS": "0"},
                 "tccd-unroll0": {"TCCD_ROW_LOOP_UNROLL": "0"}, "tccd-unroll2": {"TCCD_ROW_LOOP_UNROLL": "2"}}


def loss_worker(spec) -> None:
    import torch.nn.functional as F

    from profiling import device_time_per_iter

    backend, device = spec["backend"], spec["device"]
    if backend.startswith("tccd"):
        import tccd  # noqa: F401  (registers the backend)
    results = {}
    for name, (tokens, vocab) in LOSS_CASES.items():
        if spec["cases"] and name not in spec["cases"]:
            continue
        torch._dynamo.reset()
        if device == "cpu":
            tokens = min(tokens, 256)
        g = torch.Generator(device=device).manual_seed(0)
        logits = (torch.randn(tokens, vocab, generator=g, device=device) * 2).to(torch.bfloat16)
        logits.requires_grad_(True)
        labels = torch.randint(0, vocab, (tokens,), generator=g, device=device)
        labels[::16] = -100

        def fn(x, y):
            return F.cross_entropy(x.float(), y, ignore_index=-100)

        run = fn if backend == "eager" else torch.compile(fn, backend="tccd" if backend.startswith("tccd") else backend)

        def step(f):
            logits.grad = None
            loss = f(logits, labels)
            loss.backward()
            return loss

        ref = step(fn).detach().double()
        ref_grad = logits.grad.detach().double()
        loss = step(run)
        err_loss = float((loss.double() - ref).abs() / ref.abs())
        err_grad = float((logits.grad.double() - ref_grad).norm() / ref_grad.norm())
        for _ in range(3):
            step(run)
        if device == "cuda":
            torch.cuda.synchronize()
            kernels = profile_kernels(lambda: step(run), device="cuda", iters=spec["iters"])
            us, per_kernel = device_time_per_iter(kernels, spec["iters"], width=100)
        else:  # a smoke test of the script: wall time, no kernels
            start = time.perf_counter()
            for _ in range(spec["iters"]):
                step(run)
            us, per_kernel = round((time.perf_counter() - start) / spec["iters"] * 1e6, 1), {}
        results[name] = dict(us=us, kernels=per_kernel, err_loss=err_loss, err_grad=err_grad,
                             tokens=tokens, vocab=vocab)
    print("RESULT " + json.dumps(results), flush=True)


def loss_main(a) -> None:
    from bench_daemon import BenchDaemon

    daemon_env = dict(LOSS_VARIANTS)
    for v in a.variant:
        name, _, assignments = v.partition(":")
        env = dict(x.split("=", 1) for x in assignments.split("+") if "=" in x)
        daemon_env[f"tccd-{name}"] = env
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    table = {}
    for backend in a.backends.split(","):
        daemon = BenchDaemon(a.tccd, daemon_env[backend]) if backend.startswith("tccd") else None
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(root, "client"), os.environ.get("PYTHONPATH", "")]))
        if daemon:
            env = daemon.client_env(env)
        spec = dict(backend=backend, device=a.device, iters=a.iters, cases=[c for c in a.cases.split(",") if c])
        try:
            out = subprocess.run([sys.executable, __file__, "--loss-worker", json.dumps(spec)], env=env,
                                 capture_output=True, text=True, timeout=900)
        finally:
            if daemon:
                daemon.close()
        line = next((l for l in out.stdout.splitlines() if l.startswith("RESULT ")), None)
        if line is None:
            print(f"{backend}: failed\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}", flush=True)
            continue
        table[backend] = json.loads(line[len("RESULT "):])
    names = list(next(iter(table.values())).keys()) if table else []
    print(f"\n{'case':8s} " + " ".join(f"{b:>16s}" for b in table) + "   (us per fwd+bwd step)")
    for name in names:
        print(f"{name:8s} " + " ".join(f"{table[b].get(name, {}).get('us', float('nan')):16.1f}" for b in table))
    for name in names:
        for b in table:
            r = table[b].get(name)
            if r is None:
                continue
            gb = r["tokens"] * r["vocab"] * 6 / 1e9
            print(f"\n{b} {name} ({r['tokens']} x {r['vocab']}, {gb:.3f} GB a step at best): "
                  f"loss rel err {r['err_loss']:.1e}, grad rel err {r['err_grad']:.1e}")
            for k, us in sorted(r["kernels"].items(), key=lambda kv: -kv[1])[: a.top]:
                print(f"  {us:10.1f}  {k}")


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
    p.add_argument("--loss", action="store_true", help="the loss rows (see above)")
    p.add_argument("--tccd", default=os.path.join(os.path.dirname(__file__), "..", "build", "bin", "tccd"))
    p.add_argument("--cases", default="", help="--loss: comma-separated case names (default: all)")
    p.add_argument("--backends", default="eager,inductor,tccd,tccd-persistent")
    p.add_argument("--variant", action="append", default=[],
                   help="--loss: NAME:ENV=V[+ENV=V...]: backend tccd-NAME, that daemon environment")
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"],
                   help="--loss: cpu runs 256-token cases on the CPU (a smoke test, not a benchmark)")
    p.add_argument("--top", type=int, default=4, help="--loss: kernels listed per case and backend")
    p.add_argument("--loss-worker", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.loss_worker:
        loss_worker(json.loads(a.loss_worker))
        return
    if a.loss:
        loss_main(a)
        return
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
