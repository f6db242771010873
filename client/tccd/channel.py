"""The gRPC channel to the daemon, and starting a local daemon when none answers.

`connect(config)` returns a Tccd stub for the configured address. When nothing answers there and
the address is a unix socket, it starts `tccd --listen unix:PATH` in its own session (as sccache
does), logging to <cache dir>/daemon.log, and waits for it to answer. Starts are serialised by
an flock on "<socket>.start.lock" (not "<socket>.lock": the daemon itself holds that one
while it serves), so of several processes that find no daemon only one starts it; if
a daemon is started some other way meanwhile, the loser's daemon fails to bind and exits, and
the client uses whichever answers.

Channels are cached per address and credentials for the life of the process (gRPC reconnects by
itself when a daemon restarts). Credentials come from the config (TCCD_TOKEN, TCCD_TOKEN_FILE,
TCCD_TLS_CA, TCCD_TLS_CERT, TCCD_TLS_KEY): TLS on TCP addresses when configured (unix sockets
are always plaintext), and the token as `authorization: Bearer TOKEN` on every call.
"""

from __future__ import annotations

import errno
import fcntl
import logging
import os
import shutil
import subprocess
import threading
import time
from typing import Dict, List, Optional, Tuple

import grpc

from . import config as client_config
from .config import Config
from .errors import DaemonUnavailable
from .v1 import tccd_pb2 as pb
from .v1 import tccd_pb2_grpc as pb_grpc

log = logging.getLogger(__name__)

START_TIMEOUT_S = 15.0
PING_TIMEOUT_S = 2.0
LOCK_TIMEOUT_S = 30.0
_MAX_MESSAGE_BYTES = 256 << 20

_HEALTH_CHECK = "/grpc.health.v1.Health/Check"
_HEALTH_SERVING = 1

_lock = threading.Lock()
_channels: Dict[tuple, Tuple[grpc.Channel, pb_grpc.TccdStub]] = {}
_started: List[subprocess.Popen] = []  # daemons this process started (kept to reap them)


_OPTIONS = [
    ("grpc.max_receive_message_length", _MAX_MESSAGE_BYTES),
    ("grpc.max_send_message_length", -1),
    # A local daemon that restarts should be found again within a second, not after
    # gRPC's default exponential backoff (up to two minutes).
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1000),
]


class _BearerToken(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor):
    """Adds `authorization: Bearer TOKEN` to every call."""

    def __init__(self, token: str):
        self._metadata = ("authorization", f"Bearer {token}")

    def _with_token(self, details):
        metadata = list(details.metadata or []) + [self._metadata]
        return details._replace(metadata=metadata) if hasattr(details, "_replace") else _Details(
            details, metadata)

    def intercept_unary_unary(self, continuation, details, request):
        return continuation(self._with_token(details), request)

    def intercept_unary_stream(self, continuation, details, request):
        return continuation(self._with_token(details), request)


class _Details(grpc.ClientCallDetails):
    def __init__(self, base, metadata):
        self.method = base.method
        self.timeout = base.timeout
        self.metadata = metadata
        self.credentials = base.credentials
        self.wait_for_ready = getattr(base, "wait_for_ready", None)
        self.compression = getattr(base, "compression", None)


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _credentials_key() -> tuple:
    cfg = client_config.get()
    return (cfg.token, cfg.tls_ca, cfg.tls_cert, cfg.tls_key)


def _new_channel(address: str) -> grpc.Channel:
    cfg = client_config.get()
    is_unix = address.startswith("unix:")
    if cfg.tls and not is_unix:
        credentials = grpc.ssl_channel_credentials(
            root_certificates=_read(cfg.tls_ca) if cfg.tls_ca else None,
            private_key=_read(cfg.tls_key) if cfg.tls_key else None,
            certificate_chain=_read(cfg.tls_cert) if cfg.tls_cert else None,
        )
        channel = grpc.secure_channel(address, credentials, options=_OPTIONS)
    else:
        channel = grpc.insecure_channel(address, options=_OPTIONS)
    if cfg.token:
        channel = grpc.intercept_channel(channel, _BearerToken(cfg.token))
    return channel


def _open(address: str) -> Tuple[grpc.Channel, pb_grpc.TccdStub]:
    key = (address,) + _credentials_key()
    entry = _channels.get(key)
    if entry is None:
        channel = _new_channel(address)
        entry = (channel, pb_grpc.TccdStub(channel))
        _channels[key] = entry
    return entry


def _ping_channel(channel: grpc.Channel, timeout_s: float) -> Optional[str]:
    check = channel.unary_unary(
        _HEALTH_CHECK, request_serializer=lambda b: b, response_deserializer=lambda b: b
    )
    try:
        response = check(b"", timeout=timeout_s)
    except grpc.RpcError as e:
        if e.code() != grpc.StatusCode.UNIMPLEMENTED:
            return f"{e.code().name}: {e.details()}"
        try:
            pb_grpc.TccdStub(channel).GetStats(pb.StatsRequest(), timeout=timeout_s)
            return None
        except grpc.RpcError as e2:
            return f"{e2.code().name}: {e2.details()}"
    if response != bytes([0x08, _HEALTH_SERVING]):
        return f"health check says not serving ({response!r})"
    return None


