"""Peak memory and step time of a zoo LM's training step with tccd's zero-tangent knobs on and off,
all variants in one process (one import, one model build; the daemon's cache serves the repeated
compiles): the model returns its loss and its logits, the step backpropagates the loss alone,
so the logits' gradient is zeros (issue 8: GPT-2's reduce-overhead peak, 358 vs Inductor's 262
MiB in session 15, was those zeros).

    TCCD_ADDRESS=unix:/path/tccd.sock PYTHONPATH=client python deploy/zero_tangents_probe.py \\
        [--model gpt2] [--batch 2] [--iters 10] [--warmup 3] [--variants default-off,default-on,ro-off,ro-on,ro-pack]

Variants (each from the same initial weights, after torch._dynamo.reset()):
  default-off  default mode, TCCD_PLAN_ZERO_TANGENTS=0 (autograd's zeros, held for the backward)
  default-on   default mode, TCCD_PLAN_ZERO_TANGENTS=1 (the runtime's zeros, the plan frees them)
  ro-off       mode="reduce-overhead", TCCD_CUDAGRAPH_ZERO_TANGENTS=0 (autograd's zeros outside
               the graphs, copied in by the CUDA graph trees)
  ro-on        mode="reduce-overhead", TCCD_CUDAGRAPH_ZERO_TANGENTS=1 (zeros made inside the graph)
  ro-pack      ro-on with TCCD_PACK_SAVED=1 (small saved tensors concatenated)
Per variant one line: peak MiB (max_memory_allocated over the timed steps, after a first step,
the wait for background compiles and --warmup steps: 3, as the zoo's cells, whose peak column
this is), step ms (median, min), host ms (the zoo's
launch-only measure), and the losses' largest difference from the first variant of the same mode
(0 expected: the knobs change where zeros are made, not values). Under reduce-overhead with the
zero-tangent variant the backward records at step 3 and replays from step 4: a later recording
would show here as a peak far above the parameters'.
"""

import argparse
import os
import statistics
import sys
import time

import torch

VARIANTS = {
    "default-off": (None, {"TCCD_PLAN_ZERO_TANGENTS": "0"}),
    "default-on": (None, {"TCCD_PLAN_ZERO_TANGENTS": "1"}),
    "ro-off": ("reduce-overhead", {"TCCD_CUDAGRAPH_ZERO_TANGENTS": "0"}),
    "ro-on": ("reduce-overhead", {"TCCD_CUDAGRAPH_ZERO_TANGENTS": "1"}),
    "ro-pack": ("reduce-overhead", {"TCCD_CUDAGRAPH_ZERO_TANGENTS": "1", "TCCD_PACK_SAVED": "1"}),
}
KNOBS = sorted({k for _, env in VARIANTS.values() for k in env})


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="gpt2")
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)  # the zoo's RO cells: 3
    ap.add_argument("--tiny", action="store_true")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    a = ap.parse_args()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import tccd
    from tccd import prefetch
    from zoo_benchmark import _build_on, _host_step_ms

    device = torch.device(a.device)
    cuda = device.type == "cuda"
    torch.manual_seed(0)
    model, batch_fn, fwd = _build_on({"model": a.model, "tiny": a.tiny, "dropout": False}, device)
    model.to(device).train()
    batch = batch_fn(a.batch, device)
    # On the CPU, as the zoo keeps it: a copy on the GPU would count in every variant's peak
    # (GPT-2's state dict, its tied embedding twice: ~405 MiB in r1 of session 16).
    init = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    first_losses = {}
    for name in a.variants.split(","):
        mode, env = VARIANTS[name]
        for knob in KNOBS:
            os.environ.pop(knob, None)
        os.environ.update(env)
        tccd.config.reload()
        torch._dynamo.reset()
        tccd.reset_compile_stats()
        model.load_state_dict(init)
        compiled = torch.compile(model, backend="tccd", mode=mode)
        opt = torch.optim.SGD(model.parameters(), lr=1e-3)
        mark = torch.compiler.cudagraph_mark_step_begin if mode else (lambda: None)
        losses = []

        def step():
            mark()
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=cuda):
                loss = fwd(compiled, batch, True)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            # A copy: under CUDA graphs the next replay overwrites the loss's buffer (one small
            # kernel per step in every variant).
            losses.append(loss.detach().clone())

        t0 = time.perf_counter()
        step()
        # As the zoo: TCCD_EAGER_WHILE_COMPILING runs a graph eagerly until its compile is done;
        # the steps measured below must run the plans (r1 of session 16 measured eager steps).
        prefetch.wait_all(600)
        for _ in range(a.warmup):
            step()
        sync()
        warm_s = time.perf_counter() - t0
        if cuda:
            torch.cuda.reset_peak_memory_stats()
        times = []
        for _ in range(a.iters):
            t = time.perf_counter()
            step()
            sync()
            times.append((time.perf_counter() - t) * 1e3)
        peak = torch.cuda.max_memory_allocated() / 2**20 if cuda else float("nan")
        host = _host_step_ms(step, cuda, statistics.median(times))["host_ms"]
        values = torch.stack(losses[: 1 + a.warmup + a.iters]).float().cpu()
        ref = first_losses.setdefault(mode, values)
        diff = float((values - ref).abs().max())
        skips = [s.get("cudagraph_skip") for s in tccd.last_compile_stats() if mode and not s.get("cudagraphs")]
        print(f"{a.model} {name:12s} peak {peak:8.1f} MiB  step ms median {statistics.median(times):6.2f} "
              f"min {min(times):6.2f}  host ms {host:6.2f}  warm-up {warm_s:5.1f} s  loss diff {diff:.3g}"
              + (f"  graphs skipped: {skips}" if skips else ""), flush=True)
        if os.environ.get("PROBE_LOSSES"):
            print("   losses", values.tolist())
        del compiled, opt
    return 0


if __name__ == "__main__":
    sys.exit(main())
