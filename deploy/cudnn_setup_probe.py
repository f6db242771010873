"""Where a zoo model's first convolution calls go, thread by thread (issue 11; README "Warm
start: cuDNN's set-up across threads").

The first call of each convolution shape pays cuDNN's set-up inside ATen (the op graph, the
engine heuristics, the execution plan's build, for some engines a kernel compiled at run time,
the lazy load of its kernels): ConvNeXt-T's first forward call spent 0.78-1.37 s of its
convolutions that way on the H200, its first backward 2.1 s. ATen keeps the built plans in a
`thread_local` cache (aten/src/ATen/native/cudnn/Conv_v8.cpp), so which part a warm-up on
another thread can take off the step's thread is a question of what else is cached where
(cuDNN's own state, CUDA's lazily loaded modules are per process). Three questions, one process
per model:

  0. one small convolution (a shape the model does not have) on a thread that then ends: the
     process's first cuDNN use (library and handle set-up); ATen's handle pool hands a handle
     back when its thread ends, so the next thread to need one reuses it;
  1. per distinct call, the first call's host ms on a fresh thread (thread B), forward calls;
  2. the same forward calls then on the main thread: if they are cheap there, the set-up (or
     most of it) is shared by the process and a warm-up on a background thread can take it off
     the step (TCCD_CONV_WARMUP_FORWARD); if they cost what B paid, it cannot;
  3. the distinct backward calls on one fresh thread (C, one after the other), then the same
     calls split over two more fresh threads (D, E) at once: the wall time against C's says
     whether two threads' set-ups run side by side or serialise (session 12's A/B suggested
     they slowed each other).

The calls are the model's own (a trace on the meta device of its bf16 training step, the input
channels-last as tccd lays out 16-bit convolutions' activations on CUDA); scratch tensors are
zeros on a stream per thread; each call is timed on the host to the end of its stream's work.

    python3 deploy/cudnn_setup_probe.py --model convnext [--batch 8] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from typing import Any, Dict, List, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def trace_calls(model_name: str, batch: int, size: int) -> Tuple[List[tuple], List[tuple]]:
    """The model's distinct forward convolution and convolution_backward calls, as
    (op, tensor specs (sizes, strides, dtype) or None, other arguments)."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    import zoo_benchmark as zoo

    model, _, _ = zoo.build_model(model_name, False, False)
    model = model.to(device="meta", dtype=torch.bfloat16).train(True)
    x = torch.empty(batch, 3, size, size, device="meta", dtype=torch.bfloat16).to(memory_format=torch.channels_last)
    ops = {torch.ops.aten.convolution.default: 3, torch.ops.aten.convolution_backward.default: 3}
    seen: Dict[Any, List[tuple]] = {op: [] for op in ops}

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func in ops:
                n = ops[func]
                specs = tuple(None if a is None else (tuple(a.shape), tuple(a.stride()), a.dtype) for a in args[:n])
                rest = tuple(tuple(v) if isinstance(v, (list, tuple)) else v for v in args[n:])
                key = (func, specs, rest)
                if key not in seen[func]:
                    seen[func].append(key)
            return func(*args, **(kwargs or {}))

    with Record():
        out = model(x)
        out.float().sum().backward()
    return seen[torch.ops.aten.convolution.default], seen[torch.ops.aten.convolution_backward.default]


def _make(spec, device):
    import torch

    if spec is None:
        return None
    sizes, strides, dtype = spec
    extent = 1 + sum((n - 1) * s for n, s in zip(sizes, strides)) if all(sizes) else 0
    return torch.zeros(extent, dtype=dtype, device=device).as_strided(sizes, strides)


def run_calls(calls: List[tuple], device, out: List[float]) -> None:
    """Runs each call once on this thread, on a stream of its own; appends each call's host ms
    (call plus its stream's work)."""
    import contextlib

    import torch

    stream = torch.cuda.Stream(device) if device.type == "cuda" else None
    with (torch.cuda.stream(stream) if stream else contextlib.nullcontext()), torch.no_grad():
        for op, specs, rest in calls:
            args = [_make(s, device) for s in specs]
            t0 = time.perf_counter()
            op(*args, *rest)
            if stream:
                stream.synchronize()
            out.append((time.perf_counter() - t0) * 1e3)


