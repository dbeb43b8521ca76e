#!/usr/bin/env bash
# Install everything leaselua needs on a fresh Debian 12, idempotently:
#   1. Debian packages: only the missing ones, one `apt-get update` first;
#   2. the pinned Azurite under tools/emulator (npm ci from the lockfile).
# Prints one line per action. Exits non-zero with a message on failure.
# As non-root it installs nothing: it names what is missing and exits 1.
#
# Extra Debian packages can be added in EXTRA_PACKAGES below or, for one run,
# with LEASELUA_EXTRA_PACKAGES="pkg1 pkg2" tools/deps.sh.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

PACKAGES=(
  build-essential cmake pkg-config clang clang-format
  lua5.4 liblua5.4-dev lua-cjson lua-busted lua-check
  libcurl4-openssl-dev libssl-dev libexpat1-dev libcjson-dev
  openssl ca-certificates curl valgrind time strace
  libclang-rt-14-dev
  luarocks dpkg-dev groff-base man-db tmux
  openssh-client
  libxml2-utils
  lua-yaml shellcheck
)
# libxml2-utils: xmllint, the JUnit reports checked against schemas/junit.xsd
# (spec/junit_spec.lua).
# lua-yaml: lyaml (LibYAML), which parses examples/ci's two workflow files
# (spec/ci_examples_spec.lua); shellcheck: examples/ci/qualify.sh checked.
# chromium: the report's check in a real browser (spec/report_browser_spec.lua).
EXTRA_PACKAGES=(chromium)
# Node.js and npm: only when node/npm are not already on PATH. On machines
# where nodejs comes from another source with npm bundled, Debian's npm
# package conflicts with it, so an existing node+npm is left alone.
NODE_PACKAGES=(nodejs npm)

say() { echo "deps: $*"; }
die() {
  echo "deps: ERROR: $*" >&2
  exit 1
}

wanted=("${PACKAGES[@]}" "${EXTRA_PACKAGES[@]}")
if [[ -n ${LEASELUA_EXTRA_PACKAGES:-} ]]; then
  read -r -a more <<<"$LEASELUA_EXTRA_PACKAGES"
  wanted+=("${more[@]}")
fi
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
  say "node $(node --version) and npm $(npm --version 2>/dev/null) already on PATH: not installing ${NODE_PACKAGES[*]}"
else
  wanted+=("${NODE_PACKAGES[@]}")
fi

command -v dpkg-query >/dev/null 2>&1 || die "dpkg-query not found: this script expects Debian 12"

missing=()
for p in "${wanted[@]}"; do
  st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [[ $st == installed ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  say "all ${#wanted[@]} Debian packages already installed"
else
  say "missing Debian packages: ${missing[*]}"
  if [[ $(id -u) != 0 ]]; then
    echo "deps: not root: install them with:" >&2
    echo "  sudo apt-get update && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${missing[*]}" >&2
    exit 1
  fi
  say "apt-get update"
  DEBIAN_FRONTEND=noninteractive apt-get update -q </dev/null >/tmp/leaselua-deps-apt.log 2>&1 || {
    tail -n 20 /tmp/leaselua-deps-apt.log >&2
    die "apt-get update failed (log: /tmp/leaselua-deps-apt.log)"
  }
  say "apt-get install ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    "${missing[@]}" </dev/null >>/tmp/leaselua-deps-apt.log 2>&1 || {
    tail -n 30 /tmp/leaselua-deps-apt.log >&2
    die "apt-get install failed (log: /tmp/leaselua-deps-apt.log)"
  }
  still=()
  for p in "${missing[@]}"; do
    st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    [[ $st == installed ]] || still+=("$p")
  done
  ((${#still[@]} == 0)) || die "still not installed after apt-get: ${still[*]}"
  say "installed ${#missing[@]} Debian packages"
fi

command -v node >/dev/null 2>&1 || die "node not on PATH after installing packages"
command -v npm >/dev/null 2>&1 || die "npm not on PATH after installing packages"

# Pinned Azurite. --ignore-scripts: Azurite needs no install scripts.
emu=$root/tools/emulator
[[ -f $emu/package.json && -f $emu/package-lock.json ]] ||
  die "missing $emu/package.json or package-lock.json"
pinned=$(env -u NODE_EXTRA_CA_CERTS node -e '
  const l = require(process.argv[1]);
  process.stdout.write((l.packages["node_modules/azurite"] || {}).version || "");
' "$emu/package-lock.json") || die "cannot read $emu/package-lock.json"
installed=
if [[ -f $emu/node_modules/azurite/package.json ]]; then
  installed=$(env -u NODE_EXTRA_CA_CERTS node -p 'require(process.argv[1]).version' \
    "$emu/node_modules/azurite/package.json" 2>/dev/null || true)
fi
stamp=$emu/node_modules/.package-lock.json
reason=
if [[ ! -d $emu/node_modules ]]; then
  reason="node_modules missing"
elif [[ ! -f $stamp ]]; then
  reason="node_modules has no .package-lock.json"
elif [[ $emu/package-lock.json -nt $stamp ]]; then
  reason="package-lock.json is newer than node_modules"
elif [[ $installed != "$pinned" ]]; then
  reason="installed azurite '${installed:-none}' is not the pinned $pinned"
fi
# A link to a shared install (a git worktree borrowing a checkout's): npm ci
# through it would empty the install every other checkout is using. Keep it
# when it holds the pinned version; otherwise say where to update it.
if [[ -n $reason && -L $emu/node_modules ]]; then
  [[ $installed == "$pinned" ]] ||
    die "tools/emulator/node_modules links to a shared install holding azurite '${installed:-none}', not the pinned $pinned: update it where the link points, or remove the link"
  say "tools/emulator/node_modules links to a shared install of azurite $installed: not reinstalling ($reason)"
  reason=
fi
if [[ -n $reason ]]; then
  say "npm ci in tools/emulator ($reason)"
  log=$(mktemp /tmp/leaselua-npm-ci.XXXXXX.log)
  (cd "$emu" && env -u NODE_EXTRA_CA_CERTS npm ci --no-audit --no-fund \
    --ignore-scripts </dev/null >"$log" 2>&1) || {
    tail -n 30 "$log" >&2
    die "npm ci failed in $emu (log: $log)"
  }
  rm -f "$log"
  touch "$stamp"
else
  say "azurite $installed already installed in tools/emulator/node_modules"
fi
got=$(cd "$emu" && env -u NODE_EXTRA_CA_CERTS node_modules/.bin/azurite-blob --version </dev/null 2>&1) ||
  die "azurite-blob does not run: $got"
[[ $got == "$pinned" ]] || die "azurite-blob --version says '$got', lockfile pins '$pinned'"
say "azurite-blob $got runs (node $(node --version))"
