# Checks what `cgc --version` prints: the project's name and version, then the
# Clang and LLVM cgc is built on, exactly, on stdout, with exit status 0.
#
# cmake -DCGC=<cgc> -DVERSION=<project version> -DCLANG_VERSION=<x.y.z>
#       -DLLVM_VERSION=<x.y.z> -P CheckCgcVersion.cmake
execute_process(COMMAND ${CGC} --version RESULT_VARIABLE status OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "cgc --version exited with ${status}:\n${out}${err}")
endif()
set(expected "cgc (Compiled Graph) ${VERSION}\nbuilt on Clang ${CLANG_VERSION}, LLVM ${LLVM_VERSION}\n")
if(NOT out STREQUAL expected)
  message(NOTICE "cgc --version printed\n${out}instead of\n${expected}") # as written, unwrapped
  message(FATAL_ERROR "cgc --version printed something else")
endif()
if(NOT err STREQUAL "")
  message(FATAL_ERROR "cgc --version wrote to stderr:\n${err}")
endif()
