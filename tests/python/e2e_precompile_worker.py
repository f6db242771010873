"""One process of test_e2e_precompile.py: `save PATH` aot-compiles a small training function
with tccd and saves it; `load PATH` loads it (a new process) and runs it. Both print one JSON
line: outputs, gradients and the tccd stats of this process.

Environment: the TCCD_* of the test (daemon address, a local cache dir of this process).
"""

import collections
import json
import sys

import torch

import tccd
import tccd.precompile


def step(x, w1, b1, w2):
    h = torch.nn.functional.gelu(x @ w1 + b1)
    return torch.tanh(h @ w2) * 2 + 1


class Activation(torch.nn.Module):
    """Keeps the function it applies as an attribute, as transformers' GELUActivation does:
    Dynamo guards that builtin by identity (ID_MATCH), which it cannot save."""

    def __init__(self):
        super().__init__()
        self.act = torch.nn.functional.gelu

    def forward(self, x):
        return self.act(x)


def step_with_activation(activation):
    """step with its activation a module the function closes over (as the zoo's functional
    training step closes over the model, external data of the saved file): the guard is on an
    attribute of that module."""

    def fn(x, w1, b1, w2):
        h = activation(x @ w1 + b1)
        return torch.tanh(h @ w2) * 2 + 1

    return fn


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
    activation = Activation()
    external = {"external_data": {"activation": activation}} if "activation" in what else {}
    if what.startswith("save"):
        # save: step; save-activation: step_with_activation, with tccd's guard filter.
        torch._dynamo.config.enable_aot_compile = True  # torch 2.11's default is False
        # save-lean: step with the zoo's filter (lean_guards).
        fn = step_with_activation(activation) if "activation" in what else step
        options = {"guard_filter_fn": tccd.precompile.serializable_guards} if "activation" in what else None
        kept_types = collections.Counter()
        if what == "save-lean":
            def counting(entries):
                kept = tccd.precompile.lean_guards(entries)
                kept_types.update(e.guard_type for e, k in zip(entries, kept) if k)
                return kept

            options = {"guard_filter_fn": counting}
        compiled = torch.compile(fn, backend="tccd", fullgraph=True, dynamic=False, options=options)
        aot = compiled.aot_compile((inputs(), {}))
        aot.save_compiled_function(path, **external)
        fn = aot
        if what == "save-lean":  # the saving process runs the same guards: a mismatch is refused here too
            x, w1, b1, w2 = inputs()
            try:
                fn(x, w1.detach().double().requires_grad_(), b1, w2)
                refused_in_saver = None
            except Exception as e:
                refused_in_saver = f"{type(e).__name__}: {e}"
    else:
        with open(path, "rb") as f:
            fn = torch.compiler.load_compiled_function(f, **external)
    if what == "load-mismatch":
        # Parameters unlike the saved ones: each call must be refused, never computed.
        refused = {}
        for case in ("float64", "shape", "frozen", "meta", "stride", "inference", "grad_x"):
            x, w1, b1, w2 = inputs()
            if case == "float64":
                w1 = w1.detach().double().requires_grad_()
            elif case == "shape":
                b1 = b1.detach().reshape(1, 32).requires_grad_()
            elif case == "frozen":
                w1 = w1.detach()
            elif case == "meta":  # another device than the saved one (CPU)
                w2 = w2.detach().to("meta").requires_grad_()
            elif case == "stride":  # the saved sizes, other strides
                w1 = w1.detach().t().contiguous().t().requires_grad_()
            elif case == "inference":  # other dispatch keys: an inference-mode tensor
                with torch.inference_mode():
                    x = x.clone()
            else:  # x was saved not requiring grad
                x = x.requires_grad_()
            try:
                fn(x, w1, b1, w2)
                refused[case] = None
            except Exception as e:  # the guard failure's own type and message
                refused[case] = f"{type(e).__name__}: {e}"
    result = run(fn)
    if what == "save-lean":
        result["kept_types"] = dict(kept_types)
        result["refused_in_saver"] = refused_in_saver
    if what == "load-mismatch":
        result["refused"] = refused
    result["stats"] = [{k: s[k] for k in ("name", "kind", "aot_skipped", "local_hit", "cache_hit", "fallback", "key")}
                       for s in tccd.last_compile_stats()]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
