#!/usr/bin/env bash
# break_support_test.sh - shows that break_support.sh's own checks can fail:
# each is given what a break script's case must not pass (a program that ran
# no test, a test that did not fail or did not crash, a guard that is not
# there or is there twice) and must count it; and what it must pass, and
# must not. Needs no build folder: the "test programs" are shell lines that
# print what GoogleTest prints. Run by hand: bash tests/support/break_support_test.sh
set -uo pipefail
source "$(dirname "$0")/break_support.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
wrong=0

# counts <n> <what> <command...>: the command adds n to break_failures.
counts() {
  local before=$break_failures
  "${@:3}" >"$work/out" 2>&1
  if ((break_failures - before != $1)); then
    echo "WRONG: $2: counted $((break_failures - before)), not $1:"
    sed 's/^/      /' "$work/out"
    wrong=$((wrong + 1))
  else
    echo "ok: $2"
  fi
}
# gtest <exit status> <line>...: a program printing the lines and exiting so.
gtest() { printf '%s\n' "${@:2}" >"$work/lines" && echo "cat '$work/lines'; exit $1"; }

counts 1 "a program that ran no test has not passed" \
  break_expect none 0 bash -c "$(gtest 0 '[==========] Running 0 tests from 0 test suites.')"
counts 0 "a program whose tests passed has passed" \
  break_expect some 0 bash -c "$(gtest 0 '[==========] Running 2 tests from 1 test suite.')"
counts 1 "a program that exits 0 has not failed" break_expect passed 1 true
break_timeout=1 counts 1 "a program stopped past break_timeout has not passed" \
  break_expect slow 0 sleep 5
break_timeout=1 counts 0 "a program stopped past break_timeout has failed" \
  break_expect slow 1 sleep 5

break_expect failed 1 bash -c "$(gtest 1 '[ RUN      ] Suite.NameLonger' \
  '[  FAILED  ] Suite.NameLonger (3 ms)' '[  PASSED  ] 0 tests.')" >/dev/null
counts 0 "the test that failed failed" break_failed failed Suite.NameLonger
counts 1 "a test whose name begins another's did not fail with it" break_failed failed Suite.Name
counts 1 "a test that is not run did not fail" break_failed failed Other.NameLonger
counts 0 "the log says what it says" break_says failed "FAILED  ] Suite.NameLonger"
counts 1 "the log does not say what it does not" break_says failed "Suite.Other"
counts 1 "a test that failed and let the run finish did not crash" \
  break_crashed failed Suite.NameLonger

break_expect crashed 1 bash -c "$(gtest 134 '[ RUN      ] Suite.First' '[       OK ] Suite.First (1 ms)' \
  '[ RUN      ] Suite.Second')" >/dev/null
counts 0 "a test that started and never ended crashed" break_crashed crashed Suite.Second
counts 1 "a test that ended did not crash" break_crashed crashed Suite.First
counts 1 "a test that never started did not crash" break_crashed crashed Suite.Third

printf 'guard();\nguard();\nother();\n' >"$work/source.cpp"
# copies <0: made, 1: refused> <what> <break_copy arguments...>
copies() {
  break_copy "${@:3}" >"$work/out" 2>&1
  local refused=$?
  if ((refused == 0 && $1 == 0 || refused != 0 && $1 == 1)); then
    echo "ok: $2"
  else
    echo "WRONG: $2:" && sed 's/^/      /' "$work/out"
    wrong=$((wrong + 1))
  fi
}
copies 1 "an old that is no longer there is refused" "$work/source.cpp" "$work/a.cpp" 'gone();' x
copies 1 "with --once an old there twice is refused" --once "$work/source.cpp" "$work/b.cpp" \
  'guard();' ''
copies 0 "with --once an old there once is replaced" --once "$work/source.cpp" "$work/c/c.cpp" \
  'other();' 'x();'
copies 0 "without --once an old there twice is replaced twice" "$work/source.cpp" "$work/d.cpp" \
  'guard();' 'x();'
if [[ $(cat "$work/c/c.cpp") == $'guard();\nguard();\nx();' &&
  $(cat "$work/d.cpp") == $'x();\nx();\nother();' ]]; then
  echo "ok: the copies hold what was asked"
else
  echo "WRONG: the copies hold something else" && wrong=$((wrong + 1))
fi

if ((wrong)); then
  echo "FAIL: $wrong of break_support.sh's checks went the wrong way"
  exit 1
fi
echo "PASS: every check of break_support.sh counts what it must and only that"
