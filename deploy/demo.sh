#!/usr/bin/env bash
# The main job: install what is missing and build (deploy/bootstrap.sh), start tccd on its
# embedded default (default socket, default cache dir) unless one already answers there, then
# compile the example model in two processes. Process 1 compiles through the daemon (cold, unless
# an earlier demo already filled the daemon's cache); process 2 is a fresh process with an empty
# local cache and gets every graph from the daemon's cache without compiling.
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/bootstrap.sh
PY=.venv/bin/python
BIN=build/bin/tccd
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "tccd on its default address"
started=""
if $PY -m tccd stats --json >/dev/null 2>&1; then
  echo "a tccd already answers on the default address; using it"
else
  LOG=${XDG_CACHE_HOME:-$HOME/.cache}/tccd/demo-daemon.log
  mkdir -p "$(dirname "$LOG")"
  setsid "$BIN" >"$LOG" 2>&1 < /dev/null &
  started=$!
  for _ in $(seq 100); do $PY -m tccd stats --json >/dev/null 2>&1 && break; sleep 0.1; done
  echo "started tccd (pid $started, log $LOG)"
  head -3 "$LOG"
fi
trap '[ -n "$started" ] && kill -TERM "$started" 2>/dev/null && wait "$started" 2>/dev/null; true' EXIT

before=$($PY -m tccd stats --json)
export TCCD_JOB_ID=tccd-demo
say "process 1: compile (fresh local cache)"
TCCD_CACHE_DIR=$(mktemp -d) $PY deploy/example_model.py --label "process 1" | grep -v '^RESULT'
mid=$($PY -m tccd stats --json)
say "process 2: a new process, empty local cache: every graph from the daemon's cache"
TCCD_CACHE_DIR=$(mktemp -d) $PY deploy/example_model.py --label "process 2" | grep -v '^RESULT'
after=$($PY -m tccd stats --json)

say "daemon counters"
$PY - "$before" "$mid" "$after" <<'PYEOF'
import json, sys
b, m, a = (json.loads(s) for s in sys.argv[1:])
# cache_hits: Compile calls served from the cache; aot_recipe_hits / manifest_reads: a process
# that got a graph's AOT recipe and its plans by key from the daemon (no Compile call at all).
for k in ("compiles", "cache_hits", "cache_misses", "aot_recipe_hits", "manifest_reads"):
    print(f"  {k:<15} process 1: +{m.get(k, 0) - b.get(k, 0):<4} process 2: +{a.get(k, 0) - m.get(k, 0):<4} total: {a.get(k, 0)}")
print("  process 2 compiled nothing: " + ("yes" if a["compiles"] == m["compiles"] else "NO"))
PYEOF
