# r1 of session 15: the helpers' GPU requests, one function each (sourced by r1.sh; trimmed to fit).
req_gath() {
  timeout 90 bash tests/run_gpu.sh dist/tccd.tar.xz -q -rfE -k row_gathers > $OUT/gath-gputests.log 2>&1; el gath-gputests $?; tail -5 $OUT/gath-gputests.log
  zoo gath-new 75 --models t5,llama --backends tccd --workloads infer --batch large --iters 10 --warmup 3 --top-kernels 40 --timeout-s 50 --budget-s 60
  grep -E "^\| (t5|llama)" $OUT/gath-new.log | head -3
  (export TCCD_DISABLE_PASSES=row-gathers,embeddings-to-reader-shape; zoo gath-off 75 --models t5,llama --backends tccd --workloads infer --batch large --iters 10 --warmup 3 --top-kernels 40 --timeout-s 50 --budget-s 60)
  grep -E "^\| (t5|llama)" $OUT/gath-off.log | head -3
  zoo gath-ind 50 --models llama --backends inductor --workloads infer --batch large --iters 10 --warmup 3 --top-kernels 40 --timeout-s 45 --budget-s 45
}
req_infl() {
  IL="--workloads infer --batch large --iters 10 --warmup 3 --top-kernels 30"
  zoo infl-new 110 --models bert,t5 --backends inductor,tccd $IL --timeout-s 60 --budget-s 90
  grep -E "^\| (bert|t5)" $OUT/infl-new.log | head -3
  (export TCCD_DISABLE_PASSES=math-attention-to-fused; zoo infl-off 60 --models bert,t5 --backends tccd $IL --timeout-s 40 --budget-s 45)
  grep -E "^\| (bert|t5)" $OUT/infl-off.log | head -3
  d=$(mktemp -d); $TCCD_BINARY --listen unix:$d/s.sock --cache-dir $d/db > $d/log 2>&1 & pid=$!; sleep 2
  TCCD_NO_AUTOSTART=1 TCCD_ADDRESS=unix:$d/s.sock TCCD_CACHE_DIR=$d/client timeout 80 \
    python3 deploy/infer_numerics_check.py --models bert,t5 --batch 2 --backends tccd,inductor > $OUT/infl-numerics.txt 2>&1; el numerics $?; kill $pid
  tail -12 $OUT/infl-numerics.txt
}
req_seg10() {
  bench() { local d=$(mktemp -d) label=$1; shift
    $TCCD_BINARY --listen unix:$d/tccd.sock --cache-dir $d/db > $d/daemon.log 2>&1 &
    local pid=$!; sleep 2
    TCCD_PLAN_PROFILE=1 TCCD_NO_AUTOSTART=1 TCCD_ADDRESS=unix:$d/tccd.sock TCCD_CACHE_DIR=$d/client timeout 65 \
      python3 deploy/dynamic_shapes_bench.py --device cuda --compare-static --interleave --dtype bfloat16 \
        --lengths 128,256,384,512 --tokens 8192 --d 256 --steps 30 > $OUT/bench-$label.txt 2>&1
    echo "$label rc=$?"; kill $pid; }
  TCCD_SYMBOLIC_SEGMENTS=1 bench seg10
  TCCD_SYMBOLIC_SEGMENTS=0 bench seg10-off
  timeout 25 python3 -m pytest tests/python/test_gpu_dynamic_kernels.py -k "transformer-1" -q -p no:cacheprovider -s > $OUT/gpu-test-seg10.txt 2>&1; echo "test rc=$?"
  grep -hE "worst|dynamic/static|^ +[0-9]+ +[0-9]+ " $OUT/bench-seg10.txt $OUT/bench-seg10-off.txt
  tail -4 $OUT/gpu-test-seg10.txt
}
req_cold7() {
  C="--workloads train --batch large --first-step-only --timeout-s 60"
  run() { local n=$1 d=$2; shift 2
    ZOO_DAEMON_ARGS="--log-level=debug $d" timeout 75 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/$n "$@" --no-check > $OUT/$n.log 2>&1; echo "$n rc=$?"
    grep -hE 'compiling graph|cuda backend: [0-9]|compile stages' $OUT/$n/daemon.log | cut -c1-420 > $OUT/$n/stages.txt
    rm -f $OUT/$n/daemon.log $OUT/$n/results.png
    grep -E "^\| " $OUT/$n.log | grep -v "^| model\|^|---" | cut -c1-260 | head -6; }
  for m in gpt2 t5 convnext; do
    run A-$m "" $C --models $m --backends tccd
    run B-$m "--waited-compile-nice=10" $C --models $m --backends tccd
  done
}
req_host7() {
  S1=/tmp/h7-$$.sock; rm -f $S1
  $TCCD_BINARY --listen unix:$S1 --cache-dir /tmp/h7-db-$$ > $OUT/h7-daemon.log 2>&1 & D1=$!
  for i in $(seq 100); do [ -S $S1 ] && break; sleep 0.1; done
  export PYTHONPATH=$PYTHONPATH:$PWD/deploy
  run() { n=$1; t=$2; shift 2; e=(); while [ "$1" != "--" ]; do e+=("$1"); shift; done; shift
    echo "== $n"; timeout $t env TCCD_ADDRESS=unix:$S1 TCCD_PLAN_PROFILE=1 "${e[@]}" python3 deploy/host_profile.py "$@" > $OUT/h7-$n.txt 2>&1; echo "rc=$?"
    grep -E '^==|host|plan calls|tccd plan profile|per call:|native steps by kind|extern steps by op|runs (with|under)|Error|error' $OUT/h7-$n.txt | cut -c1-600 | sort -u | head -24; }
  run t5-ro        38 -- t5 tccd --device cuda --mode reduce-overhead --iters 20
  run t5-ro-pack   18 TCCD_PACK_SAVED=1 -- t5 tccd --device cuda --mode reduce-overhead --iters 20
  run bert         15 -- bert tccd --device cuda --iters 20
  run gpt2         16 -- gpt2 tccd --device cuda --iters 20
  run r50-infer    15 -- resnet50 tccd --device cuda --infer --iters 30 --torch-profile
  run r50-infer-ind 24 -- resnet50 inductor --device cuda --infer --iters 30 --torch-profile
  run bert-ind     24 -- bert inductor --device cuda --iters 20
  kill $D1; wait $D1 2>/dev/null; rm -rf /tmp/h7-db-$$ $S1
}
req_warm5() {
  timeout 100 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/w5-new --models gpt2 \
    --backends eager,inductor,tccd --workloads train --batch small --warm --first-step-only \
    --parallel-fill --no-check --timeout-s 60 --budget-s 90 > $OUT/w5-new.log 2>&1; echo "A rc=$?"
  TCCD_TRACE_ONCE_LOGS=0 timeout 50 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/w5-old \
    --models gpt2 --backends tccd --workloads train --batch small --warm --first-step-only \
    --no-check --timeout-s 40 --budget-s 42 > $OUT/w5-old.log 2>&1; echo "B rc=$?"
  grep -vh "^$" $OUT/w5-new.log $OUT/w5-old.log | cut -c1-300 | head -60
  rm -f $OUT/w5-*/daemon.log $OUT/w5-*/results.png
}
