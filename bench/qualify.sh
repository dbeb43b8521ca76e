#!/usr/bin/env bash
# make bench (its last part): `leaselua qualify` and `leaselua compare` over
# 1,000 bundles, the target of issue 19 being at most 5 s each on this
# machine. The bundles are copies of one recorded run: the recorded
# emulator handoff (fixtures/emulator/main-handoff-accept.json) replayed
# once into a bundle, then copied with cp -a; an index.json lists them, as
# `--api-version a,b,c` writes one. Offline: no Azurite, no network.
#
#   bench/qualify.sh              1,000 bundles, the best of 3 runs each
#   BENCH_BUNDLES=N BENCH_RUNS=R  other sizes
#
# Every bundle is verified in full (both ledgers) before it is read: that
# check is most of the time (docs/PERFORMANCE.md, "qualify and compare").
# Output: one line per figure on stdout, and bench/out/qualify.json. A
# benchmark: it exits non-zero only when a command failed or gave a table
# other than the one expected, never on a slow figure.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${BUILD_DIR:-build}
host=$root/$build/leaselua
n=${BENCH_BUNDLES:-1000}
runs=${BENCH_RUNS:-3}
say() { echo "bench: $*" >&2; }
die() {
  echo "bench: ERROR: $*" >&2
  exit 1
}
[[ -x $host ]] || die "$host not built (make build)"
[[ -x /usr/bin/time ]] || die "/usr/bin/time not found (Debian package 'time'; run tools/deps.sh)"

base=/tmp
[[ -d /dev/shm && -w /dev/shm ]] && base=/dev/shm
work=$(mktemp -d "$base/leaselua-bench-qualify.XXXXXX")
trap 'rm -rf -- "$work"' EXIT

say "one recorded run replayed into a bundle"
env -u AZURE_STORAGE_ACCOUNT_URL -u AZURE_STORAGE_TOKEN -u AZURE_STORAGE_SAS -u LEASELUA_EVIDENCE_ROOT \
  "$host" scripts/main_handoff.lua --replay fixtures/emulator/main-handoff-accept.json \
  --evidence "$work/seed" --manifest tools/emulator/manifest.json >"$work/seed.log" 2>&1 ||
  die "the replay failed: $(tail -n 3 "$work/seed.log")"
"$host" verify "$work/seed" >/dev/null || die "the seed bundle does not verify"

say "$n copies under $work/matrix"
mkdir "$work/matrix"
runs_json=""
for i in $(seq -w 1 "$n"); do
  cp -a "$work/seed" "$work/matrix/run$i"
  runs_json+="${runs_json:+,}{\"api_version\":\"2023-11-03\",\"dir\":\"run$i\",\"decision\":\"ACCEPT\",\"exit\":0}"
done
printf '{"format":"leaselua-index-v1","flow":"handoff","created_utc":"%s","runs":[%s]}\n' \
  "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$runs_json" >"$work/matrix/index.json"
bytes=$(du -sb "$work/matrix" | cut -f1)

# best(label, expected-exit, command...): the best wall-clock time of
# $runs runs, in seconds, with that run's CPU seconds (user + system, all
# processes: what the machine's other load does not change) and peak RSS.
declare -A secs cpu rss
best() {
  local label=$1 want=$2
  shift 2
  local b="" c="" m=""
  for _ in $(seq "$runs"); do
    local rc=0
    /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$@" >"$work/out" 2>"$work/err" || rc=$?
    [[ $rc == "$want" ]] || die "$label exited $rc, not $want: $(tail -n 3 "$work/err")"
    read -r t u sy kb < <(tail -n 1 "$work/time")
    if [[ -z $b ]] || awk -v a="$t" -v b="$b" 'BEGIN{exit !(a<b)}'; then
      b=$t m=$kb c=$(awk -v u="$u" -v s="$sy" 'BEGIN{printf "%.2f", u + s}')
    fi
  done
  secs[$label]=$b
  cpu[$label]=$c
  rss[$label]=$m
  echo "bench: $label: ${b} s (best of $runs; $c CPU s), peak RSS $((m / 1024)) MiB"
}

cpus=$(nproc)
load=$(cut -d' ' -f1 /proc/loadavg)
say "$cpus CPUs, load average $load before the runs"
best "qualify INDEX (1 row, $n runs)" 1 "$host" qualify --json "$work/matrix"
BENCH_N=$n lua5.4 -e '
  local t = require("cjson").decode(io.read("a"))
  assert(t.bundles == tonumber(os.getenv("BENCH_N")), "bundles " .. tostring(t.bundles))
  assert(#t.qualifying == 0 and #t.non_qualifying == 1, "rows")
  assert(t.non_qualifying[1].qualified_runs == 0 and #t.non_qualifying[1].runs == t.bundles, "runs")' \
  <"$work/out" || die "qualify did not give one non-qualifying row of $n runs"
best "qualify --jobs 1" 1 "$host" qualify --jobs 1 --json "$work/matrix"
best "qualify --junit" 1 "$host" qualify --junit "$work/junit.xml" "$work/matrix"
best "compare BASE against $n" 0 "$host" compare --json "$work/seed" "$work/matrix"
[[ $(wc -l <"$work/out") == "$n" ]] || die "compare did not print $n comparisons"
mkdir -p bench/out
{
  printf '{"bundles":%d,"bundle_bytes":%d,"cpus":%d,"load_before":%s,"runs":%d,"figures":[' \
    "$n" "$bytes" "$cpus" "$load" "$runs"
  sep=""
  for k in "${!secs[@]}"; do
    printf '%s{"what":"%s","seconds":%s,"cpu_seconds":%s,"peak_rss_kib":%s}' "$sep" "$k" "${secs[$k]}" \
      "${cpu[$k]}" "${rss[$k]}"
    sep=","
  done
  printf ']}\n'
} >bench/out/qualify.json
say "bench/out/qualify.json"
