#!/usr/bin/env bash
# break_restarts.sh [<build dir>] [<work dir>] - shows that the restart checks
# (restart_test.cpp, restart_profile_test.cpp, restart_leak_test.cpp and the
# soak's rounds with restarts, soak_test.cpp) fail
# against a runtime whose restarts deliver a message to the wrong execution,
# report a lost execution as something else, miscount or mismark restarts,
# or leak with each one.
#
# The cases:
#  - stale inputs: actor/resume.cpp without its drop of the lost executions'
#    inputs, linked into the actor executable. The new process then takes an
#    input of a lost execution as a later execution's, and the values of the
#    executions after the restart are not their own.
#  - lost executions untold: graph/restarts.cpp's lost_to_restart() blind to
#    the restart's error record, linked into the test program. A lost
#    execution then ends in a TaskError, not in ActorDiedError (restarted()).
#  - restarts uncounted: graph/driver_profile.cpp's stats() without the
#    restarts, and graph/profile_stats.cpp's format_stats() printing only an
#    actor restarted more than once.
#  - lost executions mismarked: graph/restarts.cpp counting every execution
#    before the restart lost, in the trace's mark.
#  - executions renumbered: actor/actor.cpp's restarted process numbering
#    its profile's executions from 0 (as before it took the first one it runs).
#  - summary miscounted: cg-profile printing the restart's count where the
#    executions lost go.
#  - a descriptor leaked per restart: graph/restarts.cpp duplicating stderr
#    at each restart and never closing it.
#  - lost executions untold, in the soak: the same driver linked into
#    e2e_tests, against Soak.KilledActorsComeBackWithRestartsOnAndNothingIsLeft
#    (a lost execution is then a TaskError the soak did not provoke).
#  - Python's GraphStats without restarts: cg/python.hpp's binding without
#    the field, in e2e_graphs' module compiled again (about a minute), against
#    tests/python/test_graphs.py's restart test.
# Each case's tests must fail against it, and pass against the build as it
# is. Processes mode only: threads mode has no restarts. Needs a plain build
# folder with e2e_restart_tests, e2e_tests, the e2e_graphs Python module and
# cg-profile built, and nothing rebuilding it meanwhile (take the build
# lock). Nothing in the build folder changes. About five minutes.
set -uo pipefail
break_timeout=600 # the Python case compiles a module
source "$(dirname "$0")/../support/break_support.sh"
break_setup "$@"

filter=--gtest_filter='Restarts.Killed*'
killed=(Restarts.KilledFirstActorOfAPairCostsOnlyTheExecutionsQueuedBehindIt
  Restarts.KilledMiddleActorOfAChainCostsOnlyTheExecutionsQueuedBehindIt
  Restarts.KilledReaderOfAFannedOutValueCostsOnlyTheExecutionsQueuedBehindIt)
tests=$build/tests/e2e/e2e_restart_tests
stats=RestartProfiles.StatsCountEachRestartOfAnActorAndTheTableSaysHowMany
marked=RestartProfiles.TheTraceMarksARestartOnTheActorsTrackWithTheExecutionsItLost
numbered=RestartProfiles.ARestartedActorsOperationsCarryTheExecutionsItRanNotCountsFromZero
leaks=RestartLeaks.AHundredRestartsOfOneActorLeaveTheDriversDescriptorsThreadsMemoryAsTheFirst

break_relink tests/e2e/e2e_restart_graphs_actors "$work/stale_inputs/actors" actor/resume.cpp \
  'if (readers[i].consumed() != execution)' 'if (true)' || exit 1
break_relink tests/e2e/e2e_restart_tests "$work/untold/e2e_restart_tests" graph/restarts.cpp \
  'if (is_restart_record(record))' 'if (false)' || exit 1

break_expect "restarts keep every execution's own value" 0 env CG_MODE=processes \
  "$build/tests/e2e/e2e_restart_tests" "$filter"
break_expect "a restart that lets stale inputs through fails the checks" 1 env CG_MODE=processes \
  CG_TEST_ACTOR_HOST="$work/stale_inputs/actors" "$build/tests/e2e/e2e_restart_tests" "$filter"
break_failed "a restart that lets stale inputs through fails the checks" "${killed[@]}"
break_says "a restart that lets stale inputs through fails the checks" "*o.value"
break_expect "a driver that does not tell lost executions fails the checks" 1 \
  env CG_MODE=processes "$work/untold/e2e_restart_tests" "$filter"
break_failed "a driver that does not tell lost executions fails the checks" "${killed[@]}"
break_says "a driver that does not tell lost executions fails the checks" \
  "failed: cg::ActorDiedError: actor"

break_relink tests/e2e/e2e_restart_tests "$work/uncounted/e2e_restart_tests" \
  graph/driver_profile.cpp 'stats.restarts = restarts();' 'stats.restarts = {};' || exit 1
break_relink tests/e2e/e2e_restart_tests "$work/untabled/e2e_restart_tests" \
  graph/profile_stats.cpp 'if (count != 0)' 'if (count > 1)' || exit 1
break_relink tests/e2e/e2e_restart_tests "$work/mismarked/e2e_restart_tests" graph/restarts.cpp \
  'first_unfinished(spec, actor, from, [this](std::uint32_t c) { return channels.at(c); })' \
  'std::uint64_t{0}' || exit 1
