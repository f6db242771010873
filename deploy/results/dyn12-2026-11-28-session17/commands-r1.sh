# dyn12 r1 (1x H200, integration int1 = main + dyn12@b1a8951 + imp12 + guard12): the request as run; from the repo root of the integration build with TCCD_BINARY, OUT, PYTHONPATH set (GPU_RESULT-r1.md has the output).
req_dyn12() {
  run_arm() {  # run_arm LABEL TIMEOUT DISABLED_PASSES EXTRA_ENV...
    local label=$1 t=$2 passes=$3; shift 3
    local d=$(mktemp -d)
    env TCCD_DISABLE_PASSES="$passes" $TCCD_BINARY --listen unix:$d/tccd.sock --cache-dir $d/db > $d/daemon.log 2>&1 &
    local pid=$!; sleep 2
    env "$@" TCCD_NO_AUTOSTART=1 TCCD_ADDRESS=unix:$d/tccd.sock TCCD_CACHE_DIR=$d/client timeout $t \
      python3 deploy/dynamic_shapes_bench.py --device cuda --compare-static --interleave --phases --dtype bfloat16 \
        --lengths 128,256,384,512 --tokens 8192 --d 256 --steps 30 $EXTRA > $OUT/bench-dyn12-$label.txt 2>&1
    echo "$label rc=$?"; kill $pid; wait $pid 2>/dev/null
  }
  # A: the branch as built (the four changes on)
  EXTRA="--top-kernels 8" run_arm A-new 60 ""
  # B: the four knobs off (the old plans), same build
  EXTRA="" run_arm B-off 45 "symbolic-embedding-sum-fold,symbolic-arange-kernels,symbolic-double-transposes,symbolic-gemm-transposes"
  # D (~45 s, keep): the changes on the GPU against eager, f32 and bf16 (the Block: the arange
  # kernel, the folded position-embedding scatter, the gemms reading W / activations for t)
  timeout 50 bash tests/run_gpu.sh dist/tccd.tar.xz -q -k test_dynamic_embedding_kernels_match_eager \
    > $OUT/gpu-test-dyn12.log 2>&1; echo "D rc=$?"; tail -3 $OUT/gpu-test-dyn12.log
  # C (optional, last, ~40 s; skip if over budget): A again with the plan profile
  EXTRA="" run_arm C-new-profile 40 "" TCCD_PLAN_PROFILE=1
  grep -hE "worst|^ +[0-9]+ +[0-9]+ |^ +[0-9]+ +[0-9.]+ / |GPU busy|native steps|extern steps by op|plan profile" $OUT/bench-dyn12-*.txt | cut -c1-400
}
req_dyn12
