#!/usr/bin/env bash
# Builds and runs the libFuzzer targets (tests/fuzz/*_fuzzer.cc) from their seed corpora.
#
#   tests/fuzz/run.sh                  bounded run (CI): each fuzzer for --runs executions
#   tests/fuzz/run.sh --minutes 30     each fuzzer for 30 minutes, both at once
#   tests/fuzz/run.sh --runs 200000 --only request
#
# Options: --runs N (default 10000), --minutes M (overrides --runs), --only request|ir_text,
#          --build-only.
# The build is its own clang tree (build-fuzz/, ASan + UBSan + coverage, ccache'd) with only the
# fuzz targets and the libraries they link. Inputs found are kept in build-fuzz/corpus/<name>/
# (the checked-in seeds in tests/fuzz/corpus/ are read, never written); a crash, sanitizer report,
# INTERNAL status, leak or hang (>10 s) leaves its input in build-fuzz/findings/ and fails the run.
# Reproduce one with: build-fuzz/fuzz/tccd_<name>_fuzzer build-fuzz/findings/<file>
# If clang or libFuzzer is missing, says so and exits 0 (deploy/bootstrap.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
RUNS=10000
MINUTES=""
ONLY=""
BUILD_ONLY=0
while (($#)); do
  case $1 in
    --runs) RUNS=$2; shift 2 ;;
    --minutes) MINUTES=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    --build-only) BUILD_ONLY=1; shift ;;
    *) echo "usage: $0 [--runs N | --minutes M] [--only request|ir_text] [--build-only]" >&2; exit 2 ;;
  esac
done
BUILD=${TCCD_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}
log() { printf '\033[1m[fuzz]\033[0m %s\n' "$*" >&2; }

# libFuzzer comes with clang's runtime (libclang-rt-*-dev); try a one-line fuzzer to be sure.
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' >"$probe/p.cc"
if ! command -v clang++ >/dev/null || ! clang++ -fsanitize=fuzzer,address,undefined "$probe/p.cc" -o "$probe/p" 2>/dev/null; then
  log "SKIPPED: clang++ with libFuzzer is not installed (apt-get install clang libclang-rt-14-dev)"
  exit 0
fi

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
if [ ! -f "$BUILD/build.ninja" ]; then
  log "configuring $BUILD (clang, ASan + UBSan + libFuzzer)"
  CC=clang CXX=clang++ cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DTCCD_FUZZERS=ON -DTCCD_BUILD_TESTS=OFF "${launcher[@]}" >/dev/null
fi
targets=(request ir_text)
[ -n "$ONLY" ] && targets=("$ONLY")
log "building ${targets[*]} fuzzers"
cmake --build "$BUILD" -j"${TCCD_FUZZ_BUILD_JOBS:-2}" --target $(printf 'tccd_%s_fuzzer ' "${targets[@]}")
((BUILD_ONLY)) && exit 0

mkdir -p "$BUILD/findings"
limit=(-runs="$RUNS")
[ -n "$MINUTES" ] && limit=(-max_total_time=$((MINUTES * 60)))
pids=()
for name in "${targets[@]}"; do
  mkdir -p "$BUILD/corpus/$name"
  max_len=65536
  [ "$name" = ir_text ] && max_len=16384
  log "running $name: ${limit[*]} (log: $BUILD/fuzz/$name.log)"
  # Corpus: new inputs go into the first directory, the seeds are only read.
  "$BUILD/fuzz/tccd_${name}_fuzzer" "${limit[@]}" -max_len=$max_len -timeout=10 -rss_limit_mb=4096 \
    -print_final_stats=1 -artifact_prefix="$BUILD/findings/$name-" \
    -dict="$ROOT/tests/fuzz/$name.dict" \
    "$BUILD/corpus/$name" "$ROOT/tests/fuzz/corpus/$name" >"$BUILD/fuzz/$name.log" 2>&1 &
  pids+=($!)
done
status=0
for i in "${!targets[@]}"; do
  name=${targets[$i]}
  if wait "${pids[$i]}"; then
    log "$name: $(grep -E '^stat::number_of_executed_units' "$BUILD/fuzz/$name.log" | awk '{print $2}') executions, no findings"
  else
    status=1
    log "$name: FOUND A BUG; last lines of $BUILD/fuzz/$name.log:"
    tail -40 "$BUILD/fuzz/$name.log" >&2
  fi
done
exit $status