def on_thread(calls: List[tuple], device) -> Tuple[List[float], float]:
    times: List[float] = []
    t0 = time.perf_counter()
    t = threading.Thread(target=run_calls, args=(calls, device, times))
    t.start()
    t.join()
    return times, (time.perf_counter() - t0) * 1e3


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="convnext")
    p.add_argument("--batch", type=int, default=8, help="the zoo's train-small vision batch")
    p.add_argument("--size", type=int, default=224)
    p.add_argument("--json", help="also write the results here")
    p.add_argument("--device", default="cuda", help="cpu: the mechanics only (tests)")
    a = p.parse_args(argv)

    t0 = time.perf_counter()
    fwd, bwd = trace_calls(a.model, a.batch, a.size)
    trace_s = time.perf_counter() - t0
    import torch

    device = torch.device("cuda", torch.cuda.current_device()) if a.device == "cuda" else torch.device("cpu")
    torch.zeros(1, device=device)  # the context, outside every timing
    if device.type == "cuda":
        torch.cuda.synchronize()
    gpu = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    res: Dict[str, Any] = {"model": a.model, "batch": a.batch, "gpu": gpu,
                           "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
                           "forward_calls": len(fwd), "backward_calls": len(bwd), "trace_s": round(trace_s, 2)}
    # 1. forward calls on a fresh thread; 2. the same on the main thread.
    bf16 = torch.bfloat16
    first = [(torch.ops.aten.convolution.default,
              (((1, 5, 9, 9), (405, 1, 45, 5), bf16), ((5, 5, 3, 3), (45, 1, 15, 5), bf16), None),
              ((1, 1), (0, 0), (1, 1), False, (0, 0), 1))]
    res["first_cudnn_use_ms"], _ = on_thread(first, device)
    res["fwd_thread_b_ms"], res["fwd_thread_b_wall_ms"] = on_thread(fwd, device)
    main_times: List[float] = []
    t1 = time.perf_counter()
    run_calls(fwd, device, main_times)
    res["fwd_main_ms"], res["fwd_main_wall_ms"] = main_times, (time.perf_counter() - t1) * 1e3
    again: List[float] = []
    run_calls(fwd, device, again)
    res["fwd_main_again_ms"] = again
    # 3. backward calls on one fresh thread, then split over two fresh threads at once.
    res["bwd_thread_c_ms"], res["bwd_thread_c_wall_ms"] = on_thread(bwd, device)
    d_times: List[float] = []
    e_times: List[float] = []
    t2 = time.perf_counter()
    td = threading.Thread(target=run_calls, args=(bwd[0::2], device, d_times))
    te = threading.Thread(target=run_calls, args=(bwd[1::2], device, e_times))
    td.start()
    te.start()
    td.join()
    te.join()
    res["bwd_two_threads_wall_ms"] = (time.perf_counter() - t2) * 1e3
    res["bwd_thread_d_ms"], res["bwd_thread_e_ms"] = d_times, e_times

    def total(key):
        return round(sum(res[key]), 1)

    print(f"{a.model}: {res['gpu']}, torch {res['torch']}, cuDNN {res['cudnn']}; {len(fwd)} distinct forward "
          f"convolutions, {len(bwd)} distinct convolution backwards")
    print(f"  first cuDNN use (a thread that ends): {total('first_cudnn_use_ms'):8.1f} ms")
    print(f"  forward, fresh thread B:          {total('fwd_thread_b_ms'):8.1f} ms  per call "
          + " ".join(f"{t:.1f}" for t in res["fwd_thread_b_ms"]))
    print(f"  forward, then main thread:        {total('fwd_main_ms'):8.1f} ms  per call "
          + " ".join(f"{t:.1f}" for t in res["fwd_main_ms"]))
    print(f"  forward, main thread again:       {total('fwd_main_again_ms'):8.1f} ms")
    print(f"  backward, fresh thread C:         {total('bwd_thread_c_ms'):8.1f} ms  per call "
          + " ".join(f"{t:.1f}" for t in res["bwd_thread_c_ms"]))
    print(f"  backward, fresh D and E at once:  {res['bwd_two_threads_wall_ms']:8.1f} ms wall "
          f"(D {total('bwd_thread_d_ms'):.1f}, E {total('bwd_thread_e_ms'):.1f}; one thread: "
          f"{total('bwd_thread_c_ms'):.1f})")
    print(f"  shared across threads: forward main/B {total('fwd_main_ms') / max(total('fwd_thread_b_ms'), 1e-9):.2f}; "
          f"backward D+E wall / C {res['bwd_two_threads_wall_ms'] / max(total('bwd_thread_c_ms'), 1e-9):.2f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
