# dyn14's GPU request (session 18), with a second new arm (A2-new) for the final
req_dyn14() {
  local n=$(mktemp -d)
  $TCCD_BINARY --listen unix:$n/tccd.sock --cache-dir $n/db > $n/daemon.log 2>&1 &
  local pn=$!; sleep 2
  run_arm() {  # run_arm LABEL TIMEOUT STEPS ROUNDS ENV...
    local label=$1 t=$2 steps=$3 rounds=$4; shift 4
    env "$@" TCCD_NO_AUTOSTART=1 TCCD_ADDRESS=unix:$n/tccd.sock TCCD_CACHE_DIR=$n/client-$label timeout $t \
      python3 deploy/dynamic_shapes_bench.py --device cuda --compare-static --interleave --phases --dtype bfloat16 \
        --lengths 128,256,384,512 --tokens 8192 --d 256 --steps $steps --rounds $rounds > $OUT/bench-dyn14-$label.txt 2>&1
    echo "$label rc=$?"
  }
  run_arm A-new 50 30 3 TCCD_SHARED_SAVED_CONSTANTS=1
  run_arm B-off 35 30 3 TCCD_SHARED_SAVED_CONSTANTS=0
  run_arm A2-new 35 30 3 TCCD_SHARED_SAVED_CONSTANTS=1
  run_arm C-new-profile 30 15 1 TCCD_PLAN_PROFILE=1
  kill $pn; wait $pn 2>/dev/null
  grep -hE "worst|rounds, each|^ +[0-9]+ +[0-9]+ +[0-9]+ |^ +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+$|^ +[0-9]+ +[0-9.]+ / |peak memory|native steps|plan profile .* forward|extern steps by op" \
    $OUT/bench-dyn14-*.txt | cut -c1-400
}
