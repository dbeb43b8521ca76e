#!/usr/bin/env bash
# make bench: leaselua against its peers, every figure from one invocation,
# against a fresh local Azurite that lives only for this run.
#
#   bench/run.sh                  full: a warm-up, then 5 measured runs per
#                                 figure (15 for the reads); observation lag
#                                 with a 30 s break (about 5 minutes)
#   BENCH_QUICK=1 bench/run.sh    quick: 3 runs (9 for the reads), lag with
#                                 a 5 s break (about 2 minutes)
#
# Peers, in the same run: the floor (curl, one process, N HEAD requests
# over one kept-alive connection) and the official JS SDK
# (bench/peers/handoff.js). These are benchmarks: no figure passes or fails.
# The script exits non-zero only when a benchmark could not be run (a tool
# missing, a peer erroring, a handoff not reaching ACCEPT).
#
# Environment: BUILD_DIR (default build), BENCH_QUICK, BENCH_READS (reads
# per run, default 200), BENCH_JS_POLL_MS (the JS peer's fixed poll cadence,
# default 1000, the seed's), BENCH_TABLE (0 skips the lease table, which
# bench/lease_table.sh runs last, about 2.5 minutes more), BENCH_CG_LONG (1
# adds the 400-read instruction profile, 0 leaves it out; by default it
# runs in the full mode only, about a minute).
# Output: the table on stdout and in bench/out/latest.md; every raw figure
# in bench/out/raw.jsonl; the machine in bench/out/machine.json.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
say() { echo "bench: $*" >&2; }
die() {
  echo "bench: ERROR: $*" >&2
  exit 1
}

# shellcheck source=tools/lab.sh
. "$root/tools/lab.sh"
# shellcheck source=bench/reads.sh
. "$root/bench/reads.sh"
lab_build bench
for t in node npm curl lua5.4 cc pkg-config; do
  command -v "$t" >/dev/null || die "$t not found (run tools/deps.sh)"
done
[[ -x /usr/bin/time ]] || die "/usr/bin/time not found (Debian package 'time'; run tools/deps.sh)"
lua5.4 -e 'require "cjson"' 2>/dev/null || die "lua-cjson not found (run tools/deps.sh)"

if [[ ${BENCH_QUICK:-0} == 1 ]]; then
  mode=quick runs=3 lag_period=5 lag_runs=3
else
  mode=full runs=5 lag_period=30 lag_runs=5
fi
nreads=${BENCH_READS:-200}
read_runs=$((runs * 3)) # the reads are short: see "per-request reads"
handoff_break=2
js_poll=${BENCH_JS_POLL_MS:-1000}
manifest=$root/tools/emulator/manifest.json
peers=$root/bench/peers

# The JS peer, pinned by bench/peers/package-lock.json.
if [[ ! -f $peers/node_modules/@azure/storage-blob/package.json ||
  $peers/package-lock.json -nt $peers/node_modules/.package-lock.json ]]; then
  say "npm ci in bench/peers (the JS SDK peer)"
  (cd "$peers" && env -u NODE_EXTRA_CA_CERTS npm ci --no-audit --no-fund --ignore-scripts \
    </dev/null >/tmp/leaselua-bench-npm.log 2>&1) || {
    tail -n 20 /tmp/leaselua-bench-npm.log >&2
    die "npm ci failed in bench/peers"
  }
fi

out=$root/bench/out
mkdir -p "$out"
raw=$out/raw.jsonl
: >"$raw"
# Evidence on the disk (the file system of the default evidence root) and,
# for the fsync A/B, on tmpfs.
evdisk=$out/evidence.$$
mkdir -p "$evdisk"
evshm=
if [[ -d /dev/shm && $(stat -f -c %T /dev/shm 2>/dev/null) == tmpfs ]]; then
  evshm=$(mktemp -d /dev/shm/leaselua-bench.XXXXXX)
