export PYTHONDONTWRITEBYTECODE=1
el() { echo "$1 rc=$2"; }
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
