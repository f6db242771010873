"""NVRTC time of one graph's CUDA kernels: one program for all (what tccd does) against one
program per kernel (serial total and on N threads), with tccd's flags, and the cost of the shared
preamble alone. Input: a kernels.cu that the daemon dumped (TCCD_DUMP_DIR=dir, CUDA target).

    python deploy/nvrtc_split_bench.py DIR/kernels.cu [--arch sm_90] [--threads N] [--repeat 3] \\
        [--rdc] [--flags=-minimal --flags=--ptxas-options=-O1 ...] [--drop-strided]

--flags and --drop-strided compare variants with tccd's own flags, paired per kernel. Times are
thread CPU time; "PTX only" (virtual arch) splits a kernel's time into front end + NVVM and ptxas.

--processes N: also compile the per-kernel programs on N processes (each its own NVRTC, started
before the clock) and print that wall beside the N-thread one: whether NVRTC compiles of one
process scale with threads as separate processes do (tccd compiles a graph's kernels on threads
of one worker process).

--makespan 8,16,32,64: the graph's machine-code wall on that many free threads, from the measured
per-kernel times (list scheduling, as the daemon's compile threads take kernels): in first-use
order (the dump's order; TCCD_LONGEST_KERNELS_FIRST=0), longest source first (the daemon's
default, cuda_kernel_objects.h KernelCompileOrder) and longest time first (the ideal).

Per-kernel programs are the preamble (everything before the first "namespace tccd_kernel_")
plus one kernel's section. With --rdc the per-kernel programs are relocatable (-rdc=true) and
the cubins are linked into one with nvJitLink (its time printed too): the shape a per-kernel
cache needs to keep one cubin per graph. NVRTC releases the GIL, so threads run in parallel.
"""

import argparse
import concurrent.futures
import ctypes
import os
import re
import time


def load(name_candidates):
    for n in name_candidates:
        try:
            return ctypes.CDLL(n)
        except OSError:
            continue
    raise SystemExit(f"cannot load any of {name_candidates}")


NVRTC = load(["libnvrtc.so.13", "/usr/local/cuda/lib64/libnvrtc.so.13", "libnvrtc.so"])


def nvrtc_compile(source: str, arch: str, rdc: bool = False, extra=()) -> bytes:
    """The cubin (PTX when `arch` is virtual, compute_NN: front end and NVVM without ptxas)."""
    prog = ctypes.c_void_p()
    src = source.encode()
    assert NVRTC.nvrtcCreateProgram(ctypes.byref(prog), src, b"k.cu", 0, None, None) == 0
    opts = [f"--gpu-architecture={arch}".encode(), b"-std=c++17", b"--fmad=true"] + ([b"-rdc=true"] if rdc else [])
    opts += [f.encode() for f in extra]
    arr = (ctypes.c_char_p * len(opts))(*opts)
    rc = NVRTC.nvrtcCompileProgram(prog, len(opts), arr)
    if rc != 0:
        size = ctypes.c_size_t()
        NVRTC.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        NVRTC.nvrtcGetProgramLog(prog, log)
        raise RuntimeError(log.value.decode()[:2000])
    size = ctypes.c_size_t()
    if arch.startswith("compute_"):
        NVRTC.nvrtcGetPTXSize(prog, ctypes.byref(size))
        cubin = ctypes.create_string_buffer(size.value)
        NVRTC.nvrtcGetPTX(prog, cubin)
        NVRTC.nvrtcDestroyProgram(ctypes.byref(prog))
        return cubin.raw
    NVRTC.nvrtcGetCUBINSize(prog, ctypes.byref(size))
    cubin = ctypes.create_string_buffer(size.value)
    NVRTC.nvrtcGetCUBIN(prog, cubin)
    NVRTC.nvrtcDestroyProgram(ctypes.byref(prog))
    return cubin.raw


