#!/usr/bin/env bash
# interpreter_test.sh - which Python add_compiled_graph(... PYTHON) builds for,
# seen by configuring a throwaway project (cmake/CompiledGraph.cmake with the
# built cgc) as a user's shell would: a venv first on PATH.
#
# Usage: interpreter_test.sh <case> <source dir> <cgc> <python> <work dir>
#   path       the venv's python3, first on PATH, is the one: Python_EXECUTABLE
#              names it, and the module's file suffix is one it imports
#   python3    -DPython3_EXECUTABLE=<a second venv's python3> wins over the
#              venv on PATH
#   headers    a python3 first on PATH whose headers are missing fails the
#              configure with a message naming it and the missing Python.h
# <python> is an interpreter with headers, the venv's base.
set -euo pipefail
case=$1 source=$2 cgc=$3 python=$4 work=$5/$1

fail() { echo "interpreter_test $case: $*" >&2; exit 1; }

rm -rf "$work" && mkdir -p "$work/project"
"$python" -m venv --without-pip "$work/venv"
venv_python=$work/venv/bin/python3
cat >"$work/project/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.25)
project(interpreter CXX)
add_executable(CompiledGraph::cgc IMPORTED)
set_target_properties(CompiledGraph::cgc PROPERTIES IMPORTED_LOCATION "$cgc")
add_library(CompiledGraph::runtime INTERFACE IMPORTED)
include("$source/cmake/CompiledGraph.cmake")
add_compiled_graph(quickstart SOURCE "$source/examples/quickstart/quickstart.cg.cpp" PYTHON)
EOF

# Configures the project with the venv first on PATH and $@ added; its output in $out.
configure() {
  out=$(PATH="$work/venv/bin:$PATH" cmake -S "$work/project" -B "$work/build" "$@" 2>&1)
}
cached() { sed -n "s/^$1:[A-Z]*=//p" "$work/build/CMakeCache.txt"; }

case "$case" in
  path)
    configure || fail "the configure failed: $out"
    [[ $(cached Python_EXECUTABLE) == "$venv_python" ]] ||
      fail "built for '$(cached Python_EXECUTABLE)', not the venv's $venv_python"
    suffix=$(cached PYTHON_MODULE_EXTENSION)
    "$venv_python" -c "import importlib.machinery, sys
sys.exit(sys.argv[1] not in importlib.machinery.EXTENSION_SUFFIXES)" "$suffix" ||
      fail "the venv's python3 imports no module named *$suffix"
    [[ -L $work/build/cg && $(readlink -f "$work/build/cg") == "$(readlink -f "$source/runtime/python/cg")" ]] ||
      fail "no link cg beside the module to $source/runtime/python/cg"
    ;;
  python3)
    "$python" -m venv --without-pip "$work/chosen"
    chosen=$work/chosen/bin/python3
    configure -DPython3_EXECUTABLE="$chosen" || fail "the configure failed: $out"
    [[ $(cached Python_EXECUTABLE) == "$chosen" ]] ||
      fail "built for '$(cached Python_EXECUTABLE)', not Python3_EXECUTABLE's $chosen"
    ;;
  headers)
    # What an interpreter without its development files reports: an include
    # folder with no Python.h (sysconfig is what builds of modules ask).
    site=$("$venv_python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    # A .pth line that starts with "import" runs at startup, in every Python.
    echo "import sysconfig; sysconfig.get_paths = lambda *a, _paths=sysconfig.get_paths, **k: dict(_paths(*a, **k), include='$work/no-headers')" \
      >"$site/no_headers.pth"
    version=$("$venv_python" -c "import sys; print('%d.%d.%d' % sys.version_info[:3])")
    configure && fail "the configure passed for a python3 without headers"
    expected="add_compiled_graph(quickstart): PYTHON builds for $venv_python (Python $version), which has no headers to build a module with (no $work/no-headers/Python.h): install them (Debian: python3-dev) or set Python_EXECUTABLE to an interpreter that has them"
    # CMake wraps the message; its words, in order, are what counts.
    [[ $(tr -s ' \n' '  ' <<<"$out") == *"$expected"* ]] ||
      fail "expected the message: $expected
got: $out"
    ;;
  *) fail "unknown case" ;;
esac
