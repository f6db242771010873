"""The Python wrapper of a symbolic plan's call alone, on the CPU: microseconds per call of the
callable AOTAutograd's runtime (or tccd's lean one) calls with the graph's integer inputs,
from that list to the output list, with the native run itself replaced by a stand-in that
steals the input capsules and hands back capsules of the real call's outputs (what the
runtime's tccd_plan_run_py does at the Python boundary, without running a step). Both arms
call the same stand-in, so the difference is the wrapper's: TCCD_LEAN_SYMBOLIC_ENTRY=1
(NativePlan.lean_symbolic_call) against 0 (backend._without_scalar_inputs around
NativePlan.__call__). The stand-in alone is printed too.

The model is deploy/dynamic_shapes_bench.py's block (dynamic=True, trained at a few lengths so
the lean AOT runtime takes over); its forward and backward plans are timed at the last length.

    TCCD_BINARY=build/bin/tccd PYTHONPATH=client python deploy/symbolic_wrapper_bench.py --d 64

Needs a daemon as any tccd client (TCCD_ADDRESS, or TCCD_BINARY to start one).
"""

import argparse
import os
import sys
import time
from typing import Any, Callable, Dict, List, Tuple

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class _Lib:
    """The runtime library with run_py replaced by `run_py`."""

    def __init__(self, real: Any, run_py: Callable[..., int]):
        self._real = real
        self.run_py = run_py

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


def _min_us(fn: Callable[[], Any], calls: int, reps: int) -> float:
    """The thread's CPU time per call (time.thread_time_ns: a shared machine's preemptions are
    not counted), the minimum over `reps` batches of `calls`."""
    best = float("inf")
    for _ in range(reps):
        start = time.thread_time_ns()
        for _ in range(calls):
            fn()
        best = min(best, (time.thread_time_ns() - start) / calls / 1000)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--d", type=int, default=64)
    parser.add_argument("--lengths", default="16,24,32")
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args()

    import tccd
    from tccd import backend
    from dynamic_shapes_bench import build

    wrapped: List[Tuple[Any, Any]] = []  # (plan, scalar_inputs) per _without_scalar_inputs call
    seen: Dict[int, List[Any]] = {}  # id(callable) -> the last args list it was called with
    real_wrap = backend._without_scalar_inputs

    def spy(plan: Any, scalar_inputs: Any) -> Any:
        call = real_wrap(plan, scalar_inputs)
        wrapped.append((plan, scalar_inputs))

        def recording(call_args: List[Any]) -> Any:
            seen[id(recording)] = list(call_args)
            return call(call_args)

        recording._boxed_call = True  # type: ignore[attr-defined]
        recording.plan = getattr(call, "plan", plan)  # type: ignore[attr-defined]
        recording.index = len(wrapped) - 1  # type: ignore[attr-defined]
        _recorders.append(recording)
        return recording

    _recorders: List[Any] = []
    backend._without_scalar_inputs = spy
    torch.manual_seed(0)
    model = build(args.d, "cpu")
    compiled = torch.compile(model, backend="tccd", dynamic=True)
    for length in [int(x) for x in args.lengths.split(",")] * 2:
        ids = torch.randint(0, 1000, (args.batch, length))
        compiled(ids).float().pow(2).mean().backward()
    backend._without_scalar_inputs = real_wrap
    stats = tccd.last_compile_stats()
    if any(s.get("fallback") for s in stats):
        print("fallback:", [s.get("fallback") for s in stats])
        return 1

    print(f"symbolic plan wrappers, CPU, d {args.d}, thread CPU time, min over {args.reps} x {args.calls} calls (the arms alternating), us per call")
    print("graph                 inputs outputs   stand-in  old wrapper  lean  (wrapper: minus the stand-in)")
    to_capsules = torch._C._aoti.unsafe_alloc_void_ptrs_from_tensors
    steal = torch._C._aoti.alloc_tensors_by_stealing_from_void_ptrs
    for recording in _recorders:
        call_args = seen.get(id(recording))
        if call_args is None:
            continue
        plan, scalar_inputs = wrapped[recording.index]
        target = getattr(plan, "plan", plan)
        if not hasattr(target, "_lib"):
            print(f"{getattr(target, 'name', '?')}: not a native plan")
            continue
        outputs = real_wrap(target, scalar_inputs)(list(call_args))
        ref_outputs = [o for o in outputs if isinstance(o, torch.Tensor)]

        def stand_in(handle: Any, capsules: List[Any], out: List[Any], n: int, given: Any) -> int:
            steal(capsules)
            out.extend(to_capsules(ref_outputs))
            return 0

        tensors = [a for a in call_args if isinstance(a, torch.Tensor)]
        real_lib = target._lib
        target._lib = _Lib(real_lib, stand_in)
        try:
            fns = {}
            for knob in ("0", "1"):
                os.environ["TCCD_LEAN_SYMBOLIC_ENTRY"] = knob
                tccd.config.reload()
                fns[knob] = real_wrap(target, scalar_inputs)
            # The arms alternate rep by rep (a loaded machine's load moves between whole runs).
            arms = {"0": float("inf"), "1": float("inf")}
            alone = float("inf")
            for _ in range(args.reps):
                for knob, fn in fns.items():
                    arms[knob] = min(arms[knob], _min_us(lambda: fn(list(call_args)), args.calls, 1))
                alone = min(alone, _min_us(lambda: stand_in(None, to_capsules(tensors), [], 0, None),
                                           args.calls, 1))
        finally:
            target._lib = real_lib
        print(f"{target.name:20s} {len(call_args):7d} {len(outputs):7d} {alone:10.2f} {arms['0']:12.2f} "
              f"{arms['1']:5.2f}  ({arms['0'] - alone:.2f} -> {arms['1'] - alone:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
