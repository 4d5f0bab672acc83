#!/usr/bin/env bash
# break_restarts.sh [<build dir>] [<work dir>] - shows that the restart checks
# (restart_test.cpp) fail against a runtime whose restarts deliver a message to
# the wrong execution, or report a lost execution as something else.
#
# The cases:
#  - stale inputs: actor/resume.cpp without its drop of the lost executions'
#    inputs, linked into the actor executable. The new process then takes an
#    input of a lost execution as a later execution's, and the values of the
#    executions after the restart are not their own.
#  - lost executions untold: graph/restarts.cpp's lost_to_restart() blind to
#    the restart's error record, linked into the test program. A lost
#    execution then ends in a TaskError, not in ActorDiedError (restarted()).
# The Restarts.Killed... tests must fail against each, and pass against the
# build as it is. Processes mode only: threads mode has no restarts. Needs a
# plain build folder with e2e_restart_tests built, and nothing rebuilding it
# meanwhile (take the build lock). Nothing in the build folder changes.
set -uo pipefail
source "$(dirname "$0")/../support/break_support.sh"
break_setup "$@"

filter=--gtest_filter='Restarts.Killed*'
killed=(Restarts.KilledFirstActorOfAPairCostsOnlyTheExecutionsQueuedBehindIt
  Restarts.KilledMiddleActorOfAChainCostsOnlyTheExecutionsQueuedBehindIt)

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

break_verdict "restarts that let a stale input through or hide a lost execution fail the checks"
