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
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
work=${2:-$(mktemp -d)}
mkdir -p "$work"
failures=0

# compile <runtime source> <copy> <object>: the copy, as the build compiles that source
# (net/tcp_frame.cpp, say).
compile() {
  python3 - "$build" "$1" "$2" "$3" <<'PY'
import json, shlex, subprocess, sys
build, name, source, obj = sys.argv[1:5]
entry = [e for e in json.load(open(build + "/compile_commands.json"))
         if e["file"].endswith("runtime/src/" + name)][0]
args = shlex.split(entry["command"])
out = args.index("-o")
args[out + 1] = obj
args[args.index("-c") + 1] = source
args = [a for a in args if not a.startswith(("-MD", "-MF", "-MT"))]
sys.exit(subprocess.run(args, cwd=entry["directory"]).returncode)
PY
}
# relink <target> <output> [<object>...]: the target's own objects and
# libraries (from build.ninja), with the given objects first.
relink() {
  python3 - "$build" "$@" <<'PY'
import shlex, subprocess, sys
build, target, output, extra = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
lines = open(build + "/build.ninja").read().split("\n")
for i, line in enumerate(lines):
    if line.startswith("build " + target + " ") and "_EXECUTABLE_LINKER__" in line:
        break
else:
    sys.exit("break_rendezvous_lines: no link step for " + target)
explicit = line.split(":", 1)[1].split("|")[0].split()[1:]
variables = {}
for more in lines[i + 1:]:
    if not more.startswith("  "):
        break
    key, _, value = more.strip().partition(" = ")
    variables[key] = value
command = (["c++"] + shlex.split(variables.get("FLAGS", "")) +
           shlex.split(variables.get("LINK_FLAGS", "")) + extra + explicit + ["-o", output] +
           shlex.split(variables.get("LINK_LIBRARIES", "")) + ["-lpthread"])
sys.exit(subprocess.run(command, cwd=build).returncode)
PY
}
# breaks <from> <to> <old> <new>: a copy with old replaced by new; an error if old is gone.
breaks() {
  python3 - "$@" <<'PY'
import sys
src, dst, old, new = sys.argv[1:5]
s = open(src).read()
if old not in s:
    sys.exit("break_rendezvous_lines: '" + old + "' is no longer in " + src)
open(dst, "w").write(s.replace(old, new))
PY
}
# expect <what> <status: 0 passes, 1 fails> <command...>
expect() {
  local what=$1 want=$2
  shift 2
  # A broken runtime may hang a test rather than fail it: a timeout is a failure.
  timeout 120 "$@" >"$work/last.log" 2>&1
  local status=$?
  cp "$work/last.log" "$work/$(echo "$what" | tr -c 'A-Za-z0-9' '_').log"
  if [[ $want == 0 && $status != 0 || $want == 1 && $status == 0 ]]; then
    echo "FAIL: $what (status $status; see $work/last.log)"
    failures=$((failures + 1))
  else
    echo "ok: $what"
  fi
}

unit_filter='--gtest_filter=RendezvousLines.*:RendezvousTags.*'
e2e_filter='--gtest_filter=MenInTheMiddle.*SetUpLine*:MenInTheMiddle.APublishRewritten*'
wire=$repo/runtime/src/net/rendezvous_wire.cpp

# link_unit <output> [<object>...]: runtime_tests' link step, of rendezvous_lines_test's
# object alone.
link_unit() {
  python3 - "$build" "$@" <<'PY'
import shlex, subprocess, sys
build, output, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
lines = open(build + "/build.ninja").read().split("\n")
for i, line in enumerate(lines):
    if line.startswith("build tests/unit/runtime_tests ") and "_EXECUTABLE_LINKER__" in line:
        break
else:
    sys.exit("break_rendezvous_lines: no link step for runtime_tests")
variables = {}
for more in lines[i + 1:]:
    if not more.startswith("  "):
        break
    key, _, value = more.strip().partition(" = ")
    variables[key] = value
objects = ["tests/unit/CMakeFiles/runtime_tests.dir/runtime/rendezvous_lines_test.cpp.o"]
command = (["c++"] + shlex.split(variables.get("LINK_FLAGS", "")) + extra + objects +
           ["-o", output] +
           shlex.split(variables.get("LINK_LIBRARIES", "")) + ["-lpthread"])
sys.exit(subprocess.run(command, cwd=build).returncode)
PY
}

link_unit "$work/unit_intact" || exit 1
expect "rendezvous_lines_test passes against the runtime as built" 0 "$work/unit_intact" \
  "$unit_filter"
relink tests/e2e/e2e_multihost_tests "$work/e2e_intact" || exit 1
expect "the set-up relay tests pass against the runtime as built" 0 "$work/e2e_intact" \
  "$e2e_filter"

# broken <name> <old> <new>: rendezvous_wire.cpp with old replaced by new, compiled.
broken() {
  breaks "$wire" "$work/wire_$1.cpp" "$2" "$3" &&
    compile net/rendezvous_wire.cpp "$work/wire_$1.cpp" "$work/wire_$1.o"
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

((failures == 0)) && echo "PASS: every broken piece made its tests fail"
((failures == 0))
