"""One process of test_e2e_caching_precompile.py: torch.compile(model, backend="tccd") of the
model in $E2E_MODEL_DIR/pkgmodel.py (a file the test writes, and may change between processes),
one call, and for `train` a backward. Prints one JSON line: outputs, gradients, the tccd stats,
Dynamo's counters (graphs traced, the package's hit/miss/error) and torch's flag.

    python e2e_caching_precompile_worker.py train|infer [--save-artifacts] [--unsaved-guards]

--save-artifacts: torch.compiler.save_cache_artifacts() after the step (torch's own way to
write Dynamo's packages, with TORCH_CACHING_PRECOMPILE=1 and without tccd's knob).
--unsaved-guards: Dynamo cannot save the frame's guards (serialize_guards raises PackageError).
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

import tccd  # noqa: E402

sys.path.insert(0, os.environ["E2E_MODEL_DIR"])
from pkgmodel import Model, inputs  # noqa: E402


def main():
    what = sys.argv[1]
    torch.manual_seed(0)
    model = Model()
    compiled = torch.compile(model, backend="tccd")
    x = inputs()
    if what == "train":
        out = compiled(x)
        out.square().mean().backward()
        grads = [p.grad.tolist() for p in model.parameters()]
    else:
        with torch.no_grad():
            out = compiled(x)
        grads = []
    if "--save-artifacts" in sys.argv:
        torch.compiler.save_cache_artifacts()
    from torch._dynamo.utils import counters

    print(json.dumps({
        "out": out.detach().tolist(),
        "grads": grads,
        "stats": [{k: s[k] for k in ("name", "kind", "aot_skipped", "dynamo_package", "fallback", "key")}
                  for s in tccd.last_compile_stats()],
        "unique_graphs": int(counters["stats"]["unique_graphs"]),
        "dynamo_cache": {k: v for k, v in counters["dynamo_cache"].items() if v},
        "caching_precompile": bool(torch._dynamo.config.caching_precompile),
    }))


if __name__ == "__main__":
    main()