def ping(address: str, timeout_s: float = PING_TIMEOUT_S) -> Optional[str]:
    """None if a tccd daemon answers at `address` right now, else why not.

    Uses the standard gRPC health check (hand-encoded: HealthCheckRequest{} is empty, and
    HealthCheckResponse{status: SERVING} is b"\\x08\\x01"), so no extra package is needed; a
    server without the health service is asked GetStats instead. A fresh channel is used, so a
    cached channel's reconnect backoff cannot hide a daemon that just came up.
    """
    channel = _new_channel(address)
    try:
        return _ping_channel(channel, timeout_s)
    finally:
        channel.close()


def package_dir() -> str:
    return os.path.dirname(os.path.abspath(__file__))


def binary_candidates(config: Config) -> List[str]:
    """Where tccd is looked for, in order. An explicit TCCD_BINARY is the only candidate."""
    if config.binary:
        return [config.binary]
    pkg = package_dir()
    candidates = [os.path.normpath(os.path.join(pkg, "..", "..", "build", "bin", "tccd"))]
    on_path = shutil.which("tccd")
    if on_path:
        candidates.append(on_path)
    # A release bundle: bin/tccd beside the package, or beside the directory holding it.
    candidates.append(os.path.join(pkg, "bin", "tccd"))
    candidates.append(os.path.normpath(os.path.join(pkg, "..", "bin", "tccd")))
    return candidates


def find_binary(config: Config) -> str:
    candidates = binary_candidates(config)
    for path in candidates:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    if config.binary:
        raise DaemonUnavailable(
            f"no tccd daemon answers at {config.address}, and TCCD_BINARY={config.binary} "
            "is not an executable file"
        )
    raise DaemonUnavailable(
        f"no tccd daemon answers at {config.address}, and no tccd binary was found to start one "
        f"(looked at {', '.join(candidates)}); build it, put it on PATH or set TCCD_BINARY"
    )


def _acquire(lock_path: str, timeout_s: float) -> int:
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except OSError as e:
            if e.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                os.close(fd)
                raise
        if time.monotonic() > deadline:
            os.close(fd)
            raise DaemonUnavailable(f"timed out waiting for {lock_path} (another client starting tccd)")
        time.sleep(0.05)


def _log_tail(path: str, limit: int = 2000) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - limit))
            return f.read().decode("utf-8", "replace").strip()
    except OSError:
        return ""


def start_daemon(config: Config) -> str:
    """Starts a daemon at the configured unix socket unless one answers; returns how it went."""
    socket_path = config.unix_socket_path
    if socket_path is None:
        raise DaemonUnavailable(f"cannot start a daemon for {config.address}: not a unix socket")
    socket_dir = os.path.dirname(socket_path) or "."
    os.makedirs(socket_dir, mode=0o700, exist_ok=True)
    lock_fd = _acquire(socket_path + ".start.lock", LOCK_TIMEOUT_S)
    try:
        if ping(config.address) is None:
            return "already running"  # another client started it while we waited
        binary = find_binary(config)
        os.makedirs(config.cache_dir, exist_ok=True)
        log_path = os.path.join(config.cache_dir, "daemon.log")
        with open(log_path, "ab") as log_file:
            log_file.write(f"--- {time.ctime()}: pid {os.getpid()} starts {binary}\n".encode())
            log_file.flush()
            proc = subprocess.Popen(
                [binary, "--listen", f"unix:{socket_path}"],
                stdin=subprocess.DEVNULL,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # outlives this process; no terminal signals
                close_fds=True,  # in particular not the start lock
            )
        _started.append(proc)
        deadline = time.monotonic() + START_TIMEOUT_S
        why = "not answering"
        while time.monotonic() < deadline:
            why = ping(config.address, timeout_s=1.0)
            if why is None:
                log.info("tccd: started %s (pid %d) at %s", binary, proc.pid, config.address)
                return f"started {binary} (pid {proc.pid})"
            if proc.poll() is not None:
                # It exited: most likely another daemon took the socket first. Use that one.
                why = ping(config.address, timeout_s=1.0)
                if why is None:
                    return "another daemon answered"
                raise DaemonUnavailable(
                    f"tccd ({binary}) exited with status {proc.returncode} before answering at "
                    f"{config.address}; its log ({log_path}) ends with:\n{_log_tail(log_path)}"
                )
            time.sleep(0.05)
        raise DaemonUnavailable(
            f"tccd ({binary}, pid {proc.pid}) did not answer at {config.address} within "
            f"{START_TIMEOUT_S:.0f}s ({why}); see {log_path}"
        )
    finally:
        os.close(lock_fd)


def connect(config: Config, autostart: Optional[bool] = None) -> pb_grpc.TccdStub:
    """A stub for a daemon that answered just now (starting one if allowed and needed)."""
    if autostart is None:
        autostart = config.autostart
    with _lock:
        channel, stub = _open(config.address)
        if _ping_channel(channel, PING_TIMEOUT_S) is None:
            return stub
        why = ping(config.address)
        if why is not None:
            if not autostart or config.unix_socket_path is None:
                hint = "" if autostart else " (auto-start disabled by TCCD_NO_AUTOSTART)"
                raise DaemonUnavailable(f"no tccd daemon answers at {config.address}: {why}{hint}")
            start_daemon(config)
        # A daemon answers; the cached channel may still be waiting out a reconnect backoff.
        try:
            grpc.channel_ready_future(channel).result(timeout=START_TIMEOUT_S)
        except grpc.FutureTimeoutError:
            raise DaemonUnavailable(f"tccd at {config.address} answers, but the channel to it "
                                    "did not become ready") from None
        return stub


def stub_for(address: str) -> pb_grpc.TccdStub:
    """A stub for `address` without checking that anything answers (for the CLI)."""
    with _lock:
        return _open(address)[1]
