"""Kernel name -> launches and time, from one torch.profiler run: the one copy of this summing
that the deploy tools import (`from profiling import ...`, deploy/ is their script directory)
and the GPU tests use through tests/python/tccd_testlib.py.

  kernels = profile_kernels(step, device="cuda", iters=10)  # {name: Kernel(launches, us)}
  launches(kernels)                                         # {name: launches}
  us, per_kernel = device_time_per_iter(kernels, iters=10)  # GPU time of one step

Names are the profiler's: a CUDA kernel's full (demangled) name on the GPU, an operator's
("aten::add") on the CPU. Only FunctionEvent attributes that keep their names from torch 2.11 to
the newest release are read (name, device_type, time_range, self_cpu_time_total); the
cuda_time* -> device_time* renaming is avoided by timing a device event by its own interval.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Dict, Iterable, Optional, Tuple


@dataclasses.dataclass
class Kernel:
    launches: int = 0
    us: float = 0.0  # summed over the launches


def summarize(events: Iterable, device: Optional[str] = None) -> Dict[str, Kernel]:
    """Sums profiler events (torch.autograd.profiler FunctionEvents) by name, in the order of
    each name's first event. `device` "cuda" or "cpu" keeps only the events that ran there; None
    keeps every event, counting launches exactly as prof.key_averages()' `count` does (CPU-side
    runtime calls such as cudaLaunchKernel included). A device event's time is its own interval
    (a kernel's duration on the GPU); a CPU event's is its self time, so that nested operators
    are not counted twice."""
    import torch

    want = None
    if device is not None:
        want = {"cuda": torch.autograd.DeviceType.CUDA, "cpu": torch.autograd.DeviceType.CPU}[device]
    out: Dict[str, Kernel] = {}
    for e in events:
        if want is not None and e.device_type != want:
            continue
        if e.device_type == torch.autograd.DeviceType.CPU:
            us = float(e.self_cpu_time_total)
        else:
            us = float(e.time_range.elapsed_us())
        entry = out.setdefault(e.name, Kernel())
        entry.launches += 1
        entry.us += us
    return out


def profile_kernels(fn: Callable[[], object], device: str = "cuda", iters: int = 1, only_device: bool = True) -> Dict[str, Kernel]:
    """Runs fn() `iters` times under torch.profiler (the CUDA activity for "cuda", the CPU one for
    "cpu"), waiting for the GPU inside the profile, and sums its events (summarize): those of
    `device` only, or every event recorded with only_device=False."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    activity = ProfilerActivity.CUDA if device == "cuda" else ProfilerActivity.CPU
    with profile(activities=[activity]) as prof:
        for _ in range(iters):
            fn()
        if device == "cuda":
            torch.cuda.synchronize()
    return summarize(prof.events(), device if only_device else None)


def kernel_launches(fn: Callable[[], object]) -> Dict[str, int]:
    """Name -> launches of one call of fn() under the CUDA profiler: every event recorded, as
    {e.key: e.count for e in prof.key_averages()} counts them (what the GPU tests match on)."""
    return launches(profile_kernels(fn, device="cuda", only_device=False))


def launches(kernels: Dict[str, Kernel]) -> Dict[str, int]:
    return {name: k.launches for name, k in kernels.items()}


def device_time_per_iter(
    kernels: Dict[str, Kernel], iters: int = 1, exclude: Tuple[str, ...] = ("Memcpy", "Memset"), width: int = 90
) -> Tuple[float, Dict[str, float]]:
    """(total us per iteration, {name[:width]: us per iteration}) over the kernels that took time,
    leaving out copies and fills (names containing one of `exclude`): a step's kernel time."""
    total, per_kernel = 0.0, {}
    for name, k in kernels.items():
        if k.us > 0 and not any(x in name for x in exclude):
            total += k.us
            per_kernel[name[:width]] = round(k.us / iters, 1)
    return round(total / iters, 1), per_kernel


def table(kernels: Dict[str, Kernel], iters: int = 1, limit: int = 20, width: int = 60) -> str:
    """The `limit` names that took the most time: us and launches per iteration, then the name."""
    lines = [f"{'us/iter':>10} {'calls/iter':>10}  name"]
    for name, k in sorted(kernels.items(), key=lambda kv: -kv[1].us)[:limit]:
        lines.append(f"{k.us / iters:10.1f} {k.launches / iters:10.1f}  {name[:width]}")
    return "\n".join(lines)


def idle_gaps(fn: Callable[[], object], trace_path: Optional[str] = None, top: int = 10,
              min_gap_us: float = 20.0) -> Dict[str, object]:
    """Where the GPU waits during one call of fn(): one step under the CPU+CUDA profiler, its
    kernels' busy intervals merged, and the gaps between them (>= min_gap_us) with the CPU
    operators that ran during each (what the host was doing while the GPU had nothing queued).
    Also the CUDA runtime calls of the step by total time (a synchronising call shows here) and,
    with trace_path, the Chrome trace. Step time = busy + idle, so a step far above its GPU busy
    time with a low host time points at host work bunched where the queue is empty."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    if trace_path:
        prof.export_chrome_trace(trace_path)
    events = list(prof.events())
    gpu = sorted((e.time_range.start, e.time_range.end) for e in events
                 if e.device_type != torch.autograd.DeviceType.CPU and e.time_range.end > e.time_range.start)
    cpu = [e for e in events if e.device_type == torch.autograd.DeviceType.CPU]
    if not gpu or not cpu:
        return {"gpu_events": len(gpu)}
    merged = [list(gpu[0])]
    for s, t in gpu[1:]:
        if s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], t)
        else:
            merged.append([s, t])
    step_start = min(e.time_range.start for e in cpu)
    gaps = [(merged[0][0] - step_start, step_start, merged[0][0])]
    gaps += [(b[0] - a[1], a[1], b[0]) for a, b in zip(merged, merged[1:])]
    busy = sum(t - s for s, t in merged)
    idle = sum(g for g, _, _ in gaps if g >= min_gap_us)

    def during(s: float, t: float) -> list:
        # Outermost CPU operators overlapping [s, t], by overlap: the host's work in the gap.
        over: Dict[str, float] = {}
        for e in cpu:
            o = min(t, e.time_range.end) - max(s, e.time_range.start)
            if o > 0.2 * (t - s) or o > 50:
                over[e.name] = over.get(e.name, 0.0) + o
        return [[n[:80], round(o, 1)] for n, o in sorted(over.items(), key=lambda kv: -kv[1])[:6]]

    runtime: Dict[str, Kernel] = {}
    for e in cpu:
        if e.name.startswith(("cuda", "cu")) and not e.name.startswith("cudnn"):
            k = runtime.setdefault(e.name, Kernel())
            k.launches += 1
            k.us += float(e.time_range.elapsed_us())
    worst = sorted((g for g in gaps if g[0] >= min_gap_us), key=lambda g: -g[0])[:top]
    return {
        "window_us": round(merged[-1][1] - step_start, 1),
        "busy_us": round(busy, 1),
        "idle_us": round(idle, 1),
        "gaps_over_min": sum(g[0] >= min_gap_us for g in gaps),
        "first_launch_after_us": round(gaps[0][0], 1),
        "worst_gaps": [{"us": round(g, 1), "at_us": round(s - step_start, 1), "cpu": during(s, t)} for g, s, t in worst],
        "runtime_calls": [[n, k.launches, round(k.us, 1)] for n, k in sorted(runtime.items(), key=lambda kv: -kv[1].us)[:12]],
    }
