#!/usr/bin/env bash
# The packager's view of leaselua, as CI checks it (make check-packaging):
#   1. Debug, Release, RelWithDebInfo and Debian's own flags (dpkg-buildflags,
#      hardening=+all: _FORTIFY_SOURCE, PIE, relro/now), each with -Werror,
#      each running the C tests;
#   2. the .deb (CPack), unpacked into a scratch root with dpkg -x, and from
#      there only (no checkout on any path, cwd outside it): a replayed
#      handoff of a shipped fixture (`leaselua handoff`, the flow found
#      beside the unpacked binary), verify and report;
#   3. `luarocks make` into a scratch tree, then `require "leaselua"` from
#      stock lua5.4 against that tree alone.
# usage: tools/packaging.sh [configs|deb|rocks|all]   (default all)
# Build directories: build-pkg/<config>, build-deb, scratch under /tmp.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
jobs=${JOBS:-2}
say() { echo "packaging: $*"; }
die() {
  echo "packaging: ERROR: $*" >&2
  exit 1
}
tmp=$(mktemp -d /tmp/leaselua-pkg.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

configs() {
  local c dir
  for c in Debug Release RelWithDebInfo debian; do
    dir=build-pkg/$c
    local -a env=() args=(-DLEASELUA_WERROR=ON)
    if [[ $c == debian ]]; then
      export DEB_BUILD_MAINT_OPTIONS=hardening=+all
      env=(CFLAGS="$(dpkg-buildflags --get CFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
        LDFLAGS="$(dpkg-buildflags --get LDFLAGS)")
      args+=(-DCMAKE_BUILD_TYPE=None)
      unset DEB_BUILD_MAINT_OPTIONS
    else
      args+=(-DCMAKE_BUILD_TYPE="$c")
    fi
    say "$c: configure, build (-Werror), C tests"
    env "${env[@]}" cmake -S . -B "$dir" "${args[@]}" >"$tmp/$c.cmake.log" 2>&1 ||
      { tail -n 20 "$tmp/$c.cmake.log" >&2; die "$c: cmake failed"; }
    cmake --build "$dir" -j"$jobs" >"$tmp/$c.build.log" 2>&1 ||
      { grep -E 'error|warning' "$tmp/$c.build.log" | head -n 20 >&2; die "$c: build failed"; }
    ctest --test-dir "$dir" --output-on-failure >"$tmp/$c.ctest.log" 2>&1 ||
      { tail -n 40 "$tmp/$c.ctest.log" >&2; die "$c: C tests failed"; }
    say "$c: $(grep -E 'tests passed' "$tmp/$c.ctest.log")"
  done
  # The hardening really reached the binary: PIE and BIND_NOW.
  readelf -h build-pkg/debian/leaselua | grep 'DYN' >/dev/null || die "debian: leaselua is not PIE"
  readelf -d build-pkg/debian/leaselua | grep -Eq 'BIND_NOW|FLAGS.*NOW' ||
    die "debian: leaselua is not linked with -z now"
  say "debian: leaselua is PIE with BIND_NOW"
}

deb() {
  say "deb: build (Release, prefix /usr) and cpack"
  cmake -S . -B build-deb -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
    -DLEASELUA_WERROR=ON >"$tmp/deb.cmake.log" 2>&1 || die "deb: cmake failed"
  cmake --build build-deb -j"$jobs" --target leaselua leaselua_module >"$tmp/deb.build.log" 2>&1 ||
    { tail -n 20 "$tmp/deb.build.log" >&2; die "deb: build failed"; }
  (cd build-deb && cpack -G DEB >"$tmp/cpack.log" 2>&1) ||
    { tail -n 20 "$tmp/cpack.log" >&2; die "deb: cpack failed"; }
  local pkgs=(build-deb/leaselua_*.deb) pkg
  pkg=${pkgs[0]}
  [[ -f $pkg ]] || die "deb: no package in build-deb"
  say "deb: $pkg ($(stat -c %s "$pkg") bytes), depends: $(dpkg-deb -f "$pkg" Depends)"
  local sr=$tmp/root
  dpkg -x "$pkg" "$sr"
  local bin=$sr/usr/bin/leaselua share=$sr/usr/share/leaselua
  [[ -x $bin ]] || die "deb: no usr/bin/leaselua in the package"
  [[ -f $sr/usr/share/man/man1/leaselua.1 || -f $sr/usr/share/man/man1/leaselua.1.gz ]] ||
    die "deb: no man page"
  local mod
  mod=$(find "$sr/usr/lib" -name leaselua.so | head -n 1)
  [[ -n $mod ]] || die "deb: no Lua module"
  # From the installed tree only: a directory outside the checkout, no
  # LUA_PATH/LUA_CPATH, no operator environment.
  local work=$tmp/work
  mkdir -p "$work"
  (
    cd "$work"
    env -i PATH=/usr/bin:/bin HOME="$work" "$bin" handoff \
      --manifest "$share/examples/emulator-manifest.json" \
      --replay "$share/fixtures/emulator/main-handoff-accept.json" --evidence "$work/ev" \
      >"$tmp/replay.out" 2>&1
  ) || { cat "$tmp/replay.out" >&2; die "deb: the replayed handoff did not ACCEPT"; }
  grep -E '^DECISION' "$tmp/replay.out" | head -n 1 | sed 's/^/packaging: deb: /'
  (cd "$work" && env -i PATH=/usr/bin:/bin "$bin" verify "$work/ev") >"$tmp/verify.out" 2>&1 ||
    { cat "$tmp/verify.out" >&2; die "deb: verify failed"; }
  say "deb: verify: $(head -n 1 "$tmp/verify.out")"
  (cd "$work" && env -i PATH=/usr/bin:/bin "$bin" report "$work/ev") >"$tmp/report.out" 2>&1 ||
    { cat "$tmp/report.out" >&2; die "deb: report failed"; }
  [[ -s $work/ev/report.html && -s $work/ev/summary.md ]] || die "deb: report wrote no files"
  say "deb: report.html $(stat -c %s "$work/ev/report.html") bytes"
  (cd "$work" && env -i PATH=/usr/bin:/bin LUA_CPATH="$(dirname "$mod")/?.so" \
    lua5.4 -e 'local ll = require "leaselua"; assert(ll._VERSION, "no _VERSION"); print(ll._VERSION)') \
    >"$tmp/mod.out" 2>&1 || { cat "$tmp/mod.out" >&2; die "deb: the module does not load"; }
  say "deb: require \"leaselua\" from the package: $(cat "$tmp/mod.out")"
  # leaselua spec from the package: lua5.4, the packaged module and flows
  [[ -f $share/examples/recovery_spec.lua ]] || die "deb: no template spec in share/leaselua/examples"
  [[ -x $share/examples/ci/qualify.sh ]] || die "deb: no examples/ci/qualify.sh in share/leaselua/examples"
  cat >"$work/pkg_spec.lua" <<'SPEC'
describe("leaselua spec from the package", function()
  it("has Lua 5.4, the module and the flows", function()
    assert.are.equal("Lua 5.4", _VERSION)
    assert.are.equal("leaselua", require("leaselua")._NAME)
    assert.truthy(package.searchpath("main_handoff", package.path))
  end)
end)
SPEC
  (cd "$work" && env -i PATH=/usr/bin:/bin HOME="$work" "$bin" spec pkg_spec.lua) >"$tmp/spec.out" 2>&1 ||
    { cat "$tmp/spec.out" >&2; die "deb: leaselua spec failed from the package"; }
  say "deb: leaselua spec: $(grep -E 'success' "$tmp/spec.out" | head -n 1)"
  if command -v man >/dev/null; then
    local warn
    warn=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings=w -l "$(find "$sr/usr/share/man" -name 'leaselua.1*')" 2>&1 >/dev/null || true)
    [[ -z $warn ]] || die "deb: man -l warns: $warn"
    say "deb: man -l renders the page without warnings"
  fi
}

rocks() {
  command -v luarocks >/dev/null || die "luarocks not found (tools/deps.sh)"
  local tree=$tmp/rocks
  say "rocks: luarocks make into a scratch tree"
  rm -rf build.luarocks
  luarocks --lua-version 5.4 make --tree "$tree" leaselua-0.1.0-1.rockspec >"$tmp/rocks.log" 2>&1 ||
    { tail -n 30 "$tmp/rocks.log" >&2; die "rocks: luarocks make failed"; }
  (cd "$tmp" && env -i PATH=/usr/bin:/bin LUA_CPATH="$tree/lib/lua/5.4/?.so" \
    lua5.4 -e 'local ll = require "leaselua"; assert(ll._VERSION, "no _VERSION"); print(ll._VERSION)') \
    >"$tmp/rmod.out" 2>&1 || { cat "$tmp/rmod.out" >&2; die "rocks: the module does not load"; }
  say "rocks: require \"leaselua\" from the rocks tree: $(cat "$tmp/rmod.out")"
}

case ${1:-all} in
  configs) configs ;;
  deb) deb ;;
  rocks) rocks ;;
  all) configs && deb && rocks ;;
  *) die "usage: tools/packaging.sh [configs|deb|rocks|all]" ;;
esac
