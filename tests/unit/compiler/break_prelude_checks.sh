#!/usr/bin/env bash
# break_prelude_checks.sh [<build dir>] - shows that the prelude cache tests
# fail against a frontend that trusts its cache: one that loads a PCH without
# checking its hash, and one that uses a cache directory whoever owns it.
#
# Each case compiles a broken copy of frontend/Prelude.cpp and links
# prelude_test.cpp over it and the build's compiler libraries (the copy's
# definitions come first) into a folder of its own, then runs the test that
# must fail. Unbroken, the same link must pass. Needs the build's cg_frontend,
# cg_ir and cg_support libraries built. Nothing in the build folder changes.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cxx=${CXX:-c++}
llvm=$(llvm-config-16 --prefix 2>/dev/null || echo /usr/lib/llvm-16)
failures=0

# links <case> <old> <new>: prelude tests over Prelude.cpp with old replaced ("" = unbroken).
links() {
  mkdir -p "$work/$1"
  python3 - "$repo/compiler/frontend/Prelude.cpp" "$work/$1/Prelude.cpp" "$2" "$3" <<'PY'
import sys
path, copy, old, new = sys.argv[1:5]
text = open(path).read()
if old:
    if text.count(old) != 1:
        sys.exit(f"{old!r} is not in {path} once: update this script")
    text = text.replace(old, new)
open(copy, "w").write(text)
PY
  "$cxx" -std=c++20 -O0 -fno-rtti -w -DCG_CLANG_RESOURCE_DIR="\"$llvm/lib/clang/16\"" \
    -I"$repo/compiler" -isystem "$llvm/include" "$work/$1/Prelude.cpp" \
    "$repo/tests/unit/compiler/prelude_test.cpp" -o "$work/$1/prelude_tests" \
    "$build/compiler/frontend/libcg_frontend.a" "$build/compiler/ir/libcg_ir.a" \
    "$build/compiler/support/libcg_support.a" -L"$llvm/lib" -lclang-cpp -lLLVM -lfmt \
    -lgtest -lgtest_main -pthread
}

# expect <case> <pass|fail> <test filter>
expect() {
  if "$work/$1/prelude_tests" --gtest_filter="$3" >"$work/$1/log" 2>&1; then got=pass; else got=fail; fi
  if [[ $got == "$2" ]]; then
    echo "ok: $1: $3 ${got}ed"
  else
    echo "WRONG: $1: $3 ${got}ed, expected it to $2"; failures=$((failures + 1))
  fi
}

links unbroken "" "" || exit 2
expect unbroken pass 'PreludeCache.*:CacheDirectoryProblem.*'

links no-hash-check "  return hashOf(entry.pch) == entry.pchHash;" "  return true;" || exit 2
expect no-hash-check fail 'PreludeCache.IsRebuiltWhenItsPchIsDamaged'

links any-owner "  if (status.st_uid != user)" "  if (false)" || exit 2
expect any-owner fail 'CacheDirectoryProblem.*'

links others-may-write "  if ((status.st_mode & (S_IWGRP | S_IWOTH)) != 0) {" "  if (false) {" || exit 2
expect others-may-write fail 'PreludeCache.IsNotUsedInADirectoryOthersCanWriteOrALink'

exit $((failures > 0))
