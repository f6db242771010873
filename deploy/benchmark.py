"""Compares eager, TorchInductor and tccd on a CUDA GPU: step time (speedup over eager), compile
time cold (empty caches) and warm (a new process with the caches an earlier process filled),
and the max error against eager. Prints a markdown table and writes a PNG plot.

    python deploy/benchmark.py --out results/       # needs a running tccd (TCCD_ADDRESS)
    python deploy/benchmark.py --mode reduce-overhead --out results-ro/   # both under CUDA graphs

--mode is torch.compile's mode for Inductor and tccd alike (eager is the same either way).

Each (backend, model, cold/warm) measurement runs in its own process, so "warm" really is a
new process: Dynamo, AOTAutograd and the backend start from nothing but their caches.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

MODELS = ["mlp_fwdbwd_fp32", "gpt2_block_fwd_bf16", "gpt2_block_fwdbwd_bf16", "resnet_block_fwdbwd_fp32"]


def build(model: str):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.manual_seed(0)
    dev = "cuda"
    if model.startswith("mlp"):
        m = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 4096), nn.ReLU(), nn.Linear(4096, 1024))
        return m.to(dev), torch.randn(256, 1024, device=dev), torch.float32
    if model.startswith("gpt2"):
        class Block(nn.Module):  # GPT-2 small: d=768, 12 heads, pre-norm, tanh GELU
            def __init__(self, d=768, h=12):
                super().__init__()
                self.h = h
                self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
                self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
                self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

            def forward(self, x):
                b, t, d = x.shape
                q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
                q, k, v = (z.view(b, t, self.h, d // self.h).transpose(1, 2) for z in (q, k, v))
                a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
                return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))

        return Block().to(dev, torch.bfloat16), torch.randn(8, 1024, 768, device=dev, dtype=torch.bfloat16), torch.bfloat16

    class ResBlock(nn.Module):
        def __init__(self, c=64):
            super().__init__()
            self.c1, self.b1 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
            self.c2, self.b2 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)

        def forward(self, x):
            return F.relu(x + self.b2(self.c2(F.relu(self.b1(self.c1(x))))))

    return ResBlock().to(dev), torch.randn(32, 64, 56, 56, device=dev), torch.float32


def worker(backend: str, model: str, iters: int, mode=None) -> dict:
    import torch

    m, x, _ = build(model)
    backward = "fwdbwd" in model
    fn = m if backend == "eager" else torch.compile(m, backend=backend, mode=mode)

    def step():
        if backward:
            m.zero_grad(set_to_none=True)
            y = fn(x)
            y.float().square().mean().backward()
            return y
        with torch.no_grad():
            return fn(x)

    torch.cuda.synchronize()
    t0 = time.perf_counter()
    y = step()
    torch.cuda.synchronize()
    first_s = time.perf_counter() - t0
    for _ in range(3):
        step()
    times = []
    for _ in range(iters):
        torch.cuda.synchronize()
        t = time.perf_counter()
        step()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t) * 1e3)
    out = {"first_call_s": first_s, "step_ms": statistics.median(times)}
    ref_m, ref_x, _ = build(model)
    with torch.no_grad():
        ref = ref_m(ref_x).float()
        got = (m(x) if backend == "eager" else fn(x)).float()
    out["max_err"] = (got - ref).abs().max().item()
    if backend == "tccd":
        import tccd

        stats = tccd.last_compile_stats()
        out["fallbacks"] = [s["fallback"] for s in stats if s["fallback"]]
        out["native_kernels"] = sum(s["native_kernels"] for s in stats)
        out["cudagraph_skips"] = [s["cudagraph_skip"] for s in stats if s["cudagraph_skip"]]
    return out


def run_worker(backend, model, iters, env_extra, mode=None):
    env = dict(os.environ, **env_extra)
    cmd = [sys.executable, __file__, "--worker", backend, "--model", model, "--iters", str(iters)]
    if mode and backend != "eager":
        cmd += ["--mode", mode]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    lines = [l for l in r.stdout.splitlines() if l.startswith("RESULT ")]
    if r.returncode != 0 or not lines:
        return {"error": (r.stderr or r.stdout)[-600:]}
    return json.loads(lines[-1][7:])


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--worker")
    p.add_argument("--model", default=None)
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--iters", type=int, default=30)
    p.add_argument("--out", default="bench-out")
    p.add_argument("--mode", default=None, help="torch.compile mode for Inductor and tccd, e.g. reduce-overhead")
    a = p.parse_args()
    if a.worker:
        if a.worker == "tccd":
            import torch  # noqa: F401  (first: `import tccd` registers the backend when torch is loaded)

            import tccd  # noqa: F401  registers the backend where the entry point is not installed
        print("RESULT " + json.dumps(worker(a.worker, a.model, a.iters, a.mode)), flush=True)
        return
    os.makedirs(a.out, exist_ok=True)
    rows = []
    for model in a.models.split(","):
        inductor_cache = tempfile.mkdtemp(prefix="inductor-")
        tccd_local = tempfile.mkdtemp(prefix="tccd-local-")
        ind_env = {"TORCHINDUCTOR_CACHE_DIR": inductor_cache, "TRITON_CACHE_DIR": inductor_cache + "/triton"}
        tccd_env = {"TCCD_CACHE_DIR": tccd_local}
        r = {"model": model, "eager": run_worker("eager", model, a.iters, {})}
        r["inductor_cold"] = run_worker("inductor", model, a.iters, ind_env, a.mode)
        r["inductor_warm"] = run_worker("inductor", model, a.iters, ind_env, a.mode)
        r["tccd_cold"] = run_worker("tccd", model, a.iters, tccd_env, a.mode)
        r["tccd_warm"] = run_worker("tccd", model, a.iters, tccd_env, a.mode)
        rows.append(r)
        print(json.dumps(r), flush=True)
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(rows, f, indent=1)

    def g(r, k, f):
        return r.get(k, {}).get(f, float("nan"))

    eager_first = {r["model"]: g(r, "eager", "first_call_s") for r in rows}
    lines = ["| model | eager ms | Inductor speedup | tccd speedup | compile cold Inductor / tccd (s) | "
             "compile warm Inductor / tccd (s) | max err Inductor / tccd |", "|---|---|---|---|---|---|---|"]
    sp_i, sp_t = [], []
    for r in rows:
        e = g(r, "eager", "step_ms")
        si, st = e / g(r, "inductor_warm", "step_ms"), e / g(r, "tccd_warm", "step_ms")
        sp_i.append(si)
        sp_t.append(st)
        ef = eager_first[r["model"]]
        lines.append(f"| {r['model']} | {e:.3f} | {si:.2f}x | {st:.2f}x | "
                     f"{g(r, 'inductor_cold', 'first_call_s') - ef:.2f} / {g(r, 'tccd_cold', 'first_call_s') - ef:.2f} | "
                     f"{g(r, 'inductor_warm', 'first_call_s') - ef:.2f} / {g(r, 'tccd_warm', 'first_call_s') - ef:.2f} | "
                     f"{g(r, 'inductor_warm', 'max_err'):.2e} / {g(r, 'tccd_warm', 'max_err'):.2e} |")
    geo = lambda v: statistics.geometric_mean([x for x in v if x == x and x > 0]) if any(x == x for x in v) else float("nan")
    lines.append(f"| **geomean** | | {geo(sp_i):.2f}x | {geo(sp_t):.2f}x | | | |")
    lines.append("")
    lines.append("Compile times are the first call's extra time over eager's first call; warm = a new process with "
                 "the caches of the cold run. Step = median of %d steps, CUDA-synchronised. torch.compile mode: %s."
                 % (a.iters, a.mode or "default"))
    table = "\n".join(lines)
    print(table)
    with open(os.path.join(a.out, "results.md"), "w") as f:
        f.write(table + "\n")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(1, 2, figsize=(12, 4))
        names = [r["model"] for r in rows]
        xs = range(len(names))
        ax[0].bar([x - 0.2 for x in xs], sp_i, 0.4, label="Inductor")
        ax[0].bar([x + 0.2 for x in xs], sp_t, 0.4, label="tccd")
        ax[0].axhline(1, color="gray", lw=0.8)
        ax[0].set_title("speedup over eager")
        ax[1].bar([x - 0.2 for x in xs], [g(r, "inductor_warm", "first_call_s") - eager_first[r["model"]] for r in rows], 0.4, label="Inductor")
        ax[1].bar([x + 0.2 for x in xs], [g(r, "tccd_warm", "first_call_s") - eager_first[r["model"]] for r in rows], 0.4, label="tccd")
        ax[1].set_title("warm-start compile overhead (s)")
        for axis in ax:
            axis.set_xticks(list(xs))
            axis.set_xticklabels(names, rotation=20, fontsize=7)
            axis.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(a.out, "results.png"), dpi=120)
    except Exception as e:  # the table is the result; the plot is a convenience
        print(f"(no plot: {e})")


if __name__ == "__main__":
    main()
