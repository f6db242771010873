source .gpu/hdr.sh
NG=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l); echo "gpus $NG"
rem() { echo $(( $1 - ($(date +%s)-S) )); }
T=${T:-555}
TL="--workloads train --batch large --iters 10 --warmup 3 --timeout-s 110 --top-kernels 40"
lane0() {
  timeout 330 bash tests/run_gpu.sh dist/tccd.tar.xz -q -rfE > $OUT/gpu-tests.log 2>&1; el gputests $?
  zoo fRO 110 --models resnet50 --backends inductor,tccd --workloads train --batch small --mode reduce-overhead --iters 10 --warmup 3 --timeout-s 80 --top-kernels 5 --budget-s 100
  R=$(rem $T); zoo fTS $R --models gpt2,bert --backends inductor,tccd --workloads train --batch small --iters 10 --warmup 3 --timeout-s 60 --top-kernels 5 --budget-s $((R-5))
}
lane1() {
  zoo fT1 330 --models gpt2,bert,llama --backends eager,inductor,tccd $TL --budget-s 320
  R=$(rem $T); zoo fIL $R --models llama,t5 --backends inductor,tccd --workloads infer --batch large --iters 10 --warmup 3 --timeout-s 60 --top-kernels 30 --budget-s $((R-5))
}
lane2() {
  zoo fT2 360 --models t5,vit,resnet50 --backends eager,inductor,tccd $TL --budget-s 350
  R=$(rem $T); zoo fIS $R --models t5,llama --backends inductor,tccd --workloads infer --batch small --iters 10 --warmup 3 --timeout-s 50 --top-kernels 30 --budget-s $((R-5))
}
lane3() {
  zoo fT3 150 --models convnext --backends eager,inductor,tccd $TL --budget-s 140
  R=$(rem $T); zoo fW $R --models gpt2,convnext,resnet50 --backends eager,inductor,tccd --workloads train --batch small --warm --aot --iters 3 --warmup 1 --timeout-s 120 --top-kernels 5 --budget-s $((R-5))
}
for i in 0 1 2 3; do (export CUDA_VISIBLE_DEVICES=$((i % NG)); lane$i) > $OUT/lane$i.txt 2>&1 & done
wait
el all 0
for f in $OUT/lane*.txt; do echo "#### $f"; cut -c1-250 $f | head -40; done
grep -E "^FAILED|passed|failed" $OUT/gpu-tests.log | tail -12
cd $OUT && rm -f */results.png && tar czf /tmp/all.tgz --exclude=all.tgz . && mv /tmp/all.tgz $OUT/all.tgz && find . -type f ! -name all.tgz ! -name 'lane*.txt' -delete; ls -la $OUT
