#!/usr/bin/env bash
# valgrind memcheck on a replayed main handoff (no network): the host runs
# scripts/main_handoff.lua against fixtures/emulator/main-handoff-accept.json,
# then `leaselua verify` on its evidence, both under memcheck.
#
# usage: tools/valgrind-handoff.sh        BUILD_DIR (default build)
# Prints one line per run: "valgrind: NAME errors=N definitely_lost=B
# indirectly_lost=B possibly_lost=B exit=RC" and fails unless every run has
# 0 errors and 0 bytes lost (still-reachable memory of libraries is shown
# in the log but is not a leak).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${BUILD_DIR:-build}
host=$build/leaselua
[[ -x $host ]] || {
  echo "valgrind: $host is not built (make build)" >&2
  exit 2
}
command -v valgrind >/dev/null || {
  echo "valgrind: not installed (tools/deps.sh)" >&2
  exit 2
}
fixture=${FIXTURE:-fixtures/emulator/main-handoff-accept.json}
tmp=$(mktemp -d /tmp/leaselua-valgrind.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

vg() { # vg NAME ARGS...: memcheck one host run
  local name=$1
  shift
  local rc=0
  env -u AZURE_STORAGE_ACCOUNT_URL -u AZURE_STORAGE_TOKEN -u AZURE_STORAGE_SAS \
    valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite,indirect,possible \
    --errors-for-leak-kinds=definite,indirect,possible --track-origins=yes --error-exitcode=99 \
    --log-file="$tmp/$name.vg" "$host" "$@" >"$tmp/$name.out" 2>&1 || rc=$?
  local errors dl il pl sr
  errors=$(grep -oE 'ERROR SUMMARY: [0-9,]+ errors' "$tmp/$name.vg" | grep -oE '[0-9,]+' | tr -d , | head -n 1)
  lost() { grep -oE "$1 lost: [0-9,]+ bytes" "$tmp/$name.vg" | grep -oE '[0-9,]+' | tr -d , | head -n 1; }
  dl=$(lost definitely)
  il=$(lost indirectly)
  pl=$(lost possibly)
  sr=$(grep -oE 'still reachable: [0-9,]+ bytes' "$tmp/$name.vg" | grep -oE '[0-9,]+' | tr -d , | head -n 1)
  echo "valgrind: $name errors=${errors:-?} definitely_lost=${dl:-0} indirectly_lost=${il:-0}" \
    "possibly_lost=${pl:-0} still_reachable=${sr:-0} exit=$rc"
  if [[ ${errors:-1} != 0 || ${dl:-0} != 0 || ${il:-0} != 0 || ${pl:-0} != 0 || $rc == 99 ]]; then
    sed -n '/ERROR SUMMARY\|lost in loss record\|Invalid\|uninitialised/,+12p' "$tmp/$name.vg" | head -n 60 >&2
    return 1
  fi
}

fail=0
vg main-handoff-replay scripts/main_handoff.lua --manifest tools/emulator/manifest.json \
  --replay "$fixture" --evidence "$tmp/ev" || fail=1
grep -E '^DECISION' "$tmp/main-handoff-replay.out" || true
vg verify verify "$tmp/ev" || fail=1
exit "$fail"
