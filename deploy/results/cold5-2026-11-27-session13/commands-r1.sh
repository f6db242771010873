# cold5's GPU request as run in r1 (integration build int1 of ~20:33: main + eight branches, cold5 up
# to fc494e2; 2x H200 host, this in lane 1 while lane 0 ran zoo cells on the other GPU).
python3 -m pip install -q --no-index --no-deps --find-links .whl --target /tmp/site grpcio protobuf 2>/dev/null
export PYTHONPATH=/tmp/site:$PWD/client:$PWD/tests/python PYTHONUNBUFFERED=1
C="--workloads train --batch large --first-step-only --no-check --timeout-s 90"
run() {  # run NAME ZOO-ARGS...: one zoo run on its own daemon (empty cache: cold), debug log
  local n=$1; shift
  ZOO_DAEMON_ARGS=--log-level=debug timeout 200 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/$n "$@" > $OUT/$n.log 2>&1; echo "$n rc=$?"
  grep -hE 'compiling graph|cuda backend:|cuda host:|compile stages|Compile miss' $OUT/$n/daemon.log | cut -c1-700 > $OUT/$n/stages.txt
  rm -f $OUT/$n/daemon.log $OUT/$n/results.png
}
run A $C --models t5,llama,convnext --backends tccd
TCCD_EAGER_WHILE_COMPILING=1 run B $C --models t5,llama --backends tccd
run C $C --models t5 --backends inductor
