#!/usr/bin/env bash
# The instruction profile alone (the callgrind section of bench/run.sh),
# against a fresh local Azurite: valgrind --tool=callgrind over
# bench/reads.lua, then bench/callgrind.lua over callgrind_annotate.
# Prints the JSON line of bench/callgrind.lua and, per request, the
# inclusive instructions of each function it picks. About a minute.
#
#   bench/callgrind.sh [N]      N measured reads (default 100)
# Environment: BUILD_DIR (default build), CG_KEEP=DIR keeps the raw
# callgrind output and the annotation in DIR.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
# shellcheck source=tools/lab.sh
. "$root/tools/lab.sh"
# shellcheck source=bench/reads.sh
. "$root/bench/reads.sh"
lab_build callgrind
command -v valgrind >/dev/null || { echo "callgrind: valgrind not found" >&2; exit 1; }
cgn=${1:-100}
lab_start callgrind
export AZURE_STORAGE_CONTAINER=bench
reads_run "$tmp/cg.log" cg.json "$tmp/cg" "$cgn" valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" ||
  { echo "callgrind: run failed" >&2; exit 1; }
o=$(reads_callgrind "$tmp/cg.out" "$tmp/cg.txt" "$cgn") || { echo "callgrind: profile failed" >&2; exit 1; }
if [[ -n ${CG_KEEP:-} ]]; then mkdir -p "$CG_KEEP" && cp "$tmp/cg.out" "$tmp/cg.txt" "$CG_KEEP/"; fi
echo "$o"
lua5.4 - "$o" <<'LUA'
  local c = require "cjson"
  local d = c.decode(arg[1])
  local base = d.ir.ll_run_request or 1
  local names = {}
  for k in pairs(d.ir) do names[#names + 1] = k end
  table.sort(names, function(a, b) return d.ir[a] > d.ir[b] end)
  for _, k in ipairs(names) do
    io.write(string.format("%-28s %8.1f k/request %5.1f%%\n", k, d.ir[k] / d.requests / 1000, 100 * d.ir[k] / base))
  end
LUA
