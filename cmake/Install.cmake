# cmake --install: cgc and its templates, the runtime library and its public headers, and the
# CMake package find_package(CompiledGraph) reads (cmake/CompiledGraphConfig.cmake.in).
# Everything is found relative to the prefix, so a moved install still works.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(cg_package_dir "${CMAKE_INSTALL_LIBDIR}/cmake/CompiledGraph")

install(TARGETS cg_runtime EXPORT CompiledGraphTargets
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/runtime/include/cg"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
if(TARGET cgc)
  set_target_properties(cgc PROPERTIES EXPORT_NAME cgc)
  install(TARGETS cgc EXPORT CompiledGraphTargets RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
  install(TARGETS cg-profile RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
  # The templates this cgc was built with, for reading what it generates from
  # (it carries its own copies inside and never reads these).
  install(DIRECTORY "${PROJECT_SOURCE_DIR}/codegen-templates/"
          DESTINATION "${CMAKE_INSTALL_DATADIR}/CompiledGraph/codegen-templates")
endif()
# The package graph modules import (their error classes), where Debian's
# python3 looks: /usr/lib/python3/dist-packages under the .deb's prefix.
install(DIRECTORY "${PROJECT_SOURCE_DIR}/runtime/python/cg"
        DESTINATION "lib/python3/dist-packages" FILES_MATCHING PATTERN "*.py")
# Where the python3 first on PATH (the one add_compiled_graph(... PYTHON)
# builds for) does not look there, as no Python but Debian's does, the install
# prints the line that makes it look. Not for a staged install (DESTDIR, the
# .deb): the package is not yet where it will live.
install(CODE [[
  set(cg_python_dir "${CMAKE_INSTALL_PREFIX}/lib/python3/dist-packages")
  find_program(cg_python3 NAMES python3 NO_CACHE NO_DEFAULT_PATH PATHS ENV PATH)
  if("$ENV{DESTDIR}" STREQUAL "" AND cg_python3)
    execute_process(
      COMMAND "${cg_python3}" -c "import os, sys
print(sys.executable)
sys.exit(os.path.realpath(sys.argv[1]) not in [os.path.realpath(p) for p in sys.path])"
              "${cg_python_dir}"
      RESULT_VARIABLE cg_python_misses OUTPUT_VARIABLE cg_python_executable
      OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(cg_python_misses)
      message("The Python package cg is in ${cg_python_dir}; for ${cg_python_executable} "
              "to import it:\nexport PYTHONPATH=${cg_python_dir}\${PYTHONPATH:+:\$PYTHONPATH}")
    endif()
  endif()
]])
install(EXPORT CompiledGraphTargets NAMESPACE CompiledGraph:: DESTINATION "${cg_package_dir}")
# The installed binaries carry no debug information, as the .deb's do not
# (CPACK_STRIP_FILES): it names the source and build directories of this
# machine. Their symbols stay (cmake --install --strip removes those too).
if(CMAKE_STRIP)
  set(cg_installed_binaries "${CMAKE_INSTALL_LIBDIR}/$<TARGET_FILE_NAME:cg_runtime>")
  if(TARGET cgc)
    list(APPEND cg_installed_binaries "${CMAKE_INSTALL_BINDIR}/$<TARGET_FILE_NAME:cgc>"
         "${CMAKE_INSTALL_BINDIR}/$<TARGET_FILE_NAME:cg-profile>")
  endif()
  install(CODE "
    foreach(file ${cg_installed_binaries})
      execute_process(COMMAND \"${CMAKE_STRIP}\" --strip-debug
                              \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/\${file}\"
                      COMMAND_ERROR_IS_FATAL ANY)
    endforeach()")
endif()

configure_package_config_file(
  "${PROJECT_SOURCE_DIR}/cmake/CompiledGraphConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/CompiledGraphConfig.cmake"
  INSTALL_DESTINATION "${cg_package_dir}")
# 0.x: a new minor version may break what the last one promised.
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/CompiledGraphConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/CompiledGraphConfig.cmake"
              "${PROJECT_BINARY_DIR}/CompiledGraphConfigVersion.cmake"
              "${PROJECT_SOURCE_DIR}/cmake/CompiledGraph.cmake"
              "${PROJECT_SOURCE_DIR}/cmake/RenderDots.cmake"
        DESTINATION "${cg_package_dir}")

# cpack -G DEB (from the build directory): compiled-graph_<version>_amd64.deb,
# installing under /usr. Its Depends are Debian 12's names for what cgc runs
# with (Clang 16's library, resource directory and driver), what the runtime
# links (libsodium, UCX, DLPack) and what a consumer's build needs (a C++20
# compiler, CMake 3.25).
set(CPACK_PACKAGE_NAME compiled-graph)
set(CPACK_PACKAGE_VENDOR "Compiled Graph for C++")
set(CPACK_PACKAGE_CONTACT "Compiled Graph for C++ <compiled-graph@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Ahead-of-time compiler and runtime for static graphs of C++ actor calls")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
string(CONCAT CPACK_DEBIAN_PACKAGE_DEPENDS
       "libc6, libstdc++6, libgcc-s1, libclang-cpp16, libllvm16, libclang-common-16-dev, "
       "clang-16, libsodium-dev, libucx-dev, libdlpack-dev, g++ (>= 4:12), cmake (>= 3.25)")
# Pictures of the graphs (add_compiled_graph(... SVG)) and Python modules
# (PYTHON) when they are there.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "graphviz, pybind11-dev, python3-dev")
include(CPack)
