#!/bin/sh
# Builds the native example drivers under ASan and UBSan:
#   examples/native/build.sh [OUT_DIR]     (default: examples/native/build)
# OUT_DIR/first_fit (clean), OUT_DIR/bump_c (the C example) and one OUT_DIR/first_fit_bug_<name>
# per planted bug. CXX and CC choose the compilers (default c++ and cc). The header's directory is
# what `gpumv include-dir` prints (here: the package's include/).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-"$here/build"}
include="$here/../../include"
CXX=${CXX:-c++}
CC=${CC:-cc}
command -v "$CXX" >/dev/null 2>&1 || { echo "error: no C++ compiler '$CXX' (install g++ or set CXX)" >&2; exit 2; }
command -v "$CC" >/dev/null 2>&1 || { echo "error: no C compiler '$CC' (install gcc or set CC)" >&2; exit 2; }
mkdir -p "$out"
flags="-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -Wall -Wextra -I$include"
"$CXX" -std=c++17 $flags -o "$out/first_fit" "$here/first_fit.cpp"
"$CC" -std=c99 $flags -o "$out/bump_c" "$here/bump.c"
for bug in OFF_BY_ONE USE_AFTER_FREE SIZE_WRAP WRONG_MERGE UNINIT CYCLE; do
  name=$(echo "$bug" | tr 'A-Z' 'a-z')
  "$CXX" -std=c++17 $flags "-DBUG_$bug" -o "$out/first_fit_bug_$name" "$here/first_fit.cpp"
done
