"""What is live at a training step's peak: one zoo model, eager vs Inductor vs tccd, each backend
in its own process (issue 7: BERT's train-small peak, tccd 921-934 MiB vs Inductor 768).

One command on a GPU machine (starts its own daemon from the given binary, in a temp dir):

  PYTHONPATH=client python deploy/peak_memory_probe.py [--model bert] [--batch small] \\
      [--tccd build/bin/tccd] [--backends eager,inductor,tccd]

Per backend: after --warmup steps, one step under torch.cuda.memory._record_memory_history; the
allocation trace is replayed to find the peak of allocated bytes, and the blocks live there that
the step allocated are listed, largest first, with their size in MiB, the shape they could be
(bytes / 4 and / 2 against the model's dims is the reader's job) and the innermost frames of the
call that allocated them (tccd's runtime, AOTAutograd, the model). "before" is what was allocated
when the step began (parameters; gradients are set to None between steps). max_memory_allocated
of the step is printed next to the replayed peak as a check.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "deploy"))


def _frames(frames, keep=4):
    """The innermost frames worth reading: none of torch's own autograd/dispatch plumbing."""
    out = []
    for f in frames:
        name = f.get("filename", "")
        if not name or name.startswith("??") or "/torch/_ops.py" in name or "/torch/utils/" in name:
            continue
        out.append(f"{Path(name).name}:{f.get('line')} {f.get('name')}")
        if len(out) == keep:
            break
    return out


def worker(spec):
    import torch

    import zoo_benchmark as zoo

    backend = spec["backend"]
    if backend == "tccd":
        import tccd  # noqa: F401  (registers the backend)
    model, batch_fn, fwd = zoo.build_model(spec["model"], False, False)
    kind = "vision" if spec["model"] in ("resnet50", "vit", "convnext") else "lm"
    bs = zoo.BATCH[spec["batch"]][kind]
    model = model.cuda()
    batch = batch_fn(bs, "cuda")
    compiled = model if backend == "eager" else torch.compile(model, backend=backend)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    autocast = torch.autocast("cuda", dtype=torch.bfloat16)

    def step():
        with autocast:
            loss = fwd(compiled, batch, True)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(spec["warmup"]):
        step()
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.memory._record_memory_history(max_entries=1_000_000, stacks="python")
    step()
    torch.cuda.synchronize()
    snapshot = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    max_allocated = torch.cuda.max_memory_allocated()

    trace = snapshot["device_traces"][torch.cuda.current_device()]
    live, current, peak, peak_live, peak_at = {}, before, before, {}, 0
    for i, e in enumerate(trace):
        if e["action"] == "alloc":
            live[e["addr"]] = (e["size"], i, e.get("frames", []))
            current += e["size"]
            if current > peak:
                peak, peak_live, peak_at = current, dict(live), i
        elif e["action"] == "free_completed" and e["addr"] in live:
            current -= live.pop(e["addr"])[0]
    blocks = sorted(peak_live.values(), key=lambda b: -b[0])
    mib = 2**20
    result = {
        "before_mib": round(before / mib, 1),
        "peak_mib": round(peak / mib, 1),
        "max_allocated_mib": round(max_allocated / mib, 1),
        "peak_event": peak_at,
        "events": len(trace),
        "live_at_peak": [
            {"mib": round(size / mib, 2), "event": at, "frames": _frames(frames)} for size, at, frames in blocks[: spec["top"]]
        ],
        "rest_mib": round(sum(b[0] for b in blocks[spec["top"]:]) / mib, 1),
        "rest_count": max(0, len(blocks) - spec["top"]),
    }
    print("RESULT " + json.dumps(result), flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="bert")
    p.add_argument("--batch", default="small", choices=["small", "large"])
    p.add_argument("--backends", default="eager,inductor,tccd")
    p.add_argument("--tccd", default=str(ROOT / "build" / "bin" / "tccd"))
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--top", type=int, default=30)
    p.add_argument("--worker", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        worker(json.loads(args.worker))
        return
    from bench_daemon import BenchDaemon

    for backend in args.backends.split(","):
        daemon = BenchDaemon(args.tccd) if backend == "tccd" else None
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "client"), os.environ.get("PYTHONPATH", "")]))
        if daemon:
            env = daemon.client_env(env)
        spec = dict(backend=backend, model=args.model, batch=args.batch, warmup=args.warmup, top=args.top)
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
        r = json.loads(line[len("RESULT "):])
        print(f"\n## {args.model} train {args.batch} {backend}: before the step {r['before_mib']} MiB, "
              f"peak {r['peak_mib']} MiB (max_memory_allocated {r['max_allocated_mib']}), "
              f"at event {r['peak_event']} of {r['events']}; live there, allocated by the step:")
        for b in r["live_at_peak"]:
            print(f"  {b['mib']:9.2f} MiB  event {b['event']:6d}  {' <- '.join(b['frames'])}")
        print(f"  {r['rest_mib']:9.2f} MiB  ({r['rest_count']} more)")


if __name__ == "__main__":
    main()
