"""What is live at a training step's peak: one zoo model, eager vs Inductor vs tccd (and tccd
variants under other client knobs), each run in its own process (issue 7: BERT's train-small
peak, tccd 921 MiB vs Inductor 768 on the H200; the CPU census cannot see the GPU's graphs).

One command on a GPU machine (one daemon from the given binary, in a temp dir, shared by the tccd
runs):

  PYTHONPATH=client python deploy/peak_memory_probe.py [--model bert] [--batch small] \\
      [--tccd build/bin/tccd] [--backends eager,inductor,tccd] \\
      [--variant 'nolean:TCCD_LEAN_RUNTIME=0' --variant 'noseg:daemon.TCCD_DISABLE_PASSES=segments' ...] \\
      [--detail inductor,tccd]

Per run: after --warmup steps, one step under torch.cuda.memory._record_memory_history, with
marker allocations (unique sizes) between its forward, backward and optimizer step. The trace is
replayed (alloc / free_completed) from memory_allocated() at the step's start ("before":
parameters and whatever a backend holds across steps; gradients are None between steps):

  - one line: before, the step's peak (replayed; max_memory_allocated of the step beside it),
    the phase it falls in, max_memory_reserved and the allocator's retries (fragmentation shows
    as reserved far above allocated, or retries > 0), and the median time of --time-steps steps
    run after the probed one;
  - per phase (forward, backward, optimizer): allocated at its start, its peak, at its end;
  - "held at the forward's end": the blocks the forward allocated that are still live when the
    backward begins (the saved tensors and the outputs), count and MiB, the largest listed;
  - for runs in --detail: the blocks live at the peak that the step allocated, largest first
    (MiB, the phase and event that allocated them, the innermost Python frames), and the
    timeline of allocations and frees of at least --timeline-mib, in order, with the running
    total: which buffer comes when, against the other backend's.

Sizes are the allocator's (rounded up to 512 bytes): bytes / 4 and / 2 against the model's dims
name the tensor (BERT: [1024, 30522] bf16 = 59.6 MiB, f32 119.2; [30522, 768] bf16 44.7, f32
89.4). `--selftest` checks the replay on a made-up trace (no GPU needed).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "deploy"))

MIB = 2**20
# Marker allocations between the phases of the probed step: sizes no model tensor is likely to
# have (odd multiples of 512 bytes, under 1 MiB), so that the replay finds the phase boundaries
# in the trace's order.
MARKERS = {"forward_end": 512 * 1021, "backward_end": 512 * 1019, "optimizer_end": 512 * 1013}
PHASES = ["forward", "backward", "optimizer"]


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


def replay(trace, before, timeline_bytes):
    """Replays an allocator trace from `before` allocated bytes. Returns the peak and what is live
    there, per-phase start/peak/end (phases split at the MARKERS allocations, which are left
    out), the blocks the forward allocated that are live when it ends, and the timeline of
    allocations and frees of at least timeline_bytes."""
    marker_phase = {size: PHASES.index(name.split("_")[0]) + 1 for name, size in MARKERS.items()}
    live, current, peak, peak_live, peak_at, peak_phase = {}, before, before, {}, 0, 0
    phase = 0
    phases = [{"start": before, "peak": before, "end": before} for _ in PHASES]
    held_at_forward_end = None
    timeline = []
    markers = set()
    for i, e in enumerate(trace):
        action, size, addr = e["action"], e.get("size", 0), e.get("addr")
        if action == "alloc" and size in marker_phase and phase < len(PHASES) and \
                marker_phase[size] == phase + 1:
            markers.add(addr)
            phases[phase]["end"] = current
            if phase == 0:
                held_at_forward_end = [b for b in live.values() if b[3] == 0]
            phase += 1
            if phase < len(PHASES):
                phases[phase].update(start=current, peak=current)
            continue
        if action in ("free_requested", "free_completed") and addr in markers:
            if action == "free_completed":
                markers.discard(addr)  # the address may serve a real block later
            continue
        if action == "alloc":
            live[addr] = (size, i, e.get("frames", []), phase)
            current += size
            if size >= timeline_bytes:
                timeline.append((i, phase, "+", size, current))
            if phase < len(PHASES):
                phases[phase]["peak"] = max(phases[phase]["peak"], current)
            if current > peak:
                peak, peak_live, peak_at, peak_phase = current, dict(live), i, phase
        elif action == "free_completed" and addr in live:
            size = live.pop(addr)[0]
            current -= size
            if size >= timeline_bytes:
                timeline.append((i, phase, "-", size, current))
    if phase < len(PHASES):
        phases[phase]["end"] = current
    return dict(peak=peak, peak_at=peak_at, peak_phase=peak_phase, peak_live=list(peak_live.values()),
                phases=phases, held_at_forward_end=held_at_forward_end or [], timeline=timeline,
                markers_seen=phase)


def _phase_name(p):
    return PHASES[p] if p < len(PHASES) else "after"


def worker(spec):
    import torch

    import zoo_benchmark as zoo

    backend = spec["backend"]
    if backend == "tccd":
        import tccd  # noqa: F401  (registers the backend)
    torch.manual_seed(0)
    model, batch_fn, fwd = zoo.build_model(spec["model"], False, False)
    kind = "vision" if spec["model"] in zoo.VISION else "lm"
    bs = zoo.BATCH[spec["batch"]][kind]
    model = model.cuda()
    model.train(True)
    batch = batch_fn(bs, "cuda")
    compiled = model if backend == "eager" else torch.compile(model, backend=backend)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    autocast = torch.autocast("cuda", dtype=torch.bfloat16)

    def mark(name):
        torch.empty(MARKERS[name], dtype=torch.uint8, device="cuda")  # freed at once

    def step(marks):
        with autocast:
            loss = fwd(compiled, batch, True)
        if marks:
            mark("forward_end")
        loss.backward()
        if marks:
            mark("backward_end")
        opt.step()
        opt.zero_grad(set_to_none=True)
        if marks:
            mark("optimizer_end")

    for _ in range(spec["warmup"]):
        step(False)
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.memory._record_memory_history(max_entries=1_000_000, stacks="python")
    step(True)
    torch.cuda.synchronize()
    snapshot = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    stats = torch.cuda.memory_stats()  # of the probed step alone (reset before it)
    max_allocated, max_reserved = torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved()
    # The step time after the probe (median of --time-steps, no history recorded): what a memory
    # change costs (a cut segment is one more native call).
    times = []
    for _ in range(spec["time_steps"]):
        t0 = time.perf_counter()
        step(False)
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    trace = snapshot["device_traces"][torch.cuda.current_device()]
    r = replay(trace, before, int(spec["timeline_mib"] * MIB))

    def block(b):
        size, at, frames, phase = b
        return {"mib": round(size / MIB, 2), "event": at, "phase": _phase_name(phase), "frames": _frames(frames)}

    top = spec["top"]
    peak_blocks = sorted(r["peak_live"], key=lambda b: -b[0])
    held = sorted(r["held_at_forward_end"], key=lambda b: -b[0])
    result = {
        "before_mib": round(before / MIB, 1),
        "peak_mib": round(r["peak"] / MIB, 1),
        "max_allocated_mib": round(max_allocated / MIB, 1),
        "max_reserved_mib": round(max_reserved / MIB, 1),
        "retries": stats.get("num_alloc_retries", 0),
        "step_ms": round(statistics.median(times), 2) if times else None,
        "inactive_split_peak_mib": round(stats.get("inactive_split_bytes.all.peak", 0) / MIB, 1),
        "peak_event": r["peak_at"],
        "peak_phase": _phase_name(r["peak_phase"]),
        "events": len(trace),
        "markers_seen": r["markers_seen"],
        "phases": {name: {k: round(v / MIB, 1) for k, v in p.items()} for name, p in zip(PHASES, r["phases"])},
        "held_count": len(held),
        "held_mib": round(sum(b[0] for b in held) / MIB, 1),
        "held_top": [block(b) for b in held[:top]],
        "live_at_peak": [block(b) for b in peak_blocks[:top]],
        "rest_mib": round(sum(b[0] for b in peak_blocks[top:]) / MIB, 1),
        "rest_count": max(0, len(peak_blocks) - top),
        "timeline": [[i, _phase_name(p), sign, round(s / MIB, 1), round(c / MIB, 1)]
                     for i, p, sign, s, c in r["timeline"][: spec["timeline_max"]]],
        "timeline_cut": max(0, len(r["timeline"]) - spec["timeline_max"]),
    }
    print("RESULT " + json.dumps(result), flush=True)


def report(label, args, r, detail):
    print(f"\n## {args.model} train {args.batch} {label}: before the step {r['before_mib']} MiB, "
          f"peak {r['peak_mib']} MiB in the {r['peak_phase']} (max_memory_allocated {r['max_allocated_mib']}), "
          f"max reserved {r['max_reserved_mib']}, alloc retries {r['retries']}, inactive split peak "
          f"{r['inactive_split_peak_mib']} MiB; event {r['peak_event']} of {r['events']}; step {r['step_ms']} ms"
          + ("" if r["markers_seen"] == len(PHASES) else f" (only {r['markers_seen']} phase markers found)"))
    print("  phase       start    peak     end  (MiB allocated)")
    for name, p in r["phases"].items():
        print(f"  {name:<10} {p['start']:7.1f} {p['peak']:7.1f} {p['end']:7.1f}")
    print(f"  held at the forward's end (allocated by it): {r['held_count']} blocks, {r['held_mib']} MiB")
    if not detail:
        return
    for b in r["held_top"]:
        print(f"    {b['mib']:8.2f} MiB  event {b['event']:6d}  {' <- '.join(b['frames'][:2])}")
    print("  live at the peak, allocated by the step:")
    for b in r["live_at_peak"]:
        print(f"    {b['mib']:8.2f} MiB  {b['phase']:<9} event {b['event']:6d}  {' <- '.join(b['frames'])}")
    print(f"    {r['rest_mib']:8.2f} MiB  ({r['rest_count']} more)")
    print(f"  timeline, blocks >= {args.timeline_mib} MiB (event phase +/- MiB -> allocated MiB):")
    line = []
    for i, phase, sign, size, current in r["timeline"]:
        line.append(f"{i}{phase[0]}{sign}{size}->{current}")
        if len(line) == 6:
            print("    " + "  ".join(line))
            line = []
    if line:
        print("    " + "  ".join(line))
    if r["timeline_cut"]:
        print(f"    ({r['timeline_cut']} more)")


def selftest():
    m = 1 << 20
    trace = [
        {"action": "alloc", "addr": 1, "size": 10 * m},  # forward: saved
        {"action": "alloc", "addr": 2, "size": 20 * m},  # forward: temporary
        {"action": "free_completed", "addr": 2, "size": 20 * m},
        {"action": "alloc", "addr": 9, "size": MARKERS["forward_end"]},
        {"action": "free_completed", "addr": 9, "size": MARKERS["forward_end"]},
        {"action": "alloc", "addr": 3, "size": 30 * m},  # backward: gradient
        {"action": "free_completed", "addr": 1, "size": 10 * m},
        {"action": "alloc", "addr": 9, "size": MARKERS["backward_end"]},
        {"action": "free_completed", "addr": 9, "size": MARKERS["backward_end"]},
        {"action": "alloc", "addr": 9, "size": MARKERS["optimizer_end"]},
        {"action": "free_completed", "addr": 9, "size": MARKERS["optimizer_end"]},
        {"action": "alloc", "addr": 9, "size": 1 * m},  # a real block at a marker's address
    ]
    r = replay(trace, 100 * m, 16 * m)
    assert r["peak"] == 140 * m and r["peak_phase"] == 1, r
    assert [(p["start"] // m, p["peak"] // m, p["end"] // m) for p in r["phases"]] == \
        [(100, 130, 110), (110, 140, 130), (130, 130, 130)], r["phases"]
    assert [b[0] // m for b in r["held_at_forward_end"]] == [10]
    assert [(sign, s // m) for _, _, sign, s, _ in r["timeline"]] == [("+", 20), ("-", 20), ("+", 30)]
    assert r["markers_seen"] == 3
    print("selftest ok")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="bert")
    p.add_argument("--batch", default="small", choices=["small", "large"])
    p.add_argument("--backends", default="eager,inductor,tccd")
    p.add_argument("--variant", action="append", default=[],
                   help="NAME:ENV=V[+ENV=V...]: one more tccd run with these client environment variables")
    p.add_argument("--detail", default=None, help="runs whose blocks and timeline are printed (default: all)")
    p.add_argument("--tccd", default=str(ROOT / "build" / "bin" / "tccd"))
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--top", type=int, default=16)
    p.add_argument("--timeline-mib", type=float, default=16.0)
    p.add_argument("--timeline-max", type=int, default=120)
    p.add_argument("--time-steps", type=int, default=10, help="steps timed after the probed one (median)")
    p.add_argument("--selftest", action="store_true")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.selftest:
        selftest()
        return
    if args.worker:
        worker(json.loads(args.worker))
        return
    runs = [(b, b, {}, {}) for b in args.backends.split(",") if b]
    for v in args.variant:
        name, _, assigns = v.partition(":")
        pairs = [a.split("=", 1) for a in assigns.split("+") if a]
        # daemon.NAME=V: the daemon's environment (a daemon of the variant's own, e.g.
        # daemon.TCCD_DISABLE_PASSES=segments); NAME=V: the client's.
        client = {k: v for k, v in pairs if not k.startswith("daemon.")}
        served = {k[len("daemon."):]: v for k, v in pairs if k.startswith("daemon.")}
        runs.append((f"tccd-{name}", "tccd", client, served))
    detail = set(args.detail.split(",")) if args.detail else None
    daemons = {}
    try:
        for label, backend, extra, daemon_env in runs:
            env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "client"), os.environ.get("PYTHONPATH", "")]))
            if backend == "tccd":
                from bench_daemon import BenchDaemon

                key = tuple(sorted(daemon_env.items()))
                if key not in daemons:
                    daemons[key] = BenchDaemon(args.tccd, daemon_env)
                daemon = daemons[key]
                env.update(TCCD_ADDRESS=daemon.address, TCCD_NO_AUTOSTART="1", TCCD_CACHE_DIR=f"{daemon.root}/client-{label}")
            env.update(extra)
            spec = dict(backend=backend, model=args.model, batch=args.batch, warmup=args.warmup, top=args.top,
                        timeline_mib=args.timeline_mib, timeline_max=args.timeline_max,
                        time_steps=args.time_steps)
            out = subprocess.run([sys.executable, __file__, "--worker", json.dumps(spec)], env=env,
                                 capture_output=True, text=True, timeout=1200)
            line = next((l for l in out.stdout.splitlines() if l.startswith("RESULT ")), None)
            if line is None:
                print(f"\n## {label}: failed (rc {out.returncode})\n{out.stdout[-2000:]}\n{out.stderr[-3000:]}")
                continue
            extra_text = " ".join([f"{k}={v}" for k, v in extra.items()] + [f"daemon {k}={v}" for k, v in daemon_env.items()])
            report(f"{label}{' (' + extra_text + ')' if extra_text else ''}", args, json.loads(line[len("RESULT "):]),
                   detail is None or label in detail)
    finally:
        for daemon in daemons.values():
            daemon.close()


if __name__ == "__main__":
    main()
