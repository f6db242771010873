# Branch gemm3, GPU run r1 of the thirteenth session (2x H200, integration build int1, lane 1; the integrator ran these from the repo root with TCCD_BINARY, OUT, PYTHONPATH set). The fifth (zoo with TCCD_GEMM_WORKSPACE_MB=8) was cut for time.
# 1. (~40 s) ConvNeXt-T stage-1 MLP (cnx1, batch 64): Inductor; tccd new default (32 MiB, untuned);
#    the old workspace (8 MiB: the previous default); 32 MiB + autotuning 8. The weight-gradient
#    kernels (cutlass_80 ..._nt) and their us are in the per-case tables (--top 10).
timeout 60 python3 deploy/column_bench.py --tccd "$TCCD_BINARY" --batch 64 --iters 10 --cases cnx1 --top 10 \
  --variant ws8:TCCD_GEMM_WORKSPACE_MB=8 --variant tuned:TCCD_GEMM_AUTOTUNE=8 \
  --backends inductor,tccd,tccd-ws8,tccd-tuned > $OUT/gemm3-column-bench.txt 2>&1; echo "colbench rc=$?"

# 2. (~15 s) The same two weight-gradient GEMMs through ATen's mm: cuBLAS (Inductor's path),
#    cuBLASLt with 8 MiB and with 32 MiB of workspace (us and kernel names): is the workspace
#    what makes cuBLASLt's heuristic pick the 128x64/64x64 tiles?
timeout 30 python3 deploy/gemm_workspace_bench.py > $OUT/gemm3-workspace-bench.txt 2>&1; echo "wsbench rc=$?"

# 3. (~40 s) GPU test of bitwise equality across processes: two processes tune the same matmuls
#    at once (TCCD_GEMM_AUTOTUNE=8 daemon), a third later; all compute the same bits.
#    Prints the later process's cuda_init seconds (plan loads with the daemon's stored choices:
#    the warm-start cost of autotuning).
TCCD_BINARY=$TCCD_BINARY timeout 90 python3 -m pytest tests/python/test_gpu_gemm_autotune.py -v -s -p no:cacheprovider \
  > $OUT/gemm3-gpu-test.log 2>&1; echo "gputest rc=$?"

# 4. (~60 s) zoo ConvNeXt-T and ViT train large, tccd with the new defaults and autotuning on
#    (what would become the default); compare with h200x4-final-fT3 (session 12, 8 MiB, untuned)
#    for step / GPU busy / kernels, and cuda_init= for the cold tuning cost.
TL="--workloads train --batch large --iters 10 --warmup 3 --timeout-s 55 --top-kernels 40 --no-check"
TCCD_GEMM_AUTOTUNE=8 timeout 70 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/gemm3-zoo-tuned \
  --models convnext,vit --backends tccd $TL --budget-s 65 > $OUT/gemm3-zoo-tuned.log 2>&1; echo "zoo rc=$?"
