"""One process of test_e2e_caching_precompile.py: torch.compile(model, backend="tccd") of the
model in $E2E_MODEL_DIR/pkgmodel.py (a file the test writes, and may change between processes),
one call, and for `train` a backward. Prints one JSON line: outputs, gradients, the tccd stats,
Dynamo's counters (graphs traced, the package's hit/miss/error) and torch's flag.

    python e2e_caching_precompile_worker.py train|infer [--save-artifacts] [--unsaved-guards]
        [--rows N] [--torch-2.11-names] [--autocast]

--save-artifacts: torch.compiler.save_cache_artifacts() after the step (torch's own way to
write Dynamo's packages, with TORCH_CACHING_PRECOMPILE=1 and without tccd's knob).
--unsaved-guards: Dynamo cannot save the frame's guards (serialize_guards raises PackageError).
--rows N: the first N rows of the input twice over (another shape than the package's guards).
--torch-2.11-names: OutputGraph.install_global as torch 2.11 has it (names not checked against
the module's globals). --autocast: the call under CPU bf16 autocast. --double: the model and
its input in float64; --freeze-fc1: fc1's weight does not require grad (the package's tensor
guards fail on either). Always reported: the guard builds during torch.compile() (a package's
load) and the guard types of the last build.
Environment: the TCCD_* of the test, TORCHINDUCTOR_CACHE_DIR (where torch keeps the packages).
"""

import json
import os
import sys

import torch

if "--unsaved-guards" in sys.argv:
    # Dynamo cannot save this frame's guards: serialize_guards raises PackageError (before
    # tccd's import, which wraps it).
    from torch._dynamo import exc
    from torch._dynamo.guards import CheckFunctionManager

    def _unsaveable(*args, **kwargs):
        raise exc.PackageError("test: these guards cannot be serialized")

    CheckFunctionManager.serialize_guards = _unsaveable

if "--torch-2.11-names" in sys.argv:
    # torch 2.11's OutputGraph.install_global: names from the process's counter only, not
    # checked against the scope (2.15 checks, unique_id_unbound_in), so that tccd's fix for it
    # applies here too.
    from torch._dynamo import bytecode_transformation
    from torch._dynamo.output_graph import OutputGraph

    del bytecode_transformation.unique_id_unbound_in

    def _install_global_2_11(self, prefix, value):
        name = bytecode_transformation.unique_id(prefix)
        self.install_global_unsafe(name, value)
        return name

    OutputGraph.install_global = _install_global_2_11

# Every guard build (CheckFunctionManager.build_guards): how many, and the last one's guard types.
from torch._dynamo.guards import CheckFunctionManager  # noqa: E402

_builds = []
_build_guards = CheckFunctionManager.build_guards


def _counting_build_guards(self, sorted_guards, *args, **kwargs):
    _builds.append(sorted(g.create_fn_name() for g in sorted_guards))
    return _build_guards(self, sorted_guards, *args, **kwargs)


CheckFunctionManager.build_guards = _counting_build_guards

import tccd  # noqa: E402

sys.path.insert(0, os.environ["E2E_MODEL_DIR"])
from pkgmodel import Model, inputs  # noqa: E402


def main():
    what = sys.argv[1]
    torch.manual_seed(0)
    model = Model()
    if "--freeze-fc1" in sys.argv:
        model.fc1.weight.requires_grad_(False)
    if "--double" in sys.argv:
        model.double()
    compiled = torch.compile(model, backend="tccd")
    load_builds = list(_builds)
    x = inputs().to(next(model.parameters()).dtype)
    if "--rows" in sys.argv:  # another batch size: the package's guards fail, Dynamo traces
        x = torch.cat([x, x])[: int(sys.argv[sys.argv.index("--rows") + 1])]
    autocast = torch.autocast("cpu", dtype=torch.bfloat16, enabled="--autocast" in sys.argv)
    if what == "train":
        with autocast:
            out = compiled(x)
        out.float().square().mean().backward()
        grads = [p.grad.tolist() if p.grad is not None else None for p in model.parameters()]
    else:
        with torch.no_grad(), autocast:
            out = compiled(x)
        grads = []
    if "--save-artifacts" in sys.argv:
        torch.compiler.save_cache_artifacts()
    from torch._dynamo.utils import counters

    print(json.dumps({
        "out": out.detach().float().tolist(),
        "grads": grads,
        "stats": [{k: s[k] for k in ("name", "kind", "aot_skipped", "dynamo_package", "fallback", "key")}
                  for s in tccd.last_compile_stats()],
        "unique_graphs": int(counters["stats"]["unique_graphs"]),
        "dynamo_cache": {k: v for k, v in counters["dynamo_cache"].items() if v},
        "caching_precompile": bool(torch._dynamo.config.caching_precompile),
        "torch": torch.__version__,
        "load_guard_builds": len(load_builds),
        "load_guard_types": {t: load_builds[-1].count(t) for t in sorted(set(load_builds[-1]))} if load_builds else {},
    }))


if __name__ == "__main__":
    main()
