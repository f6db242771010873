# Session 15 probe 2: warm first steps with tccd's instrumentation inside the first step (lazy_tccd), GPT-2 (+BERT if time).
source .gpu/hdr.sh
ZOO_DAEMON_ARGS=--log-level=info timeout 150 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/W --models gpt2,bert --backends eager,inductor,tccd --workloads train --batch small --warm --first-step-only --parallel-fill --no-check --timeout-s 60 --budget-s 140 > $OUT/W.log 2>&1; el W $?
grep -E "^\| (gpt2|bert) " $OUT/W.log | cut -c1-260; grep -A3 "Warm start, sum" $OUT/W.log
rm -f $OUT/W/results.png $OUT/W/daemon.log
cd $OUT && tar czf /tmp/all.tgz --exclude=all.tgz . && mv /tmp/all.tgz $OUT/all.tgz && find . -type f ! -name all.tgz ! -name W.log -delete
