#!/usr/bin/env bash
# install_test.sh - CompiledGraph installed as a user installs it, and used
# through find_package() from a project of its own (tests/install/CMakeLists.txt).
#
# Usage: install_test.sh <step> <build dir> <source dir> <work dir> <built with CUDA: ON|OFF>
#   install     cmake --install into <work>/staged, then moved to <work>/prefix
#               (every later step uses the moved copy: the install is relocatable)
#   quickstart  examples/quickstart configured, built and run out of tree
#   version     find_package(CompiledGraph 1.0 / 0.1) is refused, 0.2 accepted
#   paths       no installed file (binaries too) and no generated text names
#               the build or source dir
#   cuda        COMPONENTS cuda: found as built, refused with the reason if not
#   deb         cpack -G DEB makes compiled-graph_<version>_amd64.deb with the
#               Debian 12 Depends; the quickstart builds and runs against its
#               files (unpacked with dpkg-deb -x, not installed on this machine)
set -euo pipefail
step=$1 build=$2 source=$3 work=$4 cuda=$5
prefix=$work/prefix

fail() { echo "install_test $step: $*" >&2; exit 1; }

# Configures, builds and runs examples/quickstart against the install at $1.
build_quickstart() {
  local qs=$work/quickstart-$step
  rm -rf "$qs"
  # As a user's shell with a venv active: its python3 first on PATH.
  local venv=$work/venv-$step
  rm -rf "$venv" && "$(sed -n 's/^Python_EXECUTABLE:FILEPATH=//p' "$build/CMakeCache.txt")" \
    -m venv --without-pip "$venv"
  PATH="$venv/bin:$PATH" cmake -S "$source/examples/quickstart" -B "$qs" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$1" >"$work/$step.log" 2>&1 ||
    { cat "$work/$step.log"; fail "configuring the quickstart failed"; }
  cmake --build "$qs" >>"$work/$step.log" 2>&1 ||
    { cat "$work/$step.log"; fail "building the quickstart failed"; }
  output=$("$qs/quickstart_app")
  grep -qx "chain:    hello" <<<"$output" || fail "unexpected output: $output"
  grep -qx "pipeline: hello0 hello1 hello2" <<<"$output" || fail "unexpected output: $output"
  grep -qx '#include "quickstart.cg.cpp"' "$qs/quickstart.cg/quickstart.actors.hpp" ||
    fail "the actor header does not include the graph source through the include path"
  # The Python module (PYTHON), for the venv's python3, with the installed
  # package cg linked beside it: serve.py. Not from a sanitized build: its
  # module cannot load into the plain interpreter.
  grep -qxF "Python_EXECUTABLE:FILEPATH=$venv/bin/python3" "$qs/CMakeCache.txt" ||
    fail "the module is not built for the venv's python3, first on PATH"
  if [[ -z $(sed -n 's/^CG_SANITIZE:STRING=//p' "$build/CMakeCache.txt") ]]; then
    output=$(printf 'one\ntwo\n' | PYTHONPATH="$qs" PYTHONDONTWRITEBYTECODE=1 \
             "$venv/bin/python3" "$source/examples/quickstart/serve.py" 2>&1) ||
      fail "serve.py failed: $output"
    [[ $output == $'one\ntwo' ]] || fail "unexpected output of serve.py: $output"
  fi
}

# Configures a throwaway project whose CMakeLists.txt is $1; its output in $out.
configure() {
  local dir=$work/project-$step
  rm -rf "$dir" && mkdir -p "$dir"
  printf '%s\n' "cmake_minimum_required(VERSION 3.25)" "project(consumer CXX)" "$1" \
    >"$dir/CMakeLists.txt"
  out=$(cmake -S "$dir" -B "$dir/build" -DCMAKE_PREFIX_PATH="$prefix" 2>&1)
}

