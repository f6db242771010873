#!/usr/bin/env bash
# Runs the model-zoo benchmark on a GPU machine, from the repo root:
#   bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/zoo [zoo_benchmark.py args...]
# Installs carried wheels (.whl/) if any, unpacks the release bundle, starts its tccd on a
# private socket with an empty cache (log: OUTDIR/daemon.log), runs deploy/zoo_benchmark.py
# against it and stops the daemon on exit. ZOO_DAEMON_ARGS: extra daemon flags, split on
# spaces (e.g. ZOO_DAEMON_ARGS=--log-level=debug: per-graph compile stages and NVRTC threads in
# OUTDIR/daemon.log).
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 BUNDLE.tar.xz OUTDIR [zoo_benchmark.py args...]" >&2
  exit 2
fi
BUNDLE=$1
OUTDIR=$2
shift 2
export PYTHONUNBUFFERED=1
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
if [ -d .whl ] && compgen -G ".whl/*.whl" > /dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
export PYTHONPATH=$PWD/client${PYTHONPATH:+:$PYTHONPATH}
# Bytecode for tccd's client and the carried wheels, as a pip install of them writes it (torch's
# comes with its install). Without it, under PYTHONDONTWRITEBYTECODE=1 every cell's process
# compiles tccd's client, grpc and protobuf from source, inside tccd's first steps (dev machine:
# +0.06 CPU s for grpc+protobuf, +0.07 s for the client's modules). ZOO_COMPILE_BYTECODE=0: not
# written (the runs before 2026-11-28's seventeenth session).
if [ "${ZOO_COMPILE_BYTECODE:-1}" = 1 ]; then
  python3 -m compileall -q -j 0 client $([ -d /tmp/site ] && echo /tmp/site) > /dev/null || true
fi
echo "zoo_gpu_run: PYTHONDONTWRITEBYTECODE=${PYTHONDONTWRITEBYTECODE:-unset} ZOO_COMPILE_BYTECODE=${ZOO_COMPILE_BYTECODE:-1}" >&2

WORK=$(mktemp -d /tmp/zoo-bundle-XXXXXX)
# Private to this run, so several runs can share a host (one per GPU: CUDA_VISIBLE_DEVICES).
SOCK=${ZOO_SOCK:-$WORK/tccd.sock}
DAEMON_PID=
cleanup() {
  if [ -n "$DAEMON_PID" ] && kill -0 "$DAEMON_PID" 2>/dev/null; then
    kill -TERM "$DAEMON_PID" 2>/dev/null || true
    wait "$DAEMON_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

tar -xf "$BUNDLE" -C "$WORK"
TCCD_BIN=$(find "$WORK" -type f -path "*/bin/tccd" -perm -u+x | head -n1)
if [ -z "$TCCD_BIN" ]; then
  echo "no executable tccd in $BUNDLE" >&2
  exit 1
fi
rm -f "$SOCK"
# shellcheck disable=SC2086  # ZOO_DAEMON_ARGS is a list of flags
"$TCCD_BIN" --listen "unix:$SOCK" --cache-dir "$WORK/db" ${ZOO_DAEMON_ARGS:-} > "$OUTDIR/daemon.log" 2>&1 &
DAEMON_PID=$!
for _ in $(seq 1 300); do
  [ -S "$SOCK" ] && break
  if ! kill -0 "$DAEMON_PID" 2>/dev/null; then
    echo "tccd exited at start:" >&2
    tail -n 30 "$OUTDIR/daemon.log" >&2
    exit 1
  fi
  sleep 0.1
done
if [ ! -S "$SOCK" ]; then
  echo "tccd did not create $SOCK within 30s" >&2
  tail -n 30 "$OUTDIR/daemon.log" >&2
  exit 1
fi
export TCCD_ADDRESS=unix:$SOCK
python3 deploy/zoo_benchmark.py --out "$OUTDIR" "$@"