fi
bg_pids=()
# shellcheck disable=SC2317  # called by lab_cleanup
lab_before_stop() {
  local p
  for p in "${bg_pids[@]}"; do kill "$p" 2>/dev/null || true; done
}
# shellcheck disable=SC2317  # called by lab_cleanup
lab_after_stop() {
  rm -rf "$evdisk"
  [[ -z $evshm ]] || rm -rf "$evshm"
}

rec() { printf '%s\n' "$1" >>"$raw"; }
# ours OUT ARGS...: the host running a bench script (stdout into OUT,
# stderr into OUT.err). A benchmark proves no handoff: its exit is the
# decision its run records (HOLD), not a figure. It failed when it exited
# with 64 or 70, wrote to stderr (a raised error still ends in HOLD) or
# printed no figure.
ours() {
  local out=$1 rc=0
  shift
  "$host" "$@" >"$out" 2>"$out.err" || rc=$?
  if ((rc > 3)) || [[ -s $out.err || ! -s $out ]]; then
    echo "bench: exit $rc: $(cat "$out.err")" >&2
    return 1
  fi
}
# p50/p90/mean of numbers on stdin (one a line) as JSON
stats() {
  sort -g | awk '{v[NR]=$1; s+=$1} END {
    if (NR == 0) { print "null"; exit }
    i50 = int((NR + 1) / 2); i90 = int(NR * 0.9 + 0.999); if (i90 < 1) i90 = 1
    printf "{\"p50\":%.4f,\"p90\":%.4f,\"mean\":%.4f,\"n\":%d}\n", v[i50], v[i90], s / NR, NR }'
}

