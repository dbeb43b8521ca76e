#!/usr/bin/env bash
# The offline specs (replay: no network, no Azurite) against the ASan+UBSan
# build. busted loads the instrumented leaselua.so into a stock lua5.4, so
# libasan must be the first library loaded (LD_PRELOAD); the host binary
# the specs run ($LEASELUA) is the instrumented one too. Any ASan, UBSan
# or LeakSanitizer report fails the run, even inside a passing spec.
#
# usage: tools/asan-specs.sh [SPEC...]   BUILD_DIR (default build-asan);
#        default specs: spec/replay_*_spec.lua and the hostile-value sweep
#        (spec/hostile_values_spec.lua: every Lua-facing function with
#        hostile values; the host with error objects of every shape)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=$(cd "${BUILD_DIR:-build-asan}" && pwd) || exit 1
[[ -x $build/leaselua && -f $build/leaselua.so ]] || {
  echo "asan-specs: $build has no leaselua / leaselua.so (make check-asan builds it)" >&2
  exit 1
}
ldd "$build/leaselua.so" | grep libasan >/dev/null || { # not -q: ldd would get SIGPIPE (pipefail)
  echo "asan-specs: $build/leaselua.so is not built with ASan (-DLEASELUA_SANITIZE=ON)" >&2
  exit 1
}
libasan=$(${CC:-gcc} -print-file-name=libasan.so)
[[ -f $libasan ]] || {
  echo "asan-specs: libasan.so not found (${CC:-gcc} -print-file-name)" >&2
  exit 1
}
specs=("$@")
if ((${#specs[@]} == 0)); then
  mapfile -t specs < <(find spec -maxdepth 1 \( -name 'replay_*_spec.lua' -o -name 'hostile_values_spec.lua' \) | sort)
fi
((${#specs[@]} > 0)) || {
  echo "asan-specs: no offline specs"
  exit 0
}
log=$(mktemp /tmp/leaselua-asan-specs.XXXXXX.log)
rc=0
env -u AZURE_STORAGE_ACCOUNT_URL -u AZURE_STORAGE_TOKEN LD_PRELOAD="$libasan" \
  ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  LEASELUA="$build/leaselua" lua5.4 /usr/bin/busted -o utfTerminal \
  --lpath="$root/scripts/lib/?.lua;$root/scripts/?.lua;$root/spec/?.lua" --cpath="$build/?.so" \
  "${specs[@]}" >"$log" 2>&1 || rc=$?
reports=$(grep -cE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$log" || true)
summary=$(sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '[0-9]+ success' | tail -n 1 || true)
echo "asan-specs: ${#specs[@]} spec files under ASan+UBSan: ${summary:-no summary}; sanitizer reports: $reports"
if ((rc != 0 || reports != 0)); then
  grep -E -A 20 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|Failure|Error ->' "$log" | head -n 80 >&2 || true
  echo "asan-specs: failed (log $log)" >&2
  exit 1
fi
rm -f "$log"
