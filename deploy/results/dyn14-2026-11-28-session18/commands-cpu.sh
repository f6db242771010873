# dyn14, CPU (shared 2-core dev machine, load ~4, no GPU), one run per arm, daemon from the
# branch's build (build/bin/tccd --compile_in_process on a private unix socket in $D):
for k in 1 0; do
  TCCD_SHARED_SAVED_CONSTANTS=$k TCCD_PLAN_PROFILE=1 OMP_NUM_THREADS=1 TCCD_NO_AUTOSTART=1 \
    TCCD_ADDRESS=unix:$D/tccd.sock TCCD_CACHE_DIR=$D/client-$k PYTHONPATH=client \
    python deploy/dynamic_shapes_bench.py --compare-static --interleave --phases --d 64 --tokens 256 \
      --lengths 32,64 --steps 100 --rounds 3 > cpu-bench-rounds3-shared-$( [ $k = 1 ] && echo on || echo off )-profile.txt
done
