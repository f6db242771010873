# Session 19 r1 (was session 18): the helpers' requests, a queue over one lane per GPU (each request in $OUT/<name>/), lanes pinned.
source .gpu/hdr.sh
NG=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l); echo "gpus $NG"
export ST=/tmp/r1_state; mkdir -p $ST
# name:estimate-seconds, longest first
export JOBS="${JOBS:-cold10:200 dyn15:180}"
export S OUT TCCD_BINARY PYTHONPATH PYTHONUNBUFFERED T_END=$(( S + ${T:-450} ))
lane() {
  source .gpu/r1jobs.sh
  for je in $JOBS; do j=${je%:*}; est=${je#*:}
    mkdir $ST/claim_$j 2>/dev/null || continue
    if [ $(( $(date +%s) + est )) -gt $T_END ]; then echo "$j: no time"; continue; fi
    echo "== $j start $(( $(date +%s)-S ))s GPU $CUDA_VISIBLE_DEVICES"
    ( export OUT=$OUT/$j; mkdir -p $OUT; req_$j ) 2>&1 | cut -c1-300
    el $j done
  done
}
export -f el zoo lane
NC=$(nproc); PER=$(( NC / NG )); echo "cpus $NC, $PER per lane"
for i in $(seq 0 $((NG-1))); do (export CUDA_VISIBLE_DEVICES=$i; timeout $(( T_END - $(date +%s) + 20 )) taskset -c $((i*PER))-$((i*PER+PER-1)) bash -c lane) > $OUT/lane$i.txt 2>&1 & sleep 1; done
wait
el all 0
for f in $OUT/lane*.txt; do echo "#### $f"; head -70 $f; done
cd $OUT && tar czf /tmp/all.tgz --exclude=all.tgz . && mv /tmp/all.tgz $OUT/all.tgz && find . -type f ! -name all.tgz ! -name "lane*.txt" -delete; ls -la $OUT
