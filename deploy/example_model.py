"""The main job's example: trains a small CNN with torch.compile(backend="tccd") for a few steps
and reports how long the first step (Dynamo + AOTAutograd + tccd) took and where each graph came
from (compiled by the daemon, the daemon's cache, or the local cache).

    .venv/bin/python deploy/example_model.py --label "process 1"
"""
import argparse
import json
import time

import torch
import torch.nn as nn

import tccd


class SmallCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.GELU(), nn.MaxPool2d(2))
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(32 * 8 * 8, 64), nn.SiLU(), nn.Linear(64, 10))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--label", default="process")
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args()

    torch.manual_seed(0)
    model = SmallCNN()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x = torch.randn(32, 3, 32, 32)
    y = torch.randint(0, 10, (32,))
    compiled = torch.compile(model, backend="tccd")

    def step() -> float:
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.cross_entropy(compiled(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    start = time.perf_counter()
    losses = [step()]
    first_step_s = time.perf_counter() - start
    start = time.perf_counter()
    losses += [step() for _ in range(args.steps - 1)]
    later_step_ms = (time.perf_counter() - start) * 1000 / max(1, args.steps - 1)

    graphs = tccd.last_compile_stats()
    def source(g):
        if g["fallback"]:
            return "EAGER FALLBACK: " + g["fallback"]
        if g["local_hit"]:
            return "local cache hit"
        if g.get("aot_skipped"):  # the AOT recipe and plans by key from the daemon: no compile call
            return "daemon cache hit (recipe and plans by key; Dynamo graph not traced by AOTAutograd)"
        return "daemon cache hit" if g["cache_hit"] else f"compiled by the daemon in {g['compile_ms']:.0f} ms"
    print(f"[{args.label}] first step (capture + compile + run): {first_step_s:.2f} s; "
          f"later steps: {later_step_ms:.1f} ms; losses: {', '.join(f'{l:.4f}' for l in losses)}")
    for g in graphs:
        print(f"[{args.label}]   {g['name']:<14} key {g['key'][:12]}  {g['fused_kernels']} fused kernels, "
              f"{g['extern_steps']} ATen steps  <- {source(g)}")
    print("RESULT " + json.dumps({"label": args.label, "first_step_s": first_step_s, "losses": losses,
                                  "graphs": [{"key": g["key"], "cache_hit": g["cache_hit"],
                                              "local_hit": g["local_hit"]} for g in graphs]}))


if __name__ == "__main__":
    main()
