#!/bin/sh
# usage (from /work/main, after build.sh): bench/_first-fit-wasm/measure.sh [pairs] [rounds] > log
# Each round, for small (W1) then mixed (W2), one after another in the same minute: the JS probe,
# C++ native (the port, the no-index oracle), the wasm loop-inside
# (clang -O2, the same after wasm-opt -O3, the oracle), and the JS-called runs (each of those
# three wasm modules, then AS TLSF, then TS first fit, in one process).
# summarize.mjs turns the log into medians.
set -eu
pairs=${1:-2000000}
rounds=${2:-3}
d=bench/_first-fit-wasm
for r in $(seq 1 "$rounds"); do
  for w in small mixed; do
    echo "== round $r $w $(date -u +%H:%M:%S)"
    node --import tsx bench/_first-fit-pairs.ts $w $pairs
    for v in ff oracle; do $d/out/native $w $pairs $v; done
    for v in ff ff-wasmopt oracle; do node --no-warnings --import tsx $d/run.mjs loop $w $pairs $v; done
    for v in ff ff-wasmopt oracle; do node --no-warnings --import tsx $d/run.mjs calls $w $pairs $v; done
  done
done
