source .gpu/hdr.sh
export S OUT TCCD_BINARY PYTHONPATH PYTHONUNBUFFERED
NG=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l); echo "gpus $NG"
for i in 0 1; do (export CUDA_VISIBLE_DEVICES=$((i % NG)); timeout 530 bash -c "source .gpu/fns.sh; lane$i") > $OUT/lane$i.txt 2>&1 & done
wait
el all 0
for f in $OUT/lane*.txt; do echo "#### $f"; cut -c1-250 $f | head -70; done
cd $OUT && tar czf /tmp/all.tgz --exclude=all.tgz . && mv /tmp/all.tgz $OUT/all.tgz && find . -type f ! -name all.tgz ! -name 'lane*.txt' -delete; ls -la $OUT
