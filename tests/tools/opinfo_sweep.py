"""OpInfo sweep: torch's OpInfo database through torch.compile, tccd against Inductor.

Every op of torch.testing._internal.common_methods_invocations.op_db that supports float32 on
the CPU runs its first few sample inputs eagerly and through torch.compile (dynamic=False) with
each backend; results are compared with torch.testing.assert_close (the op's own float32
tolerance override where it declares one, else assert_close's defaults). tccd runs with
TCCD_STRICT=1, so a graph that would fall back to eager is an error, against a private tccd this
script starts (build/bin/tccd, or --tccd-binary) on its own socket and database.

Each op runs in a worker subprocess; a worker that crashes or exceeds --timeout is killed and
replaced, and the op is recorded as `crash`/`timeout`, so one op never ends the sweep.

Per op and backend the status is one of
  pass      every sample that eager runs matched;
  mismatch  some sample ran without error and gave different numbers (a silent wrong answer,
            the worst class);
  error     some sample raised (its class, e.g. `tccd:INTERNAL`, and message are recorded);
  crash / timeout  the worker died or hung;
  skip      eager itself failed on every sample (nothing to compare).
Ops whose eager result changes with the seed (random ops) and `empty*` ops compare shapes,
dtypes and strides only.

    PYTHONPATH=client python tests/tools/opinfo_sweep.py --jobs 2 --samples 2 \\
        --out opinfo-report          # writes opinfo-report.json and opinfo-report.md
    ... --ops 'isclose|linalg\\.' --backends tccd   # a regex on op names, one backend
    ... --grad     # also compare input gradients: the backward graphs go through the backend
"""

from __future__ import annotations

import argparse
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

REPO = Path(__file__).resolve().parents[2]
STATUSES = ("pass", "mismatch", "error", "crash", "timeout", "skip")
# Ops whose output is uninitialised memory: only metadata can be compared.
_UNINITIALISED = re.compile(r"^(empty|empty_like|new_empty|new_empty_strided|empty_strided|empty_permuted)$")


# ---------------------------------------------------------------------------------------------
# Worker side: one op, one backend
# ---------------------------------------------------------------------------------------------


def _op_key(op) -> str:
    return f"{op.name}.{op.variant_test_name}" if op.variant_test_name else op.name


def _tolerance(op, torch) -> Tuple[Optional[float], Optional[float]]:
    """(atol, rtol) of the op's own toleranceOverride for float32, if it declares one."""
    from torch.testing._internal.common_device_type import toleranceOverride

    atol = rtol = None
    for decorator in getattr(op, "decorators", ()) or ():
        for fn in getattr(decorator, "decorators", None) or [decorator]:
            if isinstance(fn, toleranceOverride) and torch.float32 in fn.d:
                tol = fn.d[torch.float32]
                atol = max(atol or 0.0, tol.atol)
                rtol = max(rtol or 0.0, tol.rtol)
    return atol, rtol


def _clone(value, torch):
    if isinstance(value, torch.Tensor):
        return value.detach().clone().requires_grad_(value.requires_grad)
    if isinstance(value, (list, tuple)):
        return type(value)(_clone(v, torch) for v in value)
    if isinstance(value, dict):
        return {k: _clone(v, torch) for k, v in value.items()}
    return value


def _metadata(value, torch):
    if isinstance(value, torch.Tensor):
        return (tuple(value.shape), value.dtype)
    if isinstance(value, (list, tuple)):
        return [_metadata(v, torch) for v in value]
    return value


