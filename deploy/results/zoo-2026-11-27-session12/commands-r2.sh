source .gpu/hdr.sh
NG=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l); echo "gpus $NG"
bench() {  # bench LABEL DISABLED_PASSES BENCH_ARGS...
  local d=$(mktemp -d) label=$1 passes=$2; shift 2
  TCCD_DISABLE_PASSES=$passes $TCCD_BINARY --listen unix:$d/tccd.sock --cache-dir $d/db > $d/daemon.log 2>&1 &
  local pid=$!; sleep 2
  TCCD_NO_AUTOSTART=1 TCCD_ADDRESS=unix:$d/tccd.sock TCCD_CACHE_DIR=$d/client timeout 70 \
    python3 deploy/dynamic_shapes_bench.py --device cuda --compare-static --interleave "$@" > $OUT/bench-$label.txt 2>&1; echo "$label rc=$?"
  kill $pid
}
lane0() {  # GPU suite, dyn7/dyn6 bench
  timeout 240 bash tests/run_gpu.sh dist/tccd.tar.xz -q -rfE > $OUT/gpu-tests.log 2>&1; el gputests $?
  ARGS="--dtype bfloat16 --lengths 128,256,384,512 --tokens 8192 --d 256 --steps 30"
  TCCD_PLAN_PROFILE=1 bench dyn7 "" $ARGS --top-kernels 25; el dyn7 0
  TCCD_PLAN_PROFILE=1 bench dyn-off "symbolic-layer-norm-backward-split,symbolic-embedding-backward,symbolic-split-as-slices" $ARGS; el dynoff 0
}
lane1() {  # pool, infk2, loss bert peak
  TL="--models resnet50 --backends tccd --workloads train --batch large --iters 10 --warmup 3 --timeout-s 55 --top-kernels 40 --no-check"
  timeout 65 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/pool-zoo-new $TL --budget-s 60 > $OUT/pool-zoo-new.log 2>&1; el poolnew $?
  TCCD_DISABLE_PASSES=max-pool-kernels timeout 65 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/pool-zoo-off $TL --budget-s 60 > $OUT/pool-zoo-off.log 2>&1; el pooloff $?
  timeout 115 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/infk2 --models llama,t5 --backends tccd --workloads infer --batch small,large --iters 10 --warmup 3 --timeout-s 50 --top-kernels 60 --no-check --budget-s 110 > $OUT/infk2.log 2>&1; el infk2 $?
  timeout 60 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/zoo_bert --models bert --backends tccd --workloads train --batch small --iters 10 --warmup 3 --timeout-s 55 --no-check > $OUT/zoo_bert.log 2>&1; el bertpeak $?
}
lane2() {  # gemm2
  timeout 90 python3 deploy/column_bench.py --tccd "$TCCD_BINARY" --batch 64 --iters 10 --cases cnx1,cnx3 --top 8 --variant tuned:TCCD_GEMM_AUTOTUNE=8 --variant swap:TCCD_GEMM_AUTOTUNE=8+TCCD_GEMM_AUTOTUNE_SWAP=1 --backends tccd,tccd-tuned,tccd-swap > $OUT/gemm2-column-bench.txt 2>&1; el colbench $?
  TL="--workloads train --batch large --iters 10 --warmup 3 --timeout-s 80 --top-kernels 40 --no-check"
  TCCD_GEMM_AUTOTUNE=8 timeout 90 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/gemm2-zoo-tuned --models convnext --backends tccd $TL --budget-s 85 > $OUT/gemm2-zoo-tuned.log 2>&1; el tuned $?
  TCCD_GEMM_AUTOTUNE=8 TCCD_GEMM_AUTOTUNE_SWAP=1 timeout 90 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/gemm2-zoo-swap --models convnext --backends tccd $TL --budget-s 85 > $OUT/gemm2-zoo-swap.log 2>&1; el swap $?
}
lane3() {  # lnb2, warm resnet
  timeout 100 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/lnb_bert --models bert --backends tccd --workloads train --batch large --iters 10 --warmup 3 --timeout-s 90 --top-kernels 40 --no-check > $OUT/lnb_bert.log 2>&1; el lnbbert $?
  TCCD_DISABLE_PASSES=layer-norm-grad-narrow-reads timeout 100 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/lnb_bert_off --models bert --backends tccd --workloads train --batch large --iters 10 --warmup 3 --timeout-s 90 --top-kernels 40 --no-check > $OUT/lnb_bert_off.log 2>&1; el lnbbertoff $?
  TCCD_PLAN_PROFILE=1 timeout 150 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/warm-r50 --models resnet50 --workloads train --batch small --backends eager,tccd --warm --aot --first-step-only --warm-ab TCCD_CONV_WARMUP=0 --timeout-s 60 --budget-s 140 > $OUT/warm-r50.log 2>&1; el warmr50 $?
}
for i in 0 1 2 3; do (export CUDA_VISIBLE_DEVICES=$((i % NG)); lane$i) > $OUT/lane$i.txt 2>&1 & done
wait
el all 0
for f in $OUT/lane*.txt; do echo "#### $f"; cut -c1-200 $f | head -40; done
grep -E "^FAILED|passed|failed" $OUT/gpu-tests.log | tail -12
cd $OUT && rm -f */results.png */daemon.log && tar czf /tmp/all.tgz --exclude=all.tgz . && mv /tmp/all.tgz $OUT/all.tgz && find . -type f ! -name all.tgz ! -name 'lane*.txt' -delete; ls -la $OUT
