#!/usr/bin/env bash
# break_arrival_book.sh [<build dir>] [<work dir>] - shows that
# arrival_book_test.cpp fails against bookkeeping that would let an
# overlapped transfer race its readers.
#
# Each case writes broken copies of tensor/arrival_book.hpp and .cpp under a
# folder of its own, compiles arrival_book.cpp and the test against them (the
# broken header found first), and links runtime_tests from the build folder's
# objects with both ahead of the runtime library, the test's own object left
# out (tests/support/break_support.sh); then runs the tests: the named test
# must fail. Against runtime_tests as built they must pass. The cases:
#   a use waits for all     take() hands a use every arrival, its own or not
#   a use waits for none    take() forgets what it was asked for
#   sends let go early      a sent tensor is released before its send is done
#   overlap waits on host   transfer_order(true) has the host wait
# Needs the build's runtime_tests built and nothing rebuilding it meanwhile
# (take the build lock). Nothing in the build folder changes.
set -uo pipefail
source "$(dirname "$0")/../../../support/break_support.sh"
break_setup "$@"

book=$repo/runtime/src/tensor/arrival_book
test_source=$repo/tests/unit/runtime/tensor/arrival_book_test.cpp
test_object=tests/unit/CMakeFiles/runtime_tests.dir/runtime/tensor/arrival_book_test.cpp.o
filter='TransferOrder.*:ArrivalBook.*:SendHolds.*:Arrivals.*'
break_as_built tests/unit/runtime_tests "$filter"

# breaks <case> <test that must fail> <file: hpp or cpp> <old> <new>: that
# file broken under $work/<case>/tensor/ (the other copied as it is), both
# objects compiled against it, runtime_tests linked over them and run.
breaks() {
  local case=$1 test=$2 broken=$3 old=$4 new=$5 as_is
  [[ $broken == hpp ]] && as_is=cpp || as_is=hpp
  mkdir -p "$work/$case/tensor"
  cp "$book.$as_is" "$work/$case/tensor/"
  break_copy "$book.$broken" "$work/$case/tensor/arrival_book.$broken" "$old" "$new" &&
    break_compile "$work/$case/tensor/arrival_book.cpp" "$work/$case/arrival_book.o" \
      tensor/arrival_book.cpp -iquote "$work/$case" &&
    break_compile "$test_source" "$work/$case/arrival_book_test.o" \
      tests/unit/runtime/tensor/arrival_book_test.cpp -iquote "$work/$case" &&
    break_link tests/unit/runtime_tests "$work/$case/runtime_tests" "all except $test_object" \
      "$work/$case/arrival_book_test.o" "$work/$case/arrival_book.o" || exit 1
  break_expect "$case: $test fails" 1 "$work/$case/runtime_tests" --gtest_filter="$filter"
  break_failed "$case: $test fails" "$test"
}

breaks all ArrivalBook.AUseWaitsForItsOwnTensorOnlyNotForOthersReadAhead cpp \
  '    if (p.storage == storage)
      due.push_back(p.arrival);' '    due.push_back(p.arrival);'
breaks none ArrivalBook.AStorageBookedTwiceIsWaitedForOnBothOldestFirst cpp \
  '  if (!due.empty())
    std::erase_if' '  due.clear();
  if (due.empty())
    std::erase_if'
breaks early SendHolds.ASentTensorIsKeptUntilItsOwnSendIsDoneWhateverOrderSendsFinishIn hpp \
  '      if (done(it->second)) {' '      if (done(it->second) || true) {'
breaks host TransferOrder.WithOverlapOnlyTheGpuWaitsAndTheTransferDoesNotWaitForEarlierCompute hpp \
  'TransferOrder{false, true, false}' 'TransferOrder{true, true, false}'

break_verdict "every broken piece of bookkeeping made its test fail"
