S=${S:-$(date +%s)}

el() { echo "$1 rc=$2 $(( $(date +%s)-S ))s"; }
zoo() { # zoo NAME TIMEOUT args...
  local n=$1 t=$2; shift 2
  ZOO_DAEMON_ARGS=${ZOO_DAEMON_ARGS:---log-level=debug} timeout $t bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/$n "$@" --no-check > $OUT/$n.log 2>&1; el $n $?
  grep -E "^\|" $OUT/$n.log | head -16
  grep -h "compile stages" $OUT/$n/daemon.log 2>/dev/null | cut -c1-400 > $OUT/$n/stages.txt
  rm -f $OUT/$n/results.png $OUT/$n/daemon.log $OUT/$n/notes.txt
}

sub() { local n=$1; shift; ( export OUT=$OUT/$n; mkdir -p $OUT; "$@" ); el $n $?; }
req_pool2() {
  TL="--models resnet50 --workloads train --batch large --iters 10 --warmup 3 --top-kernels 80 --no-check"
  timeout 45 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/pool2-new --backends tccd $TL --timeout-s 40 --budget-s 40 > $OUT/pool2-new.log 2>&1; echo new rc=$?
  TCCD_DISABLE_PASSES=index-fixed-entries timeout 45 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/pool2-off --backends tccd $TL --timeout-s 40 --budget-s 40 > $OUT/pool2-off.log 2>&1; echo off rc=$?
  grep -E "^\|" $OUT/pool2-*.log | head -20
  CENSUS_DEVICE=cuda CENSUS_BATCH=64 timeout 60 python3 tests/tools/cuda_plan_census.py --dump-graphs $OUT/graphs --graphs-only tests/tools/census_models.py resnet50 > $OUT/graphs.log 2>&1; echo graphs rc=$?
  rm -f $OUT/*/results.png
}
req_dyn8() {
  bench() {
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
}
req_peak2() {
  timeout 240 python3 deploy/peak_memory_probe.py --model bert --batch small --tccd "$TCCD_BINARY" \
    --backends inductor,tccd \
    --variant 'old:TCCD_RELEASED_INPUTS=0' \
    --detail inductor,tccd,tccd-old > $OUT/peak_probe.txt 2>&1; echo "probe rc=$?"
  CENSUS_DEVICE=cuda CENSUS_AS_ZOO=1 CENSUS_BATCH=2 timeout 120 python3 tests/tools/cuda_plan_census.py \
    --dump-graphs $OUT/bert_graphs --graphs-only tests/tools/census_models.py bert \
    > $OUT/bert_graphs.log 2>&1; echo "graphs rc=$?"; ls $OUT/bert_graphs
}
req_cold5() {
  C="--workloads train --batch large --first-step-only --no-check --timeout-s 90"
  run() {
    local n=$1; shift
    ZOO_DAEMON_ARGS=--log-level=debug timeout 200 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/$n "$@" > $OUT/$n.log 2>&1; echo "$n rc=$?"
    grep -hE 'compiling graph|cuda backend:|cuda host:|compile stages|Compile miss' $OUT/$n/daemon.log | cut -c1-700 > $OUT/$n/stages.txt
    rm -f $OUT/$n/daemon.log $OUT/$n/results.png
  }
  run A $C --models t5,llama,convnext --backends tccd
  TCCD_EAGER_WHILE_COMPILING=1 run B $C --models t5,llama --backends tccd
  run C $C --models t5 --backends inductor
  for n in A B C; do echo "## $n"; grep -E '^\[|^\| (t5|llama|convnext) \|' $OUT/$n.log | cut -c1-400; done
}
req_warm3_l1() {
  TCCD_PLAN_PROFILE=1 TCCD_DEFER_BACKWARD_INIT=2 timeout 150 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/w3-r50ab \
    --models resnet50 --workloads train --batch small --backends eager,tccd --first-step-only --warm --aot \
    --warm-ab ZOO_AOT_GUARDS=serializable,TCCD_DEFER_BACKWARD_INIT=0 --warm-ab-starts aot \
    --timeout-s 60 --budget-s 140 > $OUT/w3-r50ab.log 2>&1; echo l1 rc=$?
}
req_warm3_l2() {
  TCCD_PLAN_PROFILE=1 TCCD_DEFER_BACKWARD_INIT=2 timeout 150 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/w3-r50ind \
    --models resnet50 --workloads train --batch small --backends eager,inductor,tccd --first-step-only --warm --aot \
    --timeout-s 80 --budget-s 145 > $OUT/w3-r50ind.log 2>&1; echo l2 rc=$?
}
req_warm3_l3() {
  TCCD_PLAN_PROFILE=1 TCCD_DEFER_BACKWARD_INIT=2 timeout 150 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/w3-cnxab \
    --models convnext --workloads train --batch small --backends eager,tccd --first-step-only --warm --aot \
    --warm-ab ZOO_AOT_GUARDS=serializable,TCCD_DEFER_BACKWARD_INIT=0 --warm-ab-starts aot \
    --timeout-s 60 --budget-s 140 > $OUT/w3-cnxab.log 2>&1; echo l3 rc=$?
}
req_warm3_merge() {
  python3 deploy/zoo_benchmark.py --merge $OUT/w3-r50ab,$OUT/w3-r50ind,$OUT/w3-cnxab --out $OUT/w3-merged; rm -f $OUT/*/results.png
}
req_ro2() {
  S=/tmp/ro2-$$.sock; rm -f $S
  $TCCD_BINARY --listen unix:$S --cache-dir /tmp/ro2-db-$$ > $OUT/ro2-daemon.log 2>&1 & D=$!
  for i in $(seq 100); do [ -S $S ] && break; sleep 0.1; done
  export TCCD_ADDRESS=unix:$S PYTHONPATH=$PYTHONPATH:$PWD/deploy
  ZL="--models resnet50,gpt2,bert --backends tccd --workloads train --batch small --mode reduce-overhead --iters 20 --warmup 3 --timeout-s 45 --top-kernels 5 --no-check"
  timeout 80 python3 deploy/zoo_benchmark.py --out $OUT/ro2-new $ZL --budget-s 75 > $OUT/ro2-new.log 2>&1; echo new rc=$?
  TCCD_LEAN_CUDAGRAPHS=0 timeout 50 python3 deploy/zoo_benchmark.py --out $OUT/ro2-off $ZL --budget-s 45 > $OUT/ro2-off.log 2>&1; echo off rc=$?
  grep -E "^\| (resnet50|gpt2|bert) " $OUT/ro2-new.log $OUT/ro2-off.log
  for v in 1 0; do
    TCCD_LEAN_CUDAGRAPHS=$v timeout 30 python3 deploy/host_profile.py resnet50 tccd --device cuda --mode reduce-overhead --iters 30 --python-profile 5 > $OUT/ro2-hp-lean$v-$RANDOM.txt 2>&1; echo hp$v rc=$?
  done
  grep -E "^==|host|function calls" $OUT/ro2-hp-*.txt | head -40
  kill $D; wait $D 2>/dev/null; rm -rf /tmp/ro2-db-$$ $S; rm -f $OUT/*/results.png
}
req_gemm3() {
  timeout 60 python3 deploy/column_bench.py --tccd "$TCCD_BINARY" --batch 64 --iters 10 --cases cnx1 --top 10 \
    --variant ws8:TCCD_GEMM_WORKSPACE_MB=8 --variant tuned:TCCD_GEMM_AUTOTUNE=8 \
    --backends inductor,tccd,tccd-ws8,tccd-tuned > $OUT/gemm3-column-bench.txt 2>&1; echo "colbench rc=$?"
  timeout 30 python3 deploy/gemm_workspace_bench.py > $OUT/gemm3-workspace-bench.txt 2>&1; echo "wsbench rc=$?"
  TCCD_BINARY=$TCCD_BINARY timeout 90 python3 -m pytest tests/python/test_gpu_gemm_autotune.py -v -s -p no:cacheprovider \
    > $OUT/gemm3-gpu-test.log 2>&1; echo "gputest rc=$?"
  TL="--workloads train --batch large --iters 10 --warmup 3 --timeout-s 55 --top-kernels 40 --no-check"
  TCCD_GEMM_AUTOTUNE=8 timeout 70 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/gemm3-zoo-tuned \
    --models convnext,vit --backends tccd $TL --budget-s 65 > $OUT/gemm3-zoo-tuned.log 2>&1; echo "zoo rc=$?"
  rm -f $OUT/*/results.png
}
req_infk2() {
  zoo infk2-L 70 --models llama --backends inductor,tccd --workloads infer --batch large --iters 10 --warmup 3 --timeout-s 50 --top-kernels 30 --budget-s 65
  zoo infk2-S 35 --models llama --backends tccd --workloads infer --batch small --iters 10 --warmup 3 --timeout-s 30 --top-kernels 30 --budget-s 30
  TCCD_DISABLE_PASSES=affine-factory-folding,index-reader-siblings,alias-elimination,slice-of-pad \
    zoo infk2-off 60 --models llama --backends tccd --workloads infer --batch small,large --iters 10 --warmup 3 --timeout-s 30 --top-kernels 30 --budget-s 55
  timeout 60 python3 -m pytest tests/python/test_gpu_mask_rotary.py -q -rfE > $OUT/infk2-gpu-tests.log 2>&1; el gputests $?
}
req_gputests() {
  timeout 330 bash tests/run_gpu.sh dist/tccd.tar.xz -q -rfE > $OUT/gpu-tests.log 2>&1; echo gputests rc=$?
  grep -E "^FAILED|^ERROR|passed|failed" $OUT/gpu-tests.log | tail -15
}
lane0() { sub pool2 req_pool2; sub infk2 req_infk2; sub dyn8 req_dyn8; sub ro2 req_ro2; }
lane1() { sub cold5 req_cold5; sub gemm3 req_gemm3; sub warm3 req_warm3_l1; sub peak2 req_peak2; }
