#!/usr/bin/env bash
# break_teardown_release.sh [<build dir>] - shows that the teardown tests of
# driver_test.cpp fail against a runtime whose teardown keeps the graph's
# shared memory.
#
# Each case compiles a broken copy of graph/teardown.cpp with the build's own
# command (compile_commands.json), links runtime_tests over it with the
# build's own link command (ninja -t commands) into a folder of its own, and
# runs the teardown tests: each named test must fail, saying what the driver
# still maps. Against runtime_tests as built they must pass. The cases:
#   no release at teardown      the memory goes with the last reference only
#   release under a held tensor the segment unmapped under input_tensor()'s tensor
# Needs the build's runtime_tests built and nothing rebuilding it meanwhile
# (take the build lock). Nothing in the build folder changes.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../../../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source=$repo/runtime/src/graph/teardown.cpp
filter='Driver.*Teardown*:Driver.AfterTeardown*:Driver.AnInputTensor*:Driver.StatsAfterTeardown*'
failures=0

# breaks <case> <old> <new>: a copy of teardown.cpp under $work/<case> with old replaced.
breaks() {
  mkdir -p "$work/$1"
  python3 - "$source" "$work/$1/teardown.cpp" "$2" "$3" <<'PY'
import sys
path, copy, old, new = sys.argv[1:5]
text = open(path).read()
if old not in text:
    sys.exit("break_teardown_release: '" + old + "' is no longer in " + path)
open(copy, "w").write(text.replace(old, new))
PY
}

# build <case>: the copy compiled with the build's command for teardown.cpp
# (its quoted includes still found beside it), runtime_tests linked over it.
build() {
  python3 - "$build" "$source" "$work/$1/teardown.cpp" "$work/$1/teardown.o" <<'PY' || return 1
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
sys.exit("break_teardown_release: no compile command for " + source)
PY
  local command
  command=$(ninja -C "$build" -t commands tests/unit/runtime_tests | tail -1)
  command=${command#: && }
  command=${command%% && cd *}
  command=${command%% && :*}
  command=${command/ -o tests\/unit\/runtime_tests / -o $work/$1/runtime_tests }
  command=${command/ runtime\/libcg_runtime.a / $work/$1/teardown.o runtime/libcg_runtime.a }
  (cd "$build" && eval "$command")
}

# expect_failure <case> <test that must fail> <what its output must show>
expect_failure() {
  local case=$1 test=$2 shown=$3
  "$work/$case/runtime_tests" --gtest_filter="$filter" >"$work/$case.log" 2>&1
  local status=$?
  if ((status != 0)) && grep -q "^\[  FAILED  \] $test\b" "$work/$case.log" &&
    grep -qF -- "$shown" "$work/$case.log"; then
    echo "ok: $case: $test fails, showing '$shown'"
  elif ((status != 0)) && ! grep -q "^\[  PASSED  \]" "$work/$case.log" &&
    grep -q "^\[ RUN      \] $test$" "$work/$case.log" &&
    ! grep -q "^\[       OK \] $test " "$work/$case.log" && [[ $shown == crash ]]; then
    echo "ok: $case: $test crashes runtime_tests (exit $status)"
  else
    echo "FAIL: $case: runtime_tests exited $status without $test failing on '$shown':"
    tail -20 "$work/$case.log"
    failures=$((failures + 1))
  fi
}

if "$build/tests/unit/runtime_tests" --gtest_filter="$filter" >"$work/intact.log" 2>&1; then
  echo "ok: the teardown tests pass against runtime_tests as built"
else
  echo "FAIL: the teardown tests fail against runtime_tests as built:"
  tail -20 "$work/intact.log"
  exit 1
fi

breaks kept '  if (s.processes.left_running.empty())
    s.release_memory();' '' || exit 1
build kept || exit 1
expect_failure kept Driver.TeardownEndsTheActorProcessAndReleasesAllTheGraphsSharedMemoryInTheDriver \
  '/memfd:cg.overflow (deleted)'
expect_failure kept Driver.ThreadsModeTeardownJoinsTheActorThreadAndReleasesAllTheGraphsSharedMemory \
  '/memfd:cg.cg_test_echo (deleted)'
expect_failure kept Driver.StatsAfterTeardownAreThoseOfTheProfileTeardownRead \
  '/memfd:cg.cg_test_echo (deleted)'

breaks held '  if (std::find(input_in_place.begin(), input_in_place.end(), true) != input_in_place.end())
    return;' '' || exit 1
build held || exit 1
expect_failure held Driver.AnInputTensorNoExecuteTookKeepsTheSegmentMappedAfterTeardownUntilTheGraphGoes \
  crash

exit $((failures != 0))
