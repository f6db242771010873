source .gpu/hdr.sh
zoo zooB 400 --models llama,resnet50,bert --workloads train --batch large --budget-s 390 --timeout-s 110 --top-kernels 40
grep -E "^- |^  - " $OUT/zooB.log | head -20
bench() {  # bench LABEL DISABLED_PASSES BENCH_ARGS...
  local d=$(mktemp -d) label=$1 passes=$2; shift 2
  TCCD_DISABLE_PASSES=$passes $TCCD_BINARY --listen unix:$d/tccd.sock --cache-dir $d/db > $d/daemon.log 2>&1 &
  local pid=$!; sleep 2
  TCCD_NO_AUTOSTART=1 TCCD_ADDRESS=unix:$d/tccd.sock TCCD_CACHE_DIR=$d/client timeout 75 \
    python deploy/dynamic_shapes_bench.py --device cuda --compare-static --interleave "$@" > $OUT/bench-$label.txt 2>&1; el $label $?
  tail -12 $OUT/bench-$label.txt
  grep -h "symbolic graph" $d/daemon.log | cut -c1-300 > $OUT/bench-$label-daemon.txt
  kill $pid
}
bench bf16-gemms "" --dtype bfloat16 --lengths 128,256,384,512 --tokens 8192 --d 256 --steps 30
bench bf16-extern symbolic-gemms --dtype bfloat16 --lengths 128,256,384,512 --tokens 8192 --d 256 --steps 30
