"""End to end: compiles run in supervised worker processes, and the daemon survives them.

A daemon started with --enable-test-faults lets a request ask its worker to crash, hang or
allocate without bound (CompileOptions.extra["tccd_test_fault"]). Each such compile fails with
INTERNAL naming what happened (every single-flight follower gets the same answer), the worker is
replaced, and the daemon keeps compiling and serving. Without the flag the option does nothing.
"""

import concurrent.futures
import os
import shutil

import grpc
import pytest
import torch

from conftest import TCCD_BINARY, Daemon, short_tempdir
from tccd.serialize import build_request
from tccd_testlib import capture_aot_graphs


def _request(n: int, fault: str = ""):
    def f(x, y):
        return torch.tanh(x * y) - n

    (_, gm, inputs), = capture_aot_graphs(f, torch.randn(3, 5 + n), torch.randn(5 + n))
    request = build_request(gm, inputs, graph_name=f"workers-{n}", job_id="workers-test")
    if fault:
        request.options.extra["tccd_test_fault"] = fault
    return request


@pytest.fixture
def faulty_daemon():
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    root = short_tempdir("tccd-workers-")
    d = Daemon(
        TCCD_BINARY,
        root,
        extra_args=[
            "--enable-test-faults",
            "--compile-threads", "2",
            # Long enough for a real compile on a loaded 2-core CI machine; the hang still ends.
            "--compile-time-limit-s", "8",
            "--compile-memory-limit-mb", "2048",
        ],
    )
    d.start()
    yield d
    try:
        assert d.stop() == 0, d.log_tail()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _internal(d, request) -> str:
    with pytest.raises(grpc.RpcError) as e:
        d.stub().Compile(request, timeout=60)
    assert e.value.code() == grpc.StatusCode.INTERNAL, e.value.details()
    return e.value.details()


def test_a_crashing_hanging_or_exploding_compile_fails_alone_and_the_daemon_keeps_serving(faulty_daemon):
    d = faulty_daemon
    good = d.stub().Compile(_request(0), timeout=60)
    assert not good.cache_hit

    crash = _internal(d, _request(1, "crash"))
    assert "compile worker" in crash and "signal 11" in crash, crash
    hang = _internal(d, _request(2, "hang"))
    assert "time limit" in hang, hang
    # Past the memory limit: a clean RESOURCE_EXHAUSTED when the allocation that fails is a C++
    # one (then the worker exits after answering), else the worker's crash (INTERNAL).
    with pytest.raises(grpc.RpcError) as e:
        d.stub().Compile(_request(3, "alloc"), timeout=60)
    assert e.value.code() in (grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.INTERNAL)
    assert "memory" in e.value.details() or "compile worker" in e.value.details(), e.value.details()

    assert d.alive(), d.log_tail()
    assert d.stub().Compile(_request(0), timeout=60).cache_hit
    fresh = d.stub().Compile(_request(4), timeout=60)
    assert not fresh.cache_hit and fresh.manifest.artifacts
    stats = d.stats()
    # >= 1: on a loaded machine the memory-limit compile may end at the time limit instead.
    assert stats["worker_crashes"] >= 1 and stats["worker_timeouts"] >= 1, stats
    assert stats["worker_compiles"] >= 2, stats


def test_single_flight_followers_get_the_crash_answer_too(faulty_daemon):
    d = faulty_daemon
    request = _request(5, "crash")
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        futures = [pool.submit(d.stub().Compile, request, timeout=60) for _ in range(4)]
        details = []
        for f in futures:
            with pytest.raises(grpc.RpcError) as e:
                f.result()
            assert e.value.code() == grpc.StatusCode.INTERNAL
            details.append(e.value.details())
    assert all("signal 11" in x for x in details), details
    assert d.stats()["worker_crashes"] >= 1
    assert d.alive()
    # The failure is not cached: the same graph without the fault compiles.
    assert not d.stub().Compile(_request(5), timeout=60).cache_hit


def test_fault_option_is_ignored_without_the_test_flag(daemon):
    response = daemon.stub().Compile(_request(6, "crash"), timeout=60)
    assert response.manifest.artifacts
    assert daemon.alive()
    assert daemon.stats()["worker_crashes"] == 0


def test_worker_overhead_per_compile_is_small(faulty_daemon):
    """Prints the measured per-compile cost of running in a worker (request and result transfer)."""
    d = faulty_daemon
    n = 8
    for i in range(n):
        d.stub().Compile(_request(100 + i), timeout=60)
    stats = d.stats()
    mean_ms = stats["worker_overhead_us_total"] / max(1, stats["worker_compiles"]) / 1000
    print(f"compile worker overhead: {mean_ms:.3f} ms mean over {stats['worker_compiles']} compiles, "
          f"{stats['worker_spawns']} workers started")
    assert stats["worker_spawns"] <= 3, stats  # prefork, reused: no process start per compile
    assert mean_ms < 20, stats


