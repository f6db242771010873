import copy, cProfile, pstats, sys, time, io
sys.path.insert(0, "deploy")
import torch, torch._dynamo
import tccd
import dynamic_shapes_bench as bench
torch.manual_seed(0)
model = bench.build(16, "cpu", "float32")
dyn = torch.compile(copy.deepcopy(model), backend="tccd", dynamic=True)
sta = torch.compile(copy.deepcopy(model), backend="tccd", dynamic=False)
ids = {t: torch.randint(0, 1000, (max(1, 64 // t), t)) for t in (16, 32)}
for fn in (dyn, sta):
    for t in (16, 32):
        for _ in range(3):
            fn(ids[t]).float().pow(2).mean().backward()
x = ids[32]
def loop(fn, n):
    outs = []
    t0 = time.thread_time()
    for _ in range(n):
        outs.append(fn(x))
        if len(outs) > 8: outs.clear()
    return (time.thread_time() - t0) / n * 1e6
res = {"s": [], "d": []}
for r in range(11):
    res["s"].append(loop(sta, 300)); res["d"].append(loop(dyn, 300))
print("fw thread-CPU us per call, min of 11 x 300: static %.1f dynamic %.1f" % (min(res["s"]), min(res["d"])))
if len(sys.argv) > 1:
    for name, fn in (("static", sta), ("dynamic", dyn)):
        pr = cProfile.Profile(); pr.enable(); loop(fn, 3000); pr.disable()
        s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(25); print(name); print(s.getvalue()[:6000])
