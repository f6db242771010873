source .gpu/hdr.sh
timeout 230 bash tests/run_gpu.sh dist/tccd.tar.xz -q -rfE > $OUT/gpu-tests.log 2>&1; el gputests $?; tail -8 $OUT/gpu-tests.log
zoo zooC $((580-($(date +%s)-S))) --models convnext,vit,gpt2 --workloads train --batch large --budget-s $((560-($(date +%s)-S))) --timeout-s 110 --top-kernels 40