def _on_cuda(request):
    """The request as a CUDA one (H100): CUDA target, every tensor on cuda:0. NVRTC needs no GPU."""
    from tccd.v1 import tccd_pb2 as pb

    def visit(message):
        for field, value in message.ListFields():
            if field.type != field.TYPE_MESSAGE:
                continue
            for item in [value] if hasattr(value, "ListFields") else list(value):
                if not hasattr(item, "ListFields"):  # map keys
                    continue
                if item.DESCRIPTOR.name == "Device":
                    item.type = pb.CUDA
                    item.index = 0
                else:
                    visit(item)

    visit(request.graph)
    request.target.Clear()
    request.target.device_type = pb.CUDA
    request.target.cuda_device_name = "NVIDIA H100 80GB HBM3"
    request.target.cuda_cc_major = 9
    request.target.cuda_cc_minor = 0
    return request


def test_cuda_then_cpu_compiles_in_one_daemon(daemon):
    """Issue 12's sequence (a CUDA compile, then a CPU one: LLD once crashed on the second), now
    in workers; both produce their artifacts and the daemon stays up."""
    from tccd.v1 import tccd_pb2 as pb

    cuda = daemon.stub().Compile(_on_cuda(_request(7)), timeout=120)
    kinds = {a.kind for a in cuda.manifest.artifacts}
    assert pb.CUDA_HOST_OBJECT in kinds, cuda.manifest.artifacts
    cpu = daemon.stub().Compile(_request(7), timeout=120)
    # The CPU kernels' .so (plus the native plan runtime and the graph's plan descriptor).
    cpu_kinds = {a.kind for a in cpu.manifest.artifacts}
    assert pb.CPU_SHARED_OBJECT in cpu_kinds and pb.CUDA_HOST_OBJECT not in cpu_kinds, cpu_kinds
    assert cpu.manifest.key != cuda.manifest.key
    assert daemon.alive()


def _worker_nice_values(daemon_pid: int):
    """The nice values of the daemon's compile workers (its children named tccd-compile-worker)."""
    values = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv0 = f.read().split(b"\0")[0]
        except OSError:  # gone meanwhile
            continue
        # Fields after the parenthesised command: state ppid ... (nice is field 19 of stat).
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[1]) == daemon_pid and argv0 == b"tccd-compile-worker":
            values.append(int(fields[16]))
    return values


def _logged_nice(log_text: str, graph_name: str) -> int:
    """The nice value a worker's compile thread had for `graph_name` (its "compiling graph" line)."""
    for line in log_text.splitlines():
        if "tccd-worker[" in line and f'compiling graph "{graph_name}"' in line:
            return int(line.rsplit("nice ", 1)[1].rstrip(")"))
    raise AssertionError(f"no compile line for {graph_name}: {log_text[-3000:]}")


@pytest.mark.parametrize(
    "flags, background, waited",
    [((), 10, 0), (("--compile-nice", "3"), 3, 0), (("--waited-compile-nice", "10"), 10, 10),
     (("--compile-nice", "0"), 0, 0)])
def test_prefetched_compiles_run_below_the_waited_ones(flags, background, waited):
    """A compile a client waits for (a forward) runs at --waited-compile-nice (default 0), a
    prefetched one (`background` in the request: a backward compiled ahead of its use) at
    --compile-nice (default 10): the forward's kernel threads get the cores first, and a client
    tracing its next graph keeps its core while a prefetched backward compiles. The workers
    themselves keep the daemon's priority; each compile lowers its own thread's, which its kernel
    threads inherit."""
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    root = short_tempdir("tccd-nice-")
    d = Daemon(TCCD_BINARY, root,
               extra_args=["--compile-threads", "1", "--log-level", "debug", *flags])
    d.start()
    base = os.getpriority(os.PRIO_PROCESS, d.proc.pid)
    try:
        prefetched = _request(200 + background)
        prefetched.background = True
        d.stub().Compile(prefetched, timeout=120)
        d.stub().Compile(_request(220 + waited), timeout=120)  # after it, in the same worker
        values = _worker_nice_values(d.proc.pid)
        assert values == [base] * len(values) and values, values
    finally:
        assert d.stop() == 0, d.log_tail()
    with open(d.log, encoding="utf-8", errors="replace") as f:
        text = f.read()
    shutil.rmtree(root, ignore_errors=True)
    # nice caps at 19.
    assert _logged_nice(text, f"workers-{200 + background}") == min(19, base + background)
    assert _logged_nice(text, f"workers-{220 + waited}") == min(19, base + waited)


