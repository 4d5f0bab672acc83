#!/usr/bin/env bash
# break_profile_checks.sh [<build dir>] [<work dir>] - shows that the checks
# of profile flows, of cg-profile's summary window and of "{graph}" in a
# placement path fail against a runtime or a cg-profile without them.
#
# Each case compiles a broken copy of one source and links the test program
# from the build folder's objects with it ahead of the library, or in place of
# the program's own object (tests/support/break_support.sh), and runs the
# case's test: it must fail. Against the programs as built the tests must
# pass. The cases:
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
source "$(dirname "$0")/../../../support/break_support.sh"
break_setup "$@"

flows=ProfileTrace.AFlowToAReadThatWaitedFromBeforeTheWriteDoesNotEndBeforeItStarts
graph=Launch.GraphInAPlacementPathIsTheGraphsName
real_flows=Profile.EveryFlowOfAProfiledRunStartsInItsWriteAndNoLaterThanItEnds
window=Profile.CgProfileSummaryCountsFromTheFirstExecutionNotFromLaunch

break_as_built tests/unit/runtime_tests "$flows:$graph"
break_as_built tests/e2e/e2e_tests "$real_flows:$window"

# broken <case> <source> <old> <new>: <source> (under the repository) with
# old (there once) replaced by new, compiled to $work/<case>.o for more than
# one program.
broken() {
  break_copy --once "$repo/$2" "$work/$1/$(basename "$2")" "$3" "$4" &&
    break_compile "$work/$1/$(basename "$2")" "$work/$1.o" "$2" || exit 1
}
# fails <case> <program> <test>: <program> (in $work/<case>/) fails <test>.
fails() {
  break_expect "$1: $3 fails" 1 "$work/$1/$2" --gtest_filter="$3"
  break_failed "$1: $3 fails" "$3"
}

broken middles runtime/src/actor/profile_trace.cpp \
  'return {from, std::max(middle(read), from)};' 'return {middle(write), middle(read)};'
break_link tests/unit/runtime_tests "$work/middles/runtime_tests" all "$work/middles.o" || exit 1
fails middles runtime_tests "$flows"
break_link tests/e2e/e2e_tests "$work/middles/e2e_tests" all "$work/middles.o" || exit 1
fails middles e2e_tests "$real_flows"

break_relink tests/unit/runtime_tests "$work/graph/runtime_tests" graph/placement.cpp \
  'detail::with_graph_name(path_given, spec.name);' 'path_given;' || exit 1
fails graph runtime_tests "$graph"

broken window compiler/tool/cg_profile.cpp 'const double first = windowStart(trace);' \
  'const double first = trace.slices.front().start;'
break_link compiler/tool/cg-profile "$work/window/cg-profile" \
  "all except compiler/tool/CMakeFiles/cg-profile.dir/cg_profile.cpp.o" "$work/window.o" || exit 1
break_compile "$repo/tests/e2e/profile_test.cpp" "$work/window/profile_test.o" \
  tests/e2e/profile_test.cpp "-DCG_PROFILE_TOOL=\"$work/window/cg-profile\"" || exit 1
break_link tests/e2e/e2e_tests "$work/window/e2e_tests" \
  "all except tests/e2e/CMakeFiles/e2e_tests.dir/profile_test.cpp.o" \
  "$work/window/profile_test.o" || exit 1
fails window e2e_tests "$window"

break_verdict "every check taken out of the profile made its test fail"
