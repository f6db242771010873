"""Host time of one training step of a zoo model (deploy/zoo_benchmark.py) under a backend, and
with tccd where the native plan runtime spends it (TCCD_PLAN_PROFILE=1: per class of step, and
the Python wrapper around each plan call).

    TCCD_PLAN_PROFILE=1 PYTHONPATH=client:deploy python deploy/host_profile.py resnet50 tccd \\
        [--device cuda] [--batch 8] [--tiny] [--iters 10] [--torch-profile] [--mode reduce-overhead]

On a GPU the step runs under bf16 autocast (as the zoo does) and `host ms` is the launch time of
one step without waiting for the GPU; on the CPU every figure includes the kernels' own time, so
compare a class of steps before/after a change rather than against the GPU's. `--tiny`: the
zoo's tiny configuration (ResNet-50 at 32x32). Model `resnet50_narrow`: ResNet-50's graph at
1/16 of its channels, whose CPU kernels are so small that a step's time is the host's.
"""

import argparse
import os
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
    a = ap.parse_args()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from zoo_benchmark import BATCH, VISION, _host_step_ms, build_model

    if a.backend == "tccd":
        import tccd  # noqa: F401  (registers the backend)
    torch.manual_seed(0)
    device = torch.device(a.device)
    if a.model == "resnet50_narrow":
        model, batch_fn, fwd = narrow_resnet50()
    else:
        model, batch_fn, fwd = build_model(a.model, a.tiny, False)
    model.to(device).train(True)
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

    def step():
        mark_step()
        if cuda:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = fwd(m, batch, True)
        else:
            loss = fwd(m, batch, True)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(a.warmup):
        step()
    sync()
    times = []
    for _ in range(a.iters):
        t0 = time.perf_counter()
        step()
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    print(f"== {a.model} {a.backend} {device.type} step ms min {times[0]:.2f} median {times[len(times) // 2]:.2f}")
    if cuda:
        # Launch-only time of a step, the GPU kept busy by a sleep kernel queued first (the zoo's
        # host_ms column, zoo_benchmark._host_step_ms): the host's share, without waiting.
        host = _host_step_ms(step, cuda, times[len(times) // 2])
        print(f"   host (launch) ms of one step: {host['host_ms']:.2f} (median of 10; "
              f"{host['host_queue_drained']} calls found the GPU idle after them)")
    if a.torch_profile:
        from profiling import profile_kernels, table

        def three_steps():
            for _ in range(3):
                step()
            sync()

        # CPU operators by self time (nested operators are not counted twice).
        print(table(profile_kernels(three_steps, device="cpu"), iters=3, limit=22, width=60))
    if a.backend == "tccd":
        from tccd import native_plan

        report = native_plan.profile_report()
        print(report or "(no plan profile: set TCCD_PLAN_PROFILE=1)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