def nvjitlink(cubins, arch: str) -> bytes:
    lib = load(["libnvJitLink.so.13", "/usr/local/cuda/lib64/libnvJitLink.so.13", "libnvJitLink.so"])
    handle = ctypes.c_void_p()
    opts = [f"-arch={arch}".encode()]
    arr = (ctypes.c_char_p * 1)(*opts)
    create = getattr(lib, "__nvJitLinkCreate_13_0", None) or lib.nvJitLinkCreate
    assert create(ctypes.byref(handle), 1, arr) == 0
    add = getattr(lib, "__nvJitLinkAddData_13_0", None) or lib.nvJitLinkAddData
    complete = getattr(lib, "__nvJitLinkComplete_13_0", None) or lib.nvJitLinkComplete
    for i, c in enumerate(cubins):
        rc = add(handle, 1, c, ctypes.c_size_t(len(c)), f"k{i}".encode())  # NVJITLINK_INPUT_CUBIN
        assert rc == 0, f"nvJitLinkAddData: {rc}"
    rc = complete(handle)
    assert rc == 0, f"nvJitLinkComplete: {rc}"
    get_size = getattr(lib, "__nvJitLinkGetLinkedCubinSize_13_0", None) or lib.nvJitLinkGetLinkedCubinSize
    get = getattr(lib, "__nvJitLinkGetLinkedCubin_13_0", None) or lib.nvJitLinkGetLinkedCubin
    size = ctypes.c_size_t()
    get_size(handle, ctypes.byref(size))
    out = ctypes.create_string_buffer(size.value)
    get(handle, out)
    return out.raw


