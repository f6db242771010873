# cold6 GPU request as run in r1 of session 14 (integration build int1: main + rpeak, infk3, host6, cpu8,
# dyn9, cold6, warm4 at 23:55 UTC; 4x H100 host, this in one lane of four). Cell C (Inductor) ran but its files
# did not come back; the optional cells were not run.
python3 -m pip install -q --no-index --no-deps --find-links .whl --target /tmp/site grpcio protobuf 2>/dev/null
export PYTHONPATH=/tmp/site:$PWD/client:$PWD/tests/python PYTHONUNBUFFERED=1
C="--workloads train --batch large --first-step-only --no-check --timeout-s 90"
run() {  # run NAME ZOO-ARGS...: one zoo run on its own daemon (empty cache: cold), debug log
  local n=$1; shift
  ZOO_DAEMON_ARGS=--log-level=debug timeout 200 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/$n "$@" > $OUT/$n.log 2>&1; echo "$n rc=$?"
  grep -hE 'compiling graph|cuda backend:|compile stages' $OUT/$n/daemon.log | cut -c1-500 > $OUT/$n/stages.txt
  rm -f $OUT/$n/daemon.log $OUT/$n/results.png
}
# A: cold6 as committed (eager-while-compiling on by default, full GC deferred in tccd's backend call)
run A $C --models t5,llama,gpt2 --backends tccd
# B: the knobs off = the merged main's behaviour
TCCD_EAGER_WHILE_COMPILING=0 TCCD_DEFER_FULL_GC=0 run B $C --models t5,llama,gpt2 --backends tccd
# C: Inductor, once (if GPU time is short, drop llama: session 13's 14.59 s stands in)
run C $C --models t5,gpt2,llama --backends inductor
