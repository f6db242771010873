python3 -m pip install -q --no-index --no-deps --find-links .whl --target /tmp/site grpcio protobuf 2>/dev/null
export PYTHONPATH=/tmp/site:$PWD/client:$PWD/tests/python PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/gpu.txt; cat $OUT/gpu.txt
S=$(date +%s)
TCCD_LEAN_RUNTIME=1 timeout 160 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/lean1 --models convnext,vit --backends tccd --workloads train --batch large --budget-s 150 --timeout-s 70 --no-check > $OUT/lean1.log 2>&1; echo "lean1 rc=$? $(( $(date +%s)-S ))s"
grep -E "^\|" $OUT/lean1.log | head -8
R=$(( 570 - ($(date +%s)-S) ))
TCCD_LEAN_RUNTIME=1 timeout $R bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/warm --models gpt2,bert --workloads train --batch small --warm --aot --budget-s $((R-10)) --timeout-s 100 --no-check > $OUT/warm.log 2>&1; echo "warm rc=$? $(( $(date +%s)-S ))s"
grep -E "^\|" $OUT/warm.log | head -40; grep -E "^\[" $OUT/warm.log | tail -8
rm -f $OUT/*/results.png $OUT/*/daemon.log $OUT/*/notes.txt