def _error_class(e: BaseException) -> Tuple[str, str]:
    """(class, first line) of an exception from torch.compile, unwrapping Dynamo's wrapper."""
    inner = getattr(e, "inner_exception", None) or e
    while getattr(inner, "__cause__", None) is not None and type(inner).__name__ in (
        "BackendCompilerFailed",
        "InternalTorchDynamoError",
    ):
        inner = inner.__cause__
    message = str(inner).strip()
    first = message.splitlines()[0] if message else type(inner).__name__
    name = type(inner).__name__
    if name in ("TccdError", "CompileFailed", "Unsupported", "ArtifactError", "DaemonUnavailable"):
        code = re.search(r"\((INTERNAL|INVALID_ARGUMENT|UNIMPLEMENTED|[A-Z_]{5,})\)", message)
        if code:
            return f"tccd:{code.group(1)}", first[:400]
        return "tccd:fallback", first[:400]
    return name, first[:400]


def _backend(name: str) -> Any:
    """The backend callable: tccd from this checkout's client (PYTHONPATH), not whichever
    package the entry point registered."""
    if name == "tccd":
        from tccd.backend import tccd

        return tccd
    return name


def _tensors(value, torch) -> List[Any]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v, torch)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v, torch)]
    return []


def _with_grads(run, inputs, torch):
    """run(*inputs) and, when grad is on, the input gradients of a fixed weighted sum of its
    float outputs (weights 1, 2, 3, ... per element, so no gradient cancels by symmetry)."""
    out = run(*inputs)
    leaves = [t for t in _tensors(inputs, torch) if t.requires_grad]
    outs = [t for t in _tensors(out, torch) if t.requires_grad and t.is_floating_point()]
    if not leaves or not outs:
        return out
    weights = [torch.arange(1, t.numel() + 1, dtype=t.dtype).reshape(t.shape) / max(t.numel(), 1) for t in outs]
    grads = torch.autograd.grad(outs, leaves, grad_outputs=weights, allow_unused=True)
    return (out, [g if g is not None else torch.zeros(()) for g in grads])


def _run_one(op, backend: str, samples: int, torch, grad: bool = False) -> Dict[str, Any]:
    """Runs up to `samples` samples of `op` eagerly and compiled; returns the op's record.
    grad: also compare the input gradients (the backward graph goes through the backend)."""
    import torch._dynamo

    atol, rtol = _tolerance(op, torch)
    compared = 0
    result: Dict[str, Any] = {"status": "skip", "class": "", "message": "", "samples": 0}
    metadata_only = bool(_UNINITIALISED.match(op.name))
    # tccd only: graphs compiled and their native kernels (a pass with no kernel ran as extern
    # ATen steps, or Dynamo ran the op without a graph).
    graphs = native_kernels = 0
    if grad and not op.supports_autograd:
        result["message"] = "no autograd"
        return result

    def fn(sample_input, args, kwargs):
        return op.op(sample_input, *args, **kwargs)

    try:
        sample_list = list(op.sample_inputs("cpu", torch.float32, requires_grad=grad))
    except Exception as e:  # deliberately ignored: an op whose samples cannot be built is a skip
        result["message"] = f"sample_inputs: {type(e).__name__}: {e}"[:400]
        return result
    for sample in sample_list[:samples]:
        inputs = (sample.input, sample.args, sample.kwargs)
        try:
            torch.manual_seed(0)
            expected = _with_grads(fn, _clone(inputs, torch), torch)
            torch.manual_seed(1)
            again = _with_grads(fn, _clone(inputs, torch), torch)
        except Exception:  # deliberately ignored: eager's own failure is not the backend's
            continue
        random = False
        try:
            torch.testing.assert_close(again, expected, equal_nan=True)
        except Exception:
            random = True  # the result depends on the seed: compare metadata only
        torch._dynamo.reset()
        compiled = torch.compile(fn, backend=_backend(backend), dynamic=False)
        if backend == "tccd":
            import tccd

            tccd.reset_compile_stats()
        try:
            torch.manual_seed(0)
            actual = _with_grads(compiled, _clone(inputs, torch), torch)
            if backend == "tccd":
                stats = tccd.last_compile_stats()
                graphs += len(stats)
                native_kernels += sum(s["native_kernels"] for s in stats)
        except Exception as e:
            cls, message = _error_class(e)
            return {"status": "error", "class": cls, "message": message, "samples": compared}
        try:
            if metadata_only or random:
                if _metadata(actual, torch) != _metadata(expected, torch):
                    raise AssertionError(
                        f"metadata {_metadata(actual, torch)} != {_metadata(expected, torch)}"
                    )
            else:
                torch.testing.assert_close(
                    actual, expected, atol=atol, rtol=rtol, equal_nan=True, check_device=True
                )
        except Exception as e:
            first = str(e).strip().splitlines()
            detail = " ".join(line.strip() for line in first[:4])
            return {"status": "mismatch", "class": "mismatch", "message": detail[:400], "samples": compared}
        compared += 1
    if compared:
        result = {"status": "pass", "class": "", "message": "", "samples": compared}
        if backend == "tccd":
            result.update(graphs=graphs, native_kernels=native_kernels)
    else:
        result["message"] = result["message"] or "eager failed on every sample"
    return result