case "$step" in
  install)
    rm -rf "$work" && mkdir -p "$work"
    installed=$(cmake --install "$build" --prefix "$work/staged" 2>&1) ||
      { echo "$installed"; fail "cmake --install failed"; }
    # No python3 looks in a new prefix: the install says how to make it.
    line="export PYTHONPATH=$work/staged/lib/python3/dist-packages\${PYTHONPATH:+:\$PYTHONPATH}"
    grep -qxF "$line" <<<"$installed" || fail "the install did not print $line: $installed"
    [[ $(eval "$line" && python3 -B -c "import cg; print(cg.__file__)") == \
       "$work/staged/lib/python3/dist-packages/cg/__init__.py" ]] ||
      fail "with $line, python3 does not import the installed cg"
    mv "$work/staged" "$prefix"
    for f in bin/cgc lib/libcg_runtime.a include/cg/cg.hpp \
             lib/cmake/CompiledGraph/CompiledGraphConfig.cmake \
             lib/cmake/CompiledGraph/CompiledGraphConfigVersion.cmake \
             lib/cmake/CompiledGraph/CompiledGraph.cmake \
             share/CompiledGraph/codegen-templates/driver_graph.hpp.tpl \
             share/CompiledGraph/codegen-templates/README.md; do
      [[ -e $prefix/$f ]] || fail "$f was not installed"
    done
    # Implementation headers stay in the source tree.
    [[ ! -e $prefix/include/net ]] || fail "implementation headers were installed"
    ;;
  quickstart)
    build_quickstart "$prefix"
    ;;
  version)
    for wrong in 1.0 0.1; do
      configure "find_package(CompiledGraph $wrong CONFIG REQUIRED)" &&
        fail "find_package(CompiledGraph $wrong) was accepted by version 0.2"
      grep -q "compatible with requested version \"$wrong\"" <<<"$out" ||
        fail "find_package(CompiledGraph $wrong) failed without CMake's version message: $out"
    done
    configure "find_package(CompiledGraph 0.2 CONFIG REQUIRED)
      if(NOT TARGET CompiledGraph::runtime OR NOT TARGET CompiledGraph::cgc OR
         NOT COMMAND add_compiled_graph)
        message(FATAL_ERROR \"incomplete package\")
      endif()" || fail "find_package(CompiledGraph 0.2) failed: $out"
    ;;
  paths)
    # Every installed file, binaries read as text (-a): a path into the trees
    # it was built from, in cgc, cg-profile or the library (a fallback to the
    # build tree's headers, debug information), works only on this machine.
    # The quickstart's generated text too (its build files name its own tree).
    for dir in "$build" "$source"; do
      found=$( (grep -rlaF "$dir" "$prefix"
                grep -rIlF "$dir" "$work/quickstart-quickstart/quickstart.cg" \
                  --include='*.cmake' --include='*.hpp' --include='*.h' --include='*.cpp' \
                  --include='*.json' --include='*.txt') || true)
      [[ -z $found ]] || fail "these files name $dir: $found"
    done
    ;;
  cuda)
    if configure "find_package(CompiledGraph 0.2 CONFIG REQUIRED COMPONENTS cuda)"; then
      [[ $cuda == ON || $cuda == TRUE ]] || fail "COMPONENTS cuda found in a build without CUDA"
    else
      [[ $cuda != ON && $cuda != TRUE ]] || fail "COMPONENTS cuda refused in a CUDA build: $out"
      grep -q "was built without CUDA (component 'cuda')" <<<"$out" ||
        fail "COMPONENTS cuda refused without the reason: $out"
    fi
    ;;
  deb)
    rm -rf "$work/deb" "$work/debroot"
    cpack --config "$build/CPackConfig.cmake" -G DEB -B "$work/deb" >"$work/deb.log" 2>&1 ||
      { cat "$work/deb.log"; fail "cpack -G DEB failed"; }
    version=$(sed -n 's/^set(CPACK_PACKAGE_VERSION "\(.*\)")$/\1/p' "$build/CPackConfig.cmake")
    deb=$work/deb/compiled-graph_${version}_amd64.deb
    [[ -f $deb ]] || fail "no $deb: $(ls "$work/deb")"
    depends=$(dpkg-deb -f "$deb" Depends)
    names=$(tr ',' '\n' <<<"$depends" | awk '{print $1}')
    for package in libclang-cpp16 libllvm16 libclang-common-16-dev libsodium-dev libucx-dev libdlpack-dev \
                   g++ cmake; do
      grep -qxF "$package" <<<"$names" || fail "Depends lacks $package: $depends"
    done
    dpkg-deb -x "$deb" "$work/debroot"
    [[ -x $work/debroot/usr/bin/cgc ]] || fail "the package has no /usr/bin/cgc"
    build_quickstart "$work/debroot/usr"
    ;;
  *) fail "unknown step" ;;
esac
