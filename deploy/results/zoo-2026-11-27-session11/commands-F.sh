source .gpu/hdr.sh
NG=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l); echo "gpus $NG"
rem() { echo $(( $1 - ($(date +%s)-S) )); }
T=${T:-545}
TL="--workloads train --batch large --iters 10 --warmup 3 --timeout-s 110 --top-kernels 40"
lane0() {
  timeout 200 bash tests/run_gpu.sh dist/tccd.tar.xz -q -rfE > $OUT/gpu-tests.log 2>&1; el gputests $?
  zoo fR 210 --models resnet50,convnext --backends inductor,tccd $TL --budget-s 200
  R=$(rem $T); zoo fI $R --models t5,llama,gpt2,bert --backends inductor,tccd --workloads infer --batch large --iters 10 --warmup 3 --timeout-s 60 --top-kernels 30 --budget-s $((R-5))
}
lane1() {
  zoo fT 400 --models gpt2,bert,llama,vit,t5 --backends inductor,tccd $TL --budget-s 390
  R=$(rem $T); zoo fS $R --models gpt2,bert --backends inductor,tccd --workloads train --batch small --iters 10 --warmup 3 --timeout-s 60 --top-kernels 5 --budget-s $((R-5))
}
lane2() {
  WA="--workloads train --batch small --warm --aot --iters 3 --warmup 1 --timeout-s 120 --top-kernels 5"
  zoo fW1 270 --models llama,vit --backends eager,inductor,tccd $WA --budget-s 260
  R=$(rem $T); zoo fW2 $R --models resnet50,convnext --backends eager,inductor,tccd $WA --budget-s $((R-5))
}
lane3() {
  zoo fRO 250 --models gpt2,bert,resnet50 --backends inductor,tccd --workloads train --batch small --mode reduce-overhead --iters 10 --warmup 3 --timeout-s 80 --top-kernels 5 --budget-s 240
  R=$(rem $T); zoo fIS $R --models t5,llama,gpt2,bert --backends inductor,tccd --workloads infer --batch small --iters 10 --warmup 3 --timeout-s 50 --top-kernels 5 --budget-s $((R-5))
}
for i in $(seq 0 $((NG>4?3:NG-1))); do (export CUDA_VISIBLE_DEVICES=$i; lane$i) > $OUT/lane$i.txt 2>&1 & done
wait
el all 0
for f in $OUT/lane*.txt; do echo "#### $f"; cut -c1-250 $f | head -70; done
tail -5 $OUT/gpu-tests.log
cd $OUT && rm -f */results.json */results.png && tar czf /tmp/all.tgz --exclude=all.tgz . && mv /tmp/all.tgz $OUT/all.tgz && find . -type f ! -name all.tgz ! -name 'lane*.txt' -delete; ls -la $OUT