def worker_main() -> None:
    """Reads {"op": key, "backend": b, "samples": n, "grad": g} lines; writes one JSON result
    line each."""
    import warnings

    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    torch._dynamo.config.cache_size_limit = 64
    ops = {_op_key(op): op for op in op_db}
    out = sys.stdout
    sys.stdout = sys.stderr  # whatever ops print must not corrupt the protocol
    out.write(json.dumps({"ready": True}) + "\n")
    out.flush()
    for line in sys.stdin:
        task = json.loads(line)
        start = time.monotonic()
        try:
            record = _run_one(ops[task["op"]], task["backend"], task["samples"], torch, task.get("grad", False))
        except Exception as e:  # the harness's own failure on this op, not the backend's
            record = {"status": "error", "class": f"harness:{type(e).__name__}", "message": str(e)[:400], "samples": 0}
        record["seconds"] = round(time.monotonic() - start, 2)
        out.write(json.dumps(record) + "\n")
        out.flush()


# ---------------------------------------------------------------------------------------------
# Driver side
# ---------------------------------------------------------------------------------------------


class Worker:
    """One worker subprocess; replaced after a crash or timeout."""

    def __init__(self, env: Dict[str, str], log):
        self.env = env
        self.log = log
        self.proc: Optional[subprocess.Popen] = None

    def _start(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            env=self.env,
            text=True,
            start_new_session=True,  # its own process group: Inductor's compile workers die with it
        )
        ready = self._read(300)
        if not ready or not ready.get("ready"):
            raise RuntimeError("worker did not start")

    def _read(self, timeout_s: float) -> Optional[Dict[str, Any]]:
        proc = self.proc
        ready, _, _ = select.select([proc.stdout], [], [], timeout_s)
        if not ready:
            return None
        line = proc.stdout.readline()
        return json.loads(line) if line else None

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
        self.proc = None

    def run(self, task: Dict[str, Any], timeout_s: float) -> Dict[str, Any]:
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        start = time.monotonic()
        proc = self.proc  # kill() from another thread (Ctrl-C) may reset self.proc
        proc.stdin.write(json.dumps(task) + "\n")
        proc.stdin.flush()
        record = self._read(timeout_s)
        if record is not None:
            return record
        crashed = proc.poll() is not None
        code = proc.returncode
        self.kill()
        seconds = round(time.monotonic() - start, 2)
        if crashed:
            return {"status": "crash", "class": f"exit {code}", "message": "", "samples": 0, "seconds": seconds}
        return {"status": "timeout", "class": "timeout", "message": f"over {timeout_s}s", "samples": 0, "seconds": seconds}


class Daemon:
    """A private tccd: its own socket and database under a temp dir."""

    def __init__(self, binary: str):
        self.root = tempfile.mkdtemp(prefix="tccd-opinfo-", dir="/tmp")
        self.address = f"unix:{self.root}/tccd.sock"
        self.log_path = os.path.join(self.root, "tccd.log")
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [binary, "--listen", self.address, "--cache-dir", os.path.join(self.root, "db")],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        sys.path.insert(0, str(REPO / "client"))
        from tccd import channel

        deadline = time.monotonic() + 60
        while channel.ping(self.address, timeout_s=1.0) is not None:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"tccd did not start; log: {self.log_path}")
            time.sleep(0.1)

    def stop(self, keep: bool) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if not keep:
            shutil.rmtree(self.root, ignore_errors=True)


