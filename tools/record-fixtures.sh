#!/usr/bin/env bash
# make fixtures: re-record the emulator fixtures from a fresh Azurite,
# regenerate the documented ones, then replay every fixture offline.
#
# usage: tools/record-fixtures.sh        (BUILD_DIR, default build)
#
# The recordings go to a temporary directory first and replace
# fixtures/emulator/*.json (and lease-table.plan) only when every one ended
# as expected. Azurite lives only for this run and is stopped by its PID on
# any exit. Takes about four minutes: the main handoff waits out a real
# 30 s break, the lease table its 15 s expiries.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
# shellcheck source=tools/lab.sh
. "$root/tools/lab.sh"
lab_build record-fixtures
lab_start fixtures
export AZURE_STORAGE_CONTAINER=lease-handoff-lab AZURE_STORAGE_BLOB=writer-handoff.json
manifest=$root/tools/emulator/manifest.json
azurite="Azurite $AZURITE_VERSION (emulator)"

# What the table recording holds, said once its cells are known: the
# deviations are read from the run's own cell rows.
lease_table_description() {
  echo "Lease table recorded from $azurite, destructive (--after window-missed-then-repeat's run), \
break period 10 s: every cell on create-only lifecycles; Azurite's deviations are DEVIATES cells; a \
cell that left its state moved the later cells to a fresh lifecycle (L<n>.<k>). x-ms-version \
2026-06-06: known_deviations.json. lease-table.plan: its --plan. Replay: leaselua lease-table \
--destructive --after <a main-handoff-accept.json replay's evidence>."
}

# record NAME EXPECTED_EXIT DESCRIPTION SCRIPT [ARGS...]
record() {
  local name=$1 want=$2 desc=$3 script=$4
  shift 4
  echo "== record $name: $script $*"
  local rc=0
  "$host" "scripts/$script.lua" --evidence "$tmp/ev-$name" \
    --record "$tmp/$name.json" --record-description "$desc" "$@" >"$tmp/$name.out" 2>&1 || rc=$?
  tail -n 4 "$tmp/$name.out"
  if [[ $rc != "$want" ]]; then
    cat "$tmp/$name.out" >&2
    echo "record-fixtures: $name ended with exit $rc, expected $want: nothing replaced" >&2
    exit 1
  fi
}

record main-handoff-accept 0 "Main handoff recorded from $azurite, ending ACCEPT: \
revisions 0, 1, 3 and 5 accepted and read back, 2, 4 and 6 rejected; the breaking window \
REPRODUCED; B's early acquire refused 409 LeaseAlreadyPresent. Azurite answers x-ms-version \
2026-06-06 and none on errors: explained by core/known_deviations.json. \
Replay: scripts/main_handoff.lua (break period 30 s)." \
  main_handoff --manifest "$manifest"
record gap-control 0 "Unlocked-gap control recorded from $azurite on the same blob, after \
main-handoff-accept.json: once the break reached broken/unlocked, an UNLEASED writer's Put \
Blob of revision 102 was accepted and read back: ACCEPT of the control. Replay: \
scripts/gap_control.lua --destructive --after <the evidence of a main-handoff-accept.json \
replay> --break-period 10." \
  gap_control --manifest "$manifest" --destructive --after "$tmp/ev-main-handoff-accept" \
  --break-period 10
record window-missed-then-repeat 0 "Main handoff recorded from $azurite whose first \
lifecycle misses the breaking window: its break period is 0, so the probe's first read is \
already broken/unlocked, no write is sent and the finding is INCONCLUSIVE_WINDOW; that \
lifecycle is finished (wait for broken, delete, then a properties read confirming the blob \
absent: 404 BlobNotFound) and a fresh one repeats the probe with a 10 s break: REPRODUCED, \
then ACCEPT. Replay: scripts/main_handoff.lua --first-break-period 0 --break-period 10." \
  main_handoff --manifest "$manifest" --first-break-period 0 --break-period 10
# The whole lease table, destructive (its unleased writes documented to
# succeed), authorised by the accepted, cleaned-up run just before it; its
# plan beside it: tools/fixtures/lease_table.js derives the documented
# table from the two (the plan names the documented path's requests).
record lease-table 0 "$(lease_table_description)" \
  lease_table --manifest "$manifest" --destructive --after "$tmp/ev-window-missed-then-repeat" --break-period 10
"$host" lease-table --plan --manifest "$manifest" --destructive --after "$tmp/ev-window-missed-then-repeat" \
  --break-period 10 >"$tmp/lease-table.plan"
# Last: it leaves the blob breaking.
record wait-while-breaking 1 "Main handoff recorded from $azurite and stopped after step \
8 (--stop-after 8), while the 30 s break still runs: the latest fresh properties read shows \
breaking/locked and the flow needs broken, so WAIT. Replay: scripts/main_handoff.lua \
--stop-after 8." \
  main_handoff --manifest "$manifest" --stop-after 8

# The recorded set replaces the old one whole: a fixture no longer
# recorded does not linger.
mkdir -p fixtures/emulator
for f in fixtures/emulator/*.json; do
  [[ -e $f && ! -e $tmp/$(basename "$f") ]] && rm -f "$f"
done
for f in "$tmp"/*.json "$tmp"/lease-table.plan; do
  cp "$f" "fixtures/emulator/$(basename "$f")"
done
echo "== wrote $(find "$tmp" -maxdepth 1 -name "*.json" | wc -l) emulator fixtures to fixtures/emulator/"

echo "== documented fixtures"
node tools/fixtures/make_documented.js fixtures/documented

echo "== replay every fixture, offline"
"$root/tools/emulator/stop" "$rundir" >/dev/null
env -u AZURE_STORAGE_ACCOUNT_URL -u AZURE_STORAGE_TOKEN -u LEASELUA_CA_FILE \
  LEASELUA="$host" lua5.4 /usr/bin/busted \
  --lpath="$root/scripts/lib/?.lua;$root/scripts/?.lua;$root/spec/?.lua" \
  --cpath="$build/?.so" --exclude-tags=live \
  spec/replay_emulator_spec.lua spec/replay_documented_spec.lua \
  spec/replay_harm_spec.lua spec/replay_strict_spec.lua spec/fixtures_spec.lua \
  spec/replay_lease_table_spec.lua
