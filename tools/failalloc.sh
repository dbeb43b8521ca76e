#!/usr/bin/env bash
# The allocation-failure sweep (tests/failalloc/sweep.lua) under ASan+UBSan,
# in one lua5.4 process with the instrumented module of a
# -DLEASELUA_SANITIZE=ON -DLEASELUA_FAILALLOC=ON build (make check-asan).
#
# usage: tools/failalloc.sh [--stride K] [--offset O|random]
#   BUILD_DIR (default build-asan). Without --stride: every N (make failalloc).
#   --offset random picks 1..K afresh each run (CI), and prints it: rerun
#   with that offset to reproduce.
# Any sanitizer report fails the sweep; a crash names the N in flight.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=$(cd "${BUILD_DIR:-build-asan}" && pwd) || exit 1
args=()
stride=1
while (($#)); do
  case $1 in
  --stride) stride=$2; args+=(--stride "$2"); shift 2 ;;
  --offset)
    off=$2
    [[ $off == random ]] && off=$((RANDOM % stride + 1))
    args+=(--offset "$off")
    echo "failalloc: stride $stride, offset $off"
    shift 2
    ;;
  *) args+=("$1"); shift ;;
  esac
done
[[ -f $build/leaselua.so ]] || {
  echo "failalloc: $build has no leaselua.so (make check-asan builds it)" >&2
  exit 1
}
# The fault injector is the sweep's, never a sandboxed script's: a script
# that makes its own package.preload finds no leaselua.failalloc there.
if [[ -x $build/leaselua ]]; then
  probe=$(mktemp /tmp/leaselua-failalloc.XXXXXX.lua)
  printf '%s\n' 'package = { preload = {} }' 'require "leaselua"' \
    'print("injector " .. tostring(package.preload["leaselua.failalloc"] ~= nil))' >"$probe"
  seen=$(env AZURE_STORAGE_ACCOUNT_URL=https://127.0.0.1:9 AZURE_STORAGE_TOKEN=offline-token \
    ASAN_OPTIONS=detect_leaks=0 "$build/leaselua" "$probe" 2>/dev/null || true)
  rm -f "$probe"
  [[ $seen == "injector false" ]] || {
    echo "failalloc: a sandboxed script reached the fault injector (it printed '$seen')" >&2
    exit 1
  }
  echo "failalloc: the host's scripts see no fault injector"
fi
preload=()
if ldd "$build/leaselua.so" | grep libasan >/dev/null; then # not -q: ldd would get SIGPIPE (pipefail)
  preload=(LD_PRELOAD="$(${CC:-gcc} -print-file-name=libasan.so)")
fi
log=$(mktemp /tmp/leaselua-failalloc.XXXXXX.log)
progress=$(mktemp /tmp/leaselua-failalloc.XXXXXX.n)
rc=0
start=$(date +%s)
env -u AZURE_STORAGE_ACCOUNT_URL -u AZURE_STORAGE_TOKEN -u AZURE_STORAGE_SAS \
  -u AZURE_STORAGE_CONTAINER -u AZURE_STORAGE_BLOB "${preload[@]}" \
  ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  SWEEP_PROGRESS="$progress" LUA_PATH="$root/scripts/lib/?.lua;$root/scripts/?.lua;;" \
  LUA_CPATH="$build/?.so;;" lua5.4 tests/failalloc/sweep.lua "${args[@]}" >"$log" 2>&1 || rc=$?
reports=$(grep -cE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$log" || true)
grep -E '^sweep:' "$log" || true
echo "failalloc: ${#preload[@]} sanitizer preload, sanitizer reports: $reports, exit $rc, $(($(date +%s) - start)) s"
if ((rc != 0 || reports != 0)); then
  echo "failalloc: the N in flight: $(cat "$progress" 2>/dev/null || echo unknown)" >&2
  grep -E -A 30 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$log" | head -n 80 >&2 || true
  echo "failalloc: failed (log $log)" >&2
  rm -f "$progress"
  exit 1
fi
rm -f "$log" "$progress"
