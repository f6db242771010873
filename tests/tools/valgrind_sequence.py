#!/usr/bin/env python3
"""Issue 12's sequence under valgrind: a CUDA-target compile, then a CPU compile, in one daemon.

The original bug: under memcheck, the CPU compile after a CUDA one wrote into memory the previous
in-process LLD link had freed (lld::elf::Writer::finalizeSections via LinkSharedObjects). This
starts build/bin/tccd under `valgrind --tool=memcheck` (compile workers traced too), sends the two
compiles (a small pointwise graph from torch, captured the way the client does), checks both
answers and stops the daemon with SIGTERM; then prints memcheck's error count per process and
every error whose stack names tccd code. Slow (minutes: LLVM and NVRTC under valgrind), so not
in CI.

    .venv/bin/python tests/tools/valgrind_sequence.py                 # both modes
    .venv/bin/python tests/tools/valgrind_sequence.py --mode in-process
    .venv/bin/python tests/tools/valgrind_sequence.py --mode workers --keep

Exit status 0 when every compile succeeded, the daemon exited 0, and memcheck reported 0 errors
in any process (valgrind logs: <tmp>/vg.<pid>.log, kept with --keep).
"""

import argparse
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "python"))


def requests():
    import torch
    from tccd.serialize import build_request
    from tccd.v1 import tccd_pb2 as pb
    from tccd_testlib import capture_aot_graphs

    def f(x, y):
        return torch.tanh(x * y) - 7

    (_, gm, inputs), = capture_aot_graphs(f, torch.randn(3, 12), torch.randn(12))
    cpu = build_request(gm, inputs, graph_name="valgrind-cpu", job_id="valgrind")
    cuda = pb.CompileRequest()
    cuda.CopyFrom(cpu)
    cuda.graph_name = "valgrind-cuda"
    for meta in list(cuda.graph.inputs) + [m for n in cuda.graph.nodes for m in n.outputs]:
        meta.device.type = pb.CUDA
        meta.device.index = 0
    cuda.target.Clear()
    cuda.target.device_type = pb.CUDA
    cuda.target.cuda_device_name = "NVIDIA H100 80GB HBM3"
    cuda.target.cuda_cc_major, cuda.target.cuda_cc_minor = 9, 0
    return cuda, cpu


def run(mode: str, binary: Path, keep: bool) -> bool:
    from tccd import channel
    from tccd.v1 import tccd_pb2 as pb
    from tccd.v1 import tccd_pb2_grpc as pb_grpc
    import grpc

    root = tempfile.mkdtemp(prefix="tccd-vg-")
    address = f"unix:{root}/tccd.sock"
    args = [
        "valgrind", "--tool=memcheck", "--trace-children=yes", "--leak-check=no", "--error-exitcode=99",
        "--num-callers=30", f"--log-file={root}/vg.%p.log",
        str(binary), "--listen", address, "--cache-dir", f"{root}/db",
        "--compile-threads", "1", "--request-deadline-s", "3600",
    ]
    if mode == "in-process":
        args += ["--compile-in-process=true"]
    else:
        # Valgrind needs far more address space and time than the defaults allow a worker.
        args += ["--compile-time-limit-s", "1800", "--compile-memory-limit-mb", "65536"]
    # Workers are spawned from /proc/self/exe, which under valgrind is valgrind's own tool.
    env = dict(os.environ, TCCD_KERNEL_THREADS="1", TCCD_WORKER_EXECUTABLE=str(binary.resolve()))
    print(f"== {mode}: {' '.join(args)}", flush=True)
    with open(f"{root}/tccd.log", "wb") as log:
        proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env)
    ok = True
    try:
        deadline = time.monotonic() + 300
        while channel.ping(address, timeout_s=2.0) is not None:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"tccd under valgrind did not start (exit {proc.poll()})")
            time.sleep(0.5)
        stub = pb_grpc.TccdStub(grpc.insecure_channel(address))
        for request in requests():
            start = time.monotonic()
            response = stub.Compile(request, timeout=1800)
            kinds = sorted(pb.ArtifactKind.Name(a.kind) for a in response.manifest.artifacts)
            print(f"{request.graph_name}: ok in {time.monotonic() - start:.0f} s, artifacts {kinds}", flush=True)
    except Exception as e:  # noqa: BLE001 - reported, then the daemon is stopped and judged
        print(f"{mode}: FAILED: {e}", flush=True)
        ok = False
    alive = proc.poll() is None
    proc.send_signal(signal.SIGTERM)
    try:
        code = proc.wait(timeout=600)
    except subprocess.TimeoutExpired:
        proc.kill()
        code = proc.wait()
    print(f"daemon alive after the sequence: {alive}; exit status {code}")
    ok = ok and alive and code == 0
    for path in sorted(glob.glob(f"{root}/vg.*.log")):
        text = Path(path).read_text(errors="replace")
        command = re.search(r"Command: (.*)", text)
        summary = re.search(r"ERROR SUMMARY: (\d+) errors from (\d+) contexts", text)
        errors = int(summary.group(1)) if summary else -1
        ours = [block for block in text.split("==\n") if "tccd::" in block and re.search(r"(Invalid|uninitialised|Mismatched|overlap)", block)]
        print(f"  {Path(path).name}: {command.group(1)[:60] if command else '?'}: {errors} errors"
              f"{'' if summary else ' (no summary: process killed?)'}, {len(ours)} naming tccd code")
        for block in ours[:3]:
            print(block[:3000])
        if errors != 0:
            ok = False
    print(f"== {mode}: {'PASS' if ok else 'FAIL'} (logs in {root})" if keep or not ok else f"== {mode}: PASS")
    if ok and not keep:
        shutil.rmtree(root, ignore_errors=True)
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=["in-process", "workers", "both"], default="both")
    parser.add_argument("--binary", default=str(ROOT / "build" / "bin" / "tccd"))
    parser.add_argument("--keep", action="store_true", help="keep the temp dir with the valgrind logs")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind is not installed")
        return 2
    modes = ["in-process", "workers"] if args.mode == "both" else [args.mode]
    results = [run(mode, Path(args.binary), args.keep) for mode in modes]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