break_relink tests/e2e/e2e_restart_graphs_actors "$work/renumbered/actors" actor/actor.cpp \
  'profile_.execution = *start;' 'profile_.execution = 0;' || exit 1
# cg-profile's objects are its own, not a library's: its copy stands in for one.
break_copy --once "$repo/compiler/tool/cg_profile.cpp" "$work/miscounted/cg_profile.cpp" \
  'restart.lostExecutions, restart.lost);' 'restart.lostExecutions, restart.count);' &&
  break_compile "$work/miscounted/cg_profile.cpp" "$work/miscounted/cg_profile.o" \
    compiler/tool/cg_profile.cpp &&
  break_link compiler/tool/cg-profile "$work/miscounted/cg-profile" \
    "all except compiler/tool/CMakeFiles/cg-profile.dir/cg_profile.cpp.o" \
    "$work/miscounted/cg_profile.o" || exit 1
break_relink tests/e2e/e2e_restart_tests "$work/leaky/e2e_restart_tests" graph/restarts.cpp \
  '#include <thread>' $'#include <thread>\n#include <unistd.h>' \
  'say_last_words(*records[actor], "");' 'say_last_words(*records[actor], ""); (void)::dup(2);' ||
  exit 1

break_expect "the new checks pass against the build as it is" 0 env CG_MODE=processes "$tests" \
  --gtest_filter="RestartProfiles.*:RestartLeaks.*"
break_expect "stats() without the restarts fails the checks" 1 env CG_MODE=processes \
  "$work/uncounted/e2e_restart_tests" --gtest_filter="$stats"
break_failed "stats() without the restarts fails the checks" "$stats"
break_says "stats() without the restarts fails the checks" "once.restarts"
break_expect "a table without one restart fails the checks" 1 env CG_MODE=processes \
  "$work/untabled/e2e_restart_tests" --gtest_filter="$stats"
break_failed "a table without one restart fails the checks" "$stats"
break_says "a table without one restart fails the checks" "restarted 1 time"
break_expect "a mark with the wrong executions lost fails the checks" 1 env CG_MODE=processes \
  "$work/mismarked/e2e_restart_tests" --gtest_filter="$marked"
break_failed "a mark with the wrong executions lost fails the checks" "$marked"
break_says "a mark with the wrong executions lost fails the checks" '"lost_executions":"0-'
break_expect "a profile numbered from 0 after the restart fails the checks" 1 \
  env CG_MODE=processes CG_TEST_ACTOR_HOST="$work/renumbered/actors" "$tests" \
  --gtest_filter="$numbered"
break_failed "a profile numbered from 0 after the restart fails the checks" "$numbered"
break_expect "a summary with the wrong count fails the checks" 1 env CG_MODE=processes \
  CG_TEST_PROFILE_TOOL="$work/miscounted/cg-profile" "$tests" --gtest_filter="$marked"
break_failed "a summary with the wrong count fails the checks" "$marked"
break_says "a summary with the wrong count fails the checks" "executions lost: 500-507 (1)"
break_expect "a descriptor leaked per restart fails the checks" 1 env CG_MODE=processes \
  "$work/leaky/e2e_restart_tests" --gtest_filter="$leaks"
break_failed "a descriptor leaked per restart fails the checks" "$leaks"
break_says "a descriptor leaked per restart fails the checks" "descriptors of the driver"

soak=Soak.KilledActorsComeBackWithRestartsOnAndNothingIsLeft
break_relink tests/e2e/e2e_tests "$work/untold_soak/e2e_tests" graph/restarts.cpp \
  'if (is_restart_record(record))' 'if (false)' || exit 1
break_expect "the soak with restarts passes as built" 0 env CG_MODE=processes \
  "$build/tests/e2e/e2e_tests" --gtest_filter="$soak"
break_expect "a driver that does not tell lost executions fails the soak" 1 env CG_MODE=processes \
  "$work/untold_soak/e2e_tests" --gtest_filter="$soak"
break_failed "a driver that does not tell lost executions fails the soak" "$soak"

break_copy --once "$repo/runtime/include/cg/python.hpp" "$work/unbound/include/cg/python.hpp" \
  '.def_readonly("restarts", &GraphStats::restarts)' '' &&
  break_module e2e_graphs "$work/unbound" "-I$work/unbound/include" || exit 1
python=$(sed -n 's/^Python_EXECUTABLE:FILEPATH=//p' "$build/CMakeCache.txt")
restart_test=test_graphs.py::test_a_killed_actor_with_restarts_left_comes_back_and_the_graph_goes_on
pytest=(env -C "$repo/tests/python" CG_MODE=processes "$python" -m pytest -q -p no:cacheprovider)
break_expect "Python's stats with restarts pass as built" 0 \
  env PYTHONPATH="$build/tests/e2e:$build/tests/python" "${pytest[@]}" "$restart_test"
break_expect "Python's stats without restarts fail the check" 1 \
  env PYTHONPATH="$work/unbound:$build/tests/e2e:$build/tests/python" "${pytest[@]}" "$restart_test"
break_says "Python's stats without restarts fail the check" \
  "object has no attribute 'restarts'"

break_verdict "restarts that let a stale input through, hide a lost execution, miscount or mismark \
restarts or leak fail the checks"
