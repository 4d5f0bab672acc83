#!/usr/bin/env bash
# break_codegen_overlap.sh [<build dir>] - shows that
# Codegen.WithOverlapBothEndsOfAnNcclEdgeAreToldToOverlap fails against a
# cgc whose NCCL ports are not told of overlap.
#
# Each case compiles a broken copy of codegen/Codegen.cpp with the build's own
# command (compile_commands.json), links codegen_tests over it with the
# build's own link command (ninja -t commands) into a folder of its own, and
# runs the test: it must fail. Against codegen_tests as built it must pass.
# The cases:
#   reader not told   nccl_input gets no cg::Overlap::on
#   writer not told   nccl_output gets no cg::Overlap::on
# Needs the build's codegen_tests built and nothing rebuilding it meanwhile
# (take the build lock). Nothing in the build folder changes.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source=$repo/compiler/codegen/Codegen.cpp
test=Codegen.WithOverlapBothEndsOfAnNcclEdgeAreToldToOverlap
failures=0

# breaks <case> <old> <new>: a copy of Codegen.cpp under $work/<case> with old replaced.
breaks() {
  mkdir -p "$work/$1"
  python3 - "$source" "$work/$1/Codegen.cpp" "$2" "$3" <<'PY'
import sys
path, copy, old, new = sys.argv[1:5]
text = open(path).read()
if old not in text:
    sys.exit("break_codegen_overlap: '" + old + "' is no longer in " + path)
open(copy, "w").write(text.replace(old, new, 1))
PY
}

# build <case>: the copy compiled with the build's command for Codegen.cpp
# (its quoted includes still found beside the original), codegen_tests
# linked over it.
build() {
  python3 - "$build" "$source" "$work/$1/Codegen.cpp" "$work/$1/Codegen.o" <<'PY' || return 1
import json, os, shlex, subprocess, sys
build, source, copy, obj = sys.argv[1:5]
for entry in json.load(open(os.path.join(build, "compile_commands.json"))):
    if entry["file"] != source:
        continue
    args = shlex.split(entry["command"])
    args[args.index("-o") + 1] = obj
    args[args.index("-c") + 1] = copy
    args[1:1] = ["-iquote", os.path.dirname(source)]
    sys.exit(subprocess.call(args, cwd=entry["directory"]))
sys.exit("break_codegen_overlap: no compile command for " + source)
PY
  local command
  command=$(ninja -C "$build" -t commands tests/unit/codegen_tests | tail -1)
  command=${command#: && }
  command=${command%% && cd *}
  command=${command%% && :*}
  command=${command/ -o tests\/unit\/codegen_tests / -o $work/$1/codegen_tests }
  command=${command/ compiler\/codegen\/libcg_codegen.a / $work/$1/Codegen.o compiler\/codegen\/libcg_codegen.a }
  (cd "$build" && eval "$command")
}

# expect_failure <case>
expect_failure() {
  "$work/$1/codegen_tests" --gtest_filter="$test" >"$work/$1.log" 2>&1
  local status=$?
  if ((status != 0)) && grep -q "^\[  FAILED  \] $test\b" "$work/$1.log"; then
    echo "ok: $1: $test fails"
  else
    echo "FAIL: $1: codegen_tests exited $status without $test failing:"
    tail -20 "$work/$1.log"
    failures=$((failures + 1))
  fi
}

if "$build/tests/unit/codegen_tests" --gtest_filter="$test" >"$work/intact.log" 2>&1; then
  echo "ok: $test passes against codegen_tests as built"
else
  echo "FAIL: $test fails against codegen_tests as built:"
  tail -20 "$work/intact.log"
  exit 1
fi

breaks reader 'readerSlot(channel, actor), ncclGroup(c), overlap)' \
  'readerSlot(channel, actor), ncclGroup(c), "")' || exit 1
build reader || exit 1
expect_failure reader

breaks writer 'c, method, ncclGroup(c), overlap)' 'c, method, ncclGroup(c), "")' || exit 1
build writer || exit 1
expect_failure writer

exit $((failures != 0))
