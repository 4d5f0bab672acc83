# add_compiled_graph(): compile a graph source with cgc as a build step.
#
#   add_compiled_graph(<target> SOURCE <file.cg.cpp>
#                      [GRAPHS <graph>...]          # default: every CG_GRAPH function
#                      [LINK_LIBRARIES <lib>...]    # code the actors need (their methods)
#                      [OVERLAP_GPU_COMMUNICATION]  # hoist NCCL receives (cgc
#                                                   # --overlap-gpu-communication)
#                      [SCHEDULE bind|cost]         # task order (cgc --schedule)
#                      [COSTS <profile.json>]       # method costs (cgc --costs)
#                      [TRANSPORT tcp]              # every channel between processes
#                                                   # over TCP (cgc --transport=tcp)
#                      [CONSTEXPR_STEPS <n>]        # evaluation step limit of a graph
#                                                   # (cgc --constexpr-steps)
#                      [SVG]                        # render each <graph>.dot to
#                                                   # <graph>.svg with Graphviz's dot
#                      [DOT_TASKS_ONLY]             # <graph>.dot without the schedule's
#                                                   # operations (cgc --dot-operations=false)
#                      [PYTHON])                    # also the Python module <target>
#                                                   # (cg/python.hpp; pybind11-dev)
#
# Makes:
#   <target>             a static library carrying the typed driver; link it and
#                        `#include "<target>.cg.hpp"` (its directory is PUBLIC);
#   <target>_actors      the actor executable, started once per actor instance
#                        in processes mode; built whenever <target> is;
#   <target>_actor_code  the actor programs, compiled once and linked into both
#                        (the driver runs them as threads in threads mode),
#                        in 8 files (<target>.actors.<i>.cpp);
#   <target>_python      with PYTHON: the extension module `import <target>`,
#                        in ${CMAKE_CURRENT_BINARY_DIR}, for the python3 first
#                        on PATH (or Python3_EXECUTABLE / Python_EXECUTABLE)
#                        at the first configure; beside it a link `cg` to the
#                        package it imports (its error classes:
#                        runtime/python/cg, installed into
#                        lib/python3/dist-packages), so that the module's
#                        folder alone on PYTHONPATH is enough.
# cgc writes everything under ${CMAKE_CURRENT_BINARY_DIR}/<target>.cg/: the
# driver, one program per actor, and per graph <graph>.ir.json,
# <graph>.schedule.txt, <graph>.schedule.json and <graph>.dot (listed as
# byproducts when GRAPHS names the graphs), and with SVG <graph>.svg (a
# warning, and no pictures, where Graphviz's dot is not found).
# A depfile makes edits to anything the source includes re-run cgc, which
# rewrites only the files whose contents change: an edit to a graph function
# recompiles the driver, the actor executable's main() and the programs it
# changes, and no more where the actor classes live in headers of their own
# (docs/getting-started.md, "Larger projects"). The
# include directories, definitions and options <target> compiles with (set
# them on <target> as usual) reach cgc and the actor executable too.
include_guard(GLOBAL)
set(_cg_cmake_dir "${CMAKE_CURRENT_LIST_DIR}") # RenderDots.cmake is beside this file
# Files the actor programs are spread over: more than the actors of most
# graphs, so that each program has a file to itself; an empty one costs a
# few milliseconds.
set(_cg_actor_shards 8)
# The folder holding the Python package `cg`: the installed package's
# (CompiledGraphConfig.cmake sets it), else the source tree's.
if(NOT DEFINED _cg_python_dir)
  set(_cg_python_dir "${CMAKE_CURRENT_LIST_DIR}/../runtime/python")
endif()

