# r1 of session 16 (4x H200, lanes pinned to 16 CPUs each; integration build int1 = main + cold8 dyn11 pre11 ro9 warm6 at ~05:52 UTC; warm6's code then: TCCD_CONV_WARMUP_FORWARD's backward warm-up waited for the forward's, and the AOT cells' instrumentation imported AOTAutograd inside the timed step). The request as run:
export PYTHONPATH=$PWD/client:$PYTHONPATH
timeout 45 python3 deploy/cudnn_setup_probe.py --model resnet50 --json $OUT/w6-probe-resnet50.json > $OUT/w6-probe-resnet50.txt 2>&1; echo "probe rc=$?"
TCCD_PLAN_PROFILE=1 TCCD_CONV_WARMUP_FORWARD=1 timeout 150 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/w6-r50 \
  --models resnet50 --backends eager,tccd --workloads train --batch small --first-step-only --warm --aot \
  --parallel-fill --warm-ab TCCD_CONV_WARMUP_FORWARD=0,TCCD_AOT_GUARD_STACKS=1 --warm-ab-starts aot \
  --no-check --timeout-s 60 --budget-s 135 > $OUT/w6-r50.log 2>&1; echo "r50 rc=$?"
rm -f $OUT/w6-r50/results.png $OUT/w6-r50/daemon.log
export PYTHONPATH=$PWD/client:$PYTHONPATH
timeout 45 python3 deploy/cudnn_setup_probe.py --model convnext --json $OUT/w6-probe-convnext.json > $OUT/w6-probe-convnext.txt 2>&1; echo "probe rc=$?"
TCCD_PLAN_PROFILE=1 TCCD_CONV_WARMUP_FORWARD=1 timeout 150 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/w6-cnx \
  --models convnext --backends eager,tccd --workloads train --batch small --first-step-only --warm --aot \
  --parallel-fill --warm-ab TCCD_CONV_WARMUP_FORWARD=0 --no-check --timeout-s 60 --budget-s 125 \
  > $OUT/w6-cnx.log 2>&1; echo "cnx rc=$?"
rm -f $OUT/w6-cnx/results.png $OUT/w6-cnx/daemon.log
export PYTHONPATH=$PWD/client:$PYTHONPATH
TCCD_PLAN_PROFILE=1 TCCD_CONV_WARMUP_FORWARD=3 timeout 150 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/w6-vit \
  --models vit --backends eager,tccd --workloads train --batch small --first-step-only --warm --aot \
  --parallel-fill --warm-ab TCCD_CONV_WARMUP_FORWARD=0,TCCD_AOT_GUARD_STACKS=1 --warm-ab-starts aot \
  --no-check --timeout-s 60 --budget-s 135 > $OUT/w6-vit.log 2>&1; echo "vit rc=$?"
rm -f $OUT/w6-vit/results.png $OUT/w6-vit/daemon.log
# appended to #2 by the integrator: TCCD_BINARY=$TCCD_BINARY timeout 120 python3 -m pytest tests/python/test_gpu_conv_warmup.py -q -p no:cacheprovider -k forward_warmup > $OUT/w6-gputest.txt 2>&1
