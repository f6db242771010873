"""One private tccd daemon for a benchmark script: started on a socket in a temp dir with an
empty cache, answered a ping before the constructor returns, stopped (and its dir removed) by
close() or at the end of a `with` block.

    from bench_daemon import BenchDaemon

    with BenchDaemon(binary, env={"TCCD_KERNEL_THREADS": "2"}, args=["--log-level=debug"]) as d:
        env = d.client_env(os.environ)            # TCCD_ADDRESS, TCCD_NO_AUTOSTART, TCCD_CACHE_DIR
        subprocess.run([...], env=env)            # a benchmark process compiling through it
        d.stub().Compile(request)                 # or requests sent from here

Every deploy/ benchmark that starts its own daemon uses this (they each had a copy of the same
class before): `env` is added to the daemon's environment (debugging knobs such as
TCCD_DISABLE_PASSES are daemon-side), `args` are extra daemon flags, `keep=True` (or
TCCD_BENCH_KEEP=1) leaves the dir with its `tccd.log` for a look after a failure. The client
package is put on sys.path (the repo's client/, so a script run from deploy/ uses this
checkout's client, not an installed one).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterable, Mapping, Optional

ROOT = Path(__file__).resolve().parents[1]


class BenchDaemon:
    """A tccd daemon of its own (see the module docstring). Not thread-safe; one per benchmark
    variant, used from the thread that made it."""

    def __init__(self, binary: str, env: Optional[Mapping[str, str]] = None, args: Iterable[str] = (),
                 prefix: str = "tccd-bench-", root: Optional[str] = None, start_timeout_s: float = 60.0,
                 keep: bool = False):
        self.binary = str(binary)
        self.own_root = root is None
        self.root = root or tempfile.mkdtemp(prefix=prefix, dir="/tmp")
        self.keep = keep or os.environ.get("TCCD_BENCH_KEEP") == "1"
        self.address = f"unix:{self.root}/tccd.sock"
        self.log_path = os.path.join(self.root, "tccd.log")
        self._log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [self.binary, "--listen", self.address, "--cache-dir", os.path.join(self.root, "db"), *args],
            stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env=dict(os.environ, **(env or {})))
        if str(ROOT / "client") not in sys.path:
            sys.path.insert(0, str(ROOT / "client"))
        from tccd import channel

        deadline = time.monotonic() + start_timeout_s
        while channel.ping(self.address, timeout_s=1.0) is not None:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.close(keep=True)
                raise RuntimeError(f"tccd did not start (exit {self.proc.returncode}); log: {self.log_path}")
            time.sleep(0.1)

    def client_env(self, base: Optional[Mapping[str, str]] = None) -> dict:
        """`base` (default: this process's environment) for a process that compiles through this
        daemon only: its address, no auto-started daemon, a local cache of its own in the dir."""
        env = dict(os.environ if base is None else base)
        env.update(TCCD_ADDRESS=self.address, TCCD_NO_AUTOSTART="1",
                   TCCD_CACHE_DIR=os.path.join(self.root, "client"))
        return env

    def stub(self):
        from tccd import channel

        return channel.stub_for(self.address)

    def log_tail(self, limit: int = 4000) -> str:
        with open(self.log_path, "rb") as f:
            return f.read()[-limit:].decode("utf-8", "replace")

    def close(self, keep: Optional[bool] = None) -> None:
        """Stops the daemon (SIGTERM, then SIGKILL after 60 s) and removes its dir unless kept."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if not self._log.closed:
            self._log.close()
        if self.own_root and not (self.keep if keep is None else keep):
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> "BenchDaemon":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
