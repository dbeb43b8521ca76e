#!/usr/bin/env bash
# make demo: a fresh Azurite, then the three flows as a user runs them:
# the main handoff, the unlocked-gap control after it, and a recovery drill
# (a run killed on purpose right after B's acquire, then recovery.lua).
# The break period is 10 s instead of the seed's 30 s, to keep it short.
# Writer A, writer B and the operator each send with their own dev token
# (leaselua dev-token --actor NAME: a distinct oid each), so the report
# shows three principals; the observer's reads use the operator's.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
# shellcheck source=tools/lab.sh
. "$root/tools/lab.sh"
lab_build demo
drill_pid=
# shellcheck disable=SC2317  # called by lab_cleanup
lab_before_stop() { [[ -z $drill_pid ]] || kill -9 "$drill_pid" 2>/dev/null; }

start=$(date +%s)
lab_start demo
manifest=$root/tools/emulator/manifest.json
bundle=evidence/demo-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$bundle"
export AZURE_STORAGE_CONTAINER=lease-handoff-lab AZURE_STORAGE_BLOB=writer-handoff.json
creds=()
for actor in A B operator; do
  (umask 077 && "$host" dev-token 7200 --actor "$actor" >"$tmp/token-$actor")
  flag=$actor
  [[ $actor == operator ]] || flag=$(tr 'AB' 'ab' <<<"$actor")
  creds+=(--credential-"$flag" "token-file:$tmp/token-$actor")
done

echo
echo "== main handoff (break period 10 s instead of 30 s, for the demo) =="
set +e
"$host" scripts/main_handoff.lua "${creds[@]}" --manifest "$manifest" --evidence "$bundle/main" \
  --break-period 10
main_rc=$?
echo
echo "== unlocked-gap control on the same blob, after the accepted main run =="
"$host" scripts/gap_control.lua "${creds[@]}" --manifest "$manifest" --evidence "$bundle/gap" \
  --destructive --after "$bundle/main" --break-period 10
gap_rc=$?
echo
echo "== recovery drill: a run killed (SIGKILL) right after B's acquire =="
LEASELUA_PAUSE_AFTER=11 AZURE_STORAGE_BLOB=drill.json "$host" scripts/main_handoff.lua \
  "${creds[@]}" --manifest "$manifest" --evidence "$bundle/drill" --break-period 10 >"$tmp/drill.out" 2>&1 &
drill_pid=$!
for _ in $(seq 1 600); do
  grep -q "pausing 60 s after step 11" "$tmp/drill.out" && break
  sleep 0.1
done
kill -9 "$drill_pid"
wait "$drill_pid" 2>/dev/null
drill_pid=
tail -n 3 "$tmp/drill.out"
echo "(killed with SIGKILL; now recovery.lua)"
AZURE_STORAGE_BLOB=drill.json "$host" scripts/recovery.lua "${creds[@]}" --recover \
  --evidence "$bundle/drill"
drill_rc=$?
set -e

echo
echo "== summary =="
for run in main gap drill; do
  "$host" verify "$bundle/$run" | sed "s/^/$run: /"
done
# The reviewer's view of each run: report.html and summary.md, from the export.
report_rc=0
for run in main gap drill; do
  "$host" report "$bundle/$run" >/dev/null || report_rc=1
done
echo "demo: exit codes main=$main_rc gap=$gap_rc recovery=$drill_rc (0 is ACCEPT)"
echo "demo: evidence bundle: $root/$bundle"
echo "demo: wall time $(($(date +%s) - start)) s"
for run in main gap drill; do
  echo "demo: report ($run): $root/$bundle/$run/report.html"
done
[[ $main_rc -eq 0 && $gap_rc -eq 0 && $drill_rc -eq 0 && $report_rc -eq 0 ]]
