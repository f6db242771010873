"""A real redis-server (Debian's) on a loopback port in a temp dir, for the shared-tier tests and
benchmarks. No persistence; stopped (and its dir removed) by stop()."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from typing import List


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    def __init__(self, port: int = 0, password: str = ""):
        self.password = password
        self.binary = shutil.which("redis-server")
        self.cli = shutil.which("redis-cli")
        self.port = port or free_port()
        self.dir = tempfile.mkdtemp(prefix="tccd-redis-")
        self.proc = None

    @property
    def url(self) -> str:
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}"

    def start(self, timeout_s: float = 10.0) -> None:
        with open(os.path.join(self.dir, "redis.log"), "ab") as log:
            self.proc = subprocess.Popen(
                [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir,
                 "--save", "", "--appendonly", "no", "--protected-mode", "no",
                 *(["--requirepass", self.password] if self.password else [])],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self.proc.returncode}")
            try:
                if self.cli_call("PING") == "PONG":
                    return
            except subprocess.CalledProcessError:
                pass
            time.sleep(0.05)
        raise RuntimeError("redis-server did not answer PING")

    def cli_call(self, *args: str) -> str:
        auth = ["--no-auth-warning", "-a", self.password] if self.password else []
        return subprocess.run([self.cli, "-p", str(self.port), *auth, *args], check=True,
                              capture_output=True, text=True, timeout=10).stdout.strip()

    def keys(self, pattern: str) -> List[str]:
        out = self.cli_call("--scan", "--pattern", pattern)
        return [k for k in out.splitlines() if k]

    def kill(self) -> None:
        """SIGKILL: Redis gone without warning."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self) -> None:
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def redis_available() -> bool:
    return shutil.which("redis-server") is not None and shutil.which("redis-cli") is not None
