# dyn13 r1 (session 18, 2x H200 host, one lane; integration int1 = main 01a1c0e + dw13 + guard13 + dyn13 + cold9 as of 12:05 UTC): the request as run, from the repo root of the integration build with TCCD_BINARY, OUT, PYTHONPATH set (GPU_RESULT-r1.md has the output).
req_dyn13() {
  local n=$(mktemp -d) o=$(mktemp -d)
  $TCCD_BINARY --listen unix:$n/tccd.sock --cache-dir $n/db > $n/daemon.log 2>&1 &
  local pn=$!
  TCCD_DISABLE_PASSES=symbolic-horizontal-fusion $TCCD_BINARY --listen unix:$o/tccd.sock --cache-dir $o/db > $o/daemon.log 2>&1 &
  local po=$!; sleep 2
  run_arm() {  # run_arm LABEL DAEMON_DIR TIMEOUT STEPS ENV...
    local label=$1 dd=$2 t=$3 steps=$4; shift 4
    env "$@" TCCD_NO_AUTOSTART=1 TCCD_ADDRESS=unix:$dd/tccd.sock TCCD_CACHE_DIR=$dd/client-$label timeout $t \
      python3 deploy/dynamic_shapes_bench.py --device cuda --compare-static --interleave --phases --dtype bfloat16 \
        --lengths 128,256,384,512 --tokens 8192 --d 256 --steps $steps > $OUT/bench-dyn13-$label.txt 2>&1
    echo "$label rc=$?"
  }
  run_arm A-new $n 50 30 TCCD_LEAN_SYMBOLIC_ENTRY=1 TCCD_SYMBOLIC_ONE_WORKSPACE=1
  run_arm B-off $o 45 30 TCCD_LEAN_SYMBOLIC_ENTRY=0 TCCD_SYMBOLIC_ONE_WORKSPACE=0
  run_arm A2-new $n 30 30 TCCD_LEAN_SYMBOLIC_ENTRY=1 TCCD_SYMBOLIC_ONE_WORKSPACE=1
  run_arm C-new-profile $n 25 15 TCCD_PLAN_PROFILE=1
  kill $pn $po; wait $pn $po 2>/dev/null
  grep -hE "worst|^ +[0-9]+ +[0-9]+ |^ +[0-9]+ +[0-9.]+ / |peak memory|native steps|plan profile|per call:|Python wrapper" $OUT/bench-dyn13-*.txt | cut -c1-400
}
req_dyn13
```
```bash
timeout 60 bash tests/run_gpu.sh dist/tccd.tar.xz -q -k "test_dynamic_cuda_kernels_match_eager_at_every_size and transformer" \
  > $OUT/gpu-test-dyn13.log 2>&1; echo "E rc=$?"; tail -3 $OUT/gpu-test-dyn13.log
