#!/usr/bin/env bash
# The whole lease table (leaselua lease-table) against a fresh local Azurite
# that lives only for this run: its measured wall time against its floor,
# the sum of the waits the plan's cells make necessary (the expected wait
# `--plan` prints: each 15 s expiry and each break period a cell must wait
# out). bench/run.sh (make bench) runs it last; alone: bench/lease_table.sh.
#
# The run is destructive (the table's unleased writes documented to
# succeed), authorised by an accepted, cleaned-up main handoff on the same
# blob just before it (--after). A benchmark, not a test: it fails only
# when the table could not be run (a wrong exit, a cell without its row).
#
# Environment: BUILD_DIR (default build), BENCH_TABLE_BREAK (the break
# period of Breaking (A), default 10 s, the flow's: its cells run only while
# 2 s of the break remain, so a shorter one moves them to fresh lifecycles),
# BENCH_TABLE_RUNS (default 1).
# Output: bench/out/lease-table.md (the table), one {"fig":"lease_table"}
# line per run appended to bench/out/raw.jsonl.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
say() { echo "bench: lease table: $*" >&2; }
die() {
  echo "bench: lease table: ERROR: $*" >&2
  exit 1
}

# shellcheck source=tools/lab.sh
. "$root/tools/lab.sh"
lab_build bench-lease-table
brk=${BENCH_TABLE_BREAK:-10}
runs=${BENCH_TABLE_RUNS:-1}
manifest=$root/tools/emulator/manifest.json
out=$root/bench/out
mkdir -p "$out"
lab_start bench-lease-table
export AZURE_STORAGE_CONTAINER=bench-table

rows=()
for run in $(seq 1 "$runs"); do
  export AZURE_STORAGE_BLOB=table-$run.json
  ev=$tmp/ev-table-$run
  "$host" scripts/main_handoff.lua --manifest "$manifest" --evidence "$tmp/ev-main-$run" --break-period 1 \
    >"$tmp/main.out" 2>&1 || die "the main handoff that authorises the table did not ACCEPT: $(tail -n 3 "$tmp/main.out")"
  plan=$("$host" lease-table --plan --manifest "$manifest" --destructive --after "$tmp/ev-main-$run" \
    --break-period "$brk") || die "--plan failed"
  head=$(head -n 1 <<<"$plan")
  floor_s=$(sed -n 's/.*expected wait \([0-9]*\) s.*/\1/p' <<<"$head")
  [[ -n $floor_s ]] || die "the plan states no expected wait: $head"
  nlife=$(sed -n 's/^lease-table plan: \([0-9]*\) lifecycles.*/\1/p' <<<"$head")
  nreq=$(grep -c '^  request ' <<<"$plan")
  npoll=$(grep -c '^  poll ' <<<"$plan")
  say "run $run of $runs: $head"
  t0=$EPOCHREALTIME
  rc=0
  "$host" lease-table --manifest "$manifest" --evidence "$ev" --destructive --after "$tmp/ev-main-$run" \
    --break-period "$brk" >"$tmp/table.out" 2>&1 || rc=$?
  t1=$EPOCHREALTIME
  ((rc == 0)) || {
    tail -n 20 "$tmp/table.out" >&2
    die "the table ended with exit $rc"
  }
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", (b - a)}')
  f=$(LUA_CPATH="$build/?.so;;" lua5.4 bench/lease_table.lua "$ev") || die "bench/lease_table.lua failed on $ev"
  line="{\"fig\":\"lease_table\",\"run\":$run,\"break_s\":$brk,\"floor_s\":$floor_s,\"planned_lifecycles\":$nlife,"
  line+="\"planned_requests\":$nreq,"
  line+="\"planned_polls\":$npoll,\"wall_s\":$wall,\"data\":$f}"
  printf '%s\n' "$line" >>"$out/raw.jsonl"
  rows+=("$line")
  say "run $run: wall $wall s against a floor of $floor_s s"
done

# The table: one row per run.
printf '%s\n' "${rows[@]}" | lua5.4 -e '
  local cjson = require "cjson"
  print("### The lease table (Azurite " .. arg[1] .. ", break period " .. arg[2] .. " s)")
  print("")
  print("| run | floor (plan) | wall | wall - floor | span of requests | on the wire | waits > 200 ms |" ..
    " tool between requests | lifecycles (planned) | requests (planned + polls) |" ..
    " cells: CONFORMS / ONE_SOURCE / DEVIATES / NOT_REACHED |")
  print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
  for l in io.lines() do
    local r = cjson.decode(l)
    local d, v = r.data, r.data.verdicts
    print(string.format("| %d | %d s | %.1f s | %.1f s | %.1f s | %.1f s | %.1f s | %.1f s | %d (%d) | %d (%d + %d) |" ..
      " %d / %d / %d / %d |", r.run, r.floor_s, r.wall_s, r.wall_s - r.floor_s, d.span_ms / 1000, d.wire_ms / 1000,
      d.waits_ms / 1000, d.tool_ms / 1000, d.lifecycles, r.planned_lifecycles, d.requests, r.planned_requests,
      r.planned_polls, v.CONFORMS, v.CONFORMS_ONE_SOURCE, v.DEVIATES, v.NOT_REACHED))
  end' /dev/null "$AZURITE_VERSION" "$brk" >"$out/lease-table.md"
cat "$out/lease-table.md"
