#!/usr/bin/env bash
# The demo: a fresh Azurite for this run, then the main handoff flow with its
# evidence under evidence/. Until scripts/main_handoff.lua exists it runs the
# curl smoke check (tools/emulator/smoke.sh) instead.
#
# usage: tools/demo.sh        (BUILD_DIR, default build, holds leaselua)
# Azurite is always stopped on exit. Emulator evidence is labelled so
# (LEASELUA_ENDPOINT_KIND=emulator in the env file).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${BUILD_DIR:-build}

tmp=$(mktemp -d /tmp/leaselua-demo.XXXXXX)
rundir=$tmp/run
# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() {
  local rc=$?
  "$root/tools/emulator/stop" "$rundir" || rc=1
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

"$root/tools/emulator/start" "$rundir"
# shellcheck disable=SC1091
. "$rundir/env"

if [[ -f scripts/main_handoff.lua ]]; then
  [[ -x $build/leaselua ]] || {
    echo "demo: $build/leaselua is not built (make build)" >&2
    exit 1
  }
  export LEASELUA=$root/$build/leaselua
  evidence=evidence/demo-$(date +%Y%m%dT%H%M%S)
  mkdir -p evidence
  out=$tmp/demo.out
  set +e
  "$build/leaselua" scripts/main_handoff.lua --evidence "$evidence" 2>&1 | tee "$out"
  rc=${PIPESTATUS[0]}
  set -e
  decision=$(grep -E '\b(ACCEPT|WAIT|HOLD|RECONCILE)\b' "$out" | tail -n 1 || true)
  echo "demo: decision: ${decision:-(no decision line printed)}"
  echo "demo: evidence: $root/$evidence"
  exit "$rc"
else
  echo "demo: scripts/main_handoff.lua not written yet: running the curl smoke check"
  "$root/tools/emulator/smoke.sh"
fi
