source .gpu/hdr.sh
nvidia-smi --query-gpu=index,name --format=csv,noheader
rem() { echo $(( $1 - ($(date +%s)-S) )); }
bench() {  # bench LABEL DISABLED_PASSES BENCH_ARGS...
  local d=$(mktemp -d) label=$1 passes=$2; shift 2
  TCCD_DISABLE_PASSES=$passes $TCCD_BINARY --listen unix:$d/tccd.sock --cache-dir $d/db > $d/daemon.log 2>&1 &
  local pid=$!; sleep 2
  TCCD_NO_AUTOSTART=1 TCCD_ADDRESS=unix:$d/tccd.sock TCCD_CACHE_DIR=$d/client timeout 70 \
    python3 deploy/dynamic_shapes_bench.py --device cuda --compare-static --interleave "$@" > $OUT/bench-$label.txt 2>&1; echo "$label rc=$?"
  kill $pid
}
lane0() {
  timeout 210 bash tests/run_gpu.sh dist/tccd.tar.xz -q -rfE > $OUT/gpu-tests.log 2>&1; el gputests $?
  timeout $(( $(rem 380) < 150 ? $(rem 380) : 150 )) python3 deploy/column_bench.py --tccd $TCCD_BINARY --batch 64 --iters 20 --cases cnx1,vit,gpt2 --top 3 \
    --variant main:TCCD_SOFT_CASTS=1+TCCD_LIBDEVICE_ERF=1 --variant split:TCCD_COLUMN_STORED_PROLOGUE=0 --variant v8:TCCD_COLUMN_VEC_BYTES=8 \
    --backends inductor,tccd,tccd-main,tccd-split,tccd-v8 > $OUT/colbench.txt 2>&1; el colbench $?
  timeout $(( $(rem 460) < 80 ? $(rem 460) : 80 )) python3 deploy/stack_permute_bench.py --tccd "$TCCD_BINARY" --tile-ab --batch 64 --iters 50 > $OUT/stack-permute.txt 2>&1; el stackperm $?
  TCCD_PLAN_PROFILE=1 bench dyn "" --dtype bfloat16 --lengths 128,256,384,512 --tokens 8192 --d 256 --steps 30; el dynbench 0
}
lane1() {
  zoo zA 240 --models vit,bert --backends inductor,tccd --workloads train --batch large --iters 10 --warmup 3 --budget-s 230 --timeout-s 110 --top-kernels 40
  TCCD_ROW_EARLY_LOADS=1 zoo zB 65 --models vit --backends tccd --workloads train --batch large --iters 5 --warmup 2 --budget-s 60 --timeout-s 60 --top-kernels 40
  zoo zE 130 --models gpt2 --backends inductor,tccd --workloads train --batch large --iters 5 --warmup 2 --budget-s 125 --timeout-s 100 --top-kernels 40
  ZOO_DAEMON_ARGS="--log-level=debug --compile-nice=0" zoo zF 45 --models gpt2 --backends tccd --workloads train --batch large --iters 5 --warmup 2 --budget-s 42 --timeout-s 42 --top-kernels 5
  R=$(rem 535); TCCD_PLAN_PROFILE=1 zoo zH $R --models convnext --backends tccd --workloads train --batch large --iters 5 --warmup 2 --budget-s $((R-5)) --timeout-s $((R-5)) --top-kernels 40
}
(export CUDA_VISIBLE_DEVICES=0; lane0) > $OUT/lane0.txt 2>&1 &
(export CUDA_VISIBLE_DEVICES=1; lane1) > $OUT/lane1.txt 2>&1 &
wait
el all 0
for f in $OUT/lane*.txt; do echo "#### $f"; cut -c1-250 $f | head -60; done
tail -5 $OUT/gpu-tests.log
cd $OUT && rm -f */results.json */results.png && tar czf /tmp/all.tgz --exclude=all.tgz . && mv /tmp/all.tgz $OUT/all.tgz && find . -type f ! -name all.tgz ! -name 'lane*.txt' -delete; ls -la $OUT
