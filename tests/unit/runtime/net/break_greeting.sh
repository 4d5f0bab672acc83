#!/usr/bin/env bash
# break_greeting.sh [<build dir>] [<work dir>] - shows that greeting_test.cpp
# and segment_test.cpp fail against a greeting reader or a segment that lets
# a wrong launch geometry or communicator kind through.
#
# Each case links runtime_tests with a broken copy of net/greeting.cpp or
# actor/segment.cpp ahead of the library (tests/support/break_support.sh)
# and runs the tests: the named ones must fail. Against runtime_tests as
# built they must pass. The cases:
#   long       a greeting longer than its version's is read
#   version    a greeting of another version is read
#   magic      a greeting without the magic is read
#   big-endian integers are written and read most significant byte first
#   capacity   a greeting of max_in_flight 0 is read
#   kind       an actor reads a segment naming a communicator kind it does not know
#   no ids     NCCL communicators are written without an id per group
# Needs the build's runtime_tests built and nothing rebuilding it meanwhile
# (take the build lock). Nothing in the build folder changes.
set -uo pipefail
source "$(dirname "$0")/../../../support/break_support.sh"
break_setup "$@"

filter='--gtest_filter=Greeting.*:Segment.*'

break_expect "the greeting and segment tests pass against runtime_tests as built" 0 \
  "$build/tests/unit/runtime_tests" "$filter"

# breaks <case> <source> <old> <new> <test that must fail>...
breaks() {
  local case=$1 source=$2 old=$3 new=$4
  break_relink tests/unit/runtime_tests "$work/$case" "$source" "$old" "$new" || exit 1
  break_expect "$case" 1 "$work/$case" "$filter"
  break_failed "$case" "${@:5}"
}

breaks long net/greeting.cpp '  if (in.size() != kGreetingBytes) {' \
  '  if (in.size() < kGreetingBytes) {' Greeting.ShorterOrLongerThanItsVersionIsRefused
breaks version net/greeting.cpp 'version != kGreetingVersion) {' 'version == 0) {' \
  Greeting.OfAnotherVersionIsRefusedBeforeItsLength
breaks magic net/greeting.cpp 'std::memcmp(in.data(), kMagic, sizeof kMagic) != 0' 'false' \
  Greeting.WithAnotherMagicIsRefused
# The writer alone: the layout test names each byte where it must go.
breaks big-endian net/greeting.cpp \
  'static_cast<std::byte>((static_cast<std::uint64_t>(value) >> (8 * i)) & 0xff)' \
  'static_cast<std::byte>((static_cast<std::uint64_t>(value) >> (8 * (sizeof(T) - 1 - i))) & 0xff)' \
  Greeting.IsLittleEndianIntegersAtTheLayoutsOffsets
breaks capacity net/greeting.cpp 'g.geometry.max_in_flight == 0 || ' '' \
  Greeting.WithAGeometryOrSilenceOutOfRangeIsRefused
breaks kind actor/segment.cpp '  if (header.communicator != CommunicatorKind::host &&
      header.communicator != CommunicatorKind::nccl)' '  if (false)' \
  Segment.AnActorRefusesAnUnknownCommunicatorKindOrNcclGroupsWithoutIds
breaks no-ids actor/segment.cpp '  if (contents.communicator == CommunicatorKind::nccl &&
      contents.nccl_ids.size() != spec.communicators.size())' '  if (false)' \
  Segment.NcclCommunicatorsWithoutAnIdPerGroupAreNotWritten

break_verdict "every greeting or segment let through made its test fail"
