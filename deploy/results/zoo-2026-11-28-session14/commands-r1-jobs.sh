# r1 of session 14: the helpers' GPU requests, verbatim, one function each (sourced by r1.sh).
req_rpeak() {
  zoo RPA 100 --models resnet50 --backends inductor,tccd --workloads infer --batch large --iters 10 --warmup 3 --top-kernels 10 --timeout-s 60 --budget-s 80
  grep -E "^\| resnet50" $OUT/RPA.log | head -3
  TCCD_DISABLE_PASSES=dying-extern-outputs,dying-reordered-kernels zoo RPB 50 --models resnet50 --backends tccd --workloads infer --batch large --iters 10 --warmup 3 --top-kernels 10 --timeout-s 40 --budget-s 40
  grep -E "^\| resnet50" $OUT/RPB.log | head -3
  zoo RPT 60 --models resnet50 --backends tccd --workloads train --batch large --iters 10 --warmup 3 --top-kernels 10 --timeout-s 50 --budget-s 50
}
req_infk3() {
  zoo infk3-cnx 100 --models convnext --backends inductor,tccd --workloads infer --batch large --iters 10 --warmup 3 --timeout-s 60 --top-kernels 30 --budget-s 90
  (export TCCD_DISABLE_PASSES=channels-last-permutes; zoo infk3-cnx-off 50 --models convnext --backends tccd --workloads infer --batch large --iters 10 --warmup 3 --timeout-s 45 --top-kernels 30 --budget-s 45)
  mkdir -p $OUT/graphs
  CENSUS_DEVICE=cuda CENSUS_BATCH=2 timeout 40 python3 tests/tools/cuda_plan_census.py --dump-graphs $OUT/graphs --graphs-only tests/tools/census_models.py t5_infer > $OUT/graphs/t5.log 2>&1; el graphs-t5 $?
  CENSUS_DEVICE=cuda CENSUS_BATCH=2 timeout 40 python3 tests/tools/cuda_plan_census.py --dump-graphs $OUT/graphs --graphs-only tests/tools/census_models.py llama_infer > $OUT/graphs/llama.log 2>&1; el graphs-llama $?
  CENSUS_DEVICE=cuda CENSUS_BATCH=8 timeout 40 python3 tests/tools/cuda_plan_census.py --dump-graphs $OUT/graphs --graphs-only tests/tools/census_models.py convnext_infer > $OUT/graphs/convnext.log 2>&1; el graphs-convnext $?
}
req_host6() {
  S1=/tmp/h6a-$$.sock; S2=/tmp/h6b-$$.sock; rm -f $S1 $S2
  $TCCD_BINARY --listen unix:$S1 --cache-dir /tmp/h6a-db-$$ > $OUT/h6-daemon-new.log 2>&1 & D1=$!
  TCCD_DISABLE_PASSES=horizontal-returned-views,float-unit-scales,horizontal-near-groups $TCCD_BINARY --listen unix:$S2 --cache-dir /tmp/h6b-db-$$ > $OUT/h6-daemon-old.log 2>&1 & D2=$!
  for i in $(seq 100); do [ -S $S1 ] && [ -S $S2 ] && break; sleep 0.1; done
  export PYTHONPATH=$PYTHONPATH:$PWD/deploy
  run() { n=$1; t=$2; s=$3; shift 3; e=(); while [ "$1" != "--" ]; do e+=("$1"); shift; done; shift
    echo "== $n"; timeout $t env TCCD_ADDRESS=unix:$s TCCD_PLAN_PROFILE=1 "${e[@]}" python3 deploy/host_profile.py "$@" > $OUT/h6-$n.txt 2>&1; echo "rc=$?"
    grep -E '^==|host|plan calls|tccd plan profile|per call:' $OUT/h6-$n.txt | cut -c1-400 | head -20; }
  run t5         45 $S1 -- t5 tccd --device cuda --iters 20
  run t5-old     45 $S2 -- t5 tccd --device cuda --iters 20
  run t5-ind     60 $S1 -- t5 inductor --device cuda --iters 20
  run gpt2-ro    30 $S1 -- gpt2 tccd --device cuda --mode reduce-overhead --iters 20
  run gpt2-ro-pack 30 $S1 TCCD_PACK_SAVED=1 -- gpt2 tccd --device cuda --mode reduce-overhead --iters 20
  run t5-ro      35 $S1 -- t5 tccd --device cuda --mode reduce-overhead --iters 20
  run t5-ro-pack 35 $S1 TCCD_PACK_SAVED=1 -- t5 tccd --device cuda --mode reduce-overhead --iters 20
  kill $D1 $D2; wait $D1 $D2 2>/dev/null; rm -rf /tmp/h6a-db-$$ /tmp/h6b-db-$$ $S1 $S2
}
req_cold6() {
  C="--workloads train --batch large --first-step-only --no-check --timeout-s 90"
  crun() { local n=$1; shift
    ZOO_DAEMON_ARGS=--log-level=debug timeout 200 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/$n "$@" > $OUT/$n.log 2>&1; echo "$n rc=$?"
    grep -hE 'compiling graph|cuda backend:|compile stages' $OUT/$n/daemon.log | cut -c1-500 > $OUT/$n/stages.txt
    rm -f $OUT/$n/daemon.log $OUT/$n/results.png; }
  crun A $C --models t5,llama,gpt2 --backends tccd
  TCCD_EAGER_WHILE_COMPILING=0 TCCD_DEFER_FULL_GC=0 crun B $C --models t5,llama,gpt2 --backends tccd
  crun C $C --models t5,gpt2,llama --backends inductor
}
req_dyn9() {
  bench() { local d=$(mktemp -d) label=$1 passes=$2; shift 2
    TCCD_DISABLE_PASSES=$passes $TCCD_BINARY --listen unix:$d/tccd.sock --cache-dir $d/db > $d/daemon.log 2>&1 &
    local pid=$!; sleep 2
    TCCD_NO_AUTOSTART=1 TCCD_ADDRESS=unix:$d/tccd.sock TCCD_CACHE_DIR=$d/client timeout 70 \
      python3 deploy/dynamic_shapes_bench.py --device cuda --compare-static --interleave "$@" > $OUT/bench-$label.txt 2>&1; echo "$label rc=$?"
    kill $pid; }
  ARGS="--dtype bfloat16 --lengths 128,256,384,512 --tokens 8192 --d 256 --steps 30"
  TCCD_PLAN_PROFILE=1 bench dyn9 "" $ARGS --top-kernels 8
  TCCD_PLAN_PROFILE=1 bench dyn9-off "symbolic-embedding-kernels" $ARGS --top-kernels 8
  timeout 60 python3 -m pytest tests/python/test_gpu_dynamic_embeddings.py -q -p no:cacheprovider -s > $OUT/gpu-test-dyn9.txt 2>&1; echo "test rc=$?"
  tail -3 $OUT/bench-dyn9.txt $OUT/bench-dyn9-off.txt $OUT/gpu-test-dyn9.txt
}
req_warm4() {
  TCCD_PLAN_PROFILE=1 timeout 140 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/w4-vit \
    --models vit --workloads train --batch small --backends eager,tccd --first-step-only --warm --aot \
    --warm-ab ZOO_AOT_GUARDS=lean-dict-types,TCCD_AOT_SETTLE_TRACE_LOG=0,TCCD_DEFER_BACKWARD_INIT=0 \
    --warm-ab-starts aot --timeout-s 60 --budget-s 130 > $OUT/w4-vit.log 2>&1; el w4-vit $?
  timeout 70 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/w4-convnext \
    --models convnext --workloads train --batch small --backends eager,tccd --first-step-only --aot \
    --timeout-s 45 --budget-s 60 > $OUT/w4-convnext.log 2>&1; el w4-convnext $?
  rm -f $OUT/w4-*/results.png $OUT/w4-*/daemon.log
}
req_rpeakC() {
  TCCD_TEST_BINARY=$TCCD_BINARY timeout 90 python3 -m pytest tests/python/test_gpu_channels_last.py -q -p no:cacheprovider 2>&1 | tail -5
}
