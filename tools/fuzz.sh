#!/usr/bin/env bash
# Build and run the libFuzzer targets of tests/fuzz (clang).
#
# usage: tools/fuzz.sh build                  configure and build BUILD_FUZZ
#        tools/fuzz.sh smoke [SECONDS]        every target SECONDS (default 20)
#        tools/fuzz.sh long TARGET RUNS       one run of RUNS executions
#        tools/fuzz.sh list                   the targets that are built
#   FUZZ_ARGS adds libFuzzer options (e.g. -max_len=8192).
#   BUILD_FUZZ (default build-fuzz) is the build directory; FUZZ_ASAN=OFF
#   builds without ASan (UBSan only), used for the long run of fuzz_ledger
#   whose cost is in 1 MiB buffers that ASan maps and poisons on each input.
#
# Each run works on a scratch copy of tests/fuzz/corpus/TARGET (the seed
# corpus in the tree is never modified), in one process (no -jobs), and
# prints one line:
#   fuzz: TARGET runs=N seconds=S exec_per_s=E crashes=C sanitizers=...
# A crash leaves its input in $FUZZ_OUT/artifacts and makes the exit code 1.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${BUILD_FUZZ:-build-fuzz}
asan=${FUZZ_ASAN:-ON}
out=${FUZZ_OUT:-$(mktemp -d /tmp/leaselua-fuzz.XXXXXX)}
mkdir -p "$out/artifacts"

die() {
  echo "fuzz: $*" >&2
  exit 2
}

build_all() {
  command -v clang >/dev/null || die "clang not found (tools/deps.sh)"
  cmake -S . -B "$build" -DLEASELUA_FUZZ=ON -DLEASELUA_FUZZ_ASAN="$asan" \
    -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$out/cmake.log" 2>&1 ||
    {
      tail -n 20 "$out/cmake.log" >&2
      die "cmake configure failed"
    }
  cmake --build "$build" -j"${JOBS:-2}" --target fuzz >"$out/build.log" 2>&1 || {
    tail -n 30 "$out/build.log" >&2
    die "build failed"
  }
}

targets() {
  find "$build/tests/fuzz" -maxdepth 1 -type f -name 'fuzz_*' -perm -u+x -printf '%f\n' 2>/dev/null | sort
}

# run TARGET LIBFUZZER-ARGS...: one libFuzzer process, then the summary line.
run() {
  local t=$1
  shift
  local bin=$build/tests/fuzz/$t
  [[ -x $bin ]] || die "$bin is not built (tools/fuzz.sh build)"
  local corpus=$out/corpus/$t log=$out/$t.log
  rm -rf "$corpus"
  mkdir -p "$corpus"
  cp -r "tests/fuzz/corpus/$t/." "$corpus/" 2>/dev/null || true
  local t0 t1 rc=0 extra=()
  read -r -a extra <<<"${FUZZ_ARGS:-}"
  t0=$(date +%s.%N)
  # ASan/UBSan stop at the first error; leaks are reported too.
  ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
    UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
    "$bin" -print_final_stats=1 -artifact_prefix="$out/artifacts/$t-" \
    "${extra[@]}" "$@" "$corpus" >"$log" 2>&1 || rc=$?
  t1=$(date +%s.%N)
  local runs secs eps crashes san
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo 0)
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.0f", b-a}')
  eps=$(awk -v r="$runs" -v s="$secs" 'BEGIN{printf "%.0f", (s > 0) ? r / s : r}')
  crashes=$(find "$out/artifacts" -name "$t-*" -type f | wc -l)
  san=$([[ $asan == ON ]] && echo address,undefined || echo undefined)
  echo "fuzz: $t runs=$runs seconds=$secs exec_per_s=$eps crashes=$crashes sanitizers=$san corpus=$(find "$corpus" -type f | wc -l)${FUZZ_ARGS:+ args=$FUZZ_ARGS}"
  if ((rc != 0 || crashes > 0)); then
    grep -E 'ERROR|SUMMARY|runtime error' "$log" | head -n 5 >&2 || true
    echo "fuzz: $t failed (exit $rc); log $log, artifacts $out/artifacts" >&2
    return 1
  fi
}

cmd=${1:-smoke}
case $cmd in
build) build_all ;;
list) targets ;;
smoke)
  secs=${2:-20}
  build_all
  fail=0
  for t in $(targets); do run "$t" -max_total_time="$secs" -timeout=10 || fail=1; done
  ((fail == 0)) || exit 1
  ;;
long)
  [[ $# -eq 3 ]] || die "usage: tools/fuzz.sh long TARGET RUNS"
  [[ -x $build/tests/fuzz/$2 ]] || build_all
  run "$2" -runs="$3" -timeout=10
  ;;
*) die "unknown command $cmd (build, smoke, long, list)" ;;
esac
