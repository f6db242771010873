source .gpu/hdr.sh
timeout 230 bash tests/run_gpu.sh dist/tccd.tar.xz -q -rfE > $OUT/gpu-tests.log 2>&1; el gputests $?; tail -6 $OUT/gpu-tests.log
zoo zooZ $((430-($(date +%s)-S))) --models resnet50,bert,vit --workloads train --batch large --budget-s $((420-($(date +%s)-S))) --timeout-s 100 --top-kernels 40
grep -E "^- |^  - " $OUT/zooZ.log | head -8
zoo zooS $((560-($(date +%s)-S))) --models gpt2 --workloads train --batch small --budget-s $((550-($(date +%s)-S))) --timeout-s 100 --top-kernels 40
grep -E "^- |^  - " $OUT/zooS.log | head -8
