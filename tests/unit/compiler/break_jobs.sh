#!/usr/bin/env bash
# break_jobs.sh [<build dir>] [<work dir>] - shows that the Jobs tests fail
# against background jobs that lose what cgc's artefacts rely on.
#
# Each case compiles a broken copy of compiler/support/Jobs.cpp and links
# compiler_tests from the build folder's objects with it ahead of
# libcg_support.a (tests/support/break_support.sh), then runs the tests of
# the case: they must fail. Against compiler_tests as built they must pass.
# The cases:
#   last error     wait() rethrows the highest-numbered job's error
#   no join        wait() returns without waiting for the workers
#   no thread      asked for no threads, no job runs
#   twice          a worker runs each job it takes twice
# Needs the build's compiler_tests built and nothing rebuilding it meanwhile
# (take the build lock). Nothing in the build folder changes.
set -uo pipefail
source "$(dirname "$0")/../../support/break_support.sh"
break_setup "$@"

break_as_built tests/unit/compiler_tests 'Jobs.*'

# breaks <case> <test> <old> <new>: Jobs.cpp with old (there once) replaced
# by new, compiler_tests linked over it, and <test> run: it must fail.
breaks() {
  break_relink tests/unit/compiler_tests "$work/$1" compiler/support/Jobs.cpp "$3" "$4" ||
    exit 1
  break_expect "$1: $2 fails" 1 "$work/$1" --gtest_filter="$2"
  break_failed "$1: $2 fails" "$2"
}

breaks last Jobs.WaitRethrowsTheLowestNumberedJobsErrorEvenWhenALaterOneFailsFirst \
  'for (const std::exception_ptr& error : errors_)' \
  'for (const std::exception_ptr& error : std::vector(errors_.rbegin(), errors_.rend()))'
breaks join Jobs.WaitReturnsOnlyAfterTheSlowestJobHasFinished \
  'void Jobs::wait() {
  for (std::thread& thread : threads_)
    if (thread.joinable())
      thread.join();' \
  'void Jobs::wait() {'
breaks thread Jobs.NoThreadsAskedForStillRunsEveryJob \
  'std::max(1u, threads)' 'threads'
breaks twice Jobs.EveryJobRunsExactlyOnceOnThreeThreads \
  'jobs_[job]();' 'jobs_[job](), jobs_[job]();'

break_verdict "each job lost, run twice, waited for too early or error picked by chance made a Jobs test fail"
