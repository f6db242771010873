S=/tmp/h5-$$.sock; rm -f $S
$TCCD_BINARY --listen unix:$S --cache-dir /tmp/h5-db-$$ > $OUT/h5-daemon.log 2>&1 & D=$!
for i in $(seq 100); do [ -S $S ] && break; sleep 0.1; done
export TCCD_ADDRESS=unix:$S PYTHONPATH=$PYTHONPATH:$PWD/deploy
# run NAME [VAR=value ...] -- host_profile.py args
run() { n=$1; shift; e=(); while [ "$1" != "--" ]; do e+=("$1"); shift; done; shift
  echo "== $n"; timeout 90 env TCCD_PLAN_PROFILE=1 "${e[@]}" python3 deploy/host_profile.py "$@" > $OUT/h5-$n.txt 2>&1; echo "rc=$?"
  grep -E '^==|host|plan calls|per call|tccd plan profile' $OUT/h5-$n.txt | cut -c1-400 | head -16; }
# 1. ResNet-50 train small, reduce-overhead: tccd before (TCCD_DROP_BN_RUNNING_STATS=0: the
#    forward saves the 106 running-statistic tensors, 429 saved) and after (323 saved; Inductor
#    324), then Inductor's reduce-overhead in the same run.
run r50-ro-old  TCCD_DROP_BN_RUNNING_STATS=0 -- resnet50 tccd --device cuda --mode reduce-overhead --iters 30
run r50-ro      -- resnet50 tccd --device cuda --mode reduce-overhead --iters 30 --python-profile 5
run r50-ro-ind  -- resnet50 inductor --device cuda --mode reduce-overhead --iters 30 --python-profile 5
# 2. GPT-2 and BERT train small, default mode: where the host time goes; GPT-2 again with the
#    per-call arena (TCCD_PLAN_ARENA=1; its graphs are compiled by then).
run gpt2        -- gpt2 tccd --device cuda --iters 20 --python-profile 5
run gpt2-arena  TCCD_PLAN_ARENA=1 -- gpt2 tccd --device cuda --iters 20
run bert        -- bert tccd --device cuda --iters 20 --python-profile 5
# 3. ResNet-50 train small, default mode, without and with the arena (its backward plan has
#    the most short-lived values).
run r50         -- resnet50 tccd --device cuda --iters 20
run r50-arena   TCCD_PLAN_ARENA=1 -- resnet50 tccd --device cuda --iters 20
kill $D; wait $D 2>/dev/null; rm -rf /tmp/h5-db-$$ $S
