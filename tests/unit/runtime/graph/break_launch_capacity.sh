#!/usr/bin/env bash
# break_launch_capacity.sh [<build dir>] [<work dir>] - shows that the test of
# the launch check on executions in flight fails against a runtime that
# launches with more than the graph's schedule was checked with.
#
# The case compiles a broken copy of graph/launch_decisions.cpp and links
# runtime_tests from the build folder's objects with it ahead of the runtime
# library (tests/support/break_support.sh), then runs the test, which must
# fail: the launch it wants refused goes ahead. Against runtime_tests as built
# it must pass. (That cgc writes the capacity into the spec is shown by
# tests/unit/compiler/break_codegen_layout.sh, case "capacity left out".)
# Needs the build's runtime_tests built and nothing rebuilding it meanwhile
# (take the build lock). Nothing in the build folder changes.
set -uo pipefail
source "$(dirname "$0")/../../../support/break_support.sh"
break_setup "$@"

test=Launch.MoreExecutionsInFlightThanTheScheduleWasCheckedWithAreRefused
break_as_built tests/unit/runtime_tests "$test"

unchecked="unchecked: the launch beyond the spec's capacity goes ahead"
break_relink tests/unit/runtime_tests "$work/unchecked" graph/launch_decisions.cpp \
  'if (options.max_in_flight > spec.max_in_flight)' 'if (false)' || exit 1
break_expect "$unchecked" 1 "$work/unchecked" --gtest_filter="$test"
break_failed "$unchecked" "$test"
break_says "$unchecked" '(no LaunchError)'

break_verdict "a launch with more in flight than the schedule was checked with fails its test"
