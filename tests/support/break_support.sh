# break_support.sh - what the break_*.sh scripts share (sourced, not run).
#
# A break script shows that a check can fail: it compiles a copy of one
# runtime source with one guard taken out, links a test program from the
# build folder's objects with that copy ahead of the runtime library (whose
# own copy it then replaces), and passes only if the named tests fail against
# the copy and pass against the runtime as built. Nothing in the source or
# build folder changes.
#
# The sourcing script sets, before it calls these:
#   build   the build folder (compile_commands.json, build.ninja)
#   work    a folder for the copies, objects, programs and logs
# and ends with `break_verdict "<what every case showed>"`.

break_failures=0
break_script=$(basename "$0")

# break_copy <source> <copy> <old> <new> [<old> <new>...]: <source> with each
# old replaced by its new; an error if an old is no longer there.
break_copy() {
  python3 - "$break_script" "$@" <<'PY'
import sys
script, source, copy, pairs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
text = open(source).read()
for old, new in zip(pairs[::2], pairs[1::2]):
    if old not in text:
        sys.exit(script + ": '" + old + "' is no longer in " + source)
    text = text.replace(old, new)
open(copy, "w").write(text)
PY
}

# break_compile <copy of runtime/src/X> <object> <X>: the copy, compiled as the
# build compiles runtime/src/X (net/frame.cpp, say).
break_compile() {
  python3 - "$break_script" "$build" "$@" <<'PY'
import json, shlex, subprocess, sys
script, build, copy, obj, name = sys.argv[1:6]
for entry in json.load(open(build + "/compile_commands.json")):
    if entry["file"].endswith("/runtime/src/" + name):
        args = shlex.split(entry["command"])
        args[args.index("-o") + 1] = obj
        args[args.index("-c") + 1] = copy
        args = [a for a in args if not a.startswith(("-MD", "-MF", "-MT"))]
        sys.exit(subprocess.run(args, cwd=entry["directory"]).returncode)
sys.exit(script + ": the build does not compile runtime/src/" + name)
PY
}

# break_link <target> <output> <own objects> [<object>...]: the link step of
# <target> (its path in the build folder, tests/unit/runtime_tests say) from
# build.ninja, with the given objects first. <own objects> is "all" for every
# object of the target's own, or a space-separated list of them (paths in the
# build folder; those not built, UCX's where UCX is off, are left out).
break_link() {
  python3 - "$break_script" "$build" "$@" <<'PY'
import os, shlex, subprocess, sys
script, build, target, output, own, extra = (sys.argv[1], sys.argv[2], sys.argv[3],
                                              sys.argv[4], sys.argv[5], sys.argv[6:])
lines = open(build + "/build.ninja").read().split("\n")
at = next((i for i, l in enumerate(lines)
           if l.startswith("build " + target + " ") and "_EXECUTABLE_LINKER__" in l), None)
if at is None:
    sys.exit(script + ": no link step for " + target)
settings = {}
for line in lines[at + 1:]:
    if not line.startswith("  "):
        break
    key, _, value = line.strip().partition(" = ")
    settings[key] = value
if own == "all":
    objects = lines[at].split(":", 1)[1].split("|")[0].split()[1:]
else:
    objects = [o for o in own.split() if os.path.exists(os.path.join(build, o))]
command = (["c++"] + shlex.split(settings.get("FLAGS", "")) +
           shlex.split(settings.get("LINK_FLAGS", "")) + extra + objects + ["-o", output] +
           shlex.split(settings.get("LINK_LIBRARIES", "")) + ["-lpthread"])
sys.exit(subprocess.run(command, cwd=build).returncode)
PY
}

# break_expect <what> <0: passes, 1: fails> <command...>: runs the command (a
# test program and its --gtest_filter, say) and counts a failure when it did
# not do as wanted. A broken runtime may hang a test rather than fail it: past
# 120 s it is stopped, and that counts as failing.
break_expect() {
  local what=$1 want=$2 log
  shift 2
  log=$work/$(echo "$what" | tr -c 'A-Za-z0-9' '_').log
  timeout 120 "$@" >"$log" 2>&1
  local status=$?
  if [[ $want == 0 && $status != 0 || $want == 1 && $status == 0 ]]; then
    echo "FAIL: $what (exit $status; see $log)"
    break_failures=$((break_failures + 1))
  else
    echo "ok: $what"
    grep -E '^\[  FAILED  \] [A-Za-z]+\.[A-Za-z]+ \(' "$log" | sed 's/^/      /'
  fi
}

# break_says <what> <text>: the log of the case <what> holds <text> (a test
# that failed, it failed for the reason the case is about).
break_says() {
  local log
  log=$work/$(echo "$1" | tr -c 'A-Za-z0-9' '_').log
  if ! grep -qF -- "$2" "$log"; then
    echo "FAIL: $1: the log does not say '$2' (see $log)"
    break_failures=$((break_failures + 1))
  fi
}

# break_verdict <what every case showed>: says PASS or how many cases did not
# show it, and returns accordingly.
break_verdict() {
  if ((break_failures == 0)); then
    echo "PASS: $1"
  else
    echo "FAIL: $break_failures case(s) above"
  fi
  ((break_failures == 0))
}
