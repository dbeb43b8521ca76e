#!/usr/bin/env bash
# Two builds of the host against each other, natively: A and B take turns
# (A first in odd rounds, B first in even ones) running bench/reads.lua
# against one fresh local Azurite, and each run's JSON line is printed
# with its build and round. The figure is the difference of each round's
# pair, B less A, since the emulator's speed drifts between runs far more
# than a small change moves a read. Not a figure of make bench.
#
#   bench/ab.sh HOST_A HOST_B [N] [ROUNDS]     N reads per run (2000),
#                                              ROUNDS pairs (8)
# Build the two hosts first, e.g. from two worktrees, and copy them out.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
[[ $# -ge 2 && -x $1 && -x $2 ]] || {
  echo "usage: bench/ab.sh HOST_A HOST_B [N] [ROUNDS] (two executable hosts)" >&2
  exit 64
}
host_a=$1 host_b=$2 n=${3:-2000} rounds=${4:-8}
# shellcheck source=tools/lab.sh
. "$root/tools/lab.sh"
lab_start ab
export AZURE_STORAGE_CONTAINER=bench
for r in $(seq 1 "$rounds"); do
  order="A B"
  ((r % 2 == 0)) && order="B A"
  for who in $order; do
    bin=$host_a
    [[ $who == B ]] && bin=$host_b
    line=$(AZURE_STORAGE_BLOB="ab-$who-$r.json" "$bin" bench/reads.lua \
      --manifest tools/emulator/manifest.json --evidence "$tmp/ev-$who-$r" \
      --n "$n" --warmup 10 2>"$tmp/err-$who-$r") || true
    [[ -n $line ]] || {
      cat "$tmp/err-$who-$r" >&2
      echo "bench/ab.sh: $who printed no figure in round $r" >&2
      exit 1
    }
    echo "$who $r $line"
  done
done
