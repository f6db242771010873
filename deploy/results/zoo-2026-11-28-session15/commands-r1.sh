# Session 15 r1: the helpers' requests, a queue over one lane per GPU (each request in $OUT/<name>/).
source .gpu/hdr.sh
NG=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l); echo "gpus $NG"
export ST=/tmp/r1_state JOBS="host7 warm5 gath infl cold7 seg10"; mkdir -p $ST
export S OUT TCCD_BINARY PYTHONPATH PYTHONUNBUFFERED
lane() {
  source .gpu/r1jobs.sh
  for j in $JOBS; do
    mkdir $ST/claim_$j 2>/dev/null || continue
    echo "== $j start $(( $(date +%s)-S ))s GPU $CUDA_VISIBLE_DEVICES"
    ( export OUT=$OUT/$j; mkdir -p $OUT; req_$j ) 2>&1 | cut -c1-300
    el $j done
  done
}
export -f el zoo lane
NC=$(nproc); PER=$(( NC / NG )); echo "cpus $NC, $PER per lane"
for i in $(seq 0 $((NG-1))); do (export CUDA_VISIBLE_DEVICES=$i; timeout ${T:-540} taskset -c $((i*PER))-$((i*PER+PER-1)) bash -c lane) > $OUT/lane$i.txt 2>&1 & done
wait
el all 0
for f in $OUT/lane*.txt; do echo "#### $f"; head -60 $f; done
cd $OUT && tar czf /tmp/all.tgz --exclude=all.tgz . && mv /tmp/all.tgz $OUT/all.tgz && find . -type f ! -name all.tgz ! -name "lane*.txt" -delete; ls -la $OUT
