python3 -m pip install -q --no-index --no-deps --find-links .whl --target /tmp/site grpcio protobuf 2>/dev/null
export PYTHONPATH=/tmp/site:$PWD/client:$PWD/tests/python PYTHONUNBUFFERED=1
python3 -m compileall -q client /tmp/site > /dev/null 2>&1 || true
nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/gpu.txt; cat $OUT/gpu.txt; git log -1 --oneline > $OUT/commit.txt 2>/dev/null
mkdir -p /tmp/b && tar -xJf dist/tccd.tar.xz -C /tmp/b && export TCCD_BINARY=$(find /tmp/b -path '*/bin/tccd' -type f | head -1); echo "bin $TCCD_BINARY"
S=$(date +%s)
el() { echo "$1 rc=$2 $(( $(date +%s)-S ))s"; }
zoo() { # zoo NAME TIMEOUT args...
  local n=$1 t=$2; shift 2
  ZOO_DAEMON_ARGS=${ZOO_DAEMON_ARGS:---log-level=debug} timeout $t bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/$n "$@" --no-check > $OUT/$n.log 2>&1; el $n $?
  grep -E "^\|" $OUT/$n.log | head -16
  grep -h "compile stages" $OUT/$n/daemon.log 2>/dev/null | cut -c1-400 > $OUT/$n/stages.txt
  rm -f $OUT/$n/results.png $OUT/$n/daemon.log $OUT/$n/notes.txt
}
