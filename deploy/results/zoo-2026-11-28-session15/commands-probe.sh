# Session 15 probe: Llama train large's GPU idle (ZOO_TRACE_DIR idle gaps), one quiet GPU.
source .gpu/hdr.sh
export ZOO_TRACE_DIR=$OUT/traces
zoo L 300 --models llama,bert --backends inductor,tccd --workloads train --batch large --iters 20
python3 - <<'P'
import json,os
for c in json.load(open(os.environ['OUT']+'/L/results.json')):
    g=c.get('idle_gaps') or {}
    print('##', c['model'], c['backend'], 'step', round(c.get('step_ms') or 0,2), 'host', round(c.get('host_ms') or 0,2), 'busy', round(c.get('gpu_busy_ms') or 0,2))
    print({k:g.get(k) for k in ('window_us','busy_us','idle_us','gaps_over_min','first_launch_after_us')})
    for w in g.get('worst_gaps',[])[:8]: print('  gap', w)
    for r in g.get('runtime_calls',[])[:8]: print('  rt', r)
P
cd $OUT && gzip -r traces; tar czf /tmp/all.tgz --exclude=all.tgz . && mv /tmp/all.tgz $OUT/all.tgz && find . -type f ! -name all.tgz -delete; ls -la $OUT
