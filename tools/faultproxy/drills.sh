#!/usr/bin/env bash
# The drills of docs/RELIABILITY.md, against a fresh Azurite: the fault
# matrix and keep-alive drills (spec/faults_spec.lua), the crash drills
# (spec/crash_drills_spec.lua) and the bad input cases
# (spec/bad_input_spec.lua, spec/garbage_server_spec.lua,
# spec/bad_lease_id_spec.lua). Prints the busted summary, then the tables
# (tools/faultproxy/report.lua) on stdout, or into OUT.md when given.
#
# usage: tools/faultproxy/drills.sh [OUT.md]     BUILD_DIR (default build)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
# shellcheck source=tools/lab.sh
. "$root/tools/lab.sh"
lab_build drills
lab_start drills
export LEASELUA=$host LEASELUA_DRILL_LOG=$tmp/drills.jsonl
: >"$LEASELUA_DRILL_LOG"
rc=0
lua5.4 /usr/bin/busted \
  --lpath="$root/scripts/lib/?.lua;$root/scripts/?.lua;$root/spec/?.lua" --cpath="$build/?.so" \
  -o utfTerminal spec/faults_spec.lua spec/crash_drills_spec.lua spec/bad_input_spec.lua \
  spec/garbage_server_spec.lua spec/bad_lease_id_spec.lua >"$tmp/busted.log" 2>&1 || rc=$?
sed 's/\x1b\[[0-9;]*m//g' "$tmp/busted.log" | tail -n 40 | grep -E 'success|Failure|Error' | head -n 20 >&2 || true
if [[ -n ${1:-} ]]; then
  lua5.4 tools/faultproxy/report.lua "$LEASELUA_DRILL_LOG" >"$1"
  cp "$LEASELUA_DRILL_LOG" "${1%.md}.jsonl"
  echo "drills: tables in $1, raw log in ${1%.md}.jsonl" >&2
else
  lua5.4 tools/faultproxy/report.lua "$LEASELUA_DRILL_LOG"
fi
exit "$rc"
