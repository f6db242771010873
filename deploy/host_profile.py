"""Host time of one training (or, with --infer, inference) step of a zoo model (deploy/zoo_benchmark.py) under a backend, and
with tccd where the native plan runtime spends it (TCCD_PLAN_PROFILE=1: per class of step, and
the Python wrapper around each plan call).

    TCCD_PLAN_PROFILE=1 PYTHONPATH=client:deploy python deploy/host_profile.py resnet50 tccd \\
        [--device cuda] [--batch 8] [--tiny] [--iters 10] [--torch-profile] [--mode reduce-overhead]
        [--python-profile 10]

On a GPU the step runs under bf16 autocast (as the zoo does) and `host ms` is the launch time of
one step without waiting for the GPU; on the CPU every figure includes the kernels' own time, so
compare a class of steps before/after a change rather than against the GPU's. `--tiny`: the
zoo's tiny configuration (ResNet-50 at 32x32). On a GPU the host time is also split by phase
(forward, backward, optimizer; the plan profile says how much of each is tccd's plan calls), and
`--python-profile N` lists the Python functions by own time over N steps. Model `resnet50_narrow`: ResNet-50's graph at
1/16 of its channels, whose CPU kernels are so small that a step's time is the host's.
"""

import argparse
import os
import re
import sys
import time

import torch


def narrow_resnet50(width: int = 4):
    """ResNet-50's graph (53 convolutions and batch norms, the same blocks, strides and residual
    adds) at 1/16 of its channels: on the CPU its kernels take microseconds, so a step's time is
    the host's (plan calls, extern op dispatch, allocation), which is what this measures."""
    import torch.nn as nn

    class Bottleneck(nn.Module):
        def __init__(self, cin, planes, stride):
            super().__init__()
            out = planes * 4
            self.body = nn.Sequential(
                nn.Conv2d(cin, planes, 1, bias=False), nn.BatchNorm2d(planes), nn.ReLU(inplace=True),
                nn.Conv2d(planes, planes, 3, stride, 1, bias=False), nn.BatchNorm2d(planes), nn.ReLU(inplace=True),
                nn.Conv2d(planes, out, 1, bias=False), nn.BatchNorm2d(out))
            self.down = None
            if stride != 1 or cin != out:
                self.down = nn.Sequential(nn.Conv2d(cin, out, 1, stride, bias=False), nn.BatchNorm2d(out))

        def forward(self, x):
            return torch.relu(self.body(x) + (x if self.down is None else self.down(x)))

    layers, cin = [nn.Conv2d(3, width * 4, 7, 2, 3, bias=False), nn.BatchNorm2d(width * 4), nn.ReLU(inplace=True),
                   nn.MaxPool2d(3, 2, 1)], width * 4
    for i, blocks in enumerate((3, 4, 6, 3)):
        planes = width * 2**i
        for b in range(blocks):
            layers.append(Bottleneck(cin, planes, 2 if b == 0 and i > 0 else 1))
            cin = planes * 4
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, 10)]
    model = nn.Sequential(*layers)

    def batch_fn(bs, device):
        g = torch.Generator(device="cpu").manual_seed(0)
        return {"x": torch.randn(bs, 3, 32, 32, generator=g).to(device),
                "y": torch.randint(0, 10, (bs,), generator=g).to(device)}

    def fwd(m, batch, train):
        return torch.nn.functional.cross_entropy(m(batch["x"]), batch["y"])

    return model, batch_fn, fwd


