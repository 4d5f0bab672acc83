#!/usr/bin/env bash
# break_teardown_release.sh [<build dir>] [<work dir>] - shows that the
# teardown tests of driver_test.cpp fail against a runtime whose teardown
# keeps the graph's shared memory.
#
# Each case compiles a broken copy of graph/teardown.cpp and links
# runtime_tests from the build folder's objects with it ahead of the runtime
# library (tests/support/break_support.sh), then runs the teardown tests:
# each named test must fail, saying what the driver still maps, or crash.
# Against runtime_tests as built they must pass. The cases:
#   no release at teardown      the memory goes with the last reference only:
#                               three tests fail, naming the mapped memfds
#   release under a held tensor the segment unmapped under input_tensor()'s
#                               tensor: its test crashes runtime_tests
# Needs the build's runtime_tests built and nothing rebuilding it meanwhile
# (take the build lock). Nothing in the build folder changes.
set -uo pipefail
source "$(dirname "$0")/../../../support/break_support.sh"
break_setup "$@"

filter='Driver.*Teardown*:Driver.AfterTeardown*:Driver.AnInputTensor*:Driver.StatsAfterTeardown*'
break_as_built tests/unit/runtime_tests "$filter"

kept="kept: the teardown tests fail, naming what the driver still maps"
break_relink tests/unit/runtime_tests "$work/kept" graph/teardown.cpp \
  '  if (s.processes.left_running.empty())
    s.release_memory();' '' || exit 1
break_expect "$kept" 1 "$work/kept" --gtest_filter="$filter"
break_failed "$kept" Driver.TeardownEndsTheActorProcessAndReleasesAllTheGraphsSharedMemoryInTheDriver \
  Driver.ThreadsModeTeardownJoinsTheActorThreadAndReleasesAllTheGraphsSharedMemory \
  Driver.StatsAfterTeardownAreThoseOfTheProfileTeardownRead
break_says "$kept" '/memfd:cg.overflow (deleted)'
break_says "$kept" '/memfd:cg.cg_test_echo (deleted)'

held="held: the segment unmapped under a held tensor crashes its test"
break_relink tests/unit/runtime_tests "$work/held" graph/teardown.cpp \
  '  if (std::find(input_in_place.begin(), input_in_place.end(), true) != input_in_place.end())
    return;' '' || exit 1
break_expect "$held" 1 "$work/held" --gtest_filter="$filter"
break_crashed "$held" \
  Driver.AnInputTensorNoExecuteTookKeepsTheSegmentMappedAfterTeardownUntilTheGraphGoes

break_verdict "a teardown that keeps the graph's memory fails the teardown tests"
