"""cuda_host_torch_check.py DIR: a generated kernels_cuda.so driven the way the tccd client
drives it: ctypes, PyTorch tensors (their data_ptr() and strides in the iteration space, expand()
giving stride 0 to broadcast inputs), torch.cuda.current_stream().cuda_stream, and capture with
torch.cuda.graph. DIR holds the .so written by cuda_host_gpu_gen (kernels:
cuda_host_gpu_cases.h). Not a CTest test: it needs a GPU and PyTorch. Prints PASS/FAIL; exit
status 0 on PASS.
"""

import ctypes
import sys
import time

import torch

failures = 0


def report(name, ok, detail=""):
    global failures
    print(f"{'ok  ' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}", flush=True)
    failures += 0 if ok else 1


def main(directory):
    lib = ctypes.CDLL(f"{directory}/kernels_cuda.so")
    lib.tccd_cuda_init.restype = ctypes.c_int
    lib.tccd_cuda_last_error.restype = ctypes.c_char_p

    def last_error():
        return lib.tccd_cuda_last_error().decode()

    def call(name, inputs, outputs, shape):
        """One NativeCall step: data = inputs then outputs, strides in `shape` space."""
        views = [t.expand(shape) for t in inputs] + list(outputs)
        data = (ctypes.c_void_p * len(views))(*[v.data_ptr() for v in views])
        strides = (ctypes.c_int64 * (len(views) * len(shape)))(
            *[s for v in views for s in v.stride()])
        fn = getattr(lib, name)
        fn.restype = ctypes.c_int
        fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        return fn(data, strides, ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))

    device = torch.device("cuda")
    torch.empty(1, device=device)  # the client calls init once CUDA is up on the device
    rc = lib.tccd_cuda_init()
    report("tccd_cuda_init", rc == 0, "" if rc == 0 else last_error())
    if rc != 0:
        return

    def relu_case(label, broadcast_c, stream=None):
        shape = (257, 129)
        a, b = torch.randn(shape, device=device), torch.randn(shape, device=device)
        c = torch.randn((129,) if broadcast_c else shape, device=device)
        out = torch.empty(shape, device=device)
        if stream is not None:
            stream.wait_stream(torch.cuda.current_stream())  # the inputs were made there
        with torch.cuda.stream(stream or torch.cuda.current_stream()):
            rc = call("relu", [a, b, c], [out], shape)
        torch.cuda.synchronize()
        ok = rc == 0 and torch.allclose(out, torch.relu(a * b + c), rtol=1e-5, atol=1e-5)
        report(label, ok, last_error() if rc else "")

    relu_case("relu, dense, default stream", False)
    relu_case("relu, c broadcast (expand: stride 0)", True)
    relu_case("relu, side stream", False, torch.cuda.Stream())

    x = torch.randn((1000, 37), device=device)
    y = torch.empty((1000, 37), device=device, dtype=torch.bfloat16)
    rc = call("cast_bf16", [x], [y], (1000, 37))
    torch.cuda.synchronize()
    report("cast_bf16 equals .to(torch.bfloat16)", rc == 0 and torch.equal(y, x.to(torch.bfloat16)))

    at, b = torch.randn((200, 300), device=device), torch.randn((300, 200), device=device)
    out = torch.empty((300, 200), device=device)
    rc = call("add_t", [at.t(), b], [out], (300, 200))
    torch.cuda.synchronize()
    report("add_t with a transposed view", rc == 0 and torch.equal(out, at.t() + b))

    # Capture one step into a CUDA graph, then replay it on new input values.
    shape = (257, 129)
    a, b = torch.randn(shape, device=device), torch.randn(shape, device=device)
    c = torch.randn((129,), device=device)
    out = torch.zeros(shape, device=device)
    graph = torch.cuda.CUDAGraph()
    torch.cuda.synchronize()
    with torch.cuda.graph(graph):
        rc = call("relu", [a, b, c], [out], shape)
    torch.cuda.synchronize()
    untouched = bool((out == 0).all())
    a.copy_(torch.randn(shape, device=device))
    graph.replay()
    torch.cuda.synchronize()
    ok = rc == 0 and untouched and torch.allclose(out, torch.relu(a * b + c), rtol=1e-5, atol=1e-5)
    report("relu captured by torch.cuda.graph, replayed on new inputs", ok,
           last_error() if rc else f"output untouched before replay: {untouched}")

    # Host cost of one step through ctypes, as the client pays it (argument marshalling included).
    a, b, c, out = (torch.randn(shape, device=device) for _ in range(4))
    for _ in range(100):
        call("relu", [a, b, c], [out], shape)
    torch.cuda.synchronize()
    n = 5000
    start = time.perf_counter()
    for _ in range(n):
        call("relu", [a, b, c], [out], shape)
    elapsed = (time.perf_counter() - start) / n * 1e6
    torch.cuda.synchronize()
    report("ctypes call overhead", True, f"{elapsed:.1f} us per step")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} DIR")
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}", flush=True)
    main(sys.argv[1])
    print("PASS" if failures == 0 else "FAIL")
    sys.exit(0 if failures == 0 else 1)