def timed(fn, repeat):
    """(best ms, last result). CPU time of this thread (NVRTC compiles on the calling thread):
    on a shared machine wall time measures the other tenants as much as NVRTC."""
    best = float("inf")
    for _ in range(repeat):
        t = time.thread_time()
        out = fn()
        best = min(best, time.thread_time() - t)
    return best * 1000, out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("source")
    p.add_argument("--arch", default="sm_90")
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--rdc", action="store_true")
    p.add_argument("--drop-strided", action="store_true",
                   help="also time every program without its _strided entry point (paired)")
    p.add_argument("--processes", type=int, default=0,
                   help="also time the per-kernel programs on this many processes (0: not)")
    p.add_argument("--makespan", default="",
                   help="comma-separated thread counts: simulated machine-code wall per kernel order")
    p.add_argument("--flags", action="append", default=[],
                   help="a variant: extra NVRTC flags (space-separated) for the per-kernel programs, "
                        "compared with tccd's own; repeat for more variants")
    a = p.parse_args()
    text = open(a.source).read()
    # Since per-kernel objects the dump holds one complete program per compiled kernel, each with
    # its own preamble (the helpers its kernel uses): compile those as they are. An older dump is
    # one program: split it into the shared preamble plus one kernel's section each.
    headers = [m.start() for m in re.finditer(r"^// Generated by tccd's CUDA backend", text, re.M)]
    if len(headers) > 1:
        units = [text[s:e] for s, e in zip(headers, headers[1:] + [len(text)])]
        sizes = sorted(len(u[: re.search(r"^namespace tccd_kernel_", u, re.M).start()]) for u in units)
        print(f"{a.source}: {len(units)} per-kernel programs, {len(text)} bytes, preambles "
              f"{sizes[0]}-{sizes[-1]} bytes, arch {a.arch}, cores {os.cpu_count()}")
    else:
        starts = [m.start() for m in re.finditer(r"^namespace tccd_kernel_", text, re.M)]
        preamble = text[: starts[0]]
        units = [preamble + text[s:e] for s, e in zip(starts, starts[1:] + [len(text)])]
        print(f"{a.source}: {len(units)} kernels, {len(text)} bytes, preamble {len(preamble)} bytes, "
              f"arch {a.arch}, cores {os.cpu_count()}")
        whole_ms, _ = timed(lambda: nvrtc_compile(text, a.arch), a.repeat)
        print(f"one program, all kernels:           {whole_ms:8.1f} ms")
        pre_ms, _ = timed(lambda: nvrtc_compile(preamble + "\n__global__ void tccd_empty() {}\n", a.arch), a.repeat)
        print(f"preamble alone (+ empty kernel):    {pre_ms:8.1f} ms  (paid once per program)")
    per = []
    for u in units:
        ms, _ = timed(lambda u=u: nvrtc_compile(u, a.arch, a.rdc), a.repeat)
        per.append(ms)
    print(f"per-kernel programs, serial total:  {sum(per):8.1f} ms  (min {min(per):.1f}, median "
          f"{sorted(per)[len(per) // 2]:.1f}, max {max(per):.1f} ms per kernel{', -rdc' if a.rdc else ''})")
    if a.makespan:
        first = list(range(len(units)))
        orders = [("first-use", first), ("longest source first", sorted(first, key=lambda i: -len(units[i]))),
                  ("longest time first", sorted(first, key=lambda i: -per[i]))]
        for p_threads in (int(x) for x in a.makespan.split(",")):
            cells = ", ".join(f"{name} {makespan(per, order, p_threads):.0f}" for name, order in orders)
            print(f"machine code on {p_threads:3d} free threads (ms): {cells}")
    with concurrent.futures.ThreadPoolExecutor(a.threads) as pool:
        t = time.perf_counter()
        cubins = list(pool.map(lambda u: nvrtc_compile(u, a.arch, a.rdc), units))
        par_ms = (time.perf_counter() - t) * 1000
    print(f"per-kernel programs, {a.threads} threads wall: {par_ms:8.1f} ms")
    if a.processes:
        import multiprocessing

        with concurrent.futures.ProcessPoolExecutor(
                a.processes, mp_context=multiprocessing.get_context("spawn")) as pool:
            list(pool.map(_warm_process, [a.arch] * a.processes))  # every process up, NVRTC loaded
            t = time.perf_counter()
            list(pool.map(_compile_in_process, [(u, a.arch, a.rdc) for u in units]))
            proc_ms = (time.perf_counter() - t) * 1000
        print(f"per-kernel programs, {a.processes} processes wall: {proc_ms:8.1f} ms "
              f"({a.threads} threads: {par_ms:.1f} ms)")
    if a.rdc:
        link_ms, linked = timed(lambda: nvjitlink(cubins, a.arch), a.repeat)
        print(f"nvJitLink of {len(cubins)} relocatable cubins:  {link_ms:8.1f} ms -> {len(linked)} bytes")
    # Where a kernel's time goes: PTX for the virtual arch is the front end and NVVM alone;
    # the rest of the cubin's time is ptxas.
    virtual = a.arch.replace("sm_", "compute_")
    ptx = [timed(lambda u=u: nvrtc_compile(u, virtual, a.rdc), a.repeat)[0] for u in units]
    print(f"per-kernel PTX only ({virtual}):    {sum(ptx):8.1f} ms  (front end + NVVM; ptxas is the "
          f"other {sum(per) - sum(ptx):.1f} ms)")
    # Variants are timed paired with tccd's flags, kernel by kernel and interleaved, so that the
    # other tenants of a shared machine weigh on both alike.
    variants = [(f"flags {v!r}", v.split(), None) for v in a.flags]
    if a.drop_strided:
        variants.append(("without the _strided entries", [], drop_strided))
    for label, extra, edit in variants:
        ours = theirs = 0.0
        try:
            for u in units:
                ours += timed(lambda: nvrtc_compile(u, a.arch, a.rdc), a.repeat)[0]
                v = edit(u) if edit else u
                theirs += timed(lambda: nvrtc_compile(v, a.arch, a.rdc, extra), a.repeat)[0]
        except RuntimeError as e:
            print(f"variant {label}: NVRTC rejected it: {str(e)[:200]}")
            continue
        print(f"variant {label:32s} {theirs:8.1f} ms against {ours:8.1f} ms with tccd's flags, paired "
              f"({100 * theirs / ours:.0f}%)")


def _warm_process(arch: str) -> int:
    """Run in each pool process before the clock starts: NVRTC loaded and used once."""
    nvrtc_compile("__global__ void tccd_warm() {}\n", arch)
    return os.getpid()


def _compile_in_process(job) -> int:
    source, arch, rdc = job
    return len(nvrtc_compile(source, arch, rdc))


def makespan(times, order, threads: int) -> float:
    """When the last kernel is done if `threads` threads take kernels in `order`, each as soon as
    it is free (the daemon's compile pool), kernel i taking times[i]."""
    import heapq

    free = [0.0] * threads
    end = 0.0
    for i in order:
        t = heapq.heappop(free) + times[i]
        end = max(end, t)
        heapq.heappush(free, t)
    return end


def drop_strided(program: str) -> str:
    """The program without its <kernel>_strided entry point (the one taking run-time strides)."""
    m = re.search(r'^extern "C" __global__ [^\n]*\n\w+_strided\(', program, re.M)
    if not m:
        return program
    depth = 0
    for j in range(program.index("{", m.end()), len(program)):
        depth += {"{": 1, "}": -1}.get(program[j], 0)
        if depth == 0:
            return program[: m.start()] + program[j + 1 :]
    return program


if __name__ == "__main__":
    main()
