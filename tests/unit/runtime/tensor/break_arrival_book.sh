#!/usr/bin/env bash
# break_arrival_book.sh [<build dir>] - shows that arrival_book_test.cpp fails
# against bookkeeping that would let an overlapped transfer race its readers.
#
# Each case writes broken copies of tensor/arrival_book.hpp and .cpp, compiles
# arrival_book.cpp and the test with the build's own commands
# (compile_commands.json; the broken header found first), links runtime_tests
# over them with the build's own link command (ninja -t commands) into a
# folder of its own, and runs the tests: the named test must fail. Against
# runtime_tests as built they must pass. The cases:
#   a use waits for all     take() hands a use every arrival, its own or not
#   a use waits for none    take() forgets what it was asked for
#   sends let go early      a sent tensor is released before its send is done
#   overlap waits on host   transfer_order(true) has the host wait
# Needs the build's runtime_tests built and nothing rebuilding it meanwhile
# (take the build lock). Nothing in the build folder changes.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../../../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
header=$repo/runtime/src/tensor/arrival_book.hpp
source=$repo/runtime/src/tensor/arrival_book.cpp
test_source=$repo/tests/unit/runtime/tensor/arrival_book_test.cpp
filter='TransferOrder.*:ArrivalBook.*:SendHolds.*:Arrivals.*'
failures=0

# breaks <case> <file: hpp or cpp> <old> <new>: broken copies under
# $work/<case>/tensor/ (the other file copied as it is).
breaks() {
  mkdir -p "$work/$1/tensor"
  cp "$header" "$source" "$work/$1/tensor/"
  python3 - "$work/$1/tensor/arrival_book.$2" "$3" "$4" <<'PY'
import sys
path, old, new = sys.argv[1:4]
text = open(path).read()
if old not in text:
    sys.exit("break_arrival_book: '" + old + "' is no longer in " + path)
open(path, "w").write(text.replace(old, new))
PY
}

# compile <case> <source> <object>: with the build's command for <source>,
# the case's folder searched first for "tensor/arrival_book.hpp".
compile() {
  python3 - "$build" "$2" "$work/$1" "$3" <<'PY'
import json, os, shlex, subprocess, sys
build, source, folder, obj = sys.argv[1:5]
copy = os.path.join(folder, "tensor", os.path.basename(source))
for entry in json.load(open(os.path.join(build, "compile_commands.json"))):
    if entry["file"] != source:
        continue
    args = shlex.split(entry["command"])
    args[args.index("-o") + 1] = obj
    if os.path.exists(copy):
        args[args.index("-c") + 1] = copy
    args[1:1] = ["-iquote", folder, "-iquote", os.path.dirname(source)]
    sys.exit(subprocess.call(args, cwd=entry["directory"]))
sys.exit("break_arrival_book: no compile command for " + source)
PY
}

# build <case>: both objects compiled, runtime_tests linked over them.
build() {
  compile "$1" "$source" "$work/$1/arrival_book.o" || return 1
  compile "$1" "$test_source" "$work/$1/arrival_book_test.o" || return 1
  local command
  command=$(ninja -C "$build" -t commands tests/unit/runtime_tests | tail -1)
  command=${command#: && }
  command=${command%% && cd *}
  command=${command%% && :*}
  command=${command/ -o tests\/unit\/runtime_tests / -o $work/$1/runtime_tests }
  command=${command/ tests\/unit\/CMakeFiles\/runtime_tests.dir\/runtime\/tensor\/arrival_book_test.cpp.o / $work/$1/arrival_book_test.o }
  command=${command/ runtime\/libcg_runtime.a / $work/$1/arrival_book.o runtime/libcg_runtime.a }
  (cd "$build" && eval "$command")
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
  echo "ok: the arrival tests pass against runtime_tests as built"
else
  echo "FAIL: the arrival tests fail against runtime_tests as built:"
  tail -20 "$work/intact.log"
  exit 1
fi

breaks all cpp '    if (p.storage == storage)
      due.push_back(p.arrival);' '    due.push_back(p.arrival);' || exit 1
build all || exit 1
expect_failure all ArrivalBook.AUseWaitsForItsOwnTensorOnlyNotForOthersReadAhead

breaks none cpp '  if (!due.empty())
    std::erase_if' '  due.clear();
  if (due.empty())
    std::erase_if' || exit 1
build none || exit 1
expect_failure none ArrivalBook.AStorageBookedTwiceIsWaitedForOnBothOldestFirst

breaks early hpp '      if (done(it->second)) {' '      if (done(it->second) || true) {' || exit 1
build early || exit 1
expect_failure early SendHolds.ASentTensorIsKeptUntilItsOwnSendIsDoneWhateverOrderSendsFinishIn

breaks host hpp 'TransferOrder{false, true, false}' 'TransferOrder{true, true, false}' || exit 1
build host || exit 1
expect_failure host TransferOrder.WithOverlapOnlyTheGpuWaitsAndTheTransferDoesNotWaitForEarlierCompute

exit $((failures != 0))
