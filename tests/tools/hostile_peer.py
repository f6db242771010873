#!/usr/bin/env python3
"""Transport-level junk against a running tccd, with the daemon's RSS before, during and after.

Each attack opens raw sockets (no gRPC library on our side) and sends what a broken or hostile
peer might: random bytes, an HTTP/2 preface followed by garbage frames, a header block far past
any sane size, many streams whose gRPC messages announce hundreds of MiB and never finish,
messages over the size limit, ping floods, and slowloris connections that dribble a byte at a
time. The connections are then closed, the daemon gets a short settle, and its RSS is read again
from /proc. The point: the daemon stays up, still answers, and its memory returns to where it was.

    tests/tools/hostile_peer.py --address unix:/tmp/tccd-1000/tccd.sock --pid $(pidof tccd)
    tests/tools/hostile_peer.py --address 127.0.0.1:7070 --pid 1234 --rounds 5 --connections 200

Prints one line per attack and a summary `rss_before_mb=... rss_peak_mb=... rss_after_mb=...
ratio=...`; exit status 0 when the daemon is alive at the end (the caller judges the ratio).
tests/python/test_e2e_hostile_transport.py runs a bounded version in CI.
"""

import argparse
import os
import random
import socket
import struct
import sys
import threading
import time
from typing import Callable, Dict, List, Optional

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, SETTINGS, PING, WINDOW_UPDATE = 0, 1, 4, 6, 8
END_STREAM, END_HEADERS = 0x1, 0x4


def frame(kind: int, flags: int, stream: int, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def _hpack_int(value: int, prefix_bits: int, first: int = 0) -> bytes:
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([first | value])
    out = bytearray([first | limit])
    value -= limit
    while value >= 128:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _hpack_literal(name: bytes, value: bytes) -> bytes:
    """A literal header field without indexing, new name, no Huffman (RFC 7541 6.2.2)."""
    return b"\x00" + _hpack_int(len(name), 7) + name + _hpack_int(len(value), 7) + value


def grpc_headers(method: str = "/tccd.v1.Tccd/Compile", extra: Optional[Dict[bytes, bytes]] = None) -> bytes:
    fields = [(b":method", b"POST"), (b":scheme", b"http"), (b":path", method.encode()),
              (b":authority", b"localhost"), (b"content-type", b"application/grpc"), (b"te", b"trailers")]
    fields += list((extra or {}).items())
    return b"".join(_hpack_literal(n, v) for n, v in fields)


def connect(address: str, timeout_s: float = 5.0) -> socket.socket:
    if address.startswith("unix:"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout_s)
        s.connect(address[len("unix:"):].replace("//", "/", 1) if address.startswith("unix://")
                  else address[len("unix:"):])
    else:
        host, port = address.rsplit(":", 1)
        s = socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s)
    return s


def send_quietly(s: socket.socket, data: bytes) -> bool:
    """False once the daemon has closed the connection (which is a fine answer to junk)."""
    try:
        s.sendall(data)
        return True
    except (OSError, socket.timeout):
        return False


# --- attacks: each gets an open socket and a random generator; the caller closes the socket -----

def random_bytes(s, rng):
    send_quietly(s, rng.randbytes(rng.randint(1, 64 << 10)))


def preface_then_garbage_frames(s, rng):
    if not send_quietly(s, PREFACE + frame(SETTINGS, 0, 0, b"")):
        return
    for _ in range(50):
        kind = rng.randint(0, 255)
        payload = rng.randbytes(rng.randint(0, 4096))
        if not send_quietly(s, frame(kind, rng.randint(0, 255), rng.randint(0, 1 << 31 - 1), payload)):
            return


def huge_headers(s, rng):
    # 1 MiB of header block in one HEADERS frame, then CONTINUATION-free: the daemon must refuse
    # it (max metadata size), not buffer it.
    block = grpc_headers(extra={b"x-junk": b"a" * (1 << 20)})
    send_quietly(s, PREFACE + frame(SETTINGS, 0, 0, b"") + frame(HEADERS, END_HEADERS, 1, block))


def unfinished_streams(s, rng, streams: int = 200, bytes_per_stream: int = 60 << 10):
    """Many Compile calls whose message announces 200 MiB and delivers 60 KiB: without bounds
    the daemon buffers every partial message for as long as the connection stays open."""
    if not send_quietly(s, PREFACE + frame(SETTINGS, 0, 0, b"")):
        return
    body = struct.pack(">BI", 0, 200 << 20) + rng.randbytes(bytes_per_stream - 5)
    for i in range(streams):
        stream = 2 * i + 1
        if not send_quietly(s, frame(HEADERS, END_HEADERS, stream, grpc_headers())):
            return
        for off in range(0, len(body), 16 << 10):
            if not send_quietly(s, frame(DATA, 0, stream, body[off:off + (16 << 10)])):
                return


