# r1 of session 18 (2x H200, one lane per GPU; integration build int1 = main 01a1c0e + dw13 + guard13 + dyn13 + cold9
# as of 12:05 UTC, torch 2.11). The variant had TCCD_AOT_INPUT_CHECK=0 only (the request's first
# version): TCCD_AOT_SHARED_FAKE_MODE was 1 (the default) in both arms.
timeout 148 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/guard13 \
  --models resnet50 --backends tccd,eager --workloads train --batch small --first-step-only \
  --aot --warm-ab TCCD_AOT_INPUT_CHECK=0 --warm-ab-starts aot \
  --no-check --timeout-s 90 --budget-s 140 > $OUT/guard13.log 2>&1
