# ro2's GPU request as run in r1 of the thirteenth session (2x H200, lane 0 of 2, run last in its
# lane; the integrator trimmed the host profiles to one run each). Header: the session's
# commands-hdr.sh (TCCD_BINARY from the release bundle, $OUT, PYTHONPATH with the grpc wheels).
S=/tmp/ro2-$$.sock; rm -f $S
$TCCD_BINARY --listen unix:$S --cache-dir /tmp/ro2-db-$$ > $OUT/ro2-daemon.log 2>&1 & D=$!
for i in $(seq 100); do [ -S $S ] && break; sleep 0.1; done
export TCCD_ADDRESS=unix:$S PYTHONPATH=$PYTHONPATH:$PWD/deploy
ZL="--models resnet50,gpt2,bert --backends tccd --workloads train --batch small --mode reduce-overhead --iters 20 --warmup 3 --timeout-s 45 --top-kernels 5 --no-check"
# 1. lean runtime under CUDA graphs (TCCD_LEAN_CUDAGRAPHS=1, the default), cold compiles: cut at 80 s (BERT not run)
timeout 80 python3 deploy/zoo_benchmark.py --out $OUT/ro2-new $ZL --budget-s 75 > $OUT/ro2-new.log 2>&1; echo new rc=$?
# 2. AOTAutograd's wrappers (knob off), daemon cache warm: GPT-2 cut by the budget
TCCD_LEAN_CUDAGRAPHS=0 timeout 50 python3 deploy/zoo_benchmark.py --out $OUT/ro2-off $ZL --budget-s 48 > $OUT/ro2-off.log 2>&1; echo off rc=$?
# 3. ResNet-50 reduce-overhead host profiles, knob on then off
for v in 1 0; do
  TCCD_LEAN_CUDAGRAPHS=$v timeout 45 python3 deploy/host_profile.py resnet50 tccd --device cuda --mode reduce-overhead --iters 30 --python-profile 5 > $OUT/ro2-hp-lean$v-$RANDOM.txt 2>&1; echo hp$v rc=$?
done
kill $D; wait $D 2>/dev/null; rm -rf /tmp/ro2-db-$$ $S
