# The final's dynamic-shapes job (session 19): the bench with --rounds 3, defaults (A, A2) and with dyn15's two
# changes off (B: a daemon with TCCD_DISABLE_PASSES=symbolic-row-gathers, the client with TCCD_SYMBOLIC_SAVED_ARANGES=0).
req_dyn15final() {
  local n=$(mktemp -d)
  $TCCD_BINARY --listen unix:$n/new.sock --cache-dir $n/db-new > $OUT/daemon-dyn-new.log 2>&1 &
  local pn=$!
  TCCD_DISABLE_PASSES=symbolic-row-gathers $TCCD_BINARY --listen unix:$n/off.sock --cache-dir $n/db-off \
    > $OUT/daemon-dyn-off.log 2>&1 &
  local po=$!; sleep 2
  run_arm() {  # run_arm LABEL SOCKET TIMEOUT STEPS ROUNDS ENV...
    local label=$1 sock=$2 t=$3 steps=$4 rounds=$5; shift 5
    env "$@" TCCD_NO_AUTOSTART=1 TCCD_ADDRESS=unix:$n/$sock TCCD_CACHE_DIR=$n/client-$label timeout $t \
      python3 deploy/dynamic_shapes_bench.py --device cuda --compare-static --interleave --phases --dtype bfloat16 \
        --lengths 128,256,384,512 --tokens 8192 --d 256 --steps $steps --rounds $rounds > $OUT/bench-dyn-$label.txt 2>&1
    echo "$label rc=$?"
  }
  run_arm A-new new.sock 50 30 3 X=1
  run_arm B-off off.sock 45 30 3 TCCD_SYMBOLIC_SAVED_ARANGES=0
  run_arm A2-new new.sock 40 30 3 X=1
  kill $pn $po; wait $pn $po 2>/dev/null
  grep -hE "worst|native steps" $OUT/bench-dyn-*.txt | cut -c1-300
}
