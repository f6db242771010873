# dyn8's lane of the thirteenth session's first GPU run (2x H200, integration build int1 of
# ~20:33, lane 0 beside another lane on the same host), after the header of
# ../zoo-2026-11-27-session12/commands-hdr.sh. Results: h200x2-r1-bench-dyn8*.txt.
bench() {  # bench LABEL DISABLED_PASSES BENCH_ARGS...
  local d=$(mktemp -d) label=$1 passes=$2; shift 2
  TCCD_DISABLE_PASSES=$passes $TCCD_BINARY --listen unix:$d/tccd.sock --cache-dir $d/db > $d/daemon.log 2>&1 &
  local pid=$!; sleep 2
  TCCD_NO_AUTOSTART=1 TCCD_ADDRESS=unix:$d/tccd.sock TCCD_CACHE_DIR=$d/client timeout 70 \
    python3 deploy/dynamic_shapes_bench.py --device cuda --compare-static --interleave "$@" > $OUT/bench-$label.txt 2>&1; echo "$label rc=$?"
  kill $pid
}
ARGS="--dtype bfloat16 --lengths 128,256,384,512 --tokens 8192 --d 256 --steps 30"
TCCD_PLAN_PROFILE=1 bench dyn8 "" $ARGS --top-kernels 12
TCCD_RUNTIME_ROW_THREADS=128 TCCD_PLAN_PROFILE=1 bench dyn8-rows128 "" $ARGS --top-kernels 6
# (requested too, not run: trimmed for time) tests/python/test_gpu_dynamic_rows.py
