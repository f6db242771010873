# r1 of session 16: the helpers' GPU requests, one function each (sourced by r1.sh).
TL8="--workloads train --batch large --first-step-only --timeout-s 80"
TS8="--workloads train --batch small --first-step-only --timeout-s 60"
req_cold8A() {
  ZOO_SAMPLE_PHASE=dynamo zoo t5L-new 100 --models t5 --backends tccd $TL8
  ZOO_SAMPLE_PHASE=dynamo TCCD_WAIT_FULL_GC=0 zoo t5L-old 100 --models t5 --backends tccd $TL8
  ZOO_SAMPLE_PHASE=dynamo zoo t5L-ind 100 --models t5 --backends inductor $TL8
}
req_cold8B() {
  zoo cnxL-new 90 --models convnext --backends tccd $TL8
  TCCD_EARLY_SAVED_LAYOUT=0 zoo cnxL-early0 90 --models convnext --backends tccd $TL8
  zoo t5S-new 70 --models t5 --backends tccd $TS8
  TCCD_WAIT_FULL_GC=0 zoo t5S-old 70 --models t5 --backends tccd $TS8
  xz -dkc deploy/results/cold7-2026-11-28-session15/gpt2_forward_kernels.cu.xz > /tmp/gpt2_fwd.cu
  timeout 60 python3 deploy/nvrtc_split_bench.py /tmp/gpt2_fwd.cu --rdc --repeat 1 --threads 16 \
      --processes 16 --makespan 16 > $OUT/nvrtc_threads_vs_processes.txt 2>&1; el nvrtc $?
  cat $OUT/nvrtc_threads_vs_processes.txt
}
req_dyn11() {
  local d=$(mktemp -d)
  $TCCD_BINARY --listen unix:$d/tccd.sock --cache-dir $d/db > $d/daemon.log 2>&1 &
  local pid=$!; sleep 2
  bench() { local label=$1 t=$2; shift 2
    env "$@" TCCD_NO_AUTOSTART=1 TCCD_ADDRESS=unix:$d/tccd.sock TCCD_CACHE_DIR=$(mktemp -d) timeout $t \
      python3 deploy/dynamic_shapes_bench.py --device cuda --compare-static --interleave --phases --dtype bfloat16 \
        --lengths 128,256,384,512 --tokens 8192 --d 256 --steps 30 $EXTRA > $OUT/bench-dyn11-$label.txt 2>&1
    echo "$label rc=$?"; }
  EXTRA="--top-kernels 8" bench A-lean 65 TCCD_LEAN_SYMBOLIC=1
  EXTRA="" bench B-lean-off 45 TCCD_LEAN_SYMBOLIC=0
  EXTRA="" bench C-lean-profile 45 TCCD_LEAN_SYMBOLIC=1 TCCD_PLAN_PROFILE=1
  kill $pid
  grep -hE "worst|^ +[0-9]+ +[0-9]+ |^ +[0-9]+ +[0-9.]+ / |GPU busy" $OUT/bench-dyn11-*.txt
}
pre() { # pre NAME MODEL TIMEOUT-S
  ZOO_DAEMON_ARGS=--log-level=info timeout 145 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/pre-$1 \
    --models $2 --backends eager,tccd --workloads train --batch small --first-step-only --warm \
    --warm-precompile --no-check --timeout-s $3 --budget-s 135 > $OUT/pre-$1.log 2>&1; el pre-$1 $?
  rm -f $OUT/pre-$1/results.png $OUT/pre-$1/daemon.log
  grep -E "warm-pre|Dynamo's package|tccd warm, sum" $OUT/pre-$1.log | cut -c1-300 | head -8
}
req_pre11gpt2() { pre gpt2 gpt2 75; }
req_pre11t5() { pre t5 t5 80; }
req_pre11r50() { pre r50 resnet50 80; }
req_ro9() {
  S1=/tmp/ro9-$$.sock; rm -f $S1
  $TCCD_BINARY --listen unix:$S1 --cache-dir /tmp/ro9-db-$$ > $OUT/ro9-daemon.log 2>&1 & D1=$!
  for i in $(seq 100); do [ -S $S1 ] && break; sleep 0.1; done
  export PYTHONPATH=$PYTHONPATH:$PWD/deploy
  echo "== probe gpt2"; timeout 50 env TCCD_ADDRESS=unix:$S1 python3 deploy/zero_tangents_probe.py --model gpt2 > $OUT/ro9-probe-gpt2.txt 2>&1; echo "rc=$?"; grep -E "^gpt2|Error|error" $OUT/ro9-probe-gpt2.txt | head -12
  run() { n=$1; t=$2; shift 2; e=(); while [ "$1" != "--" ]; do e+=("$1"); shift; done; shift
    echo "== $n"; timeout $t env TCCD_ADDRESS=unix:$S1 TCCD_PLAN_PROFILE=1 "${e[@]}" python3 deploy/host_profile.py "$@" > $OUT/ro9-$n.txt 2>&1; echo "rc=$?"
    grep -E '^==|host|plan calls|tccd plan profile|per call:|native steps by kind|extern steps by op|Error|error' $OUT/ro9-$n.txt | cut -c1-600 | sort -u | head -24; }
  run llama         30 -- llama tccd --device cuda --iters 20
  run llama-ind     44 -- llama inductor --device cuda --iters 20
  run gpt2-ro-ind 45 -- gpt2 inductor --device cuda --mode reduce-overhead --iters 20
  timeout 40 env TCCD_ADDRESS=unix:$S1 python3 deploy/zero_tangents_probe.py --model bert --variants ro-off,ro-on,default-off,default-on > $OUT/ro9-probe-bert.txt 2>&1; grep -E "^bert" $OUT/ro9-probe-bert.txt
  kill $D1; wait $D1 2>/dev/null; rm -rf /tmp/ro9-db-$$ $S1
}
w6() { # w6 NAME MODEL [extra zoo args...]
  local n=$1 m=$2; shift 2
  TCCD_PLAN_PROFILE=1 timeout 150 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/w6-$n \
    --models $m --backends eager,tccd --workloads train --batch small --first-step-only --warm --aot \
    --parallel-fill "$@" --no-check --timeout-s 60 > $OUT/w6-$n.log 2>&1; el w6-$n $?
  rm -f $OUT/w6-$n/results.png $OUT/w6-$n/daemon.log
  grep -E "^\| $m|over eager|sum" $OUT/w6-$n.log | cut -c1-300 | head -12
}
req_warm6r50() {
  timeout 45 python3 deploy/cudnn_setup_probe.py --model resnet50 --json $OUT/w6-probe-resnet50.json > $OUT/w6-probe-resnet50.txt 2>&1; el probe $?
  TCCD_CONV_WARMUP_FORWARD=1 w6 r50 resnet50 --warm-ab TCCD_CONV_WARMUP_FORWARD=0,TCCD_AOT_GUARD_STACKS=1 --warm-ab-starts aot --budget-s 135
}
req_warm6cnx() {
  timeout 45 python3 deploy/cudnn_setup_probe.py --model convnext --json $OUT/w6-probe-convnext.json > $OUT/w6-probe-convnext.txt 2>&1; el probe $?
  TCCD_CONV_WARMUP_FORWARD=1 w6 cnx convnext --warm-ab TCCD_CONV_WARMUP_FORWARD=0 --budget-s 125
  TCCD_BINARY=$TCCD_BINARY timeout 120 python3 -m pytest tests/python/test_gpu_conv_warmup.py -q -p no:cacheprovider -k forward_warmup > $OUT/w6-gputest.txt 2>&1; el w6-gputest $?; tail -3 $OUT/w6-gputest.txt
}
req_warm6vit() {
  TCCD_CONV_WARMUP_FORWARD=3 w6 vit vit --warm-ab TCCD_CONV_WARMUP_FORWARD=0,TCCD_AOT_GUARD_STACKS=1 --warm-ab-starts aot --budget-s 135
}
