# break_support.sh - what the break_*.sh scripts share (sourced, not run).
#
# A break script shows that a check can fail: it compiles a copy of one
# source (a runtime or cgc source, a header, a test) with one guard taken
# out, links a test program from the build folder's objects with that copy
# ahead of the library (whose own copy it then replaces), and passes only if
# the named tests fail against the copy and pass against the build as is.
# Nothing in the source or build folder changes.
#
# The sourcing script sets, before it calls these (or has break_setup set
# them from its arguments):
#   build   the build folder (compile_commands.json, build.ninja)
#   work    a folder for the copies, objects, programs and logs
# and ends with `break_verdict "<what every case showed>"`. It may set
# break_timeout, the seconds a case's command may run (120 unless set).
#
# A header is broken the same way: break_copy writes its copy under a folder
# of the case's own (keeping the path it is included by, cg/codecs.hpp or
# tensor/arrival_book.hpp), and each source that includes it is compiled
# with break_compile and "-I<folder>" (or "-iquote <folder>") ahead of the
# build's own folders. A check that is not a test program's (a Python test,
# a CMake script) is run by break_expect like any other command.

break_failures=0
break_script=$(basename "$0")
break_repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
break_timeout=${break_timeout:-120}

# break_setup [<build dir>] [<work dir>]: sets repo (the repository this file
# is in), build (the folder given, or repo/build) and work (the folder given,
# or a temporary one, removed when the script exits passing and kept for its
# logs when it fails).
break_setup() {
  repo=$break_repo
  build=$(cd "${1:-$repo/build}" && pwd) || exit 1
  if [[ -n ${2:-} ]]; then
    work=$2
    mkdir -p "$work"
  else
    work=$(mktemp -d)
    trap break_clean_up EXIT
  fi
}
break_clean_up() {
  if (($? == 0)); then rm -rf "$work"; else echo "kept for its logs: $work"; fi
}

# break_as_built <program> <gtest filter>: <program> as the build made it
# (its path in the build folder) passes the tests of the filter.
break_as_built() {
  break_expect "$2 pass against $1 as built" 0 "$build/$1" --gtest_filter="$2"
}

# break_log <what>: the log of the case <what>.
break_log() { echo "$work/$(echo "$1" | tr -c 'A-Za-z0-9' '_').log"; }

# break_fail <what> <why> <log>: counts a case that did not show what it
# should, with the end of its log.
break_fail() {
  echo "FAIL: $1: $2 (see $3)"
  tail -20 "$3" | sed 's/^/      /'
  break_failures=$((break_failures + 1))
}

# break_copy [--once] <source> <copy> <old> <new> [<old> <new>...]: <source>
# with each old replaced by its new (every time it occurs), written to <copy>
# (its folder made); an error if an old is no longer there, or with --once if
# it is there more than once (the guard to take out would be ambiguous).
break_copy() {
  local once=0
  if [[ ${1:-} == --once ]]; then
    once=1
    shift
  fi
  mkdir -p "$(dirname "$2")"
  python3 - "$break_script" "$once" "$@" <<'PY'
import sys
script, once, source, copy, pairs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
text = open(source).read()
for old, new in zip(pairs[::2], pairs[1::2]):
    if old not in text:
        sys.exit(script + ": '" + old + "' is no longer in " + source)
    if once == "1" and text.count(old) != 1:
        sys.exit(script + ": '" + old + "' is in " + source + " more than once")
    text = text.replace(old, new)
open(copy, "w").write(text)
PY
}

# break_compile <copy> <object> <X> [<flag>...]: <copy> compiled to <object>
# (its folder made) as the build compiles X: runtime/src/X (net/frame.cpp,
# say), or else the one source whose path ends in /X (compiler/codegen/
# Codegen.cpp, a test, a generated e2e_graphs.python.cpp). The copy may be X
# itself. X's folder is searched for quoted includes as if the copy sat
# beside X. The flags go ahead of the build's own (-I<folder of broken
# headers>); a -DNAME=... given replaces the build's definition of NAME.
break_compile() {
  python3 - "$break_script" "$build" "$@" <<'PY'
import json, os, shlex, subprocess, sys
script, build, copy, obj, name, flags = (sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4],
                                         sys.argv[5], sys.argv[6:])
