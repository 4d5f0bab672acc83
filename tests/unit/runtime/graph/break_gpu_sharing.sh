#!/usr/bin/env bash
# break_gpu_sharing.sh [<build dir>] [<work dir>] - shows that the tests of
# how actor processes share a GPU (launch_test.cpp) fail against a runtime
# that decides it wrongly.
#
# Each case compiles a broken copy of graph/launch_decisions.cpp and links
# runtime_tests from the build folder's objects with it ahead of the runtime
# library (tests/support/break_support.sh), then runs the Launch tests: the
# named test must fail. Against runtime_tests as built they must pass. The
# cases:
#   no refusal        two ranks on one GPU pass without the option
#   one identity      every rank sharing a GPU gets the host's name alone
#   threads allowed   ranks in one process are not refused
#   no variable       CG_NCCL_SHARE_GPUS is not read
#   notice under MPS  the notice is said where MPS runs
# Needs the build's runtime_tests built and nothing rebuilding it meanwhile
# (take the build lock). Nothing in the build folder changes.
set -uo pipefail
source "$(dirname "$0")/../../../support/break_support.sh"
break_setup "$@"

filter='Launch.*Gpu*:Launch.*Ranks*:Launch.*Mps*:Launch.TheSharingOption*'
break_as_built tests/unit/runtime_tests "$filter"

# breaks <case> <test that must fail> <old> <new>: launch_decisions.cpp with
# old replaced by new, runtime_tests linked over it and run.
breaks() {
  break_relink tests/unit/runtime_tests "$work/$1" graph/launch_decisions.cpp "$3" "$4" || exit 1
  break_expect "$1: $2 fails" 1 "$work/$1" --gtest_filter="$filter"
  break_failed "$1: $2 fails" "$2"
}

breaks refusal Launch.TwoRanksOfAGroupOnOneGpuAreRefusedNamingBothTheGpuAndTheOption \
  '        if (!share)
          throw' '        if (false)
          throw'
breaks identity Launch.RanksSharingAGpuGetHostIdentitiesOfTheirOwnAndTheOthersKeepTheHosts \
  'host_name + "-cg-" +' 'host_name + "" +'
breaks threads Launch.RanksSharingAGpuInOneProcessAreRefusedEvenWithTheOption \
  'if (pa.id == actor_process(placement, mode, options, b).id)' 'if (false)'
breaks variable Launch.TheSharingOptionIsOnByItsFieldOrTheEnvironmentAndOffByDefault \
  'const char* value = std::getenv(nccl_share_gpus_variable);' 'const char* value = nullptr;'
breaks mps Launch.ActorProcessesSharingAGpuWithoutMpsAreToldTheCostAndTheWaysOut \
  '  if (mps)
    return "";' '  if (false && mps)
    return "";'

break_verdict "every broken decision made its test fail"
