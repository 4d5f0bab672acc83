#!/usr/bin/env bash
# break_frame_tags.sh [<build dir>] [<work dir>] - shows that the checks of
# "every frame between hosts is authenticated" fail against a runtime that
# does not authenticate them.
#
# Each case compiles a copy of one runtime source broken as below, links the
# tests' objects from the build folder with it ahead of the runtime library
# (whose own copy it then replaces), and passes only if the tests fail (and
# pass against the runtime as built):
#   frame.cpp   a tag that does not match is let through   frame_auth_test,
#                                                               ucx_channel_test's
#                                                               keyed frames,
#                                                               multihost_test's
#                                                               MenInTheMiddle
#   frame_auth.cpp  keys that ignore the handshake's nonces     frame_auth_test
#   frame_auth.cpp  one key for both directions                 frame_auth_test
#   frame_auth.cpp  tags compared as equal whatever they say    ucx_channel_test's
#                                                               rewritten offer
# Needs a build folder with runtime_tests and e2e_multihost_tests built.
set -uo pipefail
source "$(dirname "$0")/../support/break_support.sh"
break_setup "$@"

unit_filter='--gtest_filter=FrameTags.*:ConnectionKeys.*:UcxChannel.WithAKey*:UcxChannel.AnOfferRewritten*'
e2e_filter='--gtest_filter=MenInTheMiddle.*'
src=$repo/runtime/src/net

unit_objects="tests/unit/CMakeFiles/runtime_tests.dir/runtime/net/frame_auth_test.cpp.o
tests/unit/CMakeFiles/runtime_tests.dir/runtime/net/ucx_channel_test.cpp.o"
# link_unit <output> [<object>...]: runtime_tests of frame_auth_test and (where
# UCX is built) ucx_channel_test alone.
link_unit() { break_link tests/unit/runtime_tests "$1" "$unit_objects" "${@:2}"; }
# relink <target> <output> [<object>...]: the whole target.
relink() { break_link "$1" "$2" all "${@:3}"; }
expect() { break_expect "$@"; }
# broken <runtime source in net/> <copy> <old> <new>: the copy, compiled to <copy>.o.
broken() {
  break_copy "$src/$1" "$work/$2.cpp" "$3" "$4" &&
    break_compile "$work/$2.cpp" "$work/$2.o" "net/$1"
}

link_unit "$work/unit_intact" || exit 1
expect "frame_auth_test passes against the runtime as built" 0 "$work/unit_intact" "$unit_filter"
relink tests/e2e/e2e_multihost_tests "$work/e2e_intact" || exit 1
expect "MenInTheMiddle passes against the runtime as built" 0 "$work/e2e_intact" "$e2e_filter"

broken frame.cpp frame 'if (tags_equal(computed, carried))' \
  'if (computed != nullptr || tags_equal(computed, carried))' ||
  exit 1
link_unit "$work/unit_unchecked" "$work/frame.o" || exit 1
expect "frame_auth_test fails where a tag that does not match is let through" 1 \
  "$work/unit_unchecked" "$unit_filter"
relink tests/e2e/e2e_multihost_tests "$work/e2e_unchecked" "$work/frame.o" || exit 1
expect "MenInTheMiddle fails where a tag that does not match is let through" 1 \
  "$work/e2e_unchecked" "$e2e_filter"

broken frame_auth.cpp frame_auth_fixed \
  'const std::string context(handshake);' 'const std::string context = "";' || exit 1
link_unit "$work/unit_fixed" "$work/frame_auth_fixed.o" || exit 1
expect "frame_auth_test fails where the keys ignore the handshake's nonces" 1 \
  "$work/unit_fixed" "$unit_filter"

broken frame_auth.cpp frame_auth_one '"cg-frames reader->writer "' \
  '"cg-frames writer->reader "' ||
  exit 1
link_unit "$work/unit_one" "$work/frame_auth_one.o" || exit 1
expect "frame_auth_test fails where both directions share one key" 1 "$work/unit_one" \
  "$unit_filter"

broken frame_auth.cpp frame_auth_equal \
  'return sodium_memcmp(a, b, frame_tag_bytes) == 0;' 'return a != nullptr || b != nullptr;' ||
  exit 1
link_unit "$work/unit_equal" "$work/frame_auth_equal.o" || exit 1
expect "frame_auth_test and ucx_channel_test fail where any two tags compare equal" 1 \
  "$work/unit_equal" "$unit_filter"

break_verdict "every broken piece made its tests fail"
