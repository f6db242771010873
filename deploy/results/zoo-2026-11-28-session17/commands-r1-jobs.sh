# r1 of session 17: the helpers' GPU requests, one function each (sourced by r1.sh).
req_nvrtc() { export PYTHONDONTWRITEBYTECODE=1
  xz -dkc deploy/bench_inputs/gpt2_forward_kernels.cu.xz > /tmp/gpt2_fwd.cu
  timeout 100 python3 deploy/nvrtc_split_bench.py /tmp/gpt2_fwd.cu --rdc --repeat 1 --threads 16 \
      --processes 16 --makespan 16 > $OUT/nvrtc_threads_vs_processes.txt 2>&1; el nvrtc $?
  cat $OUT/nvrtc_threads_vs_processes.txt | tail -12
}
req_ropack() { waitimp
  TCCD_PACK_SAVED=1 zoo ro-pack1 100 --models resnet50 --backends tccd --workloads train --batch small --mode reduce-overhead --iters 10 --warmup 3 --timeout-s 80 --top-kernels 5
  TCCD_PACK_SAVED=0 zoo ro-pack0 100 --models resnet50 --backends tccd --workloads train --batch small --mode reduce-overhead --iters 10 --warmup 3 --timeout-s 80 --top-kernels 5
}
waitimp() { local i=0; while [ ! -e $ST/imp12_done ] && [ $i -lt 200 ]; do sleep 2; i=$((i+1)); done; }
el() { echo "$1 rc=$2 $(( $(date +%s)-S ))s"; }
zoo() { # zoo NAME TIMEOUT args...
  local n=$1 t=$2; shift 2
  timeout $t bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/$n "$@" --no-check > $OUT/$n.log 2>&1; el $n $?
  grep -E "^\||zoo_gpu_run:" $OUT/$n.log | cut -c1-300 | head -40
  grep -h "compile stages" $OUT/$n/daemon.log 2>/dev/null | cut -c1-400 > $OUT/$n/stages.txt
  rm -f $OUT/$n/results.png $OUT/$n/daemon.log $OUT/$n/notes.txt
}
req_imp12() {
  W12="--backends tccd --workloads train --batch small --warm --first-step-only --timeout-s 45"
  find client /tmp/site -name __pycache__ -prune -exec rm -rf {} + 2>/dev/null
  ZOO_COMPILE_BYTECODE=0 TCCD_LIGHT_AOT_LOGGING=0 zoo imp12-A-main 55 --models llama $W12
  zoo imp12-B-branch 95 --models llama,bert $W12
  touch $ST/imp12_done
}
req_dyn12() {
  export PYTHONDONTWRITEBYTECODE=1
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
  EXTRA="--top-kernels 8" run_arm A-new 60 ""
  EXTRA="" run_arm B-off 45 "symbolic-embedding-sum-fold,symbolic-arange-kernels,symbolic-double-transposes"
  EXTRA="" run_arm C-new-profile 45 "" TCCD_PLAN_PROFILE=1
  timeout 60 bash tests/run_gpu.sh dist/tccd.tar.xz -q -k test_dynamic_embedding_kernels_match_eager \
    > $OUT/gpu-test-dyn12.log 2>&1; echo "D rc=$?"; tail -3 $OUT/gpu-test-dyn12.log
  grep -hE "worst|^ +[0-9]+ +[0-9]+ |^ +[0-9]+ +[0-9.]+ / |GPU busy|native steps|extern steps by op|plan profile" $OUT/bench-dyn12-*.txt | cut -c1-400
}
req_g12new() { waitimp
  timeout 140 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/g12-new \
   --models resnet50,vit --backends tccd --workloads train --batch small --first-step-only \
   --warm --warm-precompile --no-check --timeout-s 70 --budget-s 130 > $OUT/g12-new.log 2>&1
  echo "g12-new rc=$?"; rm -f $OUT/g12-new/results.png $OUT/g12-new/daemon.log
  grep -hE "warm-pre|tccd-pre|precompile_build_guards|Dynamo's package" $OUT/g12-new.log | cut -c1-300
}
req_g12off() { waitimp
  TCCD_PACKAGE_LEAN_GUARDS=0 TCCD_LOADED_GUARDS_ONCE=0 timeout 100 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/g12-off \
   --models resnet50 --backends tccd --workloads train --batch small --first-step-only \
   --warm --warm-precompile --no-check --timeout-s 70 --budget-s 90 > $OUT/g12-off.log 2>&1
  echo "g12-off rc=$?"; rm -f $OUT/g12-off/results.png $OUT/g12-off/daemon.log
  grep -hE "warm-pre|tccd-pre|precompile_build_guards|Dynamo's package" $OUT/g12-off.log | cut -c1-300
}
