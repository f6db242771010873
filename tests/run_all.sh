#!/usr/bin/env bash
# Runs every test: installs/builds what is missing (deploy/bootstrap.sh), then the C++ unit tests
# (CTest: Catch2 binaries) and the Python tests (pytest: unit tests and end-to-end tests that
# start the real tccd with a real RocksDB in temp dirs), with a bounded run of the libFuzzer
# targets in between (skipped with a message where clang/libFuzzer is missing). Extra arguments
# go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/bootstrap.sh
BUILD_DIR=${TCCD_BUILD_DIR:-$PWD/build}

echo "== C++ unit tests (ctest) =="
ctest --test-dir "$BUILD_DIR" --output-on-failure -j2

echo "== Fuzzers (bounded; tests/fuzz/run.sh --minutes N for longer runs) =="
bash tests/fuzz/run.sh --runs "${TCCD_FUZZ_RUNS:-10000}"

echo "== Python tests (pytest) =="
export TCCD_BINARY="$BUILD_DIR/bin/tccd"
.venv/bin/python -m pytest tests/python -q -p no:cacheprovider "$@"