@pytest.mark.parametrize("flag", ["--compile-nice", "--waited-compile-nice"])
def test_compile_nice_out_of_range_is_refused(flag):
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    import subprocess

    out = subprocess.run([str(TCCD_BINARY), flag, "20", "--listen", "unix:/nonexistent/x.sock"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode != 0
    assert f"{flag}=20: expected 0 (none) to 19" in out.stderr, out.stderr


@pytest.mark.parametrize("level, logged", [("debug", True), ("info", False)])
def test_workers_log_each_compiles_stages_at_debug_level(level, logged):
    """At --log-level=debug the workers' stderr (the daemon's log) names each graph they compile
    and its stage times (pipeline.cc's "compile stages"): where a cold compile's time goes on a
    GPU host, which the zoo's stages.txt collects. At other levels they stay quiet (warn)."""
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    root = short_tempdir("tccd-wlog-")
    d = Daemon(TCCD_BINARY, root, extra_args=["--compile-threads", "1", "--log-level", level])
    d.start()
    try:
        d.stub().Compile(_request(300 + logged), timeout=120)
    finally:
        assert d.stop() == 0, d.log_tail()
    with open(d.log, encoding="utf-8", errors="replace") as f:
        text = f.read()
    shutil.rmtree(root, ignore_errors=True)
    worker_lines = [line for line in text.splitlines() if "tccd-worker[" in line]
    named = any(f'compiling graph "workers-{300 + logged}"' in line for line in worker_lines)
    stages = any("compile stages: graph-passes" in line for line in worker_lines)
    assert (named, stages) == (logged, logged), text[-3000:]


def _two_kernel_request():
    """A CUDA graph of two distinct kernels (a pointwise one, a matmul, then a row reduction)."""

    def f(x, y):
        return torch.softmax(torch.tanh(x * 3) @ y + 1, dim=-1)

    (_, gm, inputs), = capture_aot_graphs(f, torch.randn(8, 33), torch.randn(33, 20))
    return _on_cuda(build_request(gm, inputs, graph_name="nvrtc-processes", job_id="workers-test"))


@pytest.mark.parametrize("knob, unit", [("1", "process(es)"), ("0", "thread(s)")])
def test_a_graphs_nvrtc_compiles_run_on_child_processes_of_the_worker(knob, unit):
    """TCCD_NVRTC_PROCESSES (default on): a compile worker compiles a graph's CUDA kernels on
    forked children instead of its threads (codegen/cuda/nvrtc_processes.h), with the same
    artifacts; the worker's debug line says which and NVRTC's time per kernel."""
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    results = {}
    for setting in (knob, "0" if knob == "1" else "1"):
        root = short_tempdir("tccd-nvproc-")
        d = Daemon(TCCD_BINARY, root, extra_args=["--compile-threads", "1", "--log-level", "debug"],
                   env={"TCCD_NVRTC_PROCESSES": setting, "TCCD_KERNEL_THREADS": "2"})
        d.start()
        try:
            response = d.stub().Compile(_two_kernel_request(), timeout=120)
        finally:
            assert d.stop() == 0, d.log_tail()
        with open(d.log, encoding="utf-8", errors="replace") as f:
            text = f.read()
        shutil.rmtree(root, ignore_errors=True)
        if "NVRTC" in text and "not found" in text:
            pytest.skip("no NVRTC here")
        results[setting] = (sorted((a.name, a.digest) for a in response.manifest.artifacts), text)
    artifacts, text = results[knob]
    lines = [line for line in text.splitlines() if "tccd-worker[" in line and "cuda backend: NVRTC 2 kernel(s) on 2 " in line]
    assert lines and unit in lines[0] and "per kernel: tccd_" in lines[0], lines or text[-3000:]
    # NVRTC set up by a trivial compile at the worker's start (TCCD_NVRTC_WARM_UP), before any
    # fork: children inherit it instead of each paying NVRTC's first compile.
    assert any("tccd-worker[" in line and "cuda backend: NVRTC warmed up in" in line
               for line in text.splitlines()), text[-3000:]
    # Byte-identical either way: the same NVRTC, sources and options.
    assert artifacts == results["0" if knob == "1" else "1"][0]


def test_nvrtc_warm_up_is_off_with_its_knob():
    """TCCD_NVRTC_WARM_UP=0: no warm-up compile at the worker's start nor before a fork (each
    forked child then sets NVRTC up itself, as in session 19's r1)."""
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    root = short_tempdir("tccd-nvwarm-")
    d = Daemon(TCCD_BINARY, root, extra_args=["--compile-threads", "1", "--log-level", "debug"],
               env={"TCCD_NVRTC_WARM_UP": "0"})
    d.start()
    try:
        d.stub().Compile(_request(400), timeout=120)  # a CPU compile: the worker is up
    finally:
        assert d.stop() == 0, d.log_tail()
    with open(d.log, encoding="utf-8", errors="replace") as f:
        text = f.read()
    shutil.rmtree(root, ignore_errors=True)
    assert "compiling graph" in text and "NVRTC warmed up" not in text, text[-3000:]
