#!/usr/bin/env bash
# Where a read's CPU time goes, natively (the callgrind profile counts
# instructions under valgrind, which hides SHA extensions and prices a
# system call at nothing): against a fresh local Azurite, bench/reads.lua
# once under bench/cadence.c's shim, for the mean CPU time per request
# without a profiler, then once under `perf record --call-graph dwarf`;
# prints each picked function's share of the process's samples
# (inclusive, a mean over the whole run, handshakes and start-up
# included) and that share of the mean CPU time per request: an estimate,
# good to a point or so of share at the default N. About a minute; not a
# figure of make bench, since perf is not on every machine.
#
#   bench/perf.sh [N]      N measured reads (default 2000)
# Environment: BUILD_DIR (default build), PERF_KEEP=DIR keeps perf.data
# and the report in DIR.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
# shellcheck source=tools/lab.sh
. "$root/tools/lab.sh"
# shellcheck source=bench/reads.sh
. "$root/bench/reads.sh"
lab_build perf
command -v perf >/dev/null || { echo "perf: perf not found (Debian package linux-perf)" >&2; exit 1; }
n=${1:-2000}
cmake --build "$build" --target ll_bench_cadence >/dev/null ||
  { echo "perf: could not build bench/cadence.c" >&2; exit 1; }
lab_start perf
export AZURE_STORAGE_CONTAINER=bench
reads_run "$tmp/cpu.log" perf-cpu.json "$tmp/cpu" "$n" \
  env LD_PRELOAD="$build/libll_bench_cadence.so" LL_CADENCE_OUT="$tmp/cadence" ||
  { echo "perf: the unprofiled run failed" >&2; exit 1; }
[[ -s $tmp/cadence ]] || { echo "perf: the shim wrote no sends ($tmp/cadence)" >&2; exit 1; }
cpu=$(lua5.4 bench/cadence.lua "$tmp/cadence" 10 "$n") || { echo "perf: bench/cadence.lua failed" >&2; exit 1; }
[[ $cpu == *"\"cpu_n\":$n"* ]] ||
  { echo "perf: the shim's sends hold no $n intervals with their CPU time: $cpu" >&2; exit 1; }
reads_run "$tmp/rec.log" perf.json "$tmp/rec" "$n" \
  perf record -q -F 3999 --call-graph dwarf,32768 -o "$tmp/perf.data" ||
  { echo "perf: the profiled run failed" >&2; exit 1; }
perf report -i "$tmp/perf.data" --comm leaselua --children --sort sym --stdio -g none >"$tmp/report.txt" \
  2>"$tmp/report.log" || { cat "$tmp/report.log" >&2; echo "perf: perf report failed" >&2; exit 1; }
if [[ -n ${PERF_KEEP:-} ]]; then mkdir -p "$PERF_KEEP" && cp "$tmp/perf.data" "$tmp/report.txt" "$PERF_KEEP/"; fi
lua5.4 - "$tmp/report.txt" "$cpu" <<'LUA'
  local cjson = require "cjson"
  local cpu = cjson.decode(arg[2])
  local us = cpu.cpu_mean * 1000
  -- inclusive shares, by name; only names that are one function in the
  -- tree are picked (two static functions are called outcome), and a name
  -- perf shows twice (two unwinding paths) counts once, at its larger share
  local share, samples = {}, nil
  for line in io.lines(arg[1]) do
    samples = samples or line:match("^# Samples: (%S+)")
    local c, name = line:match("^%s+([%d.]+)%%%s+[%d.]+%%%s+%[%.%]%s+(.-)%s*$")
    if c then share[name] = math.max(share[name] or 0, tonumber(c)) end
  end
  local picks = {
    { "ll_run_request", "a request below the binding: guard, build, intent, exchange, outcome" },
    { "http_exchange", "the exchange (libcurl, TLS, the kernel's send and receive)" },
    { "ll_run_append_take", "appending both rows: the ledger and the fold" },
    { "ll_ledger_append_row", "the ledger alone: print, sanitize, scan, hash, write" },
    { "write_some", "write(2) of the ledger lines" },
    { "ll_model_apply", "the fold" },
    { "ll_row_outcome", "building the outcome row" },
    { "ll_row_intent", "building the intent row" },
    { "ll_blob_build", "building the request" },
    { "ll_lua_finish", "handing the row to Lua" },
  }
  print(string.format("CPU per request without a profiler: %.1f us (bench/cadence.c, mean of %d intervals; " ..
    "p50 %.1f us); %s samples under perf", us, math.floor(cpu.cpu_n), cpu.cpu_p50 * 1000, samples or "?"))
  for _, p in ipairs(picks) do
    local s = share[p[1]]
    print(string.format("%-22s %6s %7s  %s", p[1], s and string.format("%.1f%%", s) or "n/a",
      s and string.format("%.0f us", s * us / 100) or "", p[2]))
  end
LUA
