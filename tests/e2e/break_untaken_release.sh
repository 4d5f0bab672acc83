#!/usr/bin/env bash
# break_untaken_release.sh [<build dir>] [<work dir>] - shows that the check
# "teardown() lets go of what the graph holds" fails against a driver whose
# teardown keeps a result collected for a ref that never took it.
#
# The case: graph/teardown.cpp's release_memory() without its swap of the
# untaken results, as it was. MemoryPeak.Teardown... (memory_peak_test.cpp),
# linked from the build folder's object with that copy ahead of the runtime
# library, must then fail in both modes: the untaken 200 MiB value stays
# resident. Against the runtime as built it must pass.
# Needs a plain (not sanitized: the figures are checked only there) build
# folder with e2e_tests built, and nothing rebuilding it meanwhile (take the
# build lock). Nothing in the build folder changes. About a minute.
set -uo pipefail
source "$(dirname "$0")/../support/break_support.sh"
break_setup "$@"

test_object=tests/e2e/CMakeFiles/e2e_tests.dir/memory_peak_test.cpp.o
filter=--gtest_filter='MemoryPeak.TeardownReleases*'

break_link tests/e2e/e2e_tests "$work/intact" "$test_object" || exit 1
break_copy "$repo/runtime/src/graph/teardown.cpp" "$work/keeps_untaken.cpp" \
  'untaken.swap(results' '(void)(results' || exit 1 # the untaken results stay, as they did
break_compile "$work/keeps_untaken.cpp" "$work/keeps_untaken.o" graph/teardown.cpp || exit 1
break_link tests/e2e/e2e_tests "$work/keeps_untaken" "$test_object" "$work/keeps_untaken.o" ||
  exit 1

for mode in processes threads; do
  break_expect "teardown releases an untaken result ($mode)" 0 env CG_MODE=$mode \
    "$work/intact" "$filter"
  break_expect "a teardown that keeps untaken results fails the check ($mode)" 1 \
    env CG_MODE=$mode "$work/keeps_untaken" "$filter"
  break_says "a teardown that keeps untaken results fails the check ($mode)" \
    "more resident than before launch"
done

break_verdict "a teardown that keeps untaken results fails the teardown check in both modes"
