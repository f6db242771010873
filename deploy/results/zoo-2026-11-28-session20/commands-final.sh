# Session 20: probe (C/A jobs), ab (B jobs), final (JOBLIST order: gputests W2 W1 W3 W4 ETS C1 C2 C3 C4; ZOO_PLAN_PROFILE=1 puts TCCD_PLAN_PROFILE=1 on the zoo jobs only). Was: final runs of session 19 (JOBS= as session 18's; dyn = dyn15's A/B); was session 18 (JOBS="a b" picks jobs of JOBLIST; x2 lent); was session 17 (x4, trimmed to the train, warm and dynamic jobs: no GPU codegen of static graphs changed; inference and reduce-overhead as session 16); was session 16 (inference small, eager infer small, imports and numerics out for GPU time; was session 15: lanes pinned to CPU shares; was session 14 (session 13's queue; peak probe out, dynamic bench and GPU-traced graph dumps in): a job queue shared by one lane per GPU. Run as
#   T=530 bash .gpu/final.sh       (first call; a second call on the same warm machine runs the jobs
#                                    the first did not finish: state in /tmp/zoo_state)
source .gpu/hdr.sh
for t in nsys perf strace py-spy vmtouch; do echo "tool $t: $(command -v $t)"; done; df -h / /tmp | tail -2; free -g | head -2
export S OUT TCCD_BINARY PYTHONPATH PYTHONUNBUFFERED
NG=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l); echo "gpus $NG"
T=${T:-530}; export T_END=$(( S + T ))
ST=/tmp/zoo_state; mkdir -p $ST
for c in $ST/claim_*; do [ -e "$c" ] || continue; n=${c#$ST/claim_}; [ -e $ST/done_$n ] || rm -rf "$c"; done
cat > /tmp/jobs.sh <<'JOBS'
el() { echo "$1 rc=$2 $(( $(date +%s)-S ))s"; }
zoo() { # zoo NAME TIMEOUT args...
  local n=$1 t=$2; shift 2
  TCCD_PLAN_PROFILE=${ZOO_PLAN_PROFILE:-0} ZOO_DAEMON_ARGS=${ZOO_DAEMON_ARGS:---log-level=debug} timeout $t bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/$n "$@" --no-check > $OUT/$n.log 2>&1; el $n $?
  grep -h "compile stages" $OUT/$n/daemon.log 2>/dev/null | cut -c1-400 > $OUT/$n/stages.txt
  rm -f $OUT/$n/results.png $OUT/$n/daemon.log $OUT/$n/notes.txt
}
TL="--workloads train --batch large --iters 10 --warmup 3 --top-kernels 40"
TS="--workloads train --batch small --iters 10 --warmup 3 --top-kernels 20"
IL="--workloads infer --batch large --iters 10 --warmup 3 --top-kernels 30"
IS="--workloads infer --batch small --iters 10 --warmup 3 --top-kernels 30"
EIT="--backends eager,inductor,tccd"
# name estimate-seconds command (zoo's --budget-s is the estimate; its timeout 1.25x)
JOBLIST="
gpusub 110
P3 110 --models convnext --backends tccd --workloads train --batch small --warm --aot --first-step-only --parallel-fill --timeout-s 80
P3off 110 --models convnext --backends tccd --workloads train --batch small --warm --aot --first-step-only --parallel-fill --timeout-s 80
P4 90 --models vit --backends tccd --workloads train --batch small --warm --aot --first-step-only --parallel-fill --timeout-s 80
P4off 90 --models vit --backends tccd --workloads train --batch small --warm --aot --first-step-only --parallel-fill --timeout-s 80
P1 45 --models convnext --backends tccd $TS --timeout-s 80
P1off 45 --models convnext --backends tccd $TS --timeout-s 80
P2 45 --models vit --backends tccd $TS --timeout-s 70
P2off 45 --models vit --backends tccd $TS --timeout-s 70
B1 220 --models gpt2,llama --backends tccd --workloads train --batch small --warm --aot --first-step-only --parallel-fill --warm-ab TCCD_CONV_WARMUP=3 --timeout-s 90
B2 220 --models t5,vit --backends tccd --workloads train --batch small --warm --aot --first-step-only --parallel-fill --warm-ab TCCD_CONV_WARMUP=3 --timeout-s 90
B3 220 --models gpt2,llama --backends tccd --workloads train --batch small --warm --aot --first-step-only --parallel-fill --warm-ab TCCD_CONV_WARMUP=3,TCCD_CONV_WARMUP_FORWARD=3 --timeout-s 90
B4 220 --models t5,vit --backends tccd --workloads train --batch small --warm --aot --first-step-only --parallel-fill --warm-ab TCCD_CONV_WARMUP=3,TCCD_CONV_WARMUP_FORWARD=3 --timeout-s 90
A1 280 --models llama,t5 --backends inductor,tccd --workloads train --batch small --warm --aot --first-step-only --parallel-fill --warm-ab TCCD_PREWARM_CUDA=0 --timeout-s 90
A2 280 --models gpt2,vit --backends inductor,tccd --workloads train --batch small --warm --aot --first-step-only --parallel-fill --warm-ab TCCD_PREWARM_CUDA=0 --timeout-s 90
C1b 40 --models llama --backends tccd --workloads train --batch small --first-step-only --timeout-s 60
C2b 40 --models vit --backends tccd --workloads train --batch small --first-step-only --timeout-s 60
gputests 300
W2 280 --models llama,t5 --backends inductor,tccd --workloads train --batch small --warm --aot --first-step-only --parallel-fill --timeout-s 90
W1 260 --models gpt2,bert --backends inductor,tccd --workloads train --batch small --warm --aot --first-step-only --parallel-fill --timeout-s 90
W3 280 --models vit,resnet50 --backends inductor,tccd --workloads train --batch small --warm --aot --first-step-only --parallel-fill --warm-precompile --timeout-s 90
dyn 150
W4 200 --models convnext --backends inductor,tccd --workloads train --batch small --warm --aot --first-step-only --parallel-fill --warm-precompile --timeout-s 90
TS3 180 --models resnet50,convnext --backends inductor,tccd $TS --timeout-s 80
TS2 170 --models t5,vit --backends inductor,tccd $TS --timeout-s 70
ETS 130 --models gpt2,bert,llama,t5,vit,resnet50,convnext --backends eager $TS --timeout-s 40
C1 150 --models llama,gpt2 --backends inductor,tccd --workloads train --batch small --first-step-only --timeout-s 90
C2 150 --models vit,bert --backends inductor,tccd --workloads train --batch small --first-step-only --timeout-s 90
C3 170 --models t5,resnet50 --backends inductor,tccd --workloads train --batch small --first-step-only --timeout-s 90
C4 100 --models convnext --backends inductor,tccd --workloads train --batch small --first-step-only --timeout-s 90
dw14 100
"
run_job() {  # run_job NAME EST ARGS...
  local n=$1 est=$2; shift 2
  case $n in
    gpusub) timeout $((est + 60)) bash tests/run_gpu.sh dist/tccd.tar.xz -q -rfE -k "$GPUSUB_K" > $OUT/gpu-tests-sub.log 2>&1; el gpusub $?
              grep -E "^FAILED|^ERROR|passed|failed" $OUT/gpu-tests-sub.log | tail -15 ;;
    gputests) timeout $((est + 60)) bash tests/run_gpu.sh dist/tccd.tar.xz -q -rfE > $OUT/gpu-tests.log 2>&1; el gputests $?
              grep -E "^FAILED|^ERROR|passed|failed" $OUT/gpu-tests.log | tail -15 ;;
    peak) timeout $est python3 deploy/peak_memory_probe.py --model bert --batch small --tccd "$TCCD_BINARY" \
            --backends inductor,tccd --variant 'old:TCCD_RELEASED_INPUTS=0' --detail inductor,tccd,tccd-old > $OUT/peak_probe.txt 2>&1; el peak $? ;;
    dynold) d=$(mktemp -d); $TCCD_BINARY --listen unix:$d/tccd.sock --cache-dir $d/db > $d/daemon.log 2>&1 & local pid=$!; sleep 2
         TCCD_NO_AUTOSTART=1 TCCD_ADDRESS=unix:$d/tccd.sock TCCD_CACHE_DIR=$d/client timeout $est \
           python3 deploy/dynamic_shapes_bench.py --device cuda --compare-static --interleave --phases --dtype bfloat16 --lengths 128,256,384,512 \
           --tokens 8192 --d 256 --steps 30 --top-kernels 8 $DYN_ARGS > $OUT/dynamic_bench-$n.txt 2>&1; el $n $?; kill $pid
         grep -iE "geomean|dynamic/static" $OUT/dynamic_bench-$n.txt | head -5 ;;
    dyn) mkdir -p $OUT/dyn; ( OUT=$OUT/dyn; source .gpu/dyn15_req.sh && req_dyn15final ); el dyn $? ;;
    dw14) source .gpu/dw14_req.sh 2>/dev/null && req_dw14; el dw14 $? ;;
    imports) for m in "import torch" "import torch; import torch._dynamo" "import torch; import tccd"; do
           timeout 30 python3 -X importtime -c "$m" 2> $OUT/importtime-$(echo $m | tr -cd 'a-z_').txt
           python3 -c "import time,sys;t=time.perf_counter();exec(sys.argv[1]);print(sys.argv[1],round(time.perf_counter()-t,2),'s')" "$m"; done 2>&1 | tee $OUT/import_s.txt; el imports 0 ;;
    numerics) d=$(mktemp -d); $TCCD_BINARY --listen unix:$d/s.sock --cache-dir $d/db > $d/log 2>&1 & local pid=$!; sleep 2
         TCCD_NO_AUTOSTART=1 TCCD_ADDRESS=unix:$d/s.sock TCCD_CACHE_DIR=$d/client timeout $est \
           python3 deploy/infer_numerics_check.py --models bert,t5 --batch 2 --backends tccd,inductor > $OUT/infer_numerics.txt 2>&1; el numerics $?; kill $pid
         tail -12 $OUT/infer_numerics.txt ;;
    graphs) mkdir -p $OUT/graphs
         for m in t5_infer:2 llama_infer:2 convnext_infer:8; do CENSUS_DEVICE=cuda CENSUS_BATCH=${m#*:} timeout 40 python3 tests/tools/cuda_plan_census.py \
           --dump-graphs $OUT/graphs --graphs-only tests/tools/census_models.py ${m%:*} > $OUT/graphs/${m%:*}.log 2>&1; el graphs-${m%:*} $?; done ;;
    *) ( case $n in *off) export TCCD_PATCHIFY_GEMM=0 ;; esac; zoo $n $(( est * 5 / 4 )) "$@" --budget-s $est )
       grep -E "^\| " $OUT/$n.log | grep -v "^| model\|^|---" | cut -c1-300 | head -12 ;;
  esac
}
lane() {
  echo "$JOBLIST" | while read -r n est args; do
    [ -n "$n" ] || continue
    [ -e $ST/done_$n ] && continue
    if [ -n "$JOBS" ]; then case " $JOBS " in *" $n "*) ;; *) continue ;; esac; fi
    mkdir $ST/claim_$n 2>/dev/null || continue
    if [ $(( $(date +%s) + est )) -gt $T_END ]; then rmdir $ST/claim_$n; echo "$n: no time ($est s)"; continue; fi
    echo "== $n start $(( $(date +%s)-S ))s on GPU $CUDA_VISIBLE_DEVICES"
    eval run_job $n $est $args
    touch $ST/done_$n
  done
}
JOBS
export ST JOBS DYN_ARGS GPUSUB_K ZOO_PLAN_PROFILE ZOO_SEPARATE_AOT_SAVE=1
# Each lane pinned to its own share of the host's CPUs (session 15: an unpinned lane's timed
# steps shared the cores with other lanes' compiles: Llama train large 14.94 ms in the 4-lane
# final vs 12.21 ms alone on one H100). The daemon and Inductor size their threads from the mask.
NC=$(nproc); PER=$(( NC / NG )); echo "cpus $NC, $PER per lane"
for i in $(seq 0 $((NG-1))); do (export CUDA_VISIBLE_DEVICES=$i; timeout $((T_END - $(date +%s) + 15)) taskset -c $((i*PER))-$((i*PER+PER-1)) bash -c "source /tmp/jobs.sh; lane") > $OUT/lane$i.txt 2>&1 & sleep 1; done
wait
el all 0
ls $ST
for f in $OUT/lane*.txt; do echo "#### $f"; cut -c1-300 $f | head -80; done
cd $OUT && tar czf /tmp/all.tgz --exclude=all.tgz . && mv /tmp/all.tgz $OUT/all.tgz && find . -type f ! -name all.tgz ! -name 'lane*.txt' -delete; ls -la $OUT
