#!/usr/bin/env bash
# break_python_checks.sh [<build dir>] [<work dir>] - shows that the checks of
# how a Python graph module is built and finds its package fail against the
# code as it once was, and pass against the code as it is.
#
# Each case breaks a copy (under a folder of its own; nothing in the source
# or build folder changes; tests/support/break_support.sh) and runs one check
# against it, which must fail, saying why:
#   python.hpp           the bare import of cg: pybind11's "initialization
#                        failed"                       cg_package_check.py missing
#   CompiledGraph.cmake  no link cg beside the module  interpreter_test.sh path
#   CompiledGraph.cmake  Debian's /usr/bin/python3 whatever is first on PATH
#                        or in Python3_EXECUTABLE      interpreter_test.sh path, python3
#   CompiledGraph.cmake  no check for the headers      interpreter_test.sh headers
#   Install.cmake        no PYTHONPATH line at install install_test.sh install
# The python.hpp case compiles e2e_graphs' module again as the build does:
# about a minute. Needs the build's cgc, runtime and e2e_graphs module built
# and nothing rebuilding them meanwhile (take the build lock).
set -uo pipefail
break_timeout=600 # a check configures and builds a project of its own
source "$(dirname "$0")/../support/break_support.sh"
break_setup "$@"

python=$(sed -n 's/^Python_EXECUTABLE:FILEPATH=//p' "$build/CMakeCache.txt")
interpreter_test=$repo/tests/python/interpreter_test.sh
package_check=$repo/tests/python/cg_package_check.py

# tree_with <CompiledGraph.cmake> <name>: a source tree whose
# cmake/CompiledGraph.cmake is the one given (the rest: links to this one).
tree_with() {
  local tree=$work/tree-$2
  mkdir -p "$tree/cmake" "$tree/runtime/python" "$tree/examples/quickstart"
  cp "$1" "$tree/cmake/CompiledGraph.cmake"
  cp "$repo/cmake/RenderDots.cmake" "$tree/cmake/"
  ln -s "$repo/runtime/python/cg" "$tree/runtime/python/cg"
  ln -s "$repo/examples/quickstart/quickstart.cg.cpp" "$tree/examples/quickstart/"
  echo "$tree"
}
# fails <what> <reason> <command...>: the check fails, saying <reason>.
fails() {
  break_expect "$1" 1 "${@:3}"
  break_says "$1" "$2"
}

# As it is: every check passes.
as_is=$(tree_with "$repo/cmake/CompiledGraph.cmake" as-is)
for case in path python3 headers; do
  break_expect "as it is: interpreter_test.sh $case" 0 \
    bash "$interpreter_test" "$case" "$as_is" "$build/compiler/tool/cgc" "$python" "$work/it"
done
break_expect "as it is: cg_package_check.py missing" 0 \
  "$python" "$package_check" missing "$build/tests/e2e" "$repo/runtime/python"

# python.hpp: the module imports cg bare, as it once did.
break_copy "$repo/runtime/include/cg/python.hpp" "$work/include/cg/python.hpp" \
  '  try {
    py::module_::import("cg");
  } catch' '  py::module_::import("cg");
  try {
  } catch' || exit 1
echo "compiling e2e_graphs' module with the broken python.hpp (about a minute)"
break_module e2e_graphs "$work/e2e" "-I$work/include" || exit 1
fails "python.hpp importing cg bare: cg_package_check.py missing" \
  "got      ImportError: initialization failed" \
  "$python" "$package_check" missing "$work/e2e" "$repo/runtime/python"

# interpreter <what> <reason> <case> <CompiledGraph.cmake> <old> <new>...:
# interpreter_test.sh <case> fails, saying <reason>, against a tree whose
# CompiledGraph.cmake is the one given, old replaced by new.
interpreter() {
  break_copy "$repo/cmake/CompiledGraph.cmake" "$work/$4.cmake" "${@:5}" || exit 1
  fails "$1: interpreter_test.sh $3" "$2" bash "$interpreter_test" "$3" \
    "$(tree_with "$work/$4.cmake" "$4")" "$build/compiler/tool/cgc" "$python" "$work/it"
}

# CompiledGraph.cmake: no link beside the module.
interpreter "no link cg beside the module" "no link cg beside the module" path no-link \
  '  _cg_python_package_beside("${CMAKE_CURRENT_BINARY_DIR}" ${target})' ''

# CompiledGraph.cmake: Debian's python3 whatever is first on PATH, as it once was.
debian=('    _cg_python_interpreter(${target})' \
  '    if(NOT Python_EXECUTABLE AND EXISTS /usr/bin/python3)
      set(Python_EXECUTABLE /usr/bin/python3 CACHE FILEPATH "")
    endif()')
interpreter "Debian's python3 always" "built for '/usr/bin/python3', not the venv's" \
  path debian-path "${debian[@]}"
interpreter "Debian's python3 always" "built for '/usr/bin/python3', not Python3_EXECUTABLE's" \
  python3 debian-python3 "${debian[@]}"

# CompiledGraph.cmake: no check for the headers (FindPython's own failure).
interpreter "no check for the headers" "interpreter_test headers: " headers no-headers-check \
  '  if(NOT has_header STREQUAL "True")' '  if(FALSE)'

# Install.cmake: no PYTHONPATH line. The build's install script, copied
# with the message gone, is what cmake --install runs from a folder of its own.
break_copy "$build/cmake_install.cmake" "$work/install-build/cmake_install.cmake" \
  'if(cg_python_misses)' 'if(FALSE)' || exit 1
sed -n 's/^CG_SANITIZE:STRING=/&/p' "$build/CMakeCache.txt" >"$work/install-build/CMakeCache.txt"
break_expect "as it is: install_test.sh install" 0 \
  bash "$repo/tests/install/install_test.sh" install "$build" "$repo" "$work/install-as-is" OFF
fails "no PYTHONPATH line: install_test.sh install" "the install did not print export" \
  bash "$repo/tests/install/install_test.sh" install "$work/install-build" "$repo" \
  "$work/install-broken" OFF

break_verdict "every check fails against the broken code and passes as it is"
