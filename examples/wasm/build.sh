#!/bin/sh
# Builds the WebAssembly example allocator with clang's wasm32-wasi target:
#   examples/wasm/build.sh [OUT_DIR]   writes OUT_DIR/first_fit.wasm and OUT_DIR/first_fit_bug_size_t.wasm
#                                      (default OUT_DIR: examples/wasm, the committed files)
#   examples/wasm/build.sh --check     rebuilds into a temporary folder and compares byte for byte
#                                      with the committed files (npm run wasm:check)
# CXX chooses the compiler (default clang++). On Debian: apt-get install clang lld wasi-libc
# libc++-dev-wasm32 libclang-rt-dev-wasm32.
#
# The output is deterministic: fixed flags, no debug information (so no paths), the source
# compiled from its own folder under a fixed name. The bytes still depend on the toolchain's
# version (clang writes its version into the module's producers section, and another LLVM
# optimises differently), so --check compares only under the clang version the committed files
# were built with (CLANG_VERSION below); under another it says so in one line and skips.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
CXX=${CXX:-clang++}
CLANG_VERSION="Debian clang version 14.0.6"
mode=build
out=$here
work=$(mktemp -d)  # the objects, and under --check the rebuilt modules
trap 'rm -rf "$work"' EXIT
if [ "${1:-}" = "--check" ]; then
  mode=check
  out=$work/out
elif [ $# -gt 0 ]; then
  out=$1
fi

# Whether CXX can link for wasm32-wasi (clang, lld, wasi-libc, libc++ and the builtins for wasm32).
toolchain_missing() {
  command -v "$CXX" >/dev/null 2>&1 || { echo "no C++ compiler '$CXX'"; return 0; }
  printf 'int f(int x) { return x; }\n' >"$work/probe.cpp"
  if ! "$CXX" --target=wasm32-wasi -mexec-model=reactor -o "$work/probe.wasm" "$work/probe.cpp" >/dev/null 2>&1; then
    echo "'$CXX' cannot link for wasm32-wasi (install clang lld wasi-libc libc++-dev-wasm32 libclang-rt-dev-wasm32)"
    return 0
  fi
  return 1
}

if missing=$(toolchain_missing); then
  if [ "$mode" = check ]; then
    echo "wasm:check skipped: $missing"
    exit 0
  fi
  echo "error: $missing" >&2
  exit 2
fi
version=$("$CXX" --version | head -n 1)
if [ "$mode" = check ] && [ "$version" != "$CLANG_VERSION" ]; then
  echo "wasm:check skipped: '$CXX' is $version; the committed .wasm files were built with $CLANG_VERSION"
  exit 0
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
# Compiled, then linked in a second step without -O: clang 14 runs binaryen's wasm-opt on what it
# links at -O1 and above whenever a wasm-opt is on PATH (npm puts node_modules/.bin first, and
# AssemblyScript ships one there), which would make the bytes depend on PATH.
# -mexec-model=reactor: a library, no main (the module exports _initialize, which the wrapper
# calls once). -fno-exceptions -fno-rtti: no C++ exception runtime. No -g and --strip-debug (the
# debug information wasi-libc's archive carries): no paths, a small module; the name section stays,
# so a trap's stack names the C++ functions.
target="--target=wasm32-wasi"
cflags="$target -std=c++17 -O2 -fno-exceptions -fno-rtti -Wall -Wextra -Werror"
ldflags="$target -mexec-model=reactor -Wl,--strip-debug"
cd "$here"
build() {  # build NAME [DEFINES...]
  name=$1
  shift
  "$CXX" $cflags "$@" -c -o "$work/$name.o" first_fit.cpp
  "$CXX" $ldflags -o "$out/$name.wasm" "$work/$name.o"
  chmod 644 "$out/$name.wasm"  # data, not a program
}
build first_fit
build first_fit_bug_size_t -DBUG_SIZE_T

if [ "$mode" = check ]; then
  status=0
  for file in first_fit.wasm first_fit_bug_size_t.wasm; do
    if cmp -s "$out/$file" "$here/$file"; then
      echo "wasm:check: examples/wasm/$file is byte-identical to its rebuild"
    else
      echo "wasm:check: examples/wasm/$file differs from its rebuild with $version: run examples/wasm/build.sh and commit the result" >&2
      status=1
    fi
  done
  exit $status
fi