function(add_compiled_graph target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "OVERLAP_GPU_COMMUNICATION;SVG;DOT_TASKS_ONLY;PYTHON" "SOURCE;SCHEDULE;COSTS;TRANSPORT;CONSTEXPR_STEPS"
                        "GRAPHS;LINK_LIBRARIES")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "add_compiled_graph(${target}): unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_SOURCE)
    message(FATAL_ERROR "add_compiled_graph(${target}): SOURCE <graph source> is required")
  endif()
  if(NOT TARGET CompiledGraph::cgc)
    message(FATAL_ERROR "add_compiled_graph(${target}): the cgc compiler is not available "
                        "(configure CompiledGraph with CG_BUILD_COMPILER=ON)")
  endif()

  cmake_path(ABSOLUTE_PATH ARG_SOURCE BASE_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}"
             NORMALIZE OUTPUT_VARIABLE source)
  # The generated code includes the source by its path within the project
  # (CMAKE_SOURCE_DIR on the include path): no path of this machine is
  # written, and two graph sources of one name in different folders are
  # told apart. A source outside the project: by its name, from its folder.
  cmake_path(IS_PREFIX CMAKE_SOURCE_DIR "${source}" NORMALIZE source_in_project)
  if(source_in_project)
    set(source_dir "${CMAKE_SOURCE_DIR}")
    cmake_path(RELATIVE_PATH source BASE_DIRECTORY "${CMAKE_SOURCE_DIR}"
               OUTPUT_VARIABLE source_name)
  else()
    cmake_path(GET source PARENT_PATH source_dir)
    cmake_path(GET source FILENAME source_name)
  endif()
  set(out "${CMAKE_CURRENT_BINARY_DIR}/${target}.cg")
  set(driver_header "${out}/${target}.cg.hpp")
  set(driver_source "${out}/${target}.driver.cpp")
  # The actor programs in _cg_actor_shards files (cgc --actor-shards): an
  # edit to a graph function recompiles only those whose programs it
  # changes. Their header names the actor classes' headers rather than the
  # source when the source declares no type (cgc says which in it).
  set(actors_header "${out}/${target}.actors.hpp")
  set(actor_code "")
  math(EXPR last_shard "${_cg_actor_shards} - 1")
  foreach(shard RANGE ${last_shard})
    list(APPEND actor_code "${out}/${target}.actors.${shard}.cpp")
  endforeach()
  set(actor_host_main "${out}/${target}.actor_host.cpp")

  set(graph_flags "")
  set(artefacts "")
  foreach(graph IN LISTS ARG_GRAPHS)
    list(APPEND graph_flags --graph ${graph})
    # File names as cgc spells them: "ns::g" -> "ns_g".
    string(REPLACE "::" "_" id "${graph}")
    string(MAKE_C_IDENTIFIER "${id}" id)
    foreach(suffix IN ITEMS .ir.json .schedule.txt .schedule.json .dot)
      list(APPEND artefacts "${out}/${id}${suffix}")
    endforeach()
  endforeach()

  set(render_svg "")
  if(ARG_SVG)
    find_program(CG_DOT_EXECUTABLE dot DOC "Graphviz's dot: add_compiled_graph(... SVG)")
    if(CG_DOT_EXECUTABLE)
      set(render_svg COMMAND "${CMAKE_COMMAND}" -DDOT=${CG_DOT_EXECUTABLE} -DDIRECTORY=${out}
                     -P "${_cg_cmake_dir}/RenderDots.cmake")
      foreach(graph IN LISTS ARG_GRAPHS)
        string(REPLACE "::" "_" id "${graph}")
        string(MAKE_C_IDENTIFIER "${id}" id)
        list(APPEND artefacts "${out}/${id}.svg")
      endforeach()
    else()
      message(WARNING "add_compiled_graph(${target}): SVG asks for pictures of the graphs, but "
                      "Graphviz's dot was not found (Debian: apt-get install graphviz); "
                      "writing the .dot files only")
    endif()
  endif()

  set(schedule_flags "")
  set(schedule_depends "")
  set(python_module "")
  if(ARG_PYTHON)
    # Everything cgc writes by default, and the module.
    list(APPEND schedule_flags --emit=ir,schedule,schedule-json,dot,cpp,python)
    set(python_module "${out}/${target}.python.cpp")
  endif()
  if(ARG_DOT_TASKS_ONLY)
    list(APPEND schedule_flags --dot-operations=false)
  endif()
  if(ARG_OVERLAP_GPU_COMMUNICATION)
    list(APPEND schedule_flags --overlap-gpu-communication)
  endif()
  if(ARG_SCHEDULE)
    if(NOT ARG_SCHEDULE MATCHES "^(bind|cost)$")
      message(FATAL_ERROR "add_compiled_graph(${target}): SCHEDULE must be bind or cost, "
                          "not '${ARG_SCHEDULE}'")
    endif()
    list(APPEND schedule_flags --schedule=${ARG_SCHEDULE})
  endif()
  if(ARG_TRANSPORT)
    if(NOT ARG_TRANSPORT STREQUAL "tcp")
      message(FATAL_ERROR "add_compiled_graph(${target}): TRANSPORT must be tcp, "
                          "not '${ARG_TRANSPORT}'")
    endif()
    list(APPEND schedule_flags --transport=tcp)
  endif()
  if(DEFINED ARG_CONSTEXPR_STEPS)
    if(NOT ARG_CONSTEXPR_STEPS MATCHES "^[1-9][0-9]*$")
      message(FATAL_ERROR "add_compiled_graph(${target}): CONSTEXPR_STEPS must be a positive "
                          "number, not '${ARG_CONSTEXPR_STEPS}'")
    endif()
    list(APPEND schedule_flags --constexpr-steps=${ARG_CONSTEXPR_STEPS})
  endif()
  if(ARG_COSTS)
    cmake_path(ABSOLUTE_PATH ARG_COSTS BASE_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}"
               NORMALIZE OUTPUT_VARIABLE costs)
    list(APPEND schedule_flags --costs "${costs}")
    list(APPEND schedule_depends "${costs}")
  endif()

  # The flags cgc parses the source with: those the driver library compiles
  # with (including usage requirements of what it links).
  set(includes "$<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>")
  set(defines "$<TARGET_PROPERTY:${target},COMPILE_DEFINITIONS>")
  add_custom_command(
    OUTPUT "${driver_header}" "${driver_source}" "${actors_header}" ${actor_code}
           "${actor_host_main}" ${python_module}
    BYPRODUCTS ${artefacts}
    COMMAND CompiledGraph::cgc "${source}" -o "${out}" --target ${target}
            --include-source-as "${source_name}" --actor-shards=${_cg_actor_shards}
            --depfile "${out}/${target}.d" ${graph_flags} ${schedule_flags} --
            "$<$<BOOL:${includes}>:-I$<JOIN:${includes},;-I>>"
            "$<$<BOOL:${defines}>:-D$<JOIN:${defines},;-D>>"
    ${render_svg}
    DEPENDS "${source}" CompiledGraph::cgc ${schedule_depends}
    DEPFILE "${out}/${target}.d"
    COMMAND_EXPAND_LISTS
    COMMENT "cgc: compiling the graphs of ${ARG_SOURCE}"
    VERBATIM)

  # The actors compile the graph source as the driver library does: with its
  # include directories, definitions and options, wherever they come from.
  add_library(${target}_actor_code STATIC ${actor_code})
  target_include_directories(${target}_actor_code PRIVATE "${out}" "${source_dir}" "${includes}")
  target_compile_definitions(${target}_actor_code PRIVATE "${defines}")
  target_compile_options(${target}_actor_code PRIVATE
    "$<TARGET_PROPERTY:${target},COMPILE_OPTIONS>")
  target_link_libraries(${target}_actor_code PUBLIC CompiledGraph::runtime ${ARG_LINK_LIBRARIES})
  # No precompiled <cg/actor.hpp>: building it takes longer than parsing the
  # header in three shards, and most graphs fill one shard (their programs
  # include the whole source), leaving the others empty and all but free.

  add_executable(${target}_actors "${actor_host_main}")
  target_include_directories(${target}_actors PRIVATE "${out}" "${source_dir}" "${includes}")
  target_compile_definitions(${target}_actors PRIVATE "${defines}")
  target_compile_options(${target}_actors PRIVATE "$<TARGET_PROPERTY:${target},COMPILE_OPTIONS>")
  target_link_libraries(${target}_actors PRIVATE ${target}_actor_code)

  add_library(${target} STATIC "${driver_source}" "${driver_header}")
  target_include_directories(${target} PUBLIC "${out}" "${source_dir}")
  target_link_libraries(${target} PUBLIC CompiledGraph::runtime ${ARG_LINK_LIBRARIES}
                        PRIVATE ${target}_actor_code)
  target_compile_definitions(${target} PRIVATE
    "CG_ACTOR_HOST=\"$<TARGET_FILE:${target}_actors>\"")
  # Building <target> builds the actor executable. With single-config Ninja,
  # through the driver source's object (it includes nothing and compiles in an
  # instant): a target-level dependency would hold back every object of what
  # links <target> (the user's driver) until the actor executable is linked,
  # where after an edit the two compile side by side.
  get_property(multi_config GLOBAL PROPERTY GENERATOR_IS_MULTI_CONFIG)
  get_target_property(actors_dir ${target}_actors RUNTIME_OUTPUT_DIRECTORY)
  if(NOT actors_dir)
    set(actors_dir "${CMAKE_CURRENT_BINARY_DIR}")
  endif()
  if(CMAKE_GENERATOR MATCHES "Ninja" AND NOT multi_config AND IS_ABSOLUTE "${actors_dir}"
     AND NOT actors_dir MATCHES "\\$<")
    set_property(SOURCE "${driver_source}" TARGET_DIRECTORY ${target} APPEND PROPERTY
                 OBJECT_DEPENDS "${actors_dir}/${target}_actors${CMAKE_EXECUTABLE_SUFFIX}")
  else()
    add_dependencies(${target} ${target}_actors)
  endif()

  if(ARG_PYTHON)
    _cg_python_module(${target} "${python_module}")
  endif()
