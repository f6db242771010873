#!/usr/bin/env bash
# Installs what is missing and builds tccd. Idempotent, and quick when everything is there:
#   1. Debian packages (apt-get, only those not installed yet; needs root or sudo)
#   2. the Python virtual environment .venv/ with torch, grpcio, pytest (only if missing)
#   3. the C++ build (cmake + ninja into build/; incremental)
#   4. the Python client, installed editable, and its generated gRPC stubs
# Used by deploy/demo.sh (the main job) and tests/run_all.sh (every test).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
log() { printf '\033[1m[bootstrap]\033[0m %s\n' "$*" >&2; }

APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  python3 python3-venv python3-dev
  libgrpc++-dev protobuf-compiler-grpc protobuf-compiler libprotobuf-dev
  libabsl-dev librocksdb-dev libspdlog-dev catch2 libssl-dev zlib1g-dev libzstd-dev
  llvm-16-dev liblld-16-dev
  libhiredis-dev redis-server  # the shared cache tier (--shared-cache) and its tests
  prometheus-cpp-dev  # --metrics-listen (its pull library serves /metrics through CivetWeb)
  libsystemd-dev  # Type=notify: READY/STOPPING/WATCHDOG (sd_notify)
  clang libclang-rt-14-dev ccache  # the libFuzzer build (tests/fuzz/run.sh)
)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  log "installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Debian's python3 (not a pyenv shim): the venv must not depend on a per-user toolchain.
PY=/usr/bin/python3
if [ ! -x .venv/bin/python ]; then
  log "creating .venv"
  $PY -m venv .venv
fi
VPY=$ROOT/.venv/bin/python
if ! $VPY -c 'import torch, grpc, grpc_tools, pytest, numpy, expecttest' 2>/dev/null; then
  log "installing Python packages into .venv (torch is a large download, once)"
  $VPY -m pip install -q --upgrade pip
  $VPY -m pip install -q torch grpcio grpcio-tools protobuf pytest numpy expecttest
fi

BUILD_DIR=${TCCD_BUILD_DIR:-$ROOT/build}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  log "configuring $BUILD_DIR"
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
log "building tccd (incremental; log in $BUILD_DIR/build.log)"
if ! cmake --build "$BUILD_DIR" -j"$(nproc)" >"$BUILD_DIR/build.log" 2>&1; then
  grep -E 'error|FAILED' "$BUILD_DIR/build.log" | head -40 >&2 || tail -40 "$BUILD_DIR/build.log" >&2
  log "build failed (full log: $BUILD_DIR/build.log)"
  exit 1
fi

if ! $VPY -c 'import tccd' 2>/dev/null || [ proto/tccd/v1/tccd.proto -nt client/tccd/v1/tccd_pb2.py ]; then
  log "installing the Python client (editable) and generating its gRPC stubs"
  $VPY -m pip install -q --no-deps --no-build-isolation -e client
  $VPY client/generate_stubs.py
fi
log "ready: $BUILD_DIR/bin/tccd, .venv/bin/python -c 'import tccd'"