def _host_phases_ms(forward, optimize, step_ms: float, n: int = 10) -> dict:
    """Host ms of a step's three phases, each timed without a sync while a sleep kernel queued
    first keeps the GPU busy (as zoo_benchmark._host_step_ms for the whole step): the forward
    (Dynamo's frame evaluation, the compiled forward graphs and the eager code between them),
    the backward (autograd's engine and the compiled backward graphs), the optimizer step and
    zero_grad. Medians of n; their sum is about the step's host ms."""
    import statistics

    cycles = int(max(4 * step_ms, 20.0) * 2.0e6)
    times = {"forward": [], "backward": [], "optimizer": []}
    for _ in range(n):
        torch.cuda.synchronize()
        torch.cuda._sleep(cycles)
        t0 = time.perf_counter()
        loss = forward()
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        optimize()
        t3 = time.perf_counter()
        torch.cuda.synchronize()
        times["forward"].append((t1 - t0) * 1e3)
        times["backward"].append((t2 - t1) * 1e3)
        times["optimizer"].append((t3 - t2) * 1e3)
    return {k: statistics.median(v) for k, v in times.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("backend", choices=("tccd", "inductor", "eager"))
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--batch", type=int, default=None, help="default: the zoo's small batch")
    ap.add_argument("--tiny", action="store_true")
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=4)
    ap.add_argument("--torch-profile", action="store_true", help="print the CPU operators by self time over 3 steps (torch.profiler)")
    ap.add_argument("--mode", default="default", help="torch.compile mode (e.g. reduce-overhead)")
    ap.add_argument("--infer", action="store_true",
                    help="an inference step as the zoo's (eval(), no_grad, the model's output) instead of a "
                         "training step; host ms by phase is then the forward alone")
    ap.add_argument("--python-profile", type=int, default=0, metavar="N",
                    help="cProfile N steps and print the Python functions by own time (Dynamo's "
                         "frame evaluation, the backends' wrappers, the optimizer)")
    a = ap.parse_args()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from zoo_benchmark import BATCH, VISION, _build_on, _host_step_ms

    if a.backend == "tccd":
        import tccd  # noqa: F401  (registers the backend)
    torch.manual_seed(0)
    device = torch.device(a.device)
    if a.model == "resnet50_narrow":
        model, batch_fn, fwd = narrow_resnet50()
    else:
        # On the device, as the zoo builds it (ZOO_BUILD_ON_DEVICE=0: on the CPU): a large model's
        # random initialisation on the CPU took 4-10 s of every GPU process (session 15's r1).
        model, batch_fn, fwd = _build_on({"model": a.model, "tiny": a.tiny, "dropout": False}, device)
    model.to(device).train(not a.infer)
    kind = "vision" if a.model in VISION | {"resnet50_narrow"} else "lm"
    batch = batch_fn(a.batch or BATCH["small"][kind], device)
    mode = None if a.mode == "default" else a.mode
    m = model if a.backend == "eager" else torch.compile(
        model, backend="tccd" if a.backend == "tccd" else "inductor", mode=mode)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    cuda = device.type == "cuda"

    def sync():
        if cuda:
            torch.cuda.synchronize()

    mark_step = torch.compiler.cudagraph_mark_step_begin if mode and a.backend != "eager" else (lambda: None)

    def forward():
        mark_step()
        if cuda:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                return fwd(m, batch, True)
        return fwd(m, batch, True)

    def optimize():
        opt.step()
        opt.zero_grad(set_to_none=True)

    def step():
        forward().backward()
        optimize()

    if a.infer:
        # The zoo's inference step (zoo_benchmark.make_step): no_grad, autocast on a GPU, eval().
        def step():  # noqa: F811
            mark_step()
            with torch.no_grad(), (torch.autocast("cuda", dtype=torch.bfloat16) if cuda else torch.autocast("cpu", enabled=False)):
                return fwd(m, batch, False)

    for _ in range(a.warmup):
        step()
    sync()
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(a.iters):
        t0 = time.perf_counter()
        step()
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    peak = f", peak {torch.cuda.max_memory_allocated() / 2**20:.0f} MiB" if cuda else ""
    print(f"== {a.model} {a.backend} {device.type} step ms min {times[0]:.2f} median {times[len(times) // 2]:.2f}{peak}")
    if cuda:
        # Launch-only time of a step, the GPU kept busy by a sleep kernel queued first (the zoo's
        # host_ms column, zoo_benchmark._host_step_ms): the host's share, without waiting.
        host = _host_step_ms(step, cuda, times[len(times) // 2])
        print(f"   host (launch) ms of one step: {host['host_ms']:.2f} (median of 10; "
              f"{host['host_queue_drained']} calls found the GPU idle after them)")
        if not a.infer:
            phases = _host_phases_ms(forward, optimize, times[len(times) // 2])
            print("   host ms by phase (median of 10, GPU kept busy): "
                  + ", ".join(f"{k} {v:.2f}" for k, v in phases.items()))
    if a.torch_profile:
        from profiling import profile_kernels, table

        def three_steps():
            for _ in range(3):
                step()
            sync()

        # CPU operators by self time (nested operators are not counted twice).
        print(table(profile_kernels(three_steps, device="cpu"), iters=3, limit=22, width=60))
    if a.python_profile:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(a.python_profile):
            step()
        sync()
        profiler.disable()
        print(f"Python functions by own time over {a.python_profile} steps (cProfile inflates each call):")
        pstats.Stats(profiler, stream=sys.stdout).sort_stats("tottime").print_stats(30)
    if a.backend == "tccd":
        from tccd import native_plan

        report = native_plan.profile_report()
        print(report or "(no plan profile: set TCCD_PLAN_PROFILE=1)", flush=True)
        # Summed over the plans (a training step calls each of them once), to hold against the
        # host ms by phase: what of the step is tccd's plan calls, what is around them.
        per_call = re.findall(r"us per call: native ([\d.]+) = .*; Python wrapper ([\d.]+)$", report, re.M)
        if per_call:
            native, wrapper = (sum(float(p[i]) for p in per_call) / 1e3 for i in (0, 1))
            print(f"   plan calls summed over {len(per_call)} plans: native {native:.2f} ms, "
                  f"Python wrapper {wrapper:.2f} ms (per call of each)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
