#!/usr/bin/env bash
# break_rendezvous_lines.sh [<build dir>] [<work dir>] - shows that the checks of
# "every rendezvous line after HELLO is authenticated" fail against a runtime
# that does not authenticate them.
#
# Each case compiles a copy of net/rendezvous_wire.cpp broken as below, links
# the tests' objects from the build folder with it ahead of the runtime library
# (whose own copy it then replaces), and passes only if the tests fail (and
# pass against the runtime as built):
#   a line whose tag does not match is taken   rendezvous_lines_test, multihost_test's
#                                              rewritten PUBLISH
#   keys that ignore the handshake's nonces    rendezvous_lines_test (a line from
#                                              another connection)
#   one key for both directions                rendezvous_lines_test (a reflected line)
#   no count of lines: every tag at place 0    rendezvous_lines_test (a replayed line)
# Needs a build folder with runtime_tests and e2e_multihost_tests built.
set -uo pipefail
source "$(dirname "$0")/../support/break_support.sh"
break_setup "$@"

unit_filter='--gtest_filter=RendezvousLines.*:RendezvousTags.*'
e2e_filter='--gtest_filter=MenInTheMiddle.*SetUpLine*:MenInTheMiddle.APublishRewritten*'
wire=$repo/runtime/src/net/rendezvous_wire.cpp

unit_object=tests/unit/CMakeFiles/runtime_tests.dir/runtime/net/rendezvous_lines_test.cpp.o
# link_unit <output> [<object>...]: runtime_tests of rendezvous_lines_test alone.
link_unit() { break_link tests/unit/runtime_tests "$1" "$unit_object" "${@:2}"; }
# relink <target> <output> [<object>...]: the whole target.
relink() { break_link "$1" "$2" all "${@:3}"; }
expect() { break_expect "$@"; }

link_unit "$work/unit_intact" || exit 1
expect "rendezvous_lines_test passes against the runtime as built" 0 "$work/unit_intact" \
  "$unit_filter"
relink tests/e2e/e2e_multihost_tests "$work/e2e_intact" || exit 1
expect "the set-up relay tests pass against the runtime as built" 0 "$work/e2e_intact" \
  "$e2e_filter"

# broken <name> <old> <new>: rendezvous_wire.cpp with old replaced by new, compiled.
broken() {
  break_copy "$wire" "$work/wire_$1.cpp" "$2" "$3" &&
    break_compile "$work/wire_$1.cpp" "$work/wire_$1.o" net/rendezvous_wire.cpp
}

broken unchecked 'if (equal_if_zero != std::byte{0}) {' 'if (equal_if_zero == std::byte{9}) {' ||
  exit 1
link_unit "$work/unit_unchecked" "$work/wire_unchecked.o" || exit 1
expect "rendezvous_lines_test fails where a line whose tag does not match is taken" 1 \
  "$work/unit_unchecked" "$unit_filter"
relink tests/e2e/e2e_multihost_tests "$work/e2e_unchecked" "$work/wire_unchecked.o" || exit 1
expect "the rewritten PUBLISH test fails where a line whose tag does not match is taken" 1 \
  "$work/e2e_unchecked" "$e2e_filter"

broken fixed '" + context))' '" + std::string(graph)))' || exit 1
link_unit "$work/unit_fixed" "$work/wire_fixed.o" || exit 1
expect "rendezvous_lines_test fails where the keys ignore the handshake's nonces" 1 \
  "$work/unit_fixed" "$unit_filter"

broken one '"cg-rendezvous server->client "' '"cg-rendezvous client->server "' || exit 1
link_unit "$work/unit_one" "$work/wire_one.o" || exit 1
expect "rendezvous_lines_test fails where both directions share one key" 1 "$work/unit_one" \
  "$unit_filter"

broken uncounted 'next_++' 'next_' || exit 1
link_unit "$work/unit_uncounted" "$work/wire_uncounted.o" || exit 1
expect "rendezvous_lines_test fails where lines are not counted" 1 "$work/unit_uncounted" \
  "$unit_filter"

break_verdict "every broken piece made its tests fail"