def select_ops(pattern: Optional[str], limit: Optional[int]) -> List[str]:
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    keys = []
    regex = re.compile(pattern) if pattern else None
    for op in op_db:
        if torch.float32 not in op.supported_dtypes("cpu"):
            continue
        key = _op_key(op)
        if regex and not regex.search(key):
            continue
        keys.append(key)
    return keys[:limit] if limit else keys


def sweep(
    keys: List[str], backends: List[str], samples: int, jobs: int, timeout_s: float, env: Dict[str, str],
    log, progress: bool = True, grad: bool = False,
) -> Dict[str, Dict[str, Dict[str, Any]]]:
    tasks = [(key, backend) for key in keys for backend in backends]
    results: Dict[str, Dict[str, Dict[str, Any]]] = {b: {} for b in backends}
    lock = threading.Lock()
    done = [0]

    live_workers: List[Worker] = []
    stop = threading.Event()  # Ctrl-C: in-flight ops are not recorded

    def run_tasks():
        worker = Worker(env, log)
        live_workers.append(worker)
        try:
            while True:
                with lock:
                    if not tasks:
                        return
                    key, backend = tasks.pop(0)
                task = {"op": key, "backend": backend, "samples": samples, "grad": grad}
                record = worker.run(task, timeout_s)
                if stop.is_set():
                    return
                with lock:
                    results[backend][key] = record
                    done[0] += 1
                    if progress:
                        note = f" [{record['class']}] {record['message'][:140]}" if record["class"] else ""
                        print(f"[{done[0]}/{len(keys) * len(backends)}] {backend:8s} {key}: {record['status']}{note}", flush=True)
        finally:
            worker.kill()

    threads = [threading.Thread(target=run_tasks, daemon=True) for _ in range(max(1, jobs))]
    for t in threads:
        t.start()
    try:
        for t in threads:
            while t.is_alive():
                t.join(0.5)
    except KeyboardInterrupt:
        # Ctrl-C: no new tasks; kill the workers (their own process groups) so the daemon
        # threads return, and report what finished.
        stop.set()
        with lock:
            tasks.clear()
        for worker in live_workers:
            worker.kill()
        print("interrupted: reporting the ops that finished", file=sys.stderr)
    return results


def totals(records: Dict[str, Dict[str, Any]]) -> Dict[str, int]:
    counts = Counter(r["status"] for r in records.values())
    return {s: counts.get(s, 0) for s in STATUSES}


