# Session 16: pre11's request (TCCD_CACHING_PRECOMPILE warm-pre cells), one model per GPU, lanes pinned.
source .gpu/hdr.sh
source .gpu/r1jobs.sh
export S OUT TCCD_BINARY PYTHONPATH PYTHONUNBUFFERED; export -f el
NC=$(nproc); NG=$(nvidia-smi -L | wc -l); PER=$(( NC / NG ))
i=0; for m in gpt2:gpt2:75 t5:t5:80 r50:resnet50:80 bert:bert:75; do IFS=: read n mm t <<< "$m"
  [ $i -lt $NG ] || break
  (export CUDA_VISIBLE_DEVICES=$i; taskset -c $((i*PER))-$((i*PER+PER-1)) bash -c "source .gpu/r1jobs.sh; pre $n $mm $t") > $OUT/lane$i.txt 2>&1 &
  i=$((i+1)); sleep 1; done
wait; el all 0
for f in $OUT/lane*.txt; do echo "#### $f"; cat $f; done
for n in gpt2 t5 r50 bert; do grep -E "warm-pre|^\| .*tccd-pre|^\| .*\| tccd \|" $OUT/pre-$n.log | cut -c1-260 | head -8; done
cd $OUT && tar czf /tmp/all.tgz --exclude=all.tgz . && mv /tmp/all.tgz $OUT/all.tgz && find . -type f ! -name all.tgz ! -name "lane*.txt" -delete; ls -la $OUT
