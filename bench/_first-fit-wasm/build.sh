#!/bin/sh
# Builds into out/ (scratch, not committed), from /work/main or anywhere:
#   out/native        g++ -O2 (the port, or the no-index oracle: argument 3 ff|oracle)
#   out/ff.wasm       clang++ --target=wasm32-wasi -O2, a WASI reactor (run.mjs drives it)
#   out/oracle.wasm  the no-index floor (oracle.hpp) as a wasm reactor
#   out/ff-wasmopt.wasm  the same after binaryen's wasm-opt -O3 (AS TLSF is built by asc -O3,
#                     which runs binaryen's optimizer), when node_modules/.bin/wasm-opt exists
# Compiled, then linked without -O, as examples/wasm/build.sh does (clang 14 would otherwise run
# whatever wasm-opt is on PATH at link time).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
mkdir -p out
CXX=${CXX:-g++}
WCXX=${WCXX:-clang++}
t="--target=wasm32-wasi"
$CXX -std=c++17 -O2 -Wall -Wextra -o out/native native.cpp
$WCXX $t -std=c++17 -O2 -fno-exceptions -fno-rtti -Wall -Wextra -c -o out/ff.o wasm_exports.cpp
$WCXX $t -mexec-model=reactor -Wl,--strip-debug -o out/ff.wasm out/ff.o
$WCXX $t -std=c++17 -O2 -fno-exceptions -fno-rtti -Wall -Wextra -DORACLE -c -o out/oracle.o wasm_exports.cpp
$WCXX $t -mexec-model=reactor -Wl,--strip-debug -o out/oracle.wasm out/oracle.o
rm -f out/ff.o out/oracle.o
# The committed copy `npm run bench -- alloc` loads (its 'first-fit C++ port (wasm)' row).
cp out/ff.wasm first_fit_port.wasm
opt=../../node_modules/.bin/wasm-opt
if [ -x "$opt" ]; then
  "$opt" -O3 out/ff.wasm -o out/ff-wasmopt.wasm
fi
ls -l out
