# r1 of session 19: the helpers' GPU requests, one function each (sourced by r1.sh).
el() { echo "$1 rc=$2 $(( $(date +%s)-S ))s"; }
zoo() { # zoo NAME TIMEOUT args...
  local n=$1 t=$2; shift 2
  timeout $t bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/$n "$@" --no-check > $OUT/$n.log 2>&1; el $n $?
  grep -E "^\||zoo_gpu_run:" $OUT/$n.log | cut -c1-300 | head -40
  grep -h "compile stages" $OUT/$n/daemon.log 2>/dev/null | cut -c1-400 > $OUT/$n/stages.txt
  rm -f $OUT/$n/results.png $OUT/$n/daemon.log $OUT/$n/notes.txt
}
req_cold10() {
export PYTHONDONTWRITEBYTECODE=1

zoo10() { # zoo10 NAME TIMEOUT args...   (the stage and NVRTC lines kept, the rest of daemon.log dropped)
  local n=$1 t=$2; shift 2
  ZOO_DAEMON_ARGS=--log-level=debug timeout $t bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/$n "$@" --no-check > $OUT/$n.log 2>&1; el $n $?
  grep -E "^\|" $OUT/$n.log | grep -E "t5|gpt2" | cut -c1-300 | head -8
  grep -hE "compile stages|NVRTC [0-9]+ kernel|compiling graph" $OUT/$n/daemon.log 2>/dev/null | cut -c1-6000 > $OUT/$n/stages.txt
  grep -o "machine-code [0-9.]* ms" $OUT/$n/stages.txt
  rm -f $OUT/$n/results.png $OUT/$n/daemon.log $OUT/$n/notes.txt
}
C10="--workloads train --batch small --first-step-only --timeout-s 50"
# 1. NVRTC on 16 threads vs 16 processes (CPU only), T5's and GPT-2's forward kernels (~10 s)
for m in t5 gpt2; do
  xz -dkc deploy/bench_inputs/${m}_forward_kernels.cu.xz > /tmp/${m}_fwd.cu
  timeout 40 python3 deploy/nvrtc_split_bench.py /tmp/${m}_fwd.cu --rdc --repeat 1 --threads 16 \
      --processes 16 --makespan 16 > $OUT/nvrtc-$m.txt 2>&1; el nvrtc-$m $?; tail -8 $OUT/nvrtc-$m.txt
done
# 2. T5 cold, A B A B (~21 s each)
TCCD_NVRTC_PROCESSES=1 zoo10 c10-t5-A1 60 --models t5 --backends tccd $C10
TCCD_NVRTC_PROCESSES=0 zoo10 c10-t5-B1 60 --models t5 --backends tccd $C10
TCCD_NVRTC_PROCESSES=1 zoo10 c10-t5-A2 60 --models t5 --backends tccd $C10
TCCD_NVRTC_PROCESSES=0 zoo10 c10-t5-B2 60 --models t5 --backends tccd $C10
# 3. GPT-2 cold, A B (~17 s each)
TCCD_NVRTC_PROCESSES=1 zoo10 c10-gpt2-A 50 --models gpt2 --backends tccd $C10
TCCD_NVRTC_PROCESSES=0 zoo10 c10-gpt2-B 50 --models gpt2 --backends tccd $C10
# 4. Optional, only if the budget allows (~21 s): what T5's plan_calls (0.20-0.26 s) are: the
#    plans' first calls per step (TCCD_PLAN_PROFILE=1 prints "tccd plan first call ..." lines).
TCCD_PLAN_PROFILE=1 zoo10 c10-t5-P 60 --models t5 --backends tccd $C10
grep -h "plan first call" $OUT/c10-t5-P.log | cut -c1-600
}

req_dyn15() {
  local n=$(mktemp -d)
  $TCCD_BINARY --listen unix:$n/new.sock --cache-dir $n/db-new > $OUT/daemon-dyn15.log 2>&1 &
  local pn=$!; sleep 2
  run_arm() {  # run_arm LABEL TIMEOUT STEPS ROUNDS EXTRA_ARGS ENV...
    local label=$1 t=$2 steps=$3 rounds=$4 extra=$5; shift 5
    env "$@" TCCD_NO_AUTOSTART=1 TCCD_ADDRESS=unix:$n/new.sock TCCD_CACHE_DIR=$n/client-$label timeout $t \
      python3 deploy/dynamic_shapes_bench.py --device cuda --compare-static --interleave --phases --dtype bfloat16 \
        --lengths 128,256,384,512 --tokens 8192 --d 256 --steps $steps --rounds $rounds $extra > $OUT/bench-dyn15-$label.txt 2>&1
    echo "$label rc=$?"
  }
  run_arm A-kept 45 30 3 "" TCCD_SYMBOLIC_SAVED_ARANGES=1
  run_arm B-launched 40 30 3 "" TCCD_SYMBOLIC_SAVED_ARANGES=0
  run_arm C-kept-profile 30 15 1 "" TCCD_SYMBOLIC_SAVED_ARANGES=1 TCCD_PLAN_PROFILE=1
  # GPU busy per step and the top kernels at length 512, static and dynamic (the new first norm
  # with both gathers against the static plan's position-embedding kernel + norm).
  run_arm D-kept-kernels 35 10 1 "--top-kernels 8" TCCD_SYMBOLIC_SAVED_ARANGES=1
  kill $pn; wait $pn 2>/dev/null
  timeout 45 bash tests/run_gpu.sh dist/tccd.tar.xz -q -rfE -k "test_dynamic_embedding_kernels_match_eager" \
    > $OUT/gpu-tests-dyn15.log 2>&1; echo "gpu tests rc=$?"
  grep -hE "worst|^ +[0-9]+ +[0-9.]+ / |native steps|plan profile .* forward|per call: allocations|sized CUDA kernels|busy|red_" \
    $OUT/bench-dyn15-*.txt | cut -c1-400
  grep -E "passed|failed|^FAILED|^ERROR" $OUT/gpu-tests-dyn15.log | tail -5
}
