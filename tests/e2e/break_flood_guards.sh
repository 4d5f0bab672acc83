#!/usr/bin/env bash
# break_flood_guards.sh [<build dir>] [<work dir>] - shows that the flood
# tests (tests/unit/runtime/accept_guard_test.cpp, tests/e2e/flood_test.cpp)
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
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
work=${2:-$(mktemp -d)}
mkdir -p "$work"
src=$repo/runtime/src
failures=0

# broken <source> <copy> <old> <new>: the source with `old` replaced by `new`.
broken() {
  python3 - "$@" <<'PY'
import sys
source, copy, old, new = sys.argv[1:5]
text = open(source).read()
if old not in text:
    sys.exit("break_flood_guards: '" + old + "' is no longer in " + source)
open(copy, "w").write(text.replace(old, new))
PY
}

# compiled <copy of runtime/src/X> <object> <X>: compiled as the build compiles X.
compiled() {
  python3 - "$build" "$@" <<'PY'
import json, shlex, subprocess, sys
build, copy, obj, name = sys.argv[1:5]
for entry in json.load(open(build + "/compile_commands.json")):
    if entry["file"].endswith("/runtime/src/" + name):
        args = shlex.split(entry["command"])
        args[args.index("-o") + 1] = obj
        args[args.index("-c") + 1] = copy
        args = [a for a in args if not a.startswith(("-MD", "-MF", "-MT"))]
        sys.exit(subprocess.run(args, cwd=entry["directory"]).returncode)
sys.exit("break_flood_guards: the build does not compile runtime/src/" + name)
PY
}

# linked <target> <object of its own> <output> [<object>...]: the target's
# link step (build.ninja) with only that one object of its own, the given
# objects first.
linked() {
  python3 - "$build" "$@" <<'PY'
import shlex, subprocess, sys
build, target, own, output, extra = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
lines = open(build + "/build.ninja").read().split("\n")
at = next((i for i, l in enumerate(lines)
           if l.startswith("build " + target + " ") and "_EXECUTABLE_LINKER__" in l), None)
if at is None:
    sys.exit("break_flood_guards: no link step for " + target)
settings = {}
for line in lines[at + 1:]:
    if not line.startswith("  "):
        break
    key, _, value = line.strip().partition(" = ")
    settings[key] = value
command = (["c++"] + shlex.split(settings.get("LINK_FLAGS", "")) + extra + [own, "-o", output] +
           shlex.split(settings.get("LINK_LIBRARIES", "")) + ["-lpthread"])
sys.exit(subprocess.run(command, cwd=build).returncode)
PY
}

unit_object=tests/unit/CMakeFiles/runtime_tests.dir/runtime/accept_guard_test.cpp.o
e2e_object=tests/e2e/CMakeFiles/e2e_flood_tests.dir/flood_test.cpp.o
unit() { linked tests/unit/runtime_tests "$unit_object" "$@"; }
e2e() { linked tests/e2e/e2e_flood_tests "$e2e_object" "$@"; }

# expect <what> <0: passes, 1: fails> <program> <gtest filter>
expect() {
  local what=$1 want=$2 program=$3 filter=$4
  local log
  log=$work/$(echo "$what" | tr -c 'a-zA-Z0-9' '_').log
  "$program" --gtest_filter="$filter" >"$log" 2>&1
  local status=$?
  if [[ $want == 0 && $status != 0 ]] || [[ $want == 1 && $status == 0 ]]; then
    echo "FAIL: $what (exit $status; see $log)"
    failures=$((failures + 1))
  else
    echo "ok: $what"
    grep -E '^\[  FAILED  \] [A-Za-z]+\.[A-Za-z]+ \(' "$log" | sed 's/^/      /'
  fi
}

unit "$work/unit_intact" || exit 1
e2e "$work/e2e_intact" || exit 1
expect "the flood unit tests pass against the runtime as built" 0 "$work/unit_intact" '*Flood.*:Shedding.*:RejectionLog.*:AcceptBackoff.*'
expect "the flood e2e tests pass against the runtime as built" 0 "$work/e2e_intact" 'Flood.*'

broken "$src/net/accept_guard.cpp" "$work/no_pause.cpp" 'resume_at_ = GuardClock::now() + pause_;' \
  'resume_at_ = GuardClock::now();' || exit 1
compiled "$work/no_pause.cpp" "$work/no_pause.o" net/accept_guard.cpp || exit 1
unit "$work/unit_no_pause" "$work/no_pause.o" || exit 1
expect "without the pause both listeners spin when descriptors run out" 1 "$work/unit_no_pause" \
  '*Flood.OutOfDescriptors*:AcceptBackoff.*'

broken "$src/net/accept_guard.cpp" "$work/every_line.cpp" \
  'if (counted_ == 0 && said_in_window_ < limits_.said_per_interval) {' 'if (true) {' || exit 1
compiled "$work/every_line.cpp" "$work/every_line.o" net/accept_guard.cpp || exit 1
unit "$work/unit_every_line" "$work/every_line.o" || exit 1
expect "with a line for every rejection the rejection log is unbounded" 1 \
  "$work/unit_every_line" 'RejectionLog.*'
e2e "$work/e2e_every_line" "$work/every_line.o" || exit 1
expect "with a line for every rejection the driver logs a hundred thousand lines" 1 \
  "$work/e2e_every_line" 'Flood.AHundredThousand*'

broken "$src/net/tcp_setup.cpp" "$work/drop_newcomer_1.cpp" '.hard_total = 256' '.hard_total = 64' ||
  exit 1
broken "$work/drop_newcomer_1.cpp" "$work/drop_newcomer.cpp" '          of[*shed]->shed = true;
          ::shutdown(of[*shed]->fd.get(), SHUT_RDWR);' '          continue; // the newcomer goes' ||
  exit 1
compiled "$work/drop_newcomer.cpp" "$work/drop_newcomer.o" net/tcp_setup.cpp || exit 1
unit "$work/unit_drop_newcomer" "$work/drop_newcomer.o" || exit 1
expect "dropping the newcomer past 64 handshakes keeps the writer out" 1 \
  "$work/unit_drop_newcomer" 'ListenerFlood.SixtyFour*'
e2e "$work/e2e_drop_newcomer" "$work/drop_newcomer.o" || exit 1
expect "dropping the newcomer past 64 handshakes keeps graph multihost from launching" 1 \
  "$work/e2e_drop_newcomer" 'Flood.SixtyFour*'

broken "$src/graph/launch_remote.cpp" "$work/never_interrupted.cpp" '      listener.interrupt();' \
  '      {}' || exit 1
compiled "$work/never_interrupted.cpp" "$work/never_interrupted.o" graph/launch_remote.cpp ||
  exit 1
e2e "$work/e2e_never_interrupted" "$work/never_interrupted.o" || exit 1
expect "a driver that never interrupts its set-up waits for a process that gave up" 1 \
  "$work/e2e_never_interrupted" 'Flood.AnActorProcess*'

broken "$src/net/socket.cpp" "$work/no_scope.cpp" '{ interrupt_fd = fd; }' '{ (void)fd; }' || exit 1
compiled "$work/no_scope.cpp" "$work/no_scope.o" net/socket.cpp || exit 1
unit "$work/unit_no_scope" "$work/no_scope.o" || exit 1
expect "without InterruptScope an interrupted set-up's connection waits out its deadline" 1 \
  "$work/unit_no_scope" 'ListenerFlood.Interrupt*'

((failures == 0)) && echo "PASS: every guard taken out made its tests fail"
((failures == 0))
