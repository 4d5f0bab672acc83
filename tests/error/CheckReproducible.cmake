# CheckReproducible.cmake - cgc writes the same bytes from any checkout.
#
# Copies the examples into two checkouts at different paths (different
# lengths, so a path that leaked would show), compiles every example graph
# source in each with cgc into the build folder a CMake build would use, and
# compares every generated file byte for byte. The depfile (<target>.d) is
# left out: it is the build system's record of absolute paths, by design.
#
#   cmake -DCGC=<cgc> -DEXAMPLES=<examples dir> -DWORK=<scratch dir> -P CheckReproducible.cmake
foreach(var CGC EXAMPLES WORK)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "CheckReproducible.cmake: -D${var}=... is required")
  endif()
endforeach()

set(roots "${WORK}/a/checkout" "${WORK}/a-much-longer-path/another-checkout")
file(REMOVE_RECURSE "${WORK}")
set(targets quickstart:quickstart/quickstart.cg.cpp language_tour:language/tour.cg.cpp)
foreach(root IN LISTS roots)
  file(COPY "${EXAMPLES}/" DESTINATION "${root}/examples")
  foreach(entry IN LISTS targets)
    string(REPLACE ":" ";" entry "${entry}")
    list(GET entry 0 target)
    list(GET entry 1 source)
    cmake_path(GET source PARENT_PATH dir)
    execute_process(
      COMMAND "${CGC}" "${root}/examples/${source}" -o "${root}/build/examples/${dir}/${target}.cg"
              --target ${target} --depfile "${root}/build/examples/${dir}/${target}.cg/${target}.d"
              -- "-I${root}/examples/${dir}"
      RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE out)
    if(NOT code EQUAL 0)
      message(FATAL_ERROR "cgc failed on ${root}/examples/${source} (${code}):\n${out}")
    endif()
  endforeach()
endforeach()

list(GET roots 0 first)
list(GET roots 1 second)
file(GLOB_RECURSE generated RELATIVE "${first}/build" "${first}/build/*")
list(FILTER generated INCLUDE REGEX "\\.cg/[^/]+$")  # cgc's output, not its prelude cache
list(FILTER generated EXCLUDE REGEX "\\.d$")
list(LENGTH generated count)
if(count LESS 10)
  message(FATAL_ERROR "only ${count} generated files found under ${first}/build")
endif()
foreach(file IN LISTS generated)
  if(NOT EXISTS "${second}/build/${file}")
    message(FATAL_ERROR "${file} was generated in one checkout only")
  endif()
  file(READ "${first}/build/${file}" a HEX)
  file(READ "${second}/build/${file}" b HEX)
  if(NOT a STREQUAL b)
    message(FATAL_ERROR "${file} differs between ${first} and ${second}")
  endif()
  file(STRINGS "${first}/build/${file}" leaked REGEX "${WORK}")
  if(leaked)
    message(FATAL_ERROR "${file} names the checkout: ${leaked}")
  endif()
endforeach()
message(STATUS "${count} generated files, byte-identical from both checkouts")