entries = json.load(open(build + "/compile_commands.json"))
found = ([e for e in entries if e["file"].endswith("/runtime/src/" + name)] or
         [e for e in entries if e["file"].endswith("/" + name)])
if not found:
    sys.exit(script + ": the build does not compile " + name)
if len({e["file"] for e in found}) > 1:
    sys.exit(script + ": more than one source the build compiles ends in " + name)
entry = found[0]
args = shlex.split(entry["command"])
args[args.index("-o") + 1] = os.path.abspath(obj)
args[args.index("-c") + 1] = os.path.abspath(copy)
args = [a for a in args if not a.startswith(("-MD", "-MF", "-MT"))]
names = {f.split("=")[0] for f in flags if f.startswith("-D")}
args = [a for a in args if not (a.startswith("-D") and a.split("=")[0] in names)]
args[1:1] = flags + ["-iquote", os.path.dirname(entry["file"])]
os.makedirs(os.path.dirname(os.path.abspath(obj)), exist_ok=True)
sys.exit(subprocess.run(args, cwd=entry["directory"]).returncode)
PY
}

# break_link <target> <output> <own objects> [<object>...]: the link step of
# <target> (its path in the build folder: tests/unit/runtime_tests, a Python
# module's .so) as ninja runs it, into <output> (its folder made), with the
# given objects ahead of the target's own. <own objects> is "all" for every
# object of the target's own, "all except <o>..." for all but those (the
# given objects stand in for them), a space-separated list of them, or "" for
# none (paths in the build folder; those not built, UCX's where UCX is off or
# a test file's added since the build last linked, are left out).
break_link() {
  python3 - "$break_script" "$build" "$@" <<'PY'
import os, shlex, subprocess, sys
script, build, target, output, own, extra = (sys.argv[1], sys.argv[2], sys.argv[3],
                                              sys.argv[4], sys.argv[5], sys.argv[6:])
step = next((l for l in open(build + "/build.ninja").read().split("\n")
             if l.startswith(("build " + target + " ", "build " + target + ":"))
             and "_LINKER__" in l), None)
if step is None:
    sys.exit(script + ": no link step for " + target)
objects = step.split(":", 1)[1].split("|")[0].split()[1:]
words = own.split()
if words[:1] == ["all"]:
    left_out = words[2:] if words[1:2] == ["except"] else []
    if len(words) > 1 and not left_out or any(o not in objects for o in left_out):
        sys.exit(script + ": '" + own + "' is not all objects of " + target + " but some")
    kept = [o for o in objects if o not in left_out]
else:
    kept = words
kept = [o for o in kept if os.path.exists(os.path.join(build, o))]
lines = subprocess.run(["ninja", "-C", build, "-t", "commands", target], capture_output=True,
                       text=True, check=True).stdout.strip().split("\n")
command, part = [], []
for word in shlex.split(lines[-1]) + ["&&"]:
    if word != "&&":
        part.append(word)
        continue
    if "-o" in part and part[part.index("-o") + 1] == target:
        command = part
    part = []
at = next(i for i, w in enumerate(command) if w in objects or w == "-o")
command = [w for w in command[:at]] + extra + kept + [w for w in command[at:] if w not in objects]
command[command.index("-o") + 1] = os.path.abspath(output)
os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
sys.exit(subprocess.run(command, cwd=build).returncode)
PY
}