def markdown(report: Dict[str, Any]) -> str:
    backends = report["backends"]
    what = "outputs and input gradients" if report.get("grad") else "outputs"
    lines = [f"# OpInfo sweep (CPU, float32, first {report['samples']} samples per op, {what})", ""]
    lines += [f"Command: `{report['command']}`", "", f"torch {report['torch']}", ""]
    lines += ["| backend | ops | " + " | ".join(STATUSES) + " |", "|---|---|" + "---|" * len(STATUSES)]
    for backend, records in backends.items():
        t = totals(records)
        lines.append(f"| {backend} | {len(records)} | " + " | ".join(str(t[s]) for s in STATUSES) + " |")
    if "tccd" in backends:
        passed = [r for r in backends["tccd"].values() if r["status"] == "pass"]
        with_kernels = sum(1 for r in passed if r.get("native_kernels"))
        no_graph = sum(1 for r in passed if not r.get("graphs"))
        lines += ["", f"tccd passes: {with_kernels} ran at least one generated kernel, "
                  f"{len(passed) - with_kernels - no_graph} only extern ATen steps, "
                  f"{no_graph} compiled no graph (Dynamo ran the op itself)."]
    for backend, records in backends.items():
        classes = Counter(r["class"] for r in records.values() if r["status"] not in ("pass", "skip"))
        if classes:
            lines += ["", f"## {backend}: failures by class", ""]
            lines += [f"- {cls or '(none)'}: {n}" for cls, n in classes.most_common()]
    lines += ["", "## Ops that do not pass on some backend", ""]
    lines += ["| op | " + " | ".join(backends) + " |", "|---|" + "---|" * len(backends)]
    keys = sorted({k for records in backends.values() for k in records})
    for key in keys:
        cells = []
        for records in backends.values():
            r = records.get(key, {"status": "-", "class": "", "message": ""})
            cell = r["status"] if r["status"] in ("pass", "skip", "-") else f"{r['status']} ({r['class']}): {r['message'][:120]}"
            cells.append(cell.replace("|", "\\|").replace("\n", " "))
        if any(not c.startswith(("pass", "skip", "-")) for c in cells):
            lines.append(f"| {key} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--ops", help="regex on op names (name or name.variant)")
    parser.add_argument("--limit", type=int, help="only the first N selected ops")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--samples", type=int, default=2, help="samples per op (default 2)")
    parser.add_argument("--backends", default="tccd,inductor", help="comma list (default tccd,inductor)")
    parser.add_argument("--grad", action="store_true", help="also compare input gradients (backward graphs)")
    parser.add_argument("--timeout", type=float, default=180, help="seconds per op and backend")
    parser.add_argument("--tccd-binary", default=os.environ.get("TCCD_BINARY") or str(REPO / "build/bin/tccd"))
    parser.add_argument("--out", default="opinfo-report", help="report path prefix (.json, .md)")
    parser.add_argument("--keep-daemon-dir", action="store_true", help="keep the daemon's log and db")
    args = parser.parse_args(argv)
    if args.worker:
        worker_main()
        return 0

    backends = [b for b in args.backends.split(",") if b]
    keys = select_ops(args.ops, args.limit)
    if not keys:
        print("no op matches", file=sys.stderr)
        return 2
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "client")] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    env["OMP_NUM_THREADS"] = "1"
    daemon = None
    scratch = tempfile.mkdtemp(prefix="tccd-opinfo-client-")
    if "tccd" in backends:
        daemon = Daemon(args.tccd_binary)
        env.update(
            TCCD_ADDRESS=daemon.address,
            TCCD_NO_AUTOSTART="1",
            TCCD_STRICT="1",
            TCCD_LOCAL_CACHE="0",
            TCCD_CACHE_DIR=scratch,
        )
    log_path = f"{args.out}.workers.log"
    start = time.monotonic()
    try:
        with open(log_path, "w") as log:
            results = sweep(keys, backends, args.samples, args.jobs, args.timeout, env, log, grad=args.grad)
    finally:
        if daemon:
            daemon.stop(keep=args.keep_daemon_dir)
        shutil.rmtree(scratch, ignore_errors=True)
    import torch

    report = {
        "command": " ".join([Path(sys.argv[0]).as_posix()] + sys.argv[1:]),
        "torch": torch.__version__,
        "samples": args.samples,
        "grad": args.grad,
        "seconds": round(time.monotonic() - start, 1),
        "backends": results,
    }
    Path(f"{args.out}.json").write_text(json.dumps(report, indent=1, sort_keys=True))
    Path(f"{args.out}.md").write_text(markdown(report))
    print()
    for backend, records in results.items():
        t = totals(records)
        print(f"{backend}: {len(records)} ops: " + ", ".join(f"{s} {t[s]}" for s in STATUSES))
    if "tccd" in results:
        passed = [r for r in results["tccd"].values() if r["status"] == "pass"]
        with_kernels = sum(1 for r in passed if r.get("native_kernels"))
        print(f"tccd passes with a generated kernel: {with_kernels} of {len(passed)}")
    print(f"report: {args.out}.json, {args.out}.md, worker log {log_path} ({report['seconds']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
