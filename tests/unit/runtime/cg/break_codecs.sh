#!/usr/bin/env bash
# break_codecs.sh [<build dir>] [<work dir>] - shows that the checks of the
# standard containers' codecs (serialize_test.cpp, Codecs.*) fail against
# codecs broken as below.
#
# Each case writes cg/codecs.hpp broken one way under a folder of its own,
# compiles serialize_test.cpp as the build compiles it with that folder ahead
# of runtime/include, links it alone as runtime_tests links its objects
# (tests/support/break_support.sh), and passes only if the named tests fail
# (and pass against the headers as they are):
#   a variant index past the alternatives taken as 0   AVariantIndexPastItsAlternatives...
#   a set's duplicate element dropped silently          SetsRoundTripAndADuplicate...
#   a deque decoded back to front                       DequesRoundTripInOrder,
#                                                       NestedStandardTypesRoundTrip
#   a duration sent as a double                         ADurationGoesAsItsCount
#   a valueless variant sized as if it held its first   AValuelessVariantRefuses...
# Needs a build folder with a compile database (build/compile_commands.json)
# and runtime_tests' link step (its libraries built).
set -uo pipefail
source "$(dirname "$0")/../../../support/break_support.sh"
break_setup "$@"

test_source=tests/unit/runtime/cg/serialize_test.cpp

# serialize_test <case> [<flag>...]: serialize_test.cpp compiled with the
# flags and linked into $work/<case>/serialize_test.
serialize_test() {
  break_compile "$repo/$test_source" "$work/$1.o" "$test_source" "${@:2}" &&
    break_link tests/unit/runtime_tests "$work/$1/serialize_test" "" "$work/$1.o" || exit 1
}

serialize_test as-built
break_expect "as built: the codec tests pass" 0 "$work/as-built/serialize_test" \
  --gtest_filter='Codecs.*'

# breaks <case> <old> <new> <test that must fail>...: cg/codecs.hpp with old
# (there once) replaced by new, the test compiled against it and run.
breaks() {
  break_copy --once "$repo/runtime/include/cg/codecs.hpp" "$work/$1/include/cg/codecs.hpp" \
    "$2" "$3" || exit 1
  serialize_test "$1" "-I$work/$1/include"
  local tests
  tests=$(IFS=: && echo "${*:4}")
  break_expect "$1: ${*:4} fail" 1 "$work/$1/serialize_test" --gtest_filter="$tests"
  break_failed "$1: ${*:4} fail" "${@:4}"
}

breaks variant-index \
  'if (index >= sizeof...(T))' 'if (index >= sizeof...(T) && (index = 0) != 0)' \
  Codecs.AVariantIndexPastItsAlternativesIsADecodeError
breaks set-duplicates \
  'if (!s.insert(cg::decode<K>(d)).second)' 'if (!s.insert(cg::decode<K>(d)).second && false)' \
  Codecs.SetsRoundTripAndADuplicateElementIsADecodeError
breaks deque-order 'q.push_back(cg::decode<T>(d));' 'q.push_front(cg::decode<T>(d));' \
  Codecs.DequesRoundTripInOrder Codecs.NestedStandardTypesRoundTrip
breaks duration-as-double \
  'static void encode(Encoder& e, const Duration& v) { cg::encode(e, v.count()); }' \
  'static void encode(Encoder& e, const Duration& v) { cg::encode(e, double(v.count())); }' \
  Codecs.ADurationGoesAsItsCount
breaks valueless-variant \
  'if (v.valueless_by_exception())' 'if (v.valueless_by_exception() && false)' \
  Codecs.AValuelessVariantRefusesToBeSizedRatherThanSendNothing

break_verdict "every codec check fails against its broken codec"