endfunction()

# The interpreter the Python modules are for, as the user runs Python: the
# python3 first on PATH (a venv's, conda's, pyenv's) unless Python_EXECUTABLE
# or Python3_EXECUTABLE names one. Asked for sys.executable, so that a pyenv
# shim, which picks an interpreter per folder, is pinned to the one it ran.
# Cached: later configures keep it. Fails naming what it found when there is
# no such interpreter or it has no headers to build a module with.
function(_cg_python_interpreter target)
  if(Python_EXECUTABLE)
    set(given "${Python_EXECUTABLE}")
  elseif(Python3_EXECUTABLE)
    set(given "${Python3_EXECUTABLE}")
  else()
    find_program(given NAMES python3 NO_CACHE NO_DEFAULT_PATH PATHS ENV PATH)
    if(NOT given)
      message(FATAL_ERROR "add_compiled_graph(${target}): PYTHON builds for the python3 first "
                          "on PATH, and there is none on PATH ($ENV{PATH}); put one there or "
                          "set Python_EXECUTABLE")
    endif()
  endif()
  execute_process(
    COMMAND "${given}" -c "import os, sys, sysconfig
include = sysconfig.get_paths()['include']
print(sys.executable, '%d.%d.%d' % sys.version_info[:3], include,
      os.path.isfile(os.path.join(include, 'Python.h')), sep='\\n')"
    RESULT_VARIABLE failed OUTPUT_VARIABLE found ERROR_VARIABLE error
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  string(REPLACE "\n" ";" found "${found}")
  list(LENGTH found fields)
  if(failed OR NOT fields EQUAL 4)
    message(FATAL_ERROR "add_compiled_graph(${target}): PYTHON builds for ${given}, which did "
                        "not run as Python: ${failed} ${error}")
  endif()
  list(GET found 0 executable)
  list(GET found 1 version)
  list(GET found 2 include)
  list(GET found 3 has_header)
  if(version VERSION_LESS 3.8)
    message(FATAL_ERROR "add_compiled_graph(${target}): PYTHON needs Python 3.8 or later; "
                        "${given} is Python ${version}")
  endif()
  if(NOT has_header STREQUAL "True")
    message(FATAL_ERROR "add_compiled_graph(${target}): PYTHON builds for ${executable} "
                        "(Python ${version}), which has no headers to build a module with "
                        "(no ${include}/Python.h): install them (Debian: python3-dev) or "
                        "set Python_EXECUTABLE to an interpreter that has them")
  endif()
  set(Python_EXECUTABLE "${executable}" CACHE FILEPATH
      "The Python interpreter add_compiled_graph(... PYTHON) builds modules for")
endfunction()

# The Python module of add_compiled_graph(<target> ... PYTHON): pybind11, for
# _cg_python_interpreter()'s Python. pybind11 is the interpreter's own where
# it has one (pip install pybind11), else any on CMAKE_PREFIX_PATH (Debian's
# pybind11-dev): its headers build for every CPython with headers.
function(_cg_python_module target module_source)
  if(NOT TARGET pybind11::module)
    _cg_python_interpreter(${target})
    set(PYBIND11_FINDPYTHON ON)
    find_package(Python 3.8 COMPONENTS Interpreter Development.Module REQUIRED)
    execute_process(COMMAND "${Python_EXECUTABLE}" -m pybind11 --cmakedir
                    OUTPUT_VARIABLE own_pybind11 ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    find_package(pybind11 2.10 CONFIG HINTS ${own_pybind11})
    if(NOT pybind11_FOUND)
      message(FATAL_ERROR "add_compiled_graph(${target}): PYTHON needs pybind11 2.10 or later: "
                          "${Python_EXECUTABLE} has none (pip install pybind11) and there is "
                          "none on CMAKE_PREFIX_PATH (Debian: pybind11-dev)")
    endif()
  endif()
  # The module is a shared object: what it links is position-independent.
  set_target_properties(${target} ${target}_actor_code PROPERTIES POSITION_INDEPENDENT_CODE ON)
  pybind11_add_module(${target}_python MODULE "${module_source}")
  set_target_properties(${target}_python PROPERTIES OUTPUT_NAME ${target}
                        LIBRARY_OUTPUT_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}")
  target_link_libraries(${target}_python PRIVATE ${target})
  _cg_python_package_beside("${CMAKE_CURRENT_BINARY_DIR}" ${target})
endfunction()

# A link `cg` in <dir> to the package the modules there import: Python puts a
# module's folder on sys.path, so the package is found with no PYTHONPATH of
# its own, in the build tree as against an install. A `cg` of the project's
# own there is left alone, with a warning.
function(_cg_python_package_beside dir target)
  cmake_path(ABSOLUTE_PATH _cg_python_dir NORMALIZE OUTPUT_VARIABLE package_dir)
  set(package "${package_dir}/cg")
  if(NOT EXISTS "${package}/__init__.py")
    message(FATAL_ERROR "add_compiled_graph(${target}): PYTHON: the package cg is not where "
                        "CompiledGraph keeps it (${package}/__init__.py)")
  endif()
  if(EXISTS "${dir}/cg" AND NOT IS_SYMLINK "${dir}/cg")
    message(WARNING "add_compiled_graph(${target}): ${dir}/cg is not the package cg's link; "
                    "the module finds cg only where PYTHONPATH names ${package_dir}")
    return()
  endif()
  file(MAKE_DIRECTORY "${dir}")
  file(CREATE_LINK "${package}" "${dir}/cg" SYMBOLIC)
endfunction()
