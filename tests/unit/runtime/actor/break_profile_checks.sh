#!/usr/bin/env bash
# break_profile_checks.sh [<build dir>] - shows that the checks of profile
# flows, of cg-profile's summary window and of "{graph}" in a placement path
# fail against a runtime or a cg-profile without them.
#
# Each case compiles a broken copy of one source with the build's own command
# (compile_commands.json), links the test program over it with the build's
# own link command (ninja -t commands) into a folder of its own (a runtime
# copy's object comes before libcg_runtime.a, so its definitions are the ones
# taken), and runs the case's test: it must fail. Against the programs as
# built the tests must pass. The cases:
#   flows at the middles   a flow leaves the middle of its WRITE and reaches
#                          the middle of its READ, however long that waited
#                          (runtime_tests, and e2e_tests on a real run)
#   {graph} kept           a placement path is read as given (runtime_tests)
#   window from launch     cg-profile summary counts from the earliest slice;
#                          e2e_tests's profile_test.cpp is compiled again to
#                          run that cg-profile (its CG_PROFILE_TOOL)
# Needs the build's runtime_tests, e2e_tests and cg-profile built and nothing
# rebuilding them meanwhile (take the build lock). Nothing in the build
# folder changes.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../../../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# breaks <case> <source> <old> <new>: a copy of <source> (under the
# repository) in $work/<case> with old replaced.
breaks() {
  mkdir -p "$work/$1"
  python3 - "$repo/$2" "$work/$1/$(basename "$2")" "$3" "$4" <<'PY'
import sys
path, copy, old, new = sys.argv[1:5]
text = open(path).read()
if old not in text:
    sys.exit("break_profile_checks: '" + old + "' is no longer in " + path)
open(copy, "w").write(text.replace(old, new, 1))
PY
}

# compile <case> <source> <copy> [<-D...>]: <copy> compiled to <copy>.o with
# the build's command for <source> (its quoted includes still found beside
# the original), the -D given replacing the build's of the same name.
compile() {
  mkdir -p "$work/$1"
  python3 - "$build" "$repo/$2" "$3" "$3.o" "${4:-}" <<'PY'
import json, os, shlex, subprocess, sys
build, source, copy, obj, define = sys.argv[1:6]
for entry in json.load(open(os.path.join(build, "compile_commands.json"))):
    if entry["file"] != source:
        continue
    args = shlex.split(entry["command"])
    args[args.index("-o") + 1] = obj
    args[args.index("-c") + 1] = copy
    args[1:1] = ["-iquote", os.path.dirname(source)]
    if define:
        name = define.split("=")[0]
        args = [a for a in args if a.split("=")[0] != name] + [define]
    sys.exit(subprocess.call(args, cwd=entry["directory"]))
sys.exit("break_profile_checks: no compile command for " + source)
PY
}

# link <case> <program> <old object> <new objects>: <program> (its path in
# the build) linked into $work/<case> with <old object> replaced.
link() {
  local command
  command=$(ninja -C "$build" -t commands "$2" | tail -1)
  command=${command#: && }
  command=${command%% && cd *}
  command=${command%% && :*}
  command=${command/ -o $2 / -o $work/$1/$(basename "$2") }
  command=${command/ $3 / $4 }
  (cd "$build" && eval "$command")
}

# expect_failure <case> <program> <test>
expect_failure() {
  "$work/$1/$2" --gtest_filter="$3" >"$work/$1.log" 2>&1
  local status=$?
  if ((status != 0)) && grep -q "^\[  FAILED  \] $3\b" "$work/$1.log"; then
    echo "ok: $1: $3 fails"
  else
    echo "FAIL: $1: $2 exited $status without $3 failing:"
    tail -20 "$work/$1.log"
    failures=$((failures + 1))
  fi
}

flows=ProfileTrace.AFlowToAReadThatWaitedFromBeforeTheWriteDoesNotEndBeforeItStarts
graph=Launch.GraphInAPlacementPathIsTheGraphsName
real_flows=Profile.EveryFlowOfAProfiledRunStartsInItsWriteAndNoLaterThanItEnds
window=Profile.CgProfileSummaryCountsFromTheFirstExecutionNotFromLaunch
if "$build/tests/unit/runtime_tests" --gtest_filter="$flows:$graph" >"$work/intact.log" 2>&1 &&
  "$build/tests/e2e/e2e_tests" --gtest_filter="$real_flows:$window" >>"$work/intact.log" 2>&1; then
  echo "ok: the four tests pass against the programs as built"
else
  echo "FAIL: a test fails against the programs as built:"
  tail -20 "$work/intact.log"
  exit 1
fi

runtime=runtime/libcg_runtime.a
trace=runtime/src/actor/profile_trace.cpp
breaks middles $trace \
  'return {from, std::max(middle(read), from)};' 'return {middle(write), middle(read)};' || exit 1
compile middles $trace "$work/middles/profile_trace.cpp" || exit 1
link middles tests/unit/runtime_tests $runtime "$work/middles/profile_trace.cpp.o $runtime" ||
  exit 1
expect_failure middles runtime_tests "$flows"
link middles tests/e2e/e2e_tests $runtime "$work/middles/profile_trace.cpp.o $runtime" || exit 1
expect_failure middles e2e_tests "$real_flows"

placement=runtime/src/graph/placement.cpp
breaks graph $placement 'detail::with_graph_name(path_given, spec.name);' 'path_given;' || exit 1
compile graph $placement "$work/graph/placement.cpp" || exit 1
link graph tests/unit/runtime_tests $runtime "$work/graph/placement.cpp.o $runtime" || exit 1
expect_failure graph runtime_tests "$graph"

tool=compiler/tool/cg_profile.cpp
breaks window $tool 'const double first = windowStart(trace);' \
  'const double first = trace.slices.front().start;' || exit 1
compile window $tool "$work/window/cg_profile.cpp" || exit 1
link window compiler/tool/cg-profile compiler/tool/CMakeFiles/cg-profile.dir/cg_profile.cpp.o \
  "$work/window/cg_profile.cpp.o" || exit 1
cp "$repo/tests/e2e/profile_test.cpp" "$work/window/profile_test.cpp"
compile window tests/e2e/profile_test.cpp "$work/window/profile_test.cpp" \
  "-DCG_PROFILE_TOOL=\"$work/window/cg-profile\"" || exit 1
link window tests/e2e/e2e_tests tests/e2e/CMakeFiles/e2e_tests.dir/profile_test.cpp.o \
  "$work/window/profile_test.cpp.o" || exit 1
expect_failure window e2e_tests "$window"

exit $((failures != 0))
