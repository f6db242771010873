#!/usr/bin/env bash
# Release bundle: a relocatable tarball of tccd for any x86_64 Linux with a recent enough glibc,
# no Debian dev packages needed. This is also how operators install tccd (see the bundle's README).
#
#   deploy/bundle.sh [--build-dir DIR] [--out FILE] [--no-check]
#   deploy/bundle.sh --check-only FILE      (verify an existing tarball, e.g. on the target)
#
# Layout: tccd-<version>-linux-x86_64/{bin/tccd, lib/*.so*, share/tccd/tccd.service, README,
# SHA256SUMS}. lib/ holds every shared library bin/tccd needs, transitively (ldd), except glibc's
# own (libc, libm, libpthread, libdl, librt, libresolv, libutil, ld-linux, ...) and the vdso;
# libstdc++ and libgcc_s are bundled. Each library is the real file (symlinks resolved) under the
# name the loader asks for, debug info stripped, RUNPATH $ORIGIN; bin/tccd gets $ORIGIN/../lib.
# Default output: dist/tccd-<version>-linux-x86_64.tar.xz (xz -9, x86 BCJ filter); its size is
# printed, and over 64 MiB (TCCD_BUNDLE_MAX_MB) is an error: it must fit the channel to the GPU
# machines. The last line on stdout is the tarball's path.
#
# --check (the default; --no-check skips it) unpacks the tarball into a temp dir and verifies:
#   1. ldd (without LD_LIBRARY_PATH) resolves every non-glibc dependency of bin/tccd and of each
#      bundled library inside the bundle's lib/;
#   2. the host's glibc is at least the newest GLIBC_x.y symbol version the bundle uses;
#   3. bin/tccd --version and --help exit 0;
#   4. bin/tccd serves on a temp unix socket with a temp cache and exits 0 on SIGTERM.
# Needs: ldd, objcopy, readelf, xz, GNU tar; patchelf (installed with apt-get when missing).
set -euo pipefail
# One compound command: bash parses all of it before running any, so editing this file while a
# bundle is being built (minutes) cannot change what the running script does.
{
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
log() { printf '\033[1m[bundle]\033[0m %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }

BUILD_DIR=${TCCD_BUILD_DIR:-}
OUT=""
CHECK=1
CHECK_ONLY=""
MAX_MB=${TCCD_BUNDLE_MAX_MB:-64}  # what fits through the channel to the GPU machines
while (($#)); do
  case $1 in
    --build-dir) (($# >= 2)) || die "--build-dir needs a value"; BUILD_DIR=$2; shift 2 ;;
    --build-dir=*) BUILD_DIR=${1#*=}; shift ;;
    --out) (($# >= 2)) || die "--out needs a value"; OUT=$2; shift 2 ;;
    --out=*) OUT=${1#*=}; shift ;;
    --check) CHECK=1; shift ;;
    --no-check) CHECK=0; shift ;;
    --check-only) (($# >= 2)) || die "--check-only needs a tarball"; CHECK_ONLY=$2; shift 2 ;;
    --check-only=*) CHECK_ONLY=${1#*=}; shift ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see $0 --help)" ;;
  esac
done

TMP=$(mktemp -d "${TMPDIR:-/tmp}/tccd-bundle.XXXXXX")
DAEMON_PID=""
# shellcheck disable=SC2317  # run by the EXIT trap
cleanup() {
  if [ -n "$DAEMON_PID" ]; then kill -KILL "$DAEMON_PID" 2>/dev/null || true; fi
  rm -rf "$TMP"
}
trap cleanup EXIT

# glibc's own libraries (always the target's) and the kernel's vdso: never bundled.
is_system_lib() {
  case $1 in
    linux-vdso.so.* | linux-gate.so.* | ld-linux*.so.* | ld64.so.*) return 0 ;;
    libc.so.* | libm.so.* | libmvec.so.* | libpthread.so.* | libdl.so.* | librt.so.*) return 0 ;;
    libresolv.so.* | libutil.so.* | libanl.so.* | libnsl.so.* | libBrokenLocale.so.*) return 0 ;;
    libthread_db.so.* | libc_malloc_debug.so.* | libnss_*.so.* | libmemusage.so | libpcprofile.so) return 0 ;;
  esac
  return 1
}

# "NAME<TAB>PATH" for every library the loader maps for $1 (PATH is "not found" when unresolved);
# no LD_LIBRARY_PATH/LD_PRELOAD, so only RUNPATH, ld.so.cache and the default dirs count.
ldd_deps() {
  local out
  out=$(env -u LD_LIBRARY_PATH -u LD_PRELOAD ldd "$1" 2>&1) || die "ldd $1 failed: $out"
  awk '
    $2 == "=>" { if ($3 == "not") print $1 "\tnot found"; else print $1 "\t" $3; next }
    NF >= 1 && $1 ~ /\.so/ { n = $1; sub(/.*\//, "", n); print n "\t" $1 }
  ' <<<"$out"
}

# The newest GLIBC_x.y symbol version any of the files needs (what the target's glibc must have).
glibc_needed() {
  local f
  for f in "$@"; do objdump -T "$f" 2>/dev/null | grep -o 'GLIBC_[0-9][0-9.]*' || true; done |
    sed 's/GLIBC_//' | sort -uV | tail -1
}

host_glibc() { getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}'; }

version_ge() { [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -1)" = "$2" ]; }

# ---------------------------------------------------------------------------------------------
# Verification of a tarball (also what --check-only runs on a target machine)
# ---------------------------------------------------------------------------------------------
check_tarball() {
  local tarball=$1 dir name lib_dir bad=0 f deps line dep path real need host out status
  [ -f "$tarball" ] || die "no tarball at $tarball"
  dir=$(mktemp -d "$TMP/check.XXXXXX")
  tar -xJf "$tarball" -C "$dir"
  name=$(ls "$dir")
  [ "$(printf '%s\n' "$name" | wc -l)" -eq 1 ] || die "$tarball: expected one top-level directory"
  dir=$dir/$name
  [ -x "$dir/bin/tccd" ] || die "$tarball: no executable bin/tccd"
  lib_dir=$(readlink -f "$dir/lib")
  log "check: dependencies of the unpacked $name resolve inside its lib/"
  for f in "$dir/bin/tccd" "$dir"/lib/*; do
    deps=$(ldd_deps "$f") || exit 1
    while IFS=$'\t' read -r dep path; do
      [ -n "$dep" ] || continue
      is_system_lib "$dep" && continue
      if [ "$path" = "not found" ]; then
        log "  ${f#"$dir"/}: $dep not found"
        bad=1
        continue
      fi
      real=$(readlink -f "$path")
      case $real in
        "$lib_dir"/*) ;;
        *) log "  ${f#"$dir"/}: $dep resolves outside the bundle, to $real"; bad=1 ;;
      esac
    done <<<"$deps"
  done
  ((bad == 0)) || die "the bundle is not self-contained (see above)"
  # readelf and objdump (binutils) may be missing on a target machine: the bundle records what
  # it needs in share/tccd/bundle-info, and ldd above already proved the RUNPATHs work.
  if command -v readelf >/dev/null; then
    line=$(readelf -d "$dir/bin/tccd" | grep -E '\((RUNPATH|RPATH)\)' || true)
    # shellcheck disable=SC2016  # a literal $ORIGIN
    case $line in
      *RUNPATH*'[$ORIGIN/../lib]'*) ;;
      *) die "bin/tccd: RUNPATH is not \$ORIGIN/../lib: ${line:-none}" ;;
    esac
  fi
  need=$(sed -n 's/^glibc_min=//p' "$dir/share/tccd/bundle-info" 2>/dev/null || true)
  if [ -z "$need" ] && command -v objdump >/dev/null; then
    need=$(glibc_needed "$dir/bin/tccd" "$dir"/lib/*)
  fi
  host=$(host_glibc)
  if [ -n "$need" ] && [ -n "$host" ] && ! version_ge "$host" "$need"; then
    die "this machine has glibc $host; the bundle needs glibc >= $need"
  fi
  log "check: glibc >= ${need:-?} needed, this machine has ${host:-?}"

  for flag in --version --help; do
    if ! out=$(env -u LD_LIBRARY_PATH -u LD_PRELOAD "$dir/bin/tccd" "$flag" 2>&1 </dev/null); then
      printf '%s\n' "$out" | tail -20 >&2
      die "bin/tccd $flag failed"
    fi
  done
  log "check: bin/tccd --version: $(env -u LD_LIBRARY_PATH "$dir/bin/tccd" --version | head -1)"

  # Serve, answer on the socket, stop cleanly on SIGTERM.
  local run sock
  run=$(mktemp -d /tmp/tccd-bundle-run.XXXXXX)  # short: unix socket paths are <= 107 bytes
  sock=$run/s.sock
  env -u LD_LIBRARY_PATH -u LD_PRELOAD "$dir/bin/tccd" --listen "unix:$sock" \
    --cache-dir "$run/db" >"$run/log" 2>&1 </dev/null &
  DAEMON_PID=$!
  for _ in $(seq 300); do
    [ -S "$sock" ] && break
    kill -0 "$DAEMON_PID" 2>/dev/null || break
    sleep 0.1
  done
  if [ ! -S "$sock" ]; then
    tail -20 "$run/log" >&2
    rm -rf "$run"
    die "the unpacked tccd did not create its socket within 30 s"
  fi
  kill -TERM "$DAEMON_PID"
  status=0
  for _ in $(seq 600); do kill -0 "$DAEMON_PID" 2>/dev/null || break; sleep 0.1; done
  wait "$DAEMON_PID" || status=$?
  DAEMON_PID=""
  if ((status != 0)); then
    tail -20 "$run/log" >&2
    rm -rf "$run"
    die "the unpacked tccd exited with status $status on SIGTERM"
  fi
  rm -rf "$run"
  log "check: bin/tccd served on a unix socket and exited 0 on SIGTERM"
  log "check passed: $tarball"
}

if [ -n "$CHECK_ONLY" ]; then
  check_tarball "$CHECK_ONLY"
  exit 0
fi

# ---------------------------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------------------------
for tool in ldd objcopy objdump readelf xz tar sha256sum; do
  command -v "$tool" >/dev/null || die "$tool is missing (binutils, xz-utils, tar, coreutils)"
done
if ! dpkg-query -W -f='${Status}' patchelf 2>/dev/null | grep -q "install ok installed"; then
  command -v apt-get >/dev/null || die "patchelf is missing and there is no apt-get to install it"
  log "installing patchelf"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  {
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends patchelf
  } >&2
fi
command -v patchelf >/dev/null || die "patchelf is not on PATH"

# ---------------------------------------------------------------------------------------------
# The binary and its version
# ---------------------------------------------------------------------------------------------
if [ -z "$BUILD_DIR" ]; then
  BUILD_DIR=$ROOT/build
  [ -x "$BUILD_DIR/bin/tccd" ] || [ ! -x "$ROOT/build-server/bin/tccd" ] || BUILD_DIR=$ROOT/build-server
fi
BIN=$BUILD_DIR/bin/tccd
[ -x "$BIN" ] || die "no tccd binary at $BIN: build it first (cmake -S . -B build -G Ninja && cmake --build build) or pass --build-dir"

VERSION=""
if v=$("$BIN" --version 2>/dev/null </dev/null); then
  VERSION=$(printf '%s\n' "$v" | head -1 | awk '{print $NF}')
fi
if ! [[ $VERSION =~ ^[0-9][0-9A-Za-z.+~-]*$ ]]; then
  VERSION=$(sed -nE 's/^project\(tccd VERSION ([0-9][0-9A-Za-z.]*).*/\1/p' "$ROOT/CMakeLists.txt" | head -1)
fi
[ -n "$VERSION" ] || die "cannot tell the version (neither $BIN --version nor CMakeLists.txt)"
NAME=tccd-$VERSION-linux-x86_64
OUT=${OUT:-$ROOT/dist/$NAME.tar.xz}
case $OUT in /*) ;; *) OUT=$PWD/$OUT ;; esac

# ---------------------------------------------------------------------------------------------
# Stage
# ---------------------------------------------------------------------------------------------
STAGE=$TMP/stage/$NAME
mkdir -p "$STAGE/bin" "$STAGE/lib" "$STAGE/share/tccd"
log "bundling $BIN (tccd $VERSION)"

# grep without -q reads all of readelf's output: with -q it exits at the first match, readelf dies of
# SIGPIPE and pipefail turns the match into a failure (the bundled tccd kept its debug info).
has_debug_info() { readelf -SW "$1" 2>/dev/null | grep -E '\] \.(debug_|zdebug_)' >/dev/null; }

cp -L "$BIN" "$STAGE/bin/tccd"
chmod 0755 "$STAGE/bin/tccd"
# Debug info only: the symbol table stays, so backtraces still name functions.
if has_debug_info "$STAGE/bin/tccd"; then objcopy --strip-debug "$STAGE/bin/tccd"; fi

declare -A SEEN=()
deps=$(ldd_deps "$BIN") || exit 1
while IFS=$'\t' read -r dep path; do
  [ -n "$dep" ] || continue
  is_system_lib "$dep" && continue
  [ "$path" != "not found" ] || die "$BIN: $dep not found (ldd); fix the build environment first"
  [ -z "${SEEN[$dep]:-}" ] || continue
  SEEN[$dep]=1
  real=$(readlink -f "$path")
  cp "$real" "$STAGE/lib/$dep"
  chmod 0644 "$STAGE/lib/$dep"
  if has_debug_info "$STAGE/lib/$dep"; then objcopy --strip-debug "$STAGE/lib/$dep"; fi
  # shellcheck disable=SC2016  # a literal $ORIGIN, expanded by the loader
  patchelf --set-rpath '$ORIGIN' "$STAGE/lib/$dep"
done <<<"$deps"
# shellcheck disable=SC2016
patchelf --set-rpath '$ORIGIN/../lib' "$STAGE/bin/tccd"
((${#SEEN[@]} > 0)) || die "ldd found no libraries to bundle for $BIN (a static binary?)"

cp "$ROOT/deploy/tccd.service" "$STAGE/share/tccd/tccd.service"
GLIBC_NEEDED=$(glibc_needed "$STAGE/bin/tccd" "$STAGE"/lib/*)
cat >"$STAGE/share/tccd/bundle-info" <<EOF
version=$VERSION
glibc_min=$GLIBC_NEEDED
built_on=$(sed -n 's/^PRETTY_NAME=//p' /etc/os-release 2>/dev/null | tr -d '"')
commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
EOF
LIB_LIST=$(cd "$STAGE/lib" && for f in *; do printf '  %-52s %7d KiB\n' "$f" $(($(stat -c %s "$f") / 1024)); done)

cat >"$STAGE/README" <<EOF
tccd $VERSION for Linux x86_64: the torch.compile compilation daemon, relocatable bundle.

Requirements: x86_64 Linux with glibc >= ${GLIBC_NEEDED:-2.36}. Nothing else: lib/ holds every
other shared library tccd needs (libstdc++ included); bin/tccd finds them through its RUNPATH
\$ORIGIN/../lib, so the directory can live anywhere.

Run it by hand:
  ./bin/tccd --help
  ./bin/tccd --listen unix:/tmp/tccd.sock --cache-dir /scratch/tccd-cache
  (defaults: socket \$XDG_RUNTIME_DIR/tccd/tccd.sock, cache \$XDG_CACHE_HOME/tccd/db)
Clients: pip install the tccd client, then TCCD_ADDRESS=unix:/tmp/tccd.sock and
torch.compile(model, backend="tccd").

Install as a system service (share/tccd/tccd.service, one daemon per node for every user):
  sudo mkdir -p /opt/tccd
  sudo tar -xJf $NAME.tar.xz -C /opt/tccd --strip-components=1
  sudo cp /opt/tccd/share/tccd/tccd.service /etc/systemd/system/
  sudo systemctl daemon-reload && sudo systemctl enable --now tccd
  It serves unix:/run/tccd/tccd.sock with the cache in /var/cache/tccd; clients set
  TCCD_ADDRESS=unix:/run/tccd/tccd.sock. 'systemctl stop tccd' sends SIGTERM: in-flight compiles
  finish (up to 30 s), the cache is closed, exit status 0. Logs: journalctl -u tccd.
  Upgrade: unpack the new bundle over /opt/tccd, then 'sudo systemctl restart tccd'.

Bundled libraries (lib/):
$LIB_LIST

SHA256SUMS lists every file; check with: sha256sum -c SHA256SUMS
EOF
(cd "$STAGE" && find . -type f | LC_ALL=C sort | sed 's|^\./||' | xargs sha256sum) >"$TMP/sums"
mv "$TMP/sums" "$STAGE/SHA256SUMS"

# ---------------------------------------------------------------------------------------------
# Tarball: reproducible (sorted, root-owned, fixed mtime), xz -9 (+ x86 BCJ)
# ---------------------------------------------------------------------------------------------
EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$ROOT" log -1 --format=%ct 2>/dev/null || date +%s)}
mkdir -p "$(dirname "$OUT")"
# TCCD_BUNDLE_XZ_PRESET (0-9, default 9): a lower preset for quick development bundles.
XZ_PRESET=${TCCD_BUNDLE_XZ_PRESET:-9}
[[ "$XZ_PRESET" =~ ^[0-9]$ ]] || die "TCCD_BUNDLE_XZ_PRESET must be a digit 0-9, got '$XZ_PRESET'"
log "compressing (xz -$XZ_PRESET with the x86 BCJ filter; a few minutes on a busy machine at -9)"
# The x86 filter makes machine code ~3-12% smaller under LZMA2; any xz or tar -J unpacks it.
tar -C "$TMP/stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$EPOCH" \
  -cf - "$NAME" | xz --x86 --lzma2=preset="$XZ_PRESET" -T0 -c >"$OUT.partial"
mv -f "$OUT.partial" "$OUT"

RAW=$(du -sb "$STAGE" | cut -f1)
SIZE=$(stat -c %s "$OUT")
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
log "$OUT: $(mib "$SIZE") MiB ($SIZE bytes; $(mib "$RAW") MiB unpacked, ${#SEEN[@]} libraries, glibc >= ${GLIBC_NEEDED:-?})"
if ((SIZE >= MAX_MB * 1048576)); then
  die "the tarball is over the ${MAX_MB} MiB limit"
fi

if ((CHECK)); then check_tarball "$OUT"; fi
echo "$OUT"
exit 0
}
