#!/bin/bash
# NVRTC cost of a model's CUDA census graphs, with or without PointwiseKernel::entries narrowing
# (issue 11; README "Cold first step: where it goes"), from the repo root, no GPU needed:
#   bash tests/tools/entry_points_census.sh MODEL before|after REP
# Starts build/bin/tccd on an empty cache (compiling in process, debug log), runs
# tests/tools/cuda_plan_census.py on census_models.py MODEL against it, prints the daemon's CPU
# time (NVRTC is nearly all of it) and its per-graph "cuda backend:" lines. `before` sets
# TCCD_DISABLE_PASSES=entry-points in the daemon (every kernel gets both entry points).
set -u
PY=${PYTHON:-.venv/bin/python}
cd "$(dirname "$0")/../.."
M=$1; MODE=$2; REP=$3
D=$(mktemp -d /tmp/cc-XXXXXX)
if [ "$MODE" = before ]; then export TCCD_DISABLE_PASSES=entry-points; else unset TCCD_DISABLE_PASSES; fi
build/bin/tccd --listen unix:$D/tccd.sock --cache-dir $D/db --compile_in_process --log-level=debug > $D/daemon.log 2>&1 &
PID=$!
for i in $(seq 1 100); do [ -S $D/tccd.sock ] && break; sleep 0.1; done
unset TCCD_DISABLE_PASSES
T0=$(date +%s.%N)
TCCD_ADDRESS=unix:$D/tccd.sock TCCD_NO_AUTOSTART=1 PYTHONPATH=client:tests/python "$PY" tests/tools/cuda_plan_census.py tests/tools/census_models.py $M > $D/census.out 2>&1
RC=$?
T1=$(date +%s.%N)
CPU=$(awk '{print ($14+$15)/100}' /proc/$PID/stat)
kill -TERM $PID; wait $PID 2>/dev/null
echo "$M $MODE rep$REP rc=$RC daemon_cpu_s=$CPU census_wall_s=$(echo "$T1 - $T0" | bc)"
grep -o "cuda backend: [0-9]* kernel(s), [0-9]* distinct, [0-9]* compiled on [0-9]* thread(s), [0-9]* reused; cubin [0-9]* bytes in [0-9.]* ms" $D/daemon.log | sed 's/^/   /'
rm -rf $D