def oversized_message(s, rng):
    """One message announcing 4 GiB - 1, with as much data as flow control lets through."""
    if not send_quietly(s, PREFACE + frame(SETTINGS, 0, 0, b"") + frame(HEADERS, END_HEADERS, 1, grpc_headers())):
        return
    send_quietly(s, frame(DATA, 0, 1, struct.pack(">BI", 0, 0xFFFFFFFF) + rng.randbytes(60 << 10)))


def ping_flood(s, rng):
    if not send_quietly(s, PREFACE + frame(SETTINGS, 0, 0, b"")):
        return
    for _ in range(1000):
        if not send_quietly(s, frame(PING, 0, 0, rng.randbytes(8))):
            return


def slowloris(s, rng, seconds: float = 3.0):
    message = PREFACE + frame(SETTINGS, 0, 0, b"") + frame(HEADERS, END_HEADERS, 1, grpc_headers())
    deadline = time.monotonic() + seconds
    for b in message:
        if time.monotonic() > deadline or not send_quietly(s, bytes([b])):
            return
        time.sleep(0.05)


ATTACKS: Dict[str, Callable] = {
    "random_bytes": random_bytes,
    "preface_then_garbage_frames": preface_then_garbage_frames,
    "huge_headers": huge_headers,
    "unfinished_streams": unfinished_streams,
    "oversized_message": oversized_message,
    "ping_flood": ping_flood,
    "slowloris": slowloris,
}


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    raise RuntimeError(f"no VmRSS for pid {pid}")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


def run_attack(address: str, name: str, connections: int, seed: int, hold_s: float,
               sample: Callable[[], None]) -> int:
    """Opens `connections` sockets at once, runs `name` on each, holds them open `hold_s` (the
    moment memory peaks), then closes them all. Returns how many connections were opened."""
    attack = ATTACKS[name]
    sockets: List[socket.socket] = []
    lock = threading.Lock()

    def one(i: int) -> None:
        try:
            s = connect(address)
        except OSError:
            return  # a refused connection is a fine answer too
        with lock:
            sockets.append(s)
        attack(s, random.Random(seed * 1_000_003 + i))

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(connections)]
    # Bounded parallelism: a loaded 2-core machine should not be starved by the attacker itself.
    for start in range(0, len(threads), 32):
        batch = threads[start:start + 32]
        for t in batch:
            t.start()
        for t in batch:
            t.join(timeout=60)
    sample()
    time.sleep(hold_s)
    sample()
    for s in sockets:
        try:
            s.close()
        except OSError:
            pass
    return len(sockets)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--address", required=True, help="unix:PATH or HOST:PORT of the daemon")
    parser.add_argument("--pid", type=int, required=True, help="the daemon's pid (RSS is read from /proc)")
    parser.add_argument("--rounds", type=int, default=3, help="passes over all attacks (default 3)")
    parser.add_argument("--connections", type=int, default=64, help="connections per attack (default 64)")
    parser.add_argument("--attacks", default=",".join(ATTACKS), help="comma-separated subset")
    parser.add_argument("--hold-s", type=float, default=1.0, help="seconds to hold each attack's connections open")
    parser.add_argument("--settle-s", type=float, default=5.0, help="seconds to wait before the final RSS")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)

    before = rss_mb(args.pid)
    peak = [before]

    def sample() -> None:
        if alive(args.pid):
            peak[0] = max(peak[0], rss_mb(args.pid))

    started = time.monotonic()
    names = [n for n in args.attacks.split(",") if n]
    for unknown in set(names) - set(ATTACKS):
        parser.error(f"unknown attack {unknown!r}; known: {', '.join(ATTACKS)}")
    for round_index in range(args.rounds):
        for name in names:
            t0 = time.monotonic()
            opened = run_attack(args.address, name, args.connections, args.seed + round_index, args.hold_s, sample)
            if not alive(args.pid):
                print(f"DAEMON DIED during {name} (round {round_index})", flush=True)
                return 1
            print(f"round={round_index} attack={name} connections={opened} "
                  f"seconds={time.monotonic() - t0:.1f} rss_mb={rss_mb(args.pid):.1f}", flush=True)
    time.sleep(args.settle_s)
    if not alive(args.pid):
        print("DAEMON DIED after the attacks", flush=True)
        return 1
    after = rss_mb(args.pid)
    print(f"rss_before_mb={before:.1f} rss_peak_mb={peak[0]:.1f} rss_after_mb={after:.1f} "
          f"ratio={after / before:.3f} seconds={time.monotonic() - started:.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
