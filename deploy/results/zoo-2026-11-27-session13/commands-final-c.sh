source .gpu/hdr.sh
zoo CTS 150 --models convnext --backends inductor,tccd --workloads train --batch small --iters 10 --warmup 3 --top-kernels 20 --timeout-s 70 --budget-s 120
grep -E "^\| convnext" $OUT/CTS.log | head -3
TCCD_GEMM_WORKSPACE_MB=8 zoo RIL8 50 --models resnet50 --backends tccd --workloads infer --batch large --iters 10 --warmup 3 --top-kernels 10 --timeout-s 40 --budget-s 40
grep -E "^\| resnet50" $OUT/RIL8.log | head -3
cd $OUT && tar czf /tmp/all.tgz --exclude=all.tgz . && mv /tmp/all.tgz $OUT/all.tgz && find . -type f ! -name all.tgz -delete
