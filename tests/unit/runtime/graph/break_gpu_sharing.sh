#!/usr/bin/env bash
# break_gpu_sharing.sh [<build dir>] - shows that the tests of how actor
# processes share a GPU (launch_test.cpp) fail against a runtime that decides
# it wrongly.
#
# Each case compiles a broken copy of graph/launch_decisions.cpp with the
# build's own command (compile_commands.json), links runtime_tests over it
# with the build's own link command (ninja -t commands) into a folder of its
# own, and runs the Launch tests: each named test must fail. Against
# runtime_tests as built they must pass. The cases:
#   no refusal        two ranks on one GPU pass without the option
#   one identity      every rank sharing a GPU gets the host's name alone
#   threads allowed   ranks in one process are not refused
#   no variable       CG_NCCL_SHARE_GPUS is not read
#   notice under MPS  the notice is said where MPS runs
# Needs the build's runtime_tests built and nothing rebuilding it meanwhile
# (take the build lock). Nothing in the build folder changes.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../../../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source=$repo/runtime/src/graph/launch_decisions.cpp
filter='Launch.*Gpu*:Launch.*Ranks*:Launch.*Mps*:Launch.TheSharingOption*'
failures=0

# breaks <case> <old> <new>: a copy of launch_decisions.cpp under $work/<case> with old replaced.
breaks() {
  mkdir -p "$work/$1"
  python3 - "$source" "$work/$1/launch_decisions.cpp" "$2" "$3" <<'PY'
import sys
path, copy, old, new = sys.argv[1:5]
text = open(path).read()
if old not in text:
    sys.exit("break_gpu_sharing: '" + old + "' is no longer in " + path)
open(copy, "w").write(text.replace(old, new))
PY
}

# build <case>: the copy compiled with the build's command for
# launch_decisions.cpp, runtime_tests linked over it.
build() {
  python3 - "$build" "$source" "$work/$1/launch_decisions.cpp" "$work/$1/launch_decisions.o" <<'PY' || return 1
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
sys.exit("break_gpu_sharing: no compile command for " + source)
PY
  local command
  command=$(ninja -C "$build" -t commands tests/unit/runtime_tests | tail -1)
  command=${command#: && }
  command=${command%% && cd *}
  command=${command%% && :*}
  command=${command/ -o tests\/unit\/runtime_tests / -o $work/$1/runtime_tests }
  command=${command/ runtime\/libcg_runtime.a / $work/$1/launch_decisions.o runtime/libcg_runtime.a }
  # Test files added since the build last linked runtime_tests have no
  # object yet: the Launch tests need none of them.
  local word kept=()
  for word in $command; do
    [[ $word == tests/unit/CMakeFiles/*.o && ! -f $build/$word ]] || kept+=("$word")
  done
  (cd "$build" && eval "${kept[*]}")
}

# expect_failure <case> <test that must fail>
expect_failure() {
  local case=$1 test=$2
  "$work/$case/runtime_tests" --gtest_filter="$filter" >"$work/$case.log" 2>&1
  local status=$?
  if ((status != 0)) && grep -q "^\[  FAILED  \] $test\b" "$work/$case.log"; then
    echo "ok: $case: $test fails"
  else
    echo "FAIL: $case: runtime_tests exited $status without $test failing:"
    tail -20 "$work/$case.log"
    failures=$((failures + 1))
  fi
}

if "$build/tests/unit/runtime_tests" --gtest_filter="$filter" >"$work/intact.log" 2>&1; then
  echo "ok: the Launch tests pass against runtime_tests as built"
else
  echo "FAIL: the Launch tests fail against runtime_tests as built:"
  tail -20 "$work/intact.log"
  exit 1
fi

breaks refusal '        if (!share)
          throw' '        if (false)
          throw' || exit 1
build refusal || exit 1
expect_failure refusal Launch.TwoRanksOfAGroupOnOneGpuAreRefusedNamingBothTheGpuAndTheOption

breaks identity 'host_name + "-cg-" +' 'host_name + "" +' || exit 1
build identity || exit 1
expect_failure identity Launch.RanksSharingAGpuGetHostIdentitiesOfTheirOwnAndTheOthersKeepTheHosts

breaks threads 'if (pa.id == actor_process(placement, mode, options, b).id)' 'if (false)' || exit 1
build threads || exit 1
expect_failure threads Launch.RanksSharingAGpuInOneProcessAreRefusedEvenWithTheOption

breaks variable 'const char* value = std::getenv(nccl_share_gpus_variable);' \
  'const char* value = nullptr;' || exit 1
build variable || exit 1
expect_failure variable Launch.TheSharingOptionIsOnByItsFieldOrTheEnvironmentAndOffByDefault

breaks mps '  if (mps)
    return "";' '  if (false && mps)
    return "";' || exit 1
build mps || exit 1
expect_failure mps Launch.ActorProcessesSharingAGpuWithoutMpsAreToldTheCostAndTheWaysOut

((failures == 0)) && echo "PASS: every broken decision made its test fail"
exit $((failures != 0))
