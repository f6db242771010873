"""One process of test_e2e_precompile.py: `save PATH` aot-compiles a small training function
with tccd and saves it; `load PATH` loads it (a new process) and runs it. Both print one JSON
line: outputs, gradients and the tccd stats of this process.

Environment: the TCCD_* of the test (daemon address, a local cache dir of this process).
"""

import json
import sys

import torch

import tccd


def step(x, w1, b1, w2):
    h = torch.nn.functional.gelu(x @ w1 + b1)
    return torch.tanh(h @ w2) * 2 + 1


def inputs():
    torch.manual_seed(0)
    x = torch.randn(8, 16)
    w1 = torch.randn(16, 32, requires_grad=True)
    b1 = torch.randn(32, requires_grad=True)
    w2 = torch.randn(32, 4, requires_grad=True)
    return x, w1, b1, w2


def run(fn):
    args = inputs()
    out = fn(*args)
    out.square().mean().backward()
    return {"out": out.detach().tolist(), "grads": [a.grad.tolist() for a in args[1:]]}


def main():
    what, path = sys.argv[1], sys.argv[2]
    if what == "save":
        torch._dynamo.config.enable_aot_compile = True  # torch 2.11's default is False
        compiled = torch.compile(step, backend="tccd", fullgraph=True, dynamic=False)
        aot = compiled.aot_compile((inputs(), {}))
        aot.save_compiled_function(path)
        fn = aot
    else:
        with open(path, "rb") as f:
            fn = torch.compiler.load_compiled_function(f)
    result = run(fn)
    result["stats"] = [{k: s[k] for k in ("name", "kind", "aot_skipped", "local_hit", "cache_hit", "fallback", "key")}
                       for s in tccd.last_compile_stats()]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
