# Not run: the next GPU check of warm6 after r1 (the AOT cells' instrumentation without AOTAutograd; the forward warm-up beside the backward's). Two independent commands, ~100-110 s each.
export PYTHONPATH=$PWD/client:$PYTHONPATH
TCCD_PLAN_PROFILE=1 timeout 140 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/w6b-r50 \
  --models resnet50 --backends eager,tccd --workloads train --batch small --first-step-only --warm --aot \
  --parallel-fill --warm-ab TCCD_CONV_WARMUP_FORWARD=1 --warm-ab-starts aot \
  --no-check --timeout-s 60 --budget-s 125 > $OUT/w6b-r50.log 2>&1; echo "r50 rc=$?"
rm -f $OUT/w6b-r50/results.png $OUT/w6b-r50/daemon.log
export PYTHONPATH=$PWD/client:$PYTHONPATH
TCCD_PLAN_PROFILE=1 timeout 150 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/w6b-cnx-vit \
  --models convnext,vit --backends eager,tccd --workloads train --batch small --first-step-only --aot \
  --no-check --timeout-s 60 --budget-s 135 > $OUT/w6b-cnx-vit.log 2>&1; echo "cnx-vit rc=$?"
rm -f $OUT/w6b-cnx-vit/results.png $OUT/w6b-cnx-vit/daemon.log
