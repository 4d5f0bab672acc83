#!/usr/bin/env bash
# break_profile_checks.sh [<build dir>] - shows that the checks of profile
# flows and of "{graph}" in a placement path fail against a runtime without
# them.
#
# Each case compiles a broken copy of one runtime source with the build's own
# command (compile_commands.json), links runtime_tests over it with the
# build's own link command (ninja -t commands) into a folder of its own (the
# copy's object comes before libcg_runtime.a, so its definitions are the ones
# taken), and runs the case's test: it must fail. Against runtime_tests as
# built it must pass. The cases:
#   flows at the middles   a flow leaves the middle of its WRITE and reaches
#                          the middle of its READ, however long that waited
#   {graph} kept           a placement path is read as given
# Needs the build's runtime_tests built and nothing rebuilding it meanwhile
# (take the build lock). Nothing in the build folder changes.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# breaks <case> <source> <old> <new>: a copy of <source> (under the
# repository) in $work/<case> with old replaced.
breaks() {
  mkdir -p "$work/$1"
  python3 - "$repo/$2" "$work/$1/$(basename "$2")" "$3" "$4" <<'PY'
import sys
path, copy, old, new = sys.argv[1:5]
text = open(path).read()
if old not in text:
    sys.exit("break_profile_checks: '" + old + "' is no longer in " + path)
open(copy, "w").write(text.replace(old, new, 1))
PY
}

# build <case> <source>: the copy compiled with the build's command for
# <source> (its quoted includes still found beside the original),
# runtime_tests linked over it.
build() {
  local source=$repo/$2 copy=$work/$1/$(basename "$2")
  python3 - "$build" "$source" "$copy" "$copy.o" <<'PY' || return 1
import json, os, shlex, subprocess, sys
build, source, copy, obj = sys.argv[1:5]
for entry in json.load(open(os.path.join(build, "compile_commands.json"))):
    if entry["file"] != source:
        continue
    args = shlex.split(entry["command"])
    args[args.index("-o") + 1] = obj
    args[args.index("-c") + 1] = copy
    args[1:1] = ["-iquote", os.path.dirname(source)]
    sys.exit(subprocess.call(args, cwd=entry["directory"]))
sys.exit("break_profile_checks: no compile command for " + source)
PY
  local command
  command=$(ninja -C "$build" -t commands tests/unit/runtime_tests | tail -1)
  command=${command#: && }
  command=${command%% && cd *}
  command=${command%% && :*}
  command=${command/ -o tests\/unit\/runtime_tests / -o $work/$1/runtime_tests }
  command=${command/ runtime\/libcg_runtime.a / $copy.o runtime\/libcg_runtime.a }
  (cd "$build" && eval "$command")
}

# expect_failure <case> <test>
expect_failure() {
  "$work/$1/runtime_tests" --gtest_filter="$2" >"$work/$1.log" 2>&1
  local status=$?
  if ((status != 0)) && grep -q "^\[  FAILED  \] $2\b" "$work/$1.log"; then
    echo "ok: $1: $2 fails"
  else
    echo "FAIL: $1: runtime_tests exited $status without $2 failing:"
    tail -20 "$work/$1.log"
    failures=$((failures + 1))
  fi
}

flows=ProfileTrace.AFlowToAReadThatWaitedFromBeforeTheWriteDoesNotEndBeforeItStarts
graph=Launch.GraphInAPlacementPathIsTheGraphsName
if "$build/tests/unit/runtime_tests" --gtest_filter="$flows:$graph" >"$work/intact.log" 2>&1; then
  echo "ok: $flows and $graph pass against runtime_tests as built"
else
  echo "FAIL: $flows or $graph fails against runtime_tests as built:"
  tail -20 "$work/intact.log"
  exit 1
fi

breaks middles runtime/src/graph/profile_trace.cpp \
  'return {from, std::max(middle(read), from)};' 'return {middle(write), middle(read)};' || exit 1
build middles runtime/src/graph/profile_trace.cpp || exit 1
expect_failure middles "$flows"

breaks graph runtime/src/graph/placement.cpp \
  'detail::with_graph_name(path_given, spec.name);' 'path_given;' || exit 1
build graph runtime/src/graph/placement.cpp || exit 1
expect_failure graph "$graph"

exit $((failures != 0))
