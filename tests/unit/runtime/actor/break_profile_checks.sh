#!/usr/bin/env bash
# break_profile_checks.sh [<build dir>] [<work dir>] - shows that the checks
# of profile flows, of cg-profile's summary window, of "{graph}" in a
# placement path, of the clock reads a READ takes and of sampled profiles
# fail against a runtime or a cg-profile without them.
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
#   clock for every READ   a READ whose message was waiting reads the clock
#                          (cg/detail/profile.hpp), or a port never looks
#                          first (cg/ports.hpp): runtime_tests's
#                          profile_recording_test.cpp compiled against each
#   every execution        a sampled actor records every execution
#                          (cg/detail/profile.hpp; runtime_tests), the
#                          driver's get() records every execution
#                          (graph/driver.cpp; e2e_tests on a real run), and
#                          the driver's test of a sample forgets its
#                          rotation (graph/runtime_profiling.hpp; runtime_tests)
#   unsaid sample          format_stats() leaves out the line saying a
#                          profile is sampled (runtime_tests), and cg-profile
#                          summary its own (e2e_tests, as for the window)
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

no_wait=ProfileRecording.AReadWhoseMessageWasWaitingReadsNoClockAndEndsWhereItBegan
two_reads=ProfileRecording.AnExecutionWhoseReadDidNotWaitReadsTheClockTwice
sampled_actor=ProfileRecording.ASampledActorRecordsEveryOperationOfOneExecutionInFour
sampled_stats=ProfileStats.ASampledProfilesCountsSayTheyAreOfTheRecordedExecutions
real_sample=Profile.OneExecutionInFourIsRecordedWholeAsProcessesAndAsThreads
said_sample=Profile.CgProfileSaysASampledProfileIsSampledAndScalesItsShares
sampling=ProfileSampling.SaysWhatADivisionSaysForEverySampleAndExecution

# One call a few tests: each names a log file after its tests.
break_as_built tests/unit/runtime_tests "$flows:$graph"
break_as_built tests/unit/runtime_tests "$no_wait:$two_reads"
break_as_built tests/unit/runtime_tests "$sampled_actor:$sampling"
break_as_built tests/unit/runtime_tests "$sampled_stats"
break_as_built tests/e2e/e2e_tests "$real_flows:$window"
break_as_built tests/e2e/e2e_tests "$real_sample"
break_as_built tests/e2e/e2e_tests "$said_sample"

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

# recording <case> <header> <old> <new> <test>...: profile_recording_test.cpp
# compiled against a copy of the public header <header> (under
# runtime/include) with old replaced by new, linked alone into runtime_tests.
recording() {
  break_copy --once "$repo/runtime/include/$2" "$work/$1/include/$2" "$3" "$4" &&
    break_compile "$repo/tests/unit/runtime/cg/profile_recording_test.cpp" "$work/$1.o" \
      tests/unit/runtime/cg/profile_recording_test.cpp "-I$work/$1/include" &&
    break_link tests/unit/runtime_tests "$work/$1/runtime_tests" "" "$work/$1.o" || exit 1
  local test
  for test in "${@:5}"; do
    fails "$1" runtime_tests "$test"
  done
}

recording clock-unwaited cg/detail/profile.hpp \
  'recorder.record(ProfiledOp::read, channel, execution, last, last, bytes);' \
  'record(ProfiledOp::read, channel, bytes);' "$no_wait" "$two_reads"
recording never-looks cg/ports.hpp 'waited_ = status == ChannelStatus::timeout;' \
  'waited_ = true;' "$two_reads"
recording every-execution cg/detail/profile.hpp \
  'recording = profile_records(execution, every);' 'recording = true;' "$sampled_actor"

# The driver's test without its rotation: wrong for an even sample.
break_copy --once "$repo/runtime/src/graph/runtime_profiling.hpp" \
  "$work/unrotated/include/graph/runtime_profiling.hpp" \
  'return std::rotr(execution * inverse_, shift_) <= limit_;' \
  'return execution * inverse_ <= limit_;' &&
  break_compile "$repo/tests/unit/runtime/graph/profile_sampling_test.cpp" "$work/unrotated.o" \
    tests/unit/runtime/graph/profile_sampling_test.cpp -iquote "$work/unrotated/include" &&
  break_link tests/unit/runtime_tests "$work/unrotated/runtime_tests" "" "$work/unrotated.o" ||
  exit 1
fails unrotated runtime_tests "$sampling"

break_relink tests/e2e/e2e_tests "$work/driver-every/e2e_tests" graph/driver.cpp \
  'const bool recording = s.profiling.records(seq);' \
  'const bool recording = s.profiling.profile.on();' || exit 1
fails driver-every e2e_tests "$real_sample"

break_relink tests/unit/runtime_tests "$work/stats-unsaid/runtime_tests" graph/profile_stats.cpp \
  'if (stats.profile_every > 1)' 'if (false)' || exit 1
fails stats-unsaid runtime_tests "$sampled_stats"

broken summary-unsaid compiler/tool/cg_profile.cpp \
  'std::cout << fmt::format("1 in {0} executions recorded: the shares below are the recorded "' \
  'std::cout << fmt::format("{0}: the shares below are the recorded "'
break_link compiler/tool/cg-profile "$work/summary-unsaid/cg-profile" \
  "all except compiler/tool/CMakeFiles/cg-profile.dir/cg_profile.cpp.o" \
  "$work/summary-unsaid.o" || exit 1
break_compile "$repo/tests/e2e/profile_test.cpp" "$work/summary-unsaid/profile_test.o" \
  tests/e2e/profile_test.cpp "-DCG_PROFILE_TOOL=\"$work/summary-unsaid/cg-profile\"" || exit 1
break_link tests/e2e/e2e_tests "$work/summary-unsaid/e2e_tests" \
  "all except tests/e2e/CMakeFiles/e2e_tests.dir/profile_test.cpp.o" \
  "$work/summary-unsaid/profile_test.o" || exit 1
fails summary-unsaid e2e_tests "$said_sample"

break_verdict "every check taken out of the profile made its test fail"
