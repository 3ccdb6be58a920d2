#!/bin/sh
# Builds the native example drivers under ASan and UBSan:
#   examples/native/build.sh [OUT_DIR]     (default: examples/native/build)
# OUT_DIR/first_fit, OUT_DIR/ring_upload and OUT_DIR/deferred_free (clean), OUT_DIR/bump_c (the
# C example) and one OUT_DIR/<example>_bug_<name> per planted bug. CXX and CC choose the
# compilers (default c++ and cc). The header's directory is what `gpumv include-dir` prints (here:
# the package's include/).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-"$here/build"}
include="$here/../../include"
CXX=${CXX:-c++}
CC=${CC:-cc}
command -v "$CXX" >/dev/null 2>&1 || { echo "error: no C++ compiler '$CXX' (install g++ or set CXX)" >&2; exit 2; }
command -v "$CC" >/dev/null 2>&1 || { echo "error: no C compiler '$CC' (install gcc or set CC)" >&2; exit 2; }
mkdir -p "$out"
# A binary newer than its sources, the header and this script is kept (npm test builds every run).
fresh() { # fresh OUT SOURCE...
  [ -x "$1" ] || return 1
  target=$1
  shift
  for source in "$@" "$include/gpumv_driver.h" "$here/build.sh"; do
    [ "$target" -nt "$source" ] || return 1
  done
}
flags="-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -Wall -Wextra -I$include"
fresh "$out/first_fit" "$here/first_fit.cpp" || "$CXX" -std=c++17 $flags -o "$out/first_fit" "$here/first_fit.cpp"
fresh "$out/bump_c" "$here/bump.c" || "$CC" -std=c99 $flags -o "$out/bump_c" "$here/bump.c"
# example source, then its planted bugs: OUT_DIR/<example> and OUT_DIR/<example>_bug_<name>
for spec in "first_fit OFF_BY_ONE USE_AFTER_FREE SIZE_WRAP WRONG_MERGE UNINIT CYCLE" \
            "ring_upload EARLY_COLLECT WRAP_OVERLAP" "deferred_free POOL_NO_FENCE"; do
  set -- $spec
  example=$1
  shift
  sources="$here/$example.cpp $here/first_fit.cpp"
  fresh "$out/$example" $sources || "$CXX" -std=c++17 $flags -o "$out/$example" "$here/$example.cpp"
  for bug in "$@"; do
    name=$(echo "$bug" | tr 'A-Z' 'a-z')
    fresh "$out/${example}_bug_$name" $sources ||
      "$CXX" -std=c++17 $flags "-DBUG_$bug" -o "$out/${example}_bug_$name" "$here/$example.cpp"
  done
done
