"""Dynamic shapes: a training loop and an inference loop over varying sequence lengths and batch
sizes (issue 9), tccd against eager: results matched at every size, and the counts that matter.

    TCCD_BINARY=build/bin/tccd PYTHONPATH=client python deploy/dynamic_shapes_bench.py \\
        [--device cpu|cuda] [--lengths 32,64,...] [--d 128] [--mode dynamic|automatic]

Runs a pre-norm transformer block (embedding, layer norm, attention by matmuls and softmax, GELU
MLP) over 16 sequence lengths (32..512 by default; the batch varies with the length so the
token count stays near constant), training (forward, backward, SGD) then inference, and prints
per phase: Dynamo graphs compiled (forward/inference graphs in tccd.last_compile_stats()),
daemon compiles (GetStats `compiles` before and after), the largest difference from eager and
the mean step time of tccd and eager. Uses the daemon at TCCD_ADDRESS (auto-started).
"""

import argparse
import copy
import math
import sys
import time


def build(d: int, device: str):
    import torch
    import torch.nn as nn

    class Block(nn.Module):
        def __init__(self, vocab=1000, heads=4):
            super().__init__()
            self.heads = heads
            self.embed = nn.Embedding(vocab, d)
            self.pos = nn.Embedding(1024, d)
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, ids):
            b, t = ids.shape
            x = self.embed(ids) + self.pos(torch.arange(t, device=ids.device))
            q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
            hd = q.shape[-1] // self.heads
            q, k, v = (z.reshape(b, t, self.heads, hd).transpose(1, 2) for z in (q, k, v))
            attn = torch.softmax((q @ k.transpose(-2, -1)) / math.sqrt(hd), dim=-1) @ v
            x = x + self.proj(attn.transpose(1, 2).reshape(b, t, d))
            return x + self.fc2(nn.functional.gelu(self.fc1(self.ln2(x))))

    torch.manual_seed(0)
    return Block().to(device)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--lengths", default=",".join(str(32 * i) for i in range(1, 17)))
    parser.add_argument("--tokens", type=int, default=2048, help="batch * length, about")
    parser.add_argument("--d", type=int, default=128)
    parser.add_argument("--mode", choices=["dynamic", "automatic"], default="automatic")
    args = parser.parse_args()

    import torch

    import tccd
    from tccd import channel, config
    from tccd.v1 import tccd_pb2 as pb

    lengths = [int(x) for x in args.lengths.split(",")]
    stub = channel.connect(config.get())

    def daemon_compiles() -> int:
        return dict(stub.GetStats(pb.StatsRequest(), timeout=10).counters).get("compiles", 0)

    def sync():
        if args.device == "cuda":
            torch.cuda.synchronize()

    for phase in ("training", "inference"):
        torch._dynamo.reset()
        tccd.reset_compile_stats()
        model = build(args.d, args.device)
        eager = copy.deepcopy(model)
        compiled = torch.compile(model, backend="tccd", dynamic=True if args.mode == "dynamic" else None)
        before = daemon_compiles()
        worst = 0.0
        times = {"tccd": [], "eager": []}
        for i, t in enumerate(lengths):
            b = max(1, args.tokens // t)
            ids = torch.randint(0, 1000, (b, t), generator=torch.Generator().manual_seed(i)).to(args.device)
            for name, m in (("tccd", compiled), ("eager", eager)):
                sync()
                start = time.perf_counter()
                if phase == "training":
                    out = m(ids)
                    out.float().pow(2).mean().backward()
                else:
                    with torch.no_grad():
                        out = m(ids)
                sync()
                times[name].append(time.perf_counter() - start)
                if name == "tccd":
                    got = out.detach()
                else:
                    worst = max(worst, (got - out.detach()).abs().max().item())
            if phase == "training":
                for p, q in zip(model.parameters(), eager.parameters()):
                    worst = max(worst, (p.grad - q.grad).abs().max().item())
                    p.grad = None
                    q.grad = None
        stats = tccd.last_compile_stats()
        graphs = [s for s in stats if s["kind"] in ("forward", "inference")]
        fallbacks = [s["fallback"] for s in stats if s["fallback"]]
        # The first size pays the compiles: step times from the third size on.
        mean = {k: 1e3 * sum(v[2:]) / max(1, len(v) - 2) for k, v in times.items()}
        print(f"{phase}: {len(lengths)} lengths {lengths[0]}..{lengths[-1]}, mode {args.mode}, {args.device}: "
              f"{len(graphs)} Dynamo graphs, {daemon_compiles() - before} daemon compiles, "
              f"max |tccd - eager| {worst:.2e}, step {mean['tccd']:.1f} ms (eager {mean['eager']:.1f} ms)"
              + (f", FALLBACKS: {fallbacks}" if fallbacks else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
