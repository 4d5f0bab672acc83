#!/usr/bin/env bash
# break_python_checks.sh [<build dir>] - shows that the checks of how a
# Python graph module is built and finds its package fail against the code as
# it once was, and pass against the code as it is.
#
# Each case breaks a copy (under a folder of its own; nothing in the source
# or build folder changes) and runs one check against it, which must fail:
#   python.hpp           the bare import of cg: pybind11's "initialization
#                        failed"                       cg_package_check.py missing
#   CompiledGraph.cmake  no link cg beside the module  interpreter_test.sh path
#   CompiledGraph.cmake  Debian's /usr/bin/python3 whatever is first on PATH
#                        or in Python3_EXECUTABLE      interpreter_test.sh path, python3
#   CompiledGraph.cmake  no check for the headers      interpreter_test.sh headers
#   Install.cmake        no PYTHONPATH line at install install_test.sh install
# The python.hpp case compiles e2e_graphs' module again with the build's own
# commands (compile_commands.json, ninja -t commands): about a minute. Needs
# the build's cgc, runtime and e2e_graphs module built and nothing rebuilding
# them meanwhile (take the build lock).
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python=$(sed -n 's/^Python_EXECUTABLE:FILEPATH=//p' "$build/CMakeCache.txt")
cgc=$build/compiler/tool/cgc
failures=0

# breaks <file> <copy> <old> <new> [<old> <new>...]: <copy> is <file> with each old replaced.
breaks() {
  "$python" - "$@" <<'PY'
import sys
path, copy, pairs = sys.argv[1], sys.argv[2], sys.argv[3:]
text = open(path).read()
for old, new in zip(pairs[::2], pairs[1::2]):
    if old not in text:
        sys.exit("break_python_checks: '" + old + "' is no longer in " + path)
    text = text.replace(old, new)
open(copy, "w").write(text)
PY
}

# expect pass <what> <command...>: the check passes.
# expect fail <what> <reason> <command...>: it fails, saying <reason>.
expect() {
  local want=$1 what=$2 reason="" output got
  shift 2
  if [[ $want == fail ]]; then reason=$1 && shift; fi
  if output=$("$@" 2>&1); then got=pass; else got=fail; fi
  if [[ $got == pass && $want == pass ]]; then
    echo "ok: $what: passed"
  elif [[ $got == fail && $want == fail && $output == *"$reason"* ]]; then
    echo "ok: $what: failed: $(grep -F -m 1 "$reason" <<<"$output")"
  else
    echo "WRONG: $what: ${got}ed, expected to ${want}${reason:+ saying '$reason'}: $output"
    failures=$((failures + 1))
  fi
}

# A source tree whose cmake/CompiledGraph.cmake is $1 (the rest: links to this one).
tree_with() {
  local tree=$work/tree-$2
  mkdir -p "$tree/cmake" "$tree/runtime/python" "$tree/examples/quickstart"
  cp "$1" "$tree/cmake/CompiledGraph.cmake"
  cp "$repo/cmake/RenderDots.cmake" "$tree/cmake/"
  ln -s "$repo/runtime/python/cg" "$tree/runtime/python/cg"
  ln -s "$repo/examples/quickstart/quickstart.cg.cpp" "$tree/examples/quickstart/"
  echo "$tree"
}
# interpreter <case> <tree>: interpreter_test.sh against the tree.
interpreter() { bash "$repo/tests/python/interpreter_test.sh" "$1" "$2" "$cgc" "$python" "$work/it"; }

# As it is: every check passes.
cp "$repo/cmake/CompiledGraph.cmake" "$work/as-is.cmake"
as_is=$(tree_with "$work/as-is.cmake" as-is)
for case in path python3 headers; do
  expect pass "as it is: interpreter_test.sh $case" interpreter "$case" "$as_is"
done
expect pass "as it is: cg_package_check.py missing" \
  "$python" "$repo/tests/python/cg_package_check.py" missing "$build/tests/e2e" "$repo/runtime/python"

# python.hpp: the module imports cg bare, as it once did.
mkdir -p "$work/include/cg" "$work/e2e"
breaks "$repo/runtime/include/cg/python.hpp" "$work/include/cg/python.hpp" \
  '  try {
    py::module_::import("cg");
  } catch' '  py::module_::import("cg");
  try {
  } catch'