# break_module <graph> <folder> [<flag>...]: the Python module of the graph
# target <graph> (e2e_graphs, say: add_compiled_graph(... PYTHON)), its
# generated <graph>.python.cpp compiled again with the flags (-I<folder of
# broken headers>) and linked as the build links it into <folder>, under the
# file name the build gives it.
break_module() {
  local graph=$1 folder=$2 module object
  module=$(sed -n "s/^build \([^ :]*\/$graph\.[^ :]*\.so\): CXX_MODULE_LIBRARY_LINKER__.*/\1/p" \
    "$build/build.ninja")
  if [[ -z $module ]]; then
    echo "$break_script: the build has no Python module of $graph"
    return 1
  fi
  object=$(dirname "$module")/CMakeFiles/${graph}_python.dir/$graph.cg/$graph.python.cpp.o
  break_compile "$build/$(dirname "$module")/$graph.cg/$graph.python.cpp" "$folder/$graph.o" \
    "$graph.cg/$graph.python.cpp" "${@:3}" &&
    break_link "$module" "$folder/$(basename "$module")" "all except $object" "$folder/$graph.o"
}

# break_relink <target> <output> <X> <old> <new> [<old> <new>...]: <target>
# linked into <output> from all its own objects and, ahead of them, a copy of
# X broken: each old (there once) replaced by its new. X is named as
# break_compile names it (graph/teardown.cpp for runtime/src/graph/
# teardown.cpp, or a path under the repository); the copy and its object
# are <output>.<X's extension> and <output>.o.
break_relink() {
  local target=$1 output=$2 name=$3 source=$break_repo/runtime/src/$3
  [[ -f $source ]] || source=$break_repo/$name
  break_copy --once "$source" "$output.${name##*.}" "${@:4}" &&
    break_compile "$output.${name##*.}" "$output.o" "$name" &&
    break_link "$target" "$output" all "$output.o"
}

# break_expect <what> <0: passes, 1: fails> <command...>: runs the command (a
# test program and its --gtest_filter, say; a program, not a shell function,
# as it runs under timeout) into the case's log, and counts a failure when it
# did not do as wanted. A broken runtime may hang a test rather than fail it:
# past break_timeout it is stopped, and that counts as failing. A test
# program that ran no test has not passed.
break_expect() {
  local what=$1 want=$2 log
  shift 2
  log=$(break_log "$what")
  timeout "$break_timeout" "$@" >"$log" 2>&1
  local status=$?
  if [[ $want == 0 ]] && grep -q '^\[==========\] Running 0 tests' "$log"; then
    break_fail "$what" "no test ran" "$log"
  elif [[ $want == 0 && $status != 0 || $want == 1 && $status == 0 ]]; then
    break_fail "$what" "exit $status" "$log"
  else
    echo "ok: $what"
    grep -E '^\[  FAILED  \] [A-Za-z]+\.[A-Za-z]+ \(' "$log" | sed 's/^/      /'
  fi
}

# break_says <what> <text>: the log of the case <what> holds <text> (a test
# that failed, it failed for the reason the case is about).
break_says() {
  local log
  log=$(break_log "$1")
  if ! grep -qF -- "$2" "$log"; then
    break_fail "$1" "the log does not say '$2'" "$log"
  fi
}

# break_failed <what> <test> [<test>...]: in the log of the case <what>,
# GoogleTest says each named test (Suite.Name) failed: the case failed it,
# not only some other test.
break_failed() {
  local what=$1 log test
  log=$(break_log "$what")
  for test in "${@:2}"; do
    if ! grep -qE "^\[  FAILED  \] ${test//./\\.}( |,|$)" "$log"; then
      break_fail "$what" "$test did not fail" "$log"
    fi
  done
}

# break_crashed <what> <test>: in the log of the case <what>, the named test
# started and the program ended (a crash, an abort, stopped past
# break_timeout) before it or the run finished.
break_crashed() {
  local log
  log=$(break_log "$1")
  if ! grep -qxF "[ RUN      ] $2" "$log" || grep -qF "[       OK ] $2 " "$log" ||
    grep -q '^\[  PASSED  \]' "$log"; then
    break_fail "$1" "$2 did not crash the program" "$log"
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
