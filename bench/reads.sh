# shellcheck shell=bash
# bench/reads.lua as the bench scripts run it (bench/run.sh's profiles,
# bench/callgrind.sh, bench/perf.sh). Source it after tools/lab.sh's
# lab_build and lab_start (it uses root, host and the lab's Azurite):
#
#   reads_run LOG BLOB EVIDENCE N [WRAPPER...]
#       N measured reads after 10 warm-up ones, under WRAPPER (valgrind,
#       perf record, env LD_PRELOAD=...), stdout dropped, stderr into LOG.
#       A benchmark proves no handoff: its exit is the decision its run
#       records (HOLD, 2). Above 3 it fails: LOG and one line on stderr,
#       status 1.
#   reads_callgrind CG_OUT TXT N
#       callgrind_annotate of CG_OUT (a reads_run under valgrind) into
#       TXT, then bench/callgrind.lua's JSON line on stdout, per request;
#       status 1 with one line on stderr when either step fails.

reads_run() {
  local log=$1 blob=$2 evidence=$3 n=$4 rc=0
  shift 4
  AZURE_STORAGE_BLOB=$blob "$@" "${host:?lab_build sets host}" bench/reads.lua \
    --manifest "${root:?set root to the checkout}/tools/emulator/manifest.json" \
    --evidence "$evidence" --n "$n" --warmup 10 >/dev/null 2>"$log" || rc=$?
  if ((rc > 3)); then
    cat "$log" >&2
    echo "bench/reads.lua ($n reads${1:+, under $1}) failed: exit $rc" >&2
    return 1
  fi
}

reads_callgrind() {
  local out=$1 txt=$2 n=$3
  callgrind_annotate --inclusive=yes --threshold=100 "$out" 2>/dev/null >"$txt" ||
    { echo "callgrind_annotate failed on $out" >&2; return 1; }
  # reads.lua sends n + warmup + 1 properties reads and 4 other requests
  lua5.4 bench/callgrind.lua "$txt" $((n + 15)) || { echo "bench/callgrind.lua failed on $txt" >&2; return 1; }
}
