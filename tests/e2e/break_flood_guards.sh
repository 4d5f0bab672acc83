#!/usr/bin/env bash
# break_flood_guards.sh [<build dir>] [<work dir>] - shows that the flood
# tests (tests/unit/runtime/net/accept_guard_test.cpp, tests/e2e/flood_test.cpp)
# fail against a runtime without the guard each of them checks.
#
# Each case compiles a copy of one runtime source with one guard taken out,
# links the flood tests' objects from the build folder with that copy ahead of
# the runtime library (so the library's own copy is left out), and passes
# only if the named tests then fail; against the runtime as built they must
# pass. The cases:
#   accept_guard.cpp  accept() never pauses when descriptors run out
#                     -> the listener and the rendezvous spin (EMFILE tests)
#   accept_guard.cpp  every rejection said on a line of its own
#                     -> a hundred thousand lines (RejectionLog, Flood)
#   tcp_setup.cpp     the newcomer dropped past 64 handshakes, as it was
#                     -> the writer kept out by 64 silent connections
#   launch_remote.cpp the driver's listener never interrupted
#                     -> a launch waits out start_timeout for a process that gave up
#   socket.cpp        InterruptScope without effect
#                     -> an interrupted set-up's connections wait out their deadline
# Needs a build folder with runtime_tests and e2e_flood_tests built, and
# nothing rebuilding them meanwhile (take the build lock). Nothing in the
# build folder changes. Takes a few minutes.
set -uo pipefail
source "$(dirname "$0")/../support/break_support.sh"
break_setup "$@"
src=$repo/runtime/src

unit_object=tests/unit/CMakeFiles/runtime_tests.dir/runtime/net/accept_guard_test.cpp.o
e2e_object=tests/e2e/CMakeFiles/e2e_flood_tests.dir/flood_test.cpp.o
unit() { break_link tests/unit/runtime_tests "$1" "$unit_object" "${@:2}"; }
e2e() { break_link tests/e2e/e2e_flood_tests "$1" "$e2e_object" "${@:2}"; }
# expect <what> <0: passes, 1: fails> <program> <gtest filter>
expect() { break_expect "$1" "$2" "$3" --gtest_filter="$4"; }

unit "$work/unit_intact" || exit 1
e2e "$work/e2e_intact" || exit 1
expect "the flood unit tests pass against the runtime as built" 0 "$work/unit_intact" '*Flood.*:Shedding.*:RejectionLog.*:AcceptBackoff.*'
expect "the flood e2e tests pass against the runtime as built" 0 "$work/e2e_intact" 'Flood.*'

break_copy "$src/net/accept_guard.cpp" "$work/no_pause.cpp" 'resume_at_ = GuardClock::now() + pause_;' \
  'resume_at_ = GuardClock::now();' || exit 1
break_compile "$work/no_pause.cpp" "$work/no_pause.o" net/accept_guard.cpp || exit 1
unit "$work/unit_no_pause" "$work/no_pause.o" || exit 1
expect "without the pause both listeners spin when descriptors run out" 1 "$work/unit_no_pause" \
  '*Flood.OutOfDescriptors*:AcceptBackoff.*'

break_copy "$src/net/accept_guard.cpp" "$work/every_line.cpp" \
  'if (counted_ == 0 && said_in_window_ < limits_.said_per_interval) {' 'if (true) {' || exit 1
break_compile "$work/every_line.cpp" "$work/every_line.o" net/accept_guard.cpp || exit 1
unit "$work/unit_every_line" "$work/every_line.o" || exit 1
expect "with a line for every rejection the rejection log is unbounded" 1 \
  "$work/unit_every_line" 'RejectionLog.*'
e2e "$work/e2e_every_line" "$work/every_line.o" || exit 1
expect "with a line for every rejection the driver logs a hundred thousand lines" 1 \
  "$work/e2e_every_line" 'Flood.AHundredThousand*'

break_copy "$src/net/tcp_setup.cpp" "$work/drop_newcomer_1.cpp" '.hard_total = 256' '.hard_total = 64' ||
  exit 1
break_copy "$work/drop_newcomer_1.cpp" "$work/drop_newcomer.cpp" '          of[*shed]->shed = true;
          ::shutdown(of[*shed]->fd.get(), SHUT_RDWR);' '          continue; // the newcomer goes' ||
  exit 1
break_compile "$work/drop_newcomer.cpp" "$work/drop_newcomer.o" net/tcp_setup.cpp || exit 1
unit "$work/unit_drop_newcomer" "$work/drop_newcomer.o" || exit 1
expect "dropping the newcomer past 64 handshakes keeps the writer out" 1 \
  "$work/unit_drop_newcomer" 'ListenerFlood.SixtyFour*'
e2e "$work/e2e_drop_newcomer" "$work/drop_newcomer.o" || exit 1
expect "dropping the newcomer past 64 handshakes keeps graph multihost from launching" 1 \
  "$work/e2e_drop_newcomer" 'Flood.SixtyFour*'

break_copy "$src/graph/launch_remote.cpp" "$work/never_interrupted.cpp" '      listener.interrupt();' \
  '      {}' || exit 1
break_compile "$work/never_interrupted.cpp" "$work/never_interrupted.o" graph/launch_remote.cpp ||
  exit 1
e2e "$work/e2e_never_interrupted" "$work/never_interrupted.o" || exit 1
expect "a driver that never interrupts its set-up waits for a process that gave up" 1 \
  "$work/e2e_never_interrupted" 'Flood.AnActorProcess*'

break_copy "$src/net/socket.cpp" "$work/no_scope.cpp" '{ interrupt_fd = fd; }' '{ (void)fd; }' || exit 1
break_compile "$work/no_scope.cpp" "$work/no_scope.o" net/socket.cpp || exit 1
unit "$work/unit_no_scope" "$work/no_scope.o" || exit 1
expect "without InterruptScope an interrupted set-up's connection waits out its deadline" 1 \
  "$work/unit_no_scope" 'ListenerFlood.Interrupt*'

break_verdict "every guard taken out made its tests fail"