compile=$("$python" -c "import json, sys
print(next(e['command'] for e in json.load(open(sys.argv[1]))
           if e['file'].endswith('/e2e_graphs.python.cpp')))" "$build/compile_commands.json")
module=$(cd "$build" && ls tests/e2e/e2e_graphs.*.so)
object=tests/e2e/CMakeFiles/e2e_graphs_python.dir/e2e_graphs.cg/e2e_graphs.python.cpp.o
link=$(cd "$build" && ninja -t commands "$module" | tail -n 1)
compile=${compile/ / -I$work/include }            # the broken header first
compile=${compile/"-o $object"/"-o $work/e2e.o"}
link=${link/"-o $module"/"-o $work/e2e/${module##*/}"}
link=${link/" $object "/" $work/e2e.o "}
echo "compiling e2e_graphs' module with the broken python.hpp (about a minute)"
(cd "$build" && eval "$compile" && eval "$link") && [[ -f $work/e2e/${module##*/} ]] ||
  { echo "WRONG: the module with the broken python.hpp did not build"; exit 1; }
expect fail "python.hpp importing cg bare: cg_package_check.py missing" \
  "got      ImportError: initialization failed" \
  "$python" "$repo/tests/python/cg_package_check.py" missing "$work/e2e" "$repo/runtime/python"

# CompiledGraph.cmake: no link beside the module.
breaks "$repo/cmake/CompiledGraph.cmake" "$work/no-link.cmake" \
  '  _cg_python_package_beside("${CMAKE_CURRENT_BINARY_DIR}" ${target})' ''
expect fail "no link cg beside the module: interpreter_test.sh path" "no link cg beside the module" \
  interpreter path "$(tree_with "$work/no-link.cmake" no-link)"

# CompiledGraph.cmake: Debian's python3 whatever is first on PATH, as it once was.
breaks "$repo/cmake/CompiledGraph.cmake" "$work/debian.cmake" \
  '    _cg_python_interpreter(${target})' \
  '    if(NOT Python_EXECUTABLE AND EXISTS /usr/bin/python3)
      set(Python_EXECUTABLE /usr/bin/python3 CACHE FILEPATH "")
    endif()'
debian=$(tree_with "$work/debian.cmake" debian)
expect fail "Debian's python3 always: interpreter_test.sh path" \
  "built for '/usr/bin/python3', not the venv's" interpreter path "$debian"
expect fail "Debian's python3 always: interpreter_test.sh python3" \
  "built for '/usr/bin/python3', not Python3_EXECUTABLE's" interpreter python3 "$debian"

# CompiledGraph.cmake: no check for the headers (FindPython's own failure).
breaks "$repo/cmake/CompiledGraph.cmake" "$work/no-headers-check.cmake" \
  '  if(NOT has_header STREQUAL "True")' '  if(FALSE)'
expect fail "no check for the headers: interpreter_test.sh headers" "interpreter_test headers: " \
  interpreter headers "$(tree_with "$work/no-headers-check.cmake" no-headers-check)"

# Install.cmake: no PYTHONPATH line. The build's install script, copied
# with the message gone, is what cmake --install runs from a folder of its own.
mkdir -p "$work/install-build"
breaks "$build/cmake_install.cmake" "$work/install-build/cmake_install.cmake" \
  'if(cg_python_misses)' 'if(FALSE)'
sed -n 's/^CG_SANITIZE:STRING=/&/p' "$build/CMakeCache.txt" >"$work/install-build/CMakeCache.txt"
expect pass "as it is: install_test.sh install" \
  bash "$repo/tests/install/install_test.sh" install "$build" "$repo" "$work/install-as-is" OFF
expect fail "no PYTHONPATH line: install_test.sh install" "the install did not print export" \
  bash "$repo/tests/install/install_test.sh" install "$work/install-build" "$repo" \
  "$work/install-broken" OFF

if ((failures)); then
  echo "break_python_checks: $failures case(s) went the wrong way"
  exit 1
fi
echo "break_python_checks: every check fails against the broken code and passes as it is"
