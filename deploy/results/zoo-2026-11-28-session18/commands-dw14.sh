# dw14's GPU request (session 18)
req_dw14() {

# 1. ConvNeXt-T train large, tccd, the templates (TCCD_DEPTHWISE_KERNELS=1; templates are the
#    default with the pass on) + the warm first step (--warm) (~35 s: cold cell ~21 s as dw13's r1, warm ~12 s)
TCCD_DEPTHWISE_KERNELS=1 timeout 150 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/dw14-TL-tmpl \
  --models convnext --backends tccd --workloads train --batch large --warm --top-kernels 40 \
  --no-check --timeout-s 90 > $OUT/dw14-TL-tmpl.log 2>&1
# 2. The same with cuDNN's depthwise convolutions (the pass off, today's default) (~21 s)
TCCD_DEPTHWISE_KERNELS=0 timeout 120 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/dw14-TL-off \
  --models convnext --backends tccd --workloads train --batch large --top-kernels 40 \
  --no-check --timeout-s 90 > $OUT/dw14-TL-off.log 2>&1
# 3. The GPU test (6 of its 16 cases): gradients against cuDNN's, no cuDNN depthwise kernel,
#    ours on `_dw`, the templates bit-identical to the index form (forward, input gradient; 3
#    shapes), a bf16 ConvNeXt stage trains like eager (~25 s)
timeout 150 bash tests/run_gpu.sh dist/tccd.tar.xz -q -rfE \
  -k "test_gpu_depthwise_conv and (templates_match or convnext_stage or True-bf16-stage1 or False-f32-stage4)" \
  > $OUT/gpu-test-dw14.log 2>&1
# 4. session 18's index kernels (TCCD_DEPTHWISE_TEMPLATES=0), the A/B against 1 (~21 s)
TCCD_DEPTHWISE_KERNELS=1 TCCD_DEPTHWISE_TEMPLATES=0 timeout 120 bash deploy/zoo_gpu_run.sh \
  dist/tccd.tar.xz $OUT/dw14-TL-index --models convnext --backends tccd --workloads train \
  --batch large --top-kernels 40 --no-check --timeout-s 90 > $OUT/dw14-TL-index.log 2>&1

grep -hE "^\| convnext" $OUT/dw14-*.log | cut -c1-250 | head -30; tail -3 $OUT/gpu-test-dw14.log
}
