# r1 of session 15 (4x H200, four lanes at once, each pinned to 16 of 64 cores; this job on GPU 3),
# integration build int1 with warm5 at 94a15dd. The request's first version ran (eager in A, no --aot);
# both commands reached their timeouts (rc 124): the tccd warm cells were cut by the lanes' budgets.
export PYTHONPATH=$PYTHONPATH:$PWD/client
timeout 100 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/w5-new --models gpt2 \
  --backends eager,inductor,tccd --workloads train --batch small --warm --first-step-only \
  --parallel-fill --no-check --timeout-s 60 --budget-s 90 > $OUT/w5-new.log 2>&1; echo "A rc=$?"
TCCD_TRACE_ONCE_LOGS=0 timeout 50 bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/w5-old \
  --models gpt2 --backends tccd --workloads train --batch small --warm --first-step-only \
  --no-check --timeout-s 40 --budget-s 42 > $OUT/w5-old.log 2>&1; echo "B rc=$?"
