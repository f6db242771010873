#!/bin/sh
# Regenerates tests/codegen/cuda/golden/ (the CUDA backend's golden source and sm_90 PTX) after an
# intended change to the generated code; review and commit the diff.
#   tests/codegen/cuda/update_golden.sh [build-dir]     (default: build-cuda)
set -eu
root=$(cd "$(dirname "$0")/../../.." && pwd)
build=${1:-build-cuda}
case $build in /*) ;; *) build=$root/$build ;; esac
cmake --build "$build" -j2 --target cuda_backend_test
TCCD_UPDATE_GOLDEN=1 "$build/tests/cuda_backend_test" "[golden]"
"$build/tests/cuda_backend_test" "[golden]"
git -C "$root" status --short -- tests/codegen/cuda/golden
