# r1 of session 18: the helpers' GPU requests, one function each (sourced by r1.sh).
el() { echo "$1 rc=$2 $(( $(date +%s)-S ))s"; }
zoo() { # zoo NAME TIMEOUT args...
  local n=$1 t=$2; shift 2
  timeout $t bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/$n "$@" --no-check > $OUT/$n.log 2>&1; el $n $?
  grep -E "^\||zoo_gpu_run:" $OUT/$n.log | cut -c1-300 | head -40
  grep -h "compile stages" $OUT/$n/daemon.log 2>/dev/null | cut -c1-400 > $OUT/$n/stages.txt
  rm -f $OUT/$n/results.png $OUT/$n/daemon.log $OUT/$n/notes.txt
}
req_dw13() {
  WS="--models convnext --backends tccd --workloads train --batch small --warm --first-step-only --timeout-s 70"
  TL="--models convnext --backends tccd --workloads train --batch large --iters 10 --warmup 3 --top-kernels 40 --timeout-s 70"
  # (1) ConvNeXt train small, warm first step (cold fill + warm process), phase tables: new vs knob. ~40 s each.
  zoo dw13-warm-new 100 $WS
  TCCD_DISABLE_PASSES=depthwise-conv-kernels zoo dw13-warm-off 100 $WS
  # (2) ConvNeXt train large, steady step + per-kernel table ($OUT/dw13-TL-*/kernels.md): new vs knob. ~25 s each.
  zoo dw13-TL-new 90 $TL
  TCCD_DISABLE_PASSES=depthwise-conv-kernels zoo dw13-TL-off 90 $TL
  # (3) Correctness on the GPU: stage-1 gradients (bf16, with bias) against cuDNN's, no cuDNN
  # depthwise kernel in the step, ours on _contig; a bf16 two-block ConvNeXt stage trains like
  # eager. ~20 s.
  timeout 120 bash tests/run_gpu.sh dist/tccd.tar.xz -q -rfE \
    -k "depthwise and ((stage1 and bf16 and True) or convnext)" > $OUT/gpu-test-dw13.log 2>&1; el gpu-test-dw13 $?
  tail -5 $OUT/gpu-test-dw13.log
}
req_guard13() {
timeout 148 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/guard13 \
  --models resnet50 --backends tccd,eager --workloads train --batch small --first-step-only \
  --aot --warm-ab TCCD_AOT_INPUT_CHECK=0 --warm-ab-starts aot \
  --no-check --timeout-s 90 --budget-s 140 > $OUT/guard13.log 2>&1
echo "guard13 rc=$?"; rm -f $OUT/guard13/results.png $OUT/guard13/daemon.log
grep -E "^\[|^\||guards kept|aot" $OUT/guard13.log | cut -c1-300 | head -60
}
req_dyn13() {
  local n=$(mktemp -d) o=$(mktemp -d)
  $TCCD_BINARY --listen unix:$n/tccd.sock --cache-dir $n/db > $n/daemon.log 2>&1 &
  local pn=$!
  TCCD_DISABLE_PASSES=symbolic-horizontal-fusion $TCCD_BINARY --listen unix:$o/tccd.sock --cache-dir $o/db > $o/daemon.log 2>&1 &
  local po=$!; sleep 2
  run_arm() {  # run_arm LABEL DAEMON_DIR TIMEOUT STEPS ENV...
    local label=$1 dd=$2 t=$3 steps=$4; shift 4
    env "$@" TCCD_NO_AUTOSTART=1 TCCD_ADDRESS=unix:$dd/tccd.sock TCCD_CACHE_DIR=$dd/client-$label timeout $t \
      python3 deploy/dynamic_shapes_bench.py --device cuda --compare-static --interleave --phases --dtype bfloat16 \
        --lengths 128,256,384,512 --tokens 8192 --d 256 --steps $steps > $OUT/bench-dyn13-$label.txt 2>&1
    echo "$label rc=$?"
  }
  run_arm A-new $n 50 30 TCCD_LEAN_SYMBOLIC_ENTRY=1 TCCD_SYMBOLIC_ONE_WORKSPACE=1
  run_arm B-off $o 45 30 TCCD_LEAN_SYMBOLIC_ENTRY=0 TCCD_SYMBOLIC_ONE_WORKSPACE=0
  run_arm A2-new $n 30 30 TCCD_LEAN_SYMBOLIC_ENTRY=1 TCCD_SYMBOLIC_ONE_WORKSPACE=1
  run_arm C-new-profile $n 25 15 TCCD_PLAN_PROFILE=1
  kill $pn $po; wait $pn $po 2>/dev/null
  grep -hE "worst|^ +[0-9]+ +[0-9]+ |^ +[0-9]+ +[0-9.]+ / |peak memory|native steps|plan profile|per call:|Python wrapper" $OUT/bench-dyn13-*.txt | cut -c1-400
}
TS9="--workloads train --batch small --first-step-only --timeout-s 60"
req_c9a() {
  TCCD_FAST_MIN_CUT=1 zoo c9-t5-A 90 --models t5 --backends tccd $TS9
  TCCD_FAST_MIN_CUT=0 zoo c9-t5-B 90 --models t5 --backends tccd $TS9
  TCCD_FAST_MIN_CUT=1 zoo c9-gpt2-A 80 --models gpt2 --backends tccd $TS9
}
req_c9b() {
  zoo c9-t5-I 120 --models t5 --backends inductor --workloads train --batch small --first-step-only --timeout-s 100
  TCCD_FAST_MIN_CUT=0 zoo c9-gpt2-B 80 --models gpt2 --backends tccd $TS9
}
