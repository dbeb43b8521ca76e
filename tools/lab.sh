# shellcheck shell=bash
# The lab every live script shares: a fresh Azurite for one run, in a
# temporary directory, stopped by its own PID on any exit.
#
# Source it from a script that has set `root` (the checkout) and `set -euo
# pipefail`, then:
#
#   lab_build NAME    sets build (absolute, from BUILD_DIR, default build)
#                     and host ($build/leaselua); exits 1 with a one-line
#                     "NAME: ... (make build)" when either is missing.
#   lab_start NAME    sets tmp (mktemp -d /tmp/leaselua-NAME.XXXXXX) and
#                     rundir ($tmp/run), installs the EXIT/INT/TERM traps,
#                     starts Azurite (tools/emulator/start) and sources its
#                     env: AZURE_STORAGE_ACCOUNT_URL, AZURE_STORAGE_TOKEN,
#                     LEASELUA_CA_FILE, AZURITE_VERSION.
#
# Hooks, each optional, defined by the caller before it exits:
#   lab_before_stop RC   runs first (kill the caller's own children here)
#   lab_after_stop RC    runs after Azurite stopped, while $tmp still exists
#                        (print its logs here on failure)
# A failing stop makes the exit status 1, never 0.

: "${root:?set root to the checkout before sourcing tools/lab.sh}"

lab_build() {
  local name=$1
  build=$(cd "${BUILD_DIR:-build}" 2>/dev/null && pwd) || {
    echo "$name: build directory '${BUILD_DIR:-build}' not found (make build)" >&2
    exit 1
  }
  host=$build/leaselua
  [[ -x $host ]] || {
    echo "$name: $host is not built (make build)" >&2
    exit 1
  }
}

# shellcheck disable=SC2317  # called by the EXIT trap
lab_cleanup() {
  local rc=$?
  trap - EXIT
  if declare -F lab_before_stop >/dev/null; then lab_before_stop "$rc" || true; fi
  if [[ -n ${rundir:-} ]]; then
    "$root/tools/emulator/stop" "$rundir" >/dev/null || rc=1
  fi
  if declare -F lab_after_stop >/dev/null; then lab_after_stop "$rc" || true; fi
  [[ -n ${tmp:-} ]] && rm -rf "$tmp"
  exit "$rc"
}

lab_start() {
  local name=$1
  tmp=$(mktemp -d "/tmp/leaselua-$name.XXXXXX")
  rundir=$tmp/run
  trap lab_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  "$root/tools/emulator/start" "$rundir" >&2
  # shellcheck disable=SC1091
  . "$rundir/env"
}
