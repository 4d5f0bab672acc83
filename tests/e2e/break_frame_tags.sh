#!/usr/bin/env bash
# break_frame_tags.sh [<build dir>] [<work dir>] - shows that the checks of
# "every frame between hosts is authenticated" fail against a runtime that
# does not authenticate them.
#
# Each case compiles a copy of one runtime source broken as below, links the
# tests' objects from the build folder with it ahead of the runtime library
# (whose own copy it then replaces), and passes only if the tests fail (and
# pass against the runtime as built):
#   tcp_frame.cpp   a tag that does not match is let through   frame_auth_test,
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
    sys.exit("break_frame_tags: no link step for " + target)
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
    sys.exit("break_frame_tags: '" + old + "' is no longer in " + src)
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

unit_filter='--gtest_filter=FrameTags.*:ConnectionKeys.*:UcxChannel.WithAKey*:UcxChannel.AnOfferRewritten*'
e2e_filter='--gtest_filter=MenInTheMiddle.*'
src=$repo/runtime/src/net

# link_unit <output> [<object>...]: runtime_tests' link step, of frame_auth_test's object
# (and ucx_channel_test's, where UCX is built) alone.
link_unit() { relink tests/unit/runtime_tests "$1" "$build/$unit" "${@:2}"; }
only_unit() {
  python3 - "$build" <<'PY'
import sys
path = sys.argv[1] + "/build.ninja"
s = open(path).read()
PY
}
link_unit() {
  python3 - "$build" "$@" <<'PY'
import shlex, subprocess, sys
build, output, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
import os
lines = open(build + "/build.ninja").read().split("\n")
for i, line in enumerate(lines):
    if line.startswith("build tests/unit/runtime_tests ") and "_EXECUTABLE_LINKER__" in line:
        break
variables = {}
for more in lines[i + 1:]:
    if not more.startswith("  "):
        break
    key, _, value = more.strip().partition(" = ")
    variables[key] = value
objects = ["tests/unit/CMakeFiles/runtime_tests.dir/runtime/" + name + ".cpp.o"
           for name in ("frame_auth_test", "ucx_channel_test")]
objects = [o for o in objects if os.path.exists(os.path.join(build, o))]  # UCX: where built
command = (["c++"] + shlex.split(variables.get("LINK_FLAGS", "")) + extra + objects +
           ["-o", output] +
           shlex.split(variables.get("LINK_LIBRARIES", "")) + ["-lpthread"])
sys.exit(subprocess.run(command, cwd=build).returncode)
PY
}

link_unit "$work/unit_intact" || exit 1
expect "frame_auth_test passes against the runtime as built" 0 "$work/unit_intact" "$unit_filter"
relink tests/e2e/e2e_multihost_tests "$work/e2e_intact" || exit 1
expect "MenInTheMiddle passes against the runtime as built" 0 "$work/e2e_intact" "$e2e_filter"

breaks "$src/tcp_frame.cpp" "$work/tcp_frame.cpp" 'if (tags_equal(computed, carried))' \
  'if (computed != nullptr || tags_equal(computed, carried))' || exit 1
compile net/tcp_frame.cpp "$work/tcp_frame.cpp" "$work/tcp_frame.o" || exit 1
link_unit "$work/unit_unchecked" "$work/tcp_frame.o" || exit 1
expect "frame_auth_test fails where a tag that does not match is let through" 1 \
  "$work/unit_unchecked" "$unit_filter"
relink tests/e2e/e2e_multihost_tests "$work/e2e_unchecked" "$work/tcp_frame.o" || exit 1
expect "MenInTheMiddle fails where a tag that does not match is let through" 1 \
  "$work/e2e_unchecked" "$e2e_filter"

breaks "$src/frame_auth.cpp" "$work/frame_auth_fixed.cpp" \
  'const std::string context(handshake);' 'const std::string context = "";' || exit 1
compile net/frame_auth.cpp "$work/frame_auth_fixed.cpp" "$work/frame_auth_fixed.o" || exit 1
link_unit "$work/unit_fixed" "$work/frame_auth_fixed.o" || exit 1
expect "frame_auth_test fails where the keys ignore the handshake's nonces" 1 \
  "$work/unit_fixed" "$unit_filter"

breaks "$src/frame_auth.cpp" "$work/frame_auth_one.cpp" '"cg-frames reader->writer "' \
  '"cg-frames writer->reader "' || exit 1
compile net/frame_auth.cpp "$work/frame_auth_one.cpp" "$work/frame_auth_one.o" || exit 1
link_unit "$work/unit_one" "$work/frame_auth_one.o" || exit 1
expect "frame_auth_test fails where both directions share one key" 1 "$work/unit_one" \
  "$unit_filter"

breaks "$src/frame_auth.cpp" "$work/frame_auth_equal.cpp" \
  'return sodium_memcmp(a, b, frame_tag_bytes) == 0;' 'return a != nullptr || b != nullptr;' ||
  exit 1
compile net/frame_auth.cpp "$work/frame_auth_equal.cpp" "$work/frame_auth_equal.o" || exit 1
link_unit "$work/unit_equal" "$work/frame_auth_equal.o" || exit 1
expect "frame_auth_test and ucx_channel_test fail where any two tags compare equal" 1 \
  "$work/unit_equal" "$unit_filter"

((failures == 0)) && echo "PASS: every broken piece made its tests fail"
((failures == 0))
