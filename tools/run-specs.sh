#!/usr/bin/env bash
# Run the busted specs against a fresh Azurite that lives only for this run.
#
# usage: tools/run-specs.sh [busted args...]
#   BUILD_DIR (default build) holds leaselua and leaselua.so.
#   SPECS (default spec/) names the spec files or folders to run, e.g.
#   SPECS="spec/invariants_spec.lua spec/flows_spec.lua" tools/run-specs.sh
# Azurite is started into a temporary RUNDIR and always stopped on exit.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
# shellcheck source=tools/lab.sh
. "$root/tools/lab.sh"
lab_build run-specs
if [[ -z $(find spec -name '*_spec.lua' -print -quit 2>/dev/null) ]]; then
  echo "run-specs: no specs yet"
  exit 0
fi

# shellcheck disable=SC2317  # called by lab_cleanup
lab_after_stop() {
  (($1 != 0)) || return 0
  if [[ -f $rundir/azurite.log ]]; then
    echo "run-specs: last lines of the Azurite log:" >&2
    tail -n 20 "$rundir/azurite.log" >&2
  fi
  # CI shows only the tail of the output: name what failed last, after the
  # Azurite log, so a failure is never just "Error 1".
  if [[ -f $tmp/busted.log ]]; then
    echo "run-specs: what busted reported as failing:" >&2
    sed 's/\x1b\[[0-9;]*m//g' "$tmp/busted.log" |
      grep -A 6 -E '^(Failure|Error) ' | head -n 60 >&2 || true
  fi
}
lab_start specs
export LEASELUA=$host

log=$tmp/busted.log
set +e
# shellcheck disable=SC2086  # SPECS is a space-separated list of paths
lua5.4 /usr/bin/busted \
  --lpath="$root/scripts/lib/?.lua;$root/scripts/?.lua;$root/spec/?.lua" \
  --cpath="$build/?.so" \
  "$@" ${SPECS:-spec/} 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e

# busted closes with "N successes / N failures / N errors / N pending";
# restate it as the plain "N passed, N failed" line.
summary=$(sed 's/\x1b\[[0-9;]*m//g' "$log" |
  grep -E '[0-9]+ success(es)? / [0-9]+ failures? / [0-9]+ errors? / [0-9]+ pending' | tail -n 1 || true)
if [[ -n $summary ]]; then
  count() { grep -oE "[0-9]+ $1" <<<"$summary" | grep -oE '^[0-9]+'; }
  s=$(count success) f=$(count failure) e=$(count error) p=$(count pending)
  echo "busted: $s passed, $((f + e)) failed, $p skipped"
else
  echo "run-specs: no busted summary found" >&2
  ((rc != 0)) || rc=1
fi
exit "$rc"