say "mode $mode: $runs measured runs after one warm-up; lag: ${lag_period} s break x $lag_runs"
lab_start bench
export AZURE_STORAGE_CONTAINER=bench
upstream=${AZURE_STORAGE_ACCOUNT_URL#https://}
upstream=${upstream%%/*}
js() { NODE_EXTRA_CA_CERTS=$LEASELUA_CA_FILE node "$@"; }

# curl's settings: the token goes in a 0600 file, never on a command line.
(
  umask 077
  {
    printf 'header = "Authorization: Bearer %s"\n' "$AZURE_STORAGE_TOKEN"
    echo 'header = "x-ms-version: 2023-11-03"'
    printf 'cacert = "%s"\n' "$LEASELUA_CA_FILE"
    echo 'silent'
  } >"$tmp/curl-auth.cfg"
)
floor_url=$AZURE_STORAGE_ACCOUNT_URL/bench/floor.json
code=$(curl -K "$tmp/curl-auth.cfg" -o /dev/null -w '%{http_code}' -X PUT \
  "$AZURE_STORAGE_ACCOUNT_URL/bench?restype=container")
[[ $code == 201 || $code == 409 ]] || die "create container answered $code"
code=$(curl -K "$tmp/curl-auth.cfg" -o /dev/null -w '%{http_code}' -X PUT \
  -H 'x-ms-blob-type: BlockBlob' --data-binary '{"floor":true}' "$floor_url")
[[ $code == 201 ]] || die "creating the floor blob answered $code"

# ---- machine ------------------------------------------------------------
cmake --build "$build" --target ll_bench_overhead >/dev/null ||
  die "could not build bench/overhead.c (cmake --build $build --target ll_bench_overhead)"
cp "$build/ll_bench_overhead" "$tmp/overhead"
# The send shim (bench/cadence.c): both clients' request-to-request times,
# taken the same way from outside each process.
cmake --build "$build" --target ll_bench_cadence >/dev/null ||
  die "could not build bench/cadence.c (cmake --build $build --target ll_bench_cadence)"
cadence_so=$build/libll_bench_cadence.so
[[ -f $cadence_so ]] || die "bench/cadence.c built no $cadence_so"
# cadence WHO OUT: the JSON of bench/cadence.lua over the sends in OUT
cadence() {
  local o
  o=$(lua5.4 bench/cadence.lua "$2" 10 "$nreads") || die "bench/cadence.lua failed on $2 ($1)"
  [[ $o != null ]] || die "$1: no run of requests among the sends in $2"
  # every interval of the measured reads, or the run of reads was split
  [[ $o == *"\"n\":$nreads,"* ]] ||
    die "$1: the sends in $2 hold fewer than $nreads intervals after the warm-up: $o"
  printf '%s' "$o"
}
# The conditions: other processes' load, and what one append + fsync costs
# on the evidence disk right now (both at the start and at the end).
conditions() {
  local o
  o=$("$tmp/overhead" fsync "$evdisk" 200) || die "fsync probe failed"
  rec "{\"fig\":\"conditions\",\"when\":\"$1\",\"loadavg\":\"$(cut -d' ' -f1-3 /proc/loadavg)\",\"fsync\":$o}"
}
conditions start
cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
memkb=$(awk '/^MemTotal/ {print $2}' /proc/meminfo)
sdk=$(node -p "require('$peers/node_modules/@azure/storage-blob/package.json').version")
# How an idle CPU waits: it decides what a client's own time costs it again
# in the emulator's answer (docs/PERFORMANCE.md). Read only, never changed.
idle=$(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null || echo unknown)
if [[ -r /sys/module/haltpoll/parameters/guest_halt_poll_ns ]]; then
  idle="$idle, guest_halt_poll_ns=$(cat /sys/module/haltpoll/parameters/guest_halt_poll_ns)"
fi
lua5.4 -e '
  local c = require "cjson"
  print(c.encode({date = arg[1], mode = arg[2], runs = tonumber(arg[3]), nproc = tonumber(arg[4]),
    cpu = arg[5], kernel = arg[6], mem_gib = tonumber(arg[7]) / 1048576, evidence_fs = arg[8],
    leaselua = arg[9], node = arg[10], curl = arg[11], azurite = arg[12], sdk = arg[13],
    reads = tonumber(arg[14]), lag_period = tonumber(arg[15]), lag_runs = tonumber(arg[16]),
    handoff_break = tonumber(arg[17]), js_poll_ms = tonumber(arg[18]), read_runs = tonumber(arg[19]),
    cpu_idle = arg[20]}))' /dev/null \
  "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$mode" "$runs" "$(nproc)" "$cpu" "$(uname -sr)" "$memkb" \
  "$(stat -f -c %T "$evdisk")" "$("$host" --version | tr '\n' ' ' | sed 's/ $//')" "$(node --version)" \
  "$(curl --version | head -n 1 | cut -d' ' -f1-3)" "$AZURITE_VERSION" "@azure/storage-blob $sdk" \
  "$nreads" "$lag_period" "$lag_runs" "$handoff_break" "$js_poll" "$read_runs" "$idle" >"$out/machine.json"

# ---- per-request reads --------------------------------------------------
{
  cat "$tmp/curl-auth.cfg"
  echo 'head'
  # shellcheck disable=SC2028  # curl itself reads the \n
  echo 'write-out = "%{time_total} %{http_code} %{num_connects}\n"'
  # 10 warm-up requests, then nreads + 1, so that nreads intervals follow
  # the warm-up, as in bench/reads.lua
  for _ in $(seq 1 $((nreads + 11))); do
    printf 'url = "%s"\noutput = "/dev/null"\n' "$floor_url"
  done
} >"$tmp/curl-floor.cfg"
chmod 0600 "$tmp/curl-floor.cfg"

# One client's run of reads, recorded as a "read" figure of run $1.
floor_reads() {
  LD_PRELOAD=$cadence_so LL_CADENCE_OUT=$tmp/cadence.floor curl -K "$tmp/curl-floor.cfg" >"$tmp/floor.out"
  local bad conns s c
  bad=$(awk '$2 != 200' "$tmp/floor.out" | wc -l)
  conns=$(awk '{s += $3} END {print s}' "$tmp/floor.out")
  ((bad == 0)) || die "curl floor: $bad requests did not answer 200"
  s=$(tail -n "$nreads" "$tmp/floor.out" | awk '{print $1 * 1000}' | stats)
  c=$(cadence "curl floor" "$tmp/cadence.floor")
  rec "{\"fig\":\"read\",\"who\":\"floor\",\"run\":$1,\"connections\":$conns,\"e2e_ms\":$s,\"cadence_ms\":$c}"
}
disk_reads() {
  local o c
  LD_PRELOAD=$cadence_so LL_CADENCE_OUT=$tmp/cadence.ours AZURE_STORAGE_BLOB=reads-$1.json \
    ours "$tmp/reads.out" bench/reads.lua --manifest "$manifest" \
    --evidence "$evdisk/reads-$1" --n "$nreads" --warmup 10 || die "ours (reads) failed"
  o=$(cat "$tmp/reads.out")
  c=$(cadence ours "$tmp/cadence.ours")
  rec "{\"fig\":\"read\",\"run\":$1,\"where\":\"disk\",\"data\":$o,\"cadence_ms\":$c}"
}

# Reads are short (a second or so per client), so they get more runs than
# the other figures: the emulator's speed drifts between processes (it
# warms up, it collects garbage), and the ratios are medians over runs.
# The floor and ours on disk take turns at going first, so that a drift
# in one direction favours neither.
for run in $(seq 0 "$read_runs"); do
  if ((run % 2 == 0)); then
    say "reads: run $run of $read_runs (0 is the warm-up): curl, ours (disk), ours (tmpfs), JS"
    floor_reads "$run"
    disk_reads "$run"
  else
    say "reads: run $run of $read_runs (0 is the warm-up): ours (disk), curl, ours (tmpfs), JS"
    disk_reads "$run"
    floor_reads "$run"
  fi
  if [[ -n $evshm ]]; then
    AZURE_STORAGE_BLOB=reads-shm-$run.json ours "$tmp/reads.out" bench/reads.lua --manifest "$manifest" \
      --evidence "$evshm/reads-$run" --n "$nreads" --warmup 10 || die "ours (reads, tmpfs) failed"
    o=$(cat "$tmp/reads.out")
    rec "{\"fig\":\"read\",\"run\":$run,\"where\":\"tmpfs\",\"data\":$o}"
  fi
  o=$(AZURE_STORAGE_BLOB=js-reads-$run.json js bench/peers/handoff.js reads --n "$nreads" --warmup 10) ||
    die "JS peer (reads) failed: $o"
  rec "{\"fig\":\"read\",\"run\":$run,\"data\":$o}"
done

# ---- the handoff with a 2 s break: wall, peak RSS, bracket ----------------
for run in $(seq 0 "$runs"); do
  say "handoff (${handoff_break} s break): run $run of $runs: ours, JS"
  ev=$evdisk/handoff-$run
  t0=$EPOCHREALTIME
  rc=0
  AZURE_STORAGE_BLOB=handoff-$run.json /usr/bin/time -v -o "$tmp/time.ours" "$host" scripts/main_handoff.lua \
    --manifest "$manifest" --evidence "$ev" --break-period "$handoff_break" >"$tmp/ours.out" 2>&1 || rc=$?
  t1=$EPOCHREALTIME
  ((rc == 0)) || {
    cat "$tmp/ours.out" >&2
    die "ours: the handoff did not ACCEPT (exit $rc)"
  }
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$tmp/time.ours")
  f=$(LUA_CPATH="$build/?.so;;" lua5.4 bench/evidence.lua "$ev") || die "bench/evidence.lua failed on $ev"
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", (b - a) * 1000}')
  rec "{\"fig\":\"handoff\",\"who\":\"ours\",\"run\":$run,\"wall_ms\":$wall,\"rss_kb\":$rss,\"data\":$f}"

  t0=$EPOCHREALTIME
  rc=0
  AZURE_STORAGE_BLOB=js-handoff-$run.json NODE_EXTRA_CA_CERTS=$LEASELUA_CA_FILE /usr/bin/time -v -o "$tmp/time.js" \
    node bench/peers/handoff.js handoff --break-period "$handoff_break" --poll-ms "$js_poll" >"$tmp/js.out" || rc=$?
  t1=$EPOCHREALTIME
  ((rc == 0)) || {
    cat "$tmp/js.out" >&2
    die "JS peer: the handoff did not match the baseline (exit $rc)"
  }
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$tmp/time.js")
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", (b - a) * 1000}')
  rec "{\"fig\":\"handoff\",\"who\":\"js\",\"run\":$run,\"wall_ms\":$wall,\"rss_kb\":$rss,\"data\":$(tail -n 1 "$tmp/js.out")}"
done

# ---- the floor's footprint: one curl HEAD; and leaselua doing nothing ------
for run in $(seq 0 "$runs"); do
  /usr/bin/time -f '%M' -o "$tmp/time.curl" curl -K "$tmp/curl-auth.cfg" -I -o /dev/null "$floor_url" ||
    die "curl HEAD failed"
  /usr/bin/time -f '%M' -o "$tmp/time.version" "$host" --version >/dev/null
  rec "{\"fig\":\"rss_floor\",\"run\":$run,\"curl_kb\":$(tail -n 1 "$tmp/time.curl"),\"version_kb\":$(tail -n 1 "$tmp/time.version")}"
done

# ---- time to first request, and connections per handoff -----------------
say "time to first request: ours, JS, curl ($runs runs after a warm-up each)"
AZURE_STORAGE_BLOB='ttfr-{RUN}.json' js bench/firstbyte.js --upstream "$upstream" --runs "$runs" --warmup 1 --who ours --ok-exits 0,2 -- \
  "$host" scripts/main_handoff.lua --manifest "$manifest" --evidence "$evdisk/ttfr-{RUN}" --stop-after 0 \
  >"$tmp/ttfr.out" || die "time to first request (ours) failed"
AZURE_STORAGE_BLOB='js-ttfr-{RUN}.json' js bench/firstbyte.js --upstream "$upstream" --runs "$runs" \
  --warmup 1 --who js -- node bench/peers/handoff.js handoff --stop-after 0 \
  >>"$tmp/ttfr.out" || die "time to first request (JS) failed"
js bench/firstbyte.js --upstream "$upstream" --runs "$runs" --warmup 1 --who floor -- \
  curl -K "$tmp/curl-auth.cfg" -I -o /dev/null '{URL}/bench/floor.json' \
  >>"$tmp/ttfr.out" || die "time to first request (curl) failed"
while read -r l; do rec "{\"fig\":\"ttfr\",\"data\":$l}"; done <"$tmp/ttfr.out"

say "connections per handoff (1 s break, through the counting relay): ours, JS"
AZURE_STORAGE_BLOB=conn.json js bench/firstbyte.js --upstream "$upstream" --runs 1 --warmup 0 --who ours -- \
  "$host" scripts/main_handoff.lua --manifest "$manifest" --evidence "$evdisk/conn" --break-period 1 \
  >"$tmp/conn.out" || die "connection count (ours) failed"
AZURE_STORAGE_BLOB=js-conn.json js bench/firstbyte.js --upstream "$upstream" --runs 1 --warmup 0 --who js -- \
  node bench/peers/handoff.js handoff --break-period 1 --poll-ms "$js_poll" \
  >>"$tmp/conn.out" || die "connection count (JS) failed"
while read -r l; do rec "{\"fig\":\"connections\",\"data\":$l}"; done <"$tmp/conn.out"

# ---- overhead breakdown -------------------------------------------------
say "overhead breakdown: hashing, tracing, the idle gap, the transport, the wake-up, callgrind"
for which in export protected; do
  grep -F '"operation":"Get Blob Properties"' "$evdisk/reads-1/$which/ledger.jsonl" | tail -n 2 >"$tmp/rows.$which"
  o=$("$tmp/overhead" hash "$tmp/rows.$which" 2) || die "hash microbenchmark failed"
  rec "{\"fig\":\"hash\",\"file\":\"$which\",\"data\":$o}"
done
o=$("$tmp/overhead" trace "$floor_url" 300) || die "tracing microbenchmark failed"
rec "{\"fig\":\"trace\",\"data\":$o}"
# The emulator's answer after a client's own time between two requests,
# at three points: none, the floor's own time and ours' (each the median
# over runs of the split above): one libcurl client, the three gaps taking
# turns, so what the emulator charges again for a client's own time, and
# how much more for ours' than for curl's (bench/report.lua).
gaps=$(lua5.4 -e '
  local cjson, floor, ours = require "cjson", {}, {}
  for l in io.lines(arg[1]) do
    local r = cjson.decode(l)
    if r.fig == "read" and r.run >= 1 and r.cadence_ms then
      if r.who == "floor" then
        floor[#floor + 1] = r.cadence_ms.client_p50
      elseif r.where == "disk" then
        ours[#ours + 1] = r.cadence_ms.client_p50
      end
    end
  end
  local function med(v)
    table.sort(v)
    return math.floor(v[(#v + 1) // 2] * 1000 + 0.5)
  end
  if #floor > 0 and #ours > 0 then print(med(floor) .. " " .. med(ours)) end' /dev/null "$raw") ||
  die "no client time for the gap figure"
[[ $gaps =~ ^[0-9]+\ [0-9]+$ ]] || die "no client time for the gap figure"
for run in $(seq 0 "$runs"); do
  # shellcheck disable=SC2086 # two numbers
  o=$("$tmp/overhead" gap "$floor_url" 300 0 $gaps) || die "gap microbenchmark failed"
  rec "{\"fig\":\"gap\",\"run\":$run,\"data\":$o}"
done
# Our transport's exchange (core/http.c, its on_wire hook writing a line)
# against a plain libcurl handle's, taking turns in one process.
for run in $(seq 0 "$runs"); do
  o=$("$tmp/overhead" transport "$floor_url" 300 "$evdisk") || die "transport microbenchmark failed"
  rec "{\"fig\":\"transport\",\"run\":$run,\"data\":$o}"
done
# How much of any exchange here is the waiting CPU's wake-up: the same
# answer waited for in poll(2), as curl and leaselua both wait, and by
# spinning, after the floor's own time. leaselua never spins: the figure
# says what the floor carries on this machine, not a change to make.
for run in $(seq 0 "$runs"); do
  o=$("$tmp/overhead" wake "$floor_url" 300 "${gaps%% *}") || die "wake microbenchmark failed"
  rec "{\"fig\":\"wake\",\"run\":$run,\"data\":$o}"
done
# profile FIG BLOB N: one callgrind profile of bench/reads.lua (N measured
# reads), recorded as figure FIG; its evidence in the directory named BLOB
# less ".json"
profile() {
  local fig=$1 blob=$2 cgn=$3 o
  reads_run "$tmp/cg.log" "$blob" "${evshm:-$evdisk}/${blob%.json}" "$cgn" \
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" || die "the $fig profile failed"
  o=$(reads_callgrind "$tmp/cg.out" "$tmp/cg.txt" "$cgn") || die "the $fig profile failed"
  rec "{\"fig\":\"$fig\",\"data\":$o}"
}
if command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null; then
  # The bench's own profile (100 reads: the figure the targets name), then,
  # unless BENCH_CG_LONG=0 (quick mode: unless BENCH_CG_LONG=1), a longer
  # one (400 reads): by difference, what one more read costs once the
  # run's handshakes are paid (bench/report.lua).
  profile callgrind cg.json 100
  cg_long=${BENCH_CG_LONG:-$([[ $mode == quick ]] && echo 0 || echo 1)}
  [[ $cg_long == [01] ]] || die "BENCH_CG_LONG must be 0 or 1, not '$cg_long'"
  if [[ $cg_long == 1 ]]; then
    profile callgrind_long cg400.json 400
  fi
else
  say "valgrind not found: no instruction profile"
fi

# ---- offline replay of all fixtures ---------------------------------------
# The replay specs (spec/replay*_spec.lua) replay every fixture strictly and
# offline, as tools/record-fixtures.sh does: no Azurite, no credential.
replay_specs=$(find spec -maxdepth 1 -name 'replay*_spec.lua' 2>/dev/null | sort)
fixtures=$(find fixtures -name '*.json' 2>/dev/null | wc -l)
if [[ -n $replay_specs && $fixtures -gt 0 ]] && command -v busted >/dev/null; then
  say "offline replay: $fixtures fixtures, $(echo "$replay_specs" | wc -l) spec files"
  for run in $(seq 0 "$runs"); do
    t0=$EPOCHREALTIME
    rc=0
    # shellcheck disable=SC2086  # one argument per spec file
    env -u AZURE_STORAGE_ACCOUNT_URL -u AZURE_STORAGE_TOKEN -u LEASELUA_CA_FILE LEASELUA="$host" \
      lua5.4 /usr/bin/busted --lpath="$root/scripts/lib/?.lua;$root/scripts/?.lua;$root/spec/?.lua" \
      --cpath="$build/?.so" --exclude-tags=live $replay_specs >"$tmp/replay.out" 2>&1 || rc=$?
    t1=$EPOCHREALTIME
    if ((rc != 0)); then
      say "offline replay: the replay specs failed (exit $rc); not timed:"
      grep -E "failure|error|passed|failed" "$tmp/replay.out" | tail -n 5 >&2
      rec "{\"fig\":\"replay\",\"run\":-1,\"fixtures\":$fixtures,\"wall_ms\":null,\"failed\":true}"
      break
    fi
    wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", (b - a) * 1000}')
    rec "{\"fig\":\"replay\",\"run\":$run,\"fixtures\":$fixtures,\"wall_ms\":$wall}"
  done
else
  say "offline replay: n/a (fixtures or replay specs not built yet)"
  rec "{\"fig\":\"replay\",\"run\":-1,\"fixtures\":$fixtures,\"wall_ms\":null}"
fi

# ---- observation lag: the three cadences, each in its own process --------
# They run side by side against the one Azurite, staggered by a third of the
# break so that their expected ends never coincide.
say "observation lag: adaptive, fixed 1000 ms, fixed 100 ms; ${lag_period} s break x $lag_runs (+ a 2 s warm-up)"
stagger=$((lag_period / 3))
for cadence in adaptive 1000 100; do
  fixed=()
  [[ $cadence == adaptive ]] || fixed=(--fixed-ms "$cadence")
  AZURE_STORAGE_BLOB=lag-$cadence.json ours "$tmp/lag-$cadence.out" bench/poller.lua --manifest "$manifest" \
    --evidence "$evdisk/lag-$cadence" --period "$lag_period" --trials "$lag_runs" "${fixed[@]}" \
    --warmup-period 2 --json &
  bg_pids+=($!)
  [[ $cadence == 100 ]] || sleep "$stagger"
done
for p in "${bg_pids[@]}"; do
  wait "$p" || die "a poller benchmark failed: $(cat "$tmp"/lag-*.out.err)"
done
bg_pids=()
for cadence in adaptive 1000 100; do
  while read -r l; do rec "{\"fig\":\"lag\",\"data\":$l}"; done <"$tmp/lag-$cadence.out"
done

conditions end

# ---- the whole lease table: its wall time against its floor ---------------
# On a fresh Azurite of its own (bench/lease_table.sh); BENCH_TABLE=0 skips it.
if [[ ${BENCH_TABLE:-1} == 1 ]]; then
  say "the lease table (about 2.5 minutes, most of it the plan's expiry and break waits)"
  BUILD_DIR=$build bench/lease_table.sh || die "the lease-table benchmark failed"
fi

# ---- the table ------------------------------------------------------------
lua5.4 bench/report.lua "$raw" "$out/machine.json" >"$out/latest.md"
if [[ ${BENCH_TABLE:-1} == 1 ]]; then
  { echo; cat "$out/lease-table.md"; } >>"$out/latest.md"
fi
cat "$out/latest.md"
say "table: bench/out/latest.md; raw figures: bench/out/raw.jsonl"
