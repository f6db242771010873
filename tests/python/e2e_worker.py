"""A training process for the end-to-end tests: trains a model under torch.compile(backend="tccd")
and writes what happened as JSON (losses bit-exactly, parameter digests, compile stats, warnings).

    python e2e_worker.py --model mlp --steps 5 --out result.json [--state-out state.pt]

The tccd client is configured by the environment the test gives this process (TCCD_*).
"""

import argparse
import hashlib
import json
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import tccd  # noqa: E402
from torch._dynamo.utils import counters  # noqa: E402
from tccd_testlib import run_training  # noqa: E402


def digest(t: torch.Tensor) -> str:
    return hashlib.sha256(t.detach().contiguous().numpy().tobytes()).hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="mlp")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--out", required=True)
    parser.add_argument("--state-out", help="also torch.save the final state_dict here")
    args = parser.parse_args()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        losses, state = run_training(args.model, steps=args.steps, backend="tccd")
    result = {
        "losses_hex": [float(x).hex() for x in losses.tolist()],
        "losses": losses.tolist(),
        "params": {k: digest(v) for k, v in state.items()},
        "stats": tccd.last_compile_stats(),
        # Dynamo graphs handed to AOTAutograd (0 when every graph was an AOT recipe hit).
        "aot_autograd_calls": counters["aot_autograd"]["total"],
        "warnings": [
            {"category": w.category.__name__, "message": str(w.message)}
            for w in record
            if issubclass(w.category, tccd.TccdFallbackWarning)
        ],
    }
    with open(args.out, "w") as f:
        json.dump(result, f)
    if args.state_out:
        torch.save(state, args.state_out)


if __name__ == "__main__":
    main()
