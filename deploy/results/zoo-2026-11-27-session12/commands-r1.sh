source .gpu/hdr.sh
NG=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l); echo "gpus $NG"
python3 --version
bench() {  # bench LABEL DISABLED_PASSES BENCH_ARGS...
  local d=$(mktemp -d) label=$1 passes=$2; shift 2
  TCCD_DISABLE_PASSES=$passes $TCCD_BINARY --listen unix:$d/tccd.sock --cache-dir $d/db > $d/daemon.log 2>&1 &
  local pid=$!; sleep 2
  TCCD_NO_AUTOSTART=1 TCCD_ADDRESS=unix:$d/tccd.sock TCCD_CACHE_DIR=$d/client timeout 70 \
    python3 deploy/dynamic_shapes_bench.py --device cuda --compare-static --interleave "$@" > $OUT/bench-$label.txt 2>&1; echo "$label rc=$?"
  kill $pid
}
lane0() {  # GPU suite, dyn6
  timeout 230 bash tests/run_gpu.sh dist/tccd.tar.xz -q -rfE > $OUT/gpu-tests.log 2>&1; el gputests $?
  ARGS="--dtype bfloat16 --lengths 128,256,384,512 --tokens 8192 --d 256 --steps 30"
  TCCD_PLAN_PROFILE=1 bench dyn6 "" $ARGS; el dyn6 0
  TCCD_ARANGE_SYNC_COPY=1 TCCD_PLAN_PROFILE=1 bench dyn6-off "symbolic-layer-norm-backward-split,symbolic-embedding-backward" $ARGS; el dyn6off 0
}
lane1() {  # lnb, infk
  TL="--workloads train --batch large --iters 10 --warmup 3 --top-kernels 40 --no-check"
  timeout 150 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/lnb_vit --models vit --backends inductor,tccd $TL --timeout-s 110 > $OUT/lnb_vit.log 2>&1; el lnb_vit $?
  TCCD_DISABLE_PASSES=layer-norm-grad-narrow-reads timeout 100 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/lnb_vit_off --models vit --backends tccd $TL --timeout-s 90 > $OUT/lnb_vit_off.log 2>&1; el lnb_vit_off $?
  timeout 140 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/infk --models t5,llama --backends inductor,tccd --workloads infer --batch small,large --iters 10 --warmup 3 --timeout-s 60 --top-kernels 40 --no-check --budget-s 130 > $OUT/infk.log 2>&1; el infk $?
  timeout 60 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/lnb_cnx --models convnext --backends tccd $TL --timeout-s 55 > $OUT/lnb_cnx.log 2>&1; el lnb_cnx $?
  TCCD_DISABLE_PASSES=layer-norm-grad-narrow-reads timeout 60 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/lnb_cnx_off --models convnext --backends tccd $TL --timeout-s 55 > $OUT/lnb_cnx_off.log 2>&1; el lnb_cnx_off $?
}
lane2() {  # loss, gemm
  timeout 80 python3 deploy/lm_head_bench.py --loss --tccd "$TCCD_BINARY" --cases llama,t5 --backends inductor,tccd,tccd-persistent,tccd-unroll0 --iters 20 --top 4 > $OUT/lm_head_loss.txt 2>&1; el lmhead $?
  timeout 70 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/zoo_lm --models t5,llama --backends tccd --workloads train --batch large --iters 10 --warmup 3 --timeout-s 60 --top-kernels 40 --no-check > $OUT/zoo_lm.log 2>&1; el zoo_lm $?
  timeout 30 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/zoo_bert --models bert --backends tccd --workloads train --batch small --iters 10 --warmup 3 --timeout-s 28 --no-check > $OUT/zoo_bert.log 2>&1; el zoo_bert $?
  timeout 80 python3 deploy/column_bench.py --tccd "$TCCD_BINARY" --batch 64 --iters 20 --cases cnx1 --top 8 --variant untuned:TCCD_GEMM_AUTOTUNE=0 --backends inductor,tccd,tccd-untuned > $OUT/gemm-column-bench.txt 2>&1; el colbench $?
  TL="--workloads train --batch large --iters 10 --warmup 3 --timeout-s 80 --top-kernels 40 --no-check"
  timeout 100 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/gemm-zoo-tuned --models convnext,resnet50 --backends tccd $TL --budget-s 95 > $OUT/gemm-zoo-tuned.log 2>&1; el tuned $?
  TCCD_GEMM_AUTOTUNE=0 timeout 100 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/gemm-zoo-untuned --models convnext,resnet50 --backends tccd $TL --budget-s 95 > $OUT/gemm-zoo-untuned.log 2>&1; el untuned $?
}
lane3() {  # warm, host5
  TCCD_PLAN_PROFILE=1 timeout 170 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/warm-ab --models convnext,resnet50,gpt2 --workloads train --batch small --backends eager,tccd --warm --aot --first-step-only --warm-ab TCCD_CONV_WARMUP=0 --timeout-s 60 --budget-s 140 > $OUT/warm-ab.log 2>&1; el warm $?
  timeout 200 bash .gpu/host5.sh; el host5 $?
}
for i in 0 1 2 3; do (export CUDA_VISIBLE_DEVICES=$((i % NG)); lane$i) > $OUT/lane$i.txt 2>&1 & done
wait
el all 0
for f in $OUT/lane*.txt; do echo "#### $f"; cut -c1-200 $f | head -40; done
tail -5 $OUT/gpu-tests.log
cd $OUT && rm -f */results.png && tar czf /tmp/all.tgz --exclude=all.tgz . && mv /tmp/all.tgz $OUT/all.tgz && find . -type f ! -name all.tgz ! -name 'lane*.txt' -delete; ls -la $OUT
