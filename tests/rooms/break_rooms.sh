#!/usr/bin/env bash
# break_rooms.sh [<build dir>] - shows that the rooms.* probes fail against a runtime whose
# rooms share one include root, runtime/src, as when the runtime was one library.
#
# For each probe that reaches up, its compile command from the build's compile database:
# as built, it must fail with the "No such file" its test expects; with the room's include
# root (runtime/rooms/<room>) swapped for runtime/src, the same source must compile, so its
# test, which looks for that message, would fail. Nothing in the build folder changes.
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# probe <source> <room> <missing header>
probe() {
  python3 - "$build" "$repo" "$work" "$@" <<'PY'
import json, shlex, subprocess, sys
build, repo, work, source, room, header = sys.argv[1:7]
entry = next((e for e in json.load(open(build + "/compile_commands.json"))
              if e["file"].endswith("/tests/rooms/" + source)), None)
if entry is None:
    sys.exit("break_rooms: no compile command for tests/rooms/" + source)
args = shlex.split(entry["command"])
args[args.index("-o") + 1] = work + "/" + source + ".o"
root = "-I" + build + "/runtime/rooms/" + room
if root not in args:
    sys.exit("break_rooms: " + source + " is not compiled with " + root)
built = subprocess.run(args, cwd=entry["directory"], capture_output=True, text=True)
wanted = header + ": No such file or directory"
if built.returncode == 0 or wanted not in built.stderr:
    sys.exit("break_rooms: " + source + " as built: expected a failure naming '" + wanted +
             "', got exit " + str(built.returncode) + "\n" + built.stderr)
args[args.index(root)] = "-I" + repo + "/runtime/src"
one_root = subprocess.run(args, cwd=entry["directory"], capture_output=True, text=True)
if one_root.returncode != 0:
    sys.exit("break_rooms: " + source + " with one root for every room still fails:\n" +
             one_root.stderr)
print("break_rooms: " + source + ": fails in room " + room + " (" + wanted +
      "), compiles with one root for every room")
PY
}

failures=0
probe os_reaches_graph.cpp os graph/launch.hpp || failures=$((failures + 1))
probe actor_reaches_graph.cpp actor graph/runtime_state.hpp || failures=$((failures + 1))
probe tensor_reaches_net.cpp tensor net/socket.hpp || failures=$((failures + 1))
if ((failures)); then
  echo "break_rooms: FAILED ($failures probes did not show it)"
  exit 1
fi
echo "break_rooms: OK (each probe fails only because its room's include root hides the rooms above)"
