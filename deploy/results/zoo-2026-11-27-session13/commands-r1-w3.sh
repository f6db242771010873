# Run r1 of the thirteenth session, lane of branch warm3 (2x H200 host, two lanes side by side,
# torch 2.11; integration build int1 with warm3 as of ~20:33 UTC, commit 8e9e635: the zoo's
# --aot-guards default was then lean, lean_guards' first version, which dropped the modules'
# TYPE_MATCH guards too). From the repo root, with session 12's commands-hdr.sh sourced.
TCCD_PLAN_PROFILE=1 TCCD_DEFER_BACKWARD_INIT=2 timeout 150 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/w3-r50ab \
  --models resnet50 --workloads train --batch small --backends eager,tccd --first-step-only --warm --aot \
  --warm-ab ZOO_AOT_GUARDS=serializable,TCCD_DEFER_BACKWARD_INIT=0 --warm-ab-starts aot \
  --timeout-s 60 --budget-s 140 > $OUT/w3-r50ab.log 2>&1
