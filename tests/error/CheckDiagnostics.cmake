# Runs cgc on a graph source that must be rejected and checks its diagnostics
# against the expectations written in the source, next to the offending line
# (the idea of Clang's -verify):
#
#   auto b = g.actor<Echo>("a");  // expected-error {{actor name 'a' is already used in graph 'g'}}
#
# Every expected error and note must be printed as `SOURCE:LINE:COL: error: text`
# on that line, exactly; no other error may be printed; cgc must exit 1.
#
# A line `// cgc-args: ...` adds options to the cgc command line; a line
# `// cgc-expect-in: file` checks the expectations in that file (beside the
# source) as well.
#
# And the whole output, as a user reads it (the source lines, carets, ranges
# and fix-its Clang's renderer prints under each diagnostic): it must equal
# `<source>.stderr` beside the source, byte for byte, with the source's
# directory left out of paths and the runtime's include directory written
# `<runtime>`. After a deliberate change, rewrite it with
#   cgc x.cg.cpp -o /tmp/out -fno-color-diagnostics -- -I runtime/include 2>&1 |
#     sed -e "s|$PWD/tests/error/||g" -e "s|$PWD/runtime/include|<runtime>|g" > x.cg.cpp.stderr
# and read the difference before committing it.
#
# cmake -DCGC=<cgc> -DSOURCE=<file> -DOUT=<dir> -DINCLUDE=<runtime include> -P CheckDiagnostics.cmake
file(STRINGS "${SOURCE}" extra_args REGEX "^// cgc-args: ")
list(TRANSFORM extra_args REPLACE "^// cgc-args: " "")
separate_arguments(extra_args UNIX_COMMAND "${extra_args}")
execute_process(
  COMMAND "${CGC}" "${SOURCE}" -o "${OUT}" -fno-color-diagnostics ${extra_args} -- "-I${INCLUDE}"
  RESULT_VARIABLE rc
  ERROR_VARIABLE stderr)
message("cgc exit code ${rc}; stderr:\n${stderr}")
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "cgc must reject ${SOURCE} with exit code 1, got '${rc}'")
endif()

# Split into lines without letting CMake's list separator ';' interfere.
function(split_lines text out)
  string(REPLACE ";" "<semicolon>" text "${text}")
  string(REPLACE "\n" ";" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

split_lines("${stderr}" printed)

# Checks the expectations written in `file` against the printed diagnostics;
# adds the expected errors to `expected_errors` and any mismatch to `failures`.
function(check_expectations file)
  file(READ "${file}" source_text)
  split_lines("${source_text}" source_lines)
  set(line_number 0)
  foreach(line IN LISTS source_lines)
    math(EXPR line_number "${line_number} + 1")
    while(line MATCHES "expected-(error|note) {{(.*)}}")
      set(kind "${CMAKE_MATCH_1}")
      set(text "${CMAKE_MATCH_2}")
      # Non-greedy by hand: the text ends at the first "}}".
      string(FIND "${text}" "}}" end)
      if(NOT end EQUAL -1)
        string(SUBSTRING "${text}" 0 ${end} text)
      endif()
      if(kind STREQUAL "error")
        math(EXPR expected_errors "${expected_errors} + 1")
      endif()
      set(found FALSE)
      foreach(out_line IN LISTS printed)
        if(out_line MATCHES "^(.*):([0-9]+):([0-9]+): ${kind}: (.*)$")
          if(CMAKE_MATCH_1 STREQUAL file AND CMAKE_MATCH_2 EQUAL line_number
             AND CMAKE_MATCH_4 STREQUAL text)
            set(found TRUE)
          endif()
        endif()
      endforeach()
      if(NOT found)
        string(APPEND failures "  ${file}:${line_number}: expected ${kind}: ${text}\n")
      endif()
      string(FIND "${line}" "expected-${kind} {{${text}}}" at)
      string(LENGTH "expected-${kind} {{${text}}}" length)
      math(EXPR after "${at} + ${length}")
      string(SUBSTRING "${line}" ${after} -1 line)
    endwhile()
  endforeach()
  set(expected_errors ${expected_errors} PARENT_SCOPE)
  set(failures "${failures}" PARENT_SCOPE)
endfunction()

set(expected_errors 0)
set(failures "")
check_expectations("${SOURCE}")
# A line `// cgc-expect-in: header.hpp` names a file beside the source that
# holds expectations too (a helper the graph calls).
file(STRINGS "${SOURCE}" other_files REGEX "^// cgc-expect-in: ")
list(TRANSFORM other_files REPLACE "^// cgc-expect-in: " "")
cmake_path(GET SOURCE PARENT_PATH source_dir)
foreach(other IN LISTS other_files)
  check_expectations("${source_dir}/${other}")
endforeach()

set(printed_errors 0)
foreach(out_line IN LISTS printed)
  if(out_line MATCHES ": error: ")
    math(EXPR printed_errors "${printed_errors} + 1")
  endif()
endforeach()
if(expected_errors EQUAL 0)
  string(APPEND failures "  the source expects no error: add an expected-error marker\n")
endif()
if(NOT printed_errors EQUAL expected_errors)
  string(APPEND failures "  ${printed_errors} errors printed, ${expected_errors} expected\n")
endif()

set(expected_output "${SOURCE}.stderr")
if(NOT EXISTS "${expected_output}")
  string(APPEND failures "  ${expected_output} is missing: every error test checks the whole output\n")
else()
  file(READ "${expected_output}" expected_text)
  string(REPLACE "${source_dir}/" "" printed_text "${stderr}")
  string(REPLACE "${INCLUDE}" "<runtime>" printed_text "${printed_text}")
  if(NOT printed_text STREQUAL expected_text)
    string(APPEND failures "  the output differs from ${expected_output}; it was:\n${printed_text}")
  endif()
endif()
if(failures)
  message(FATAL_ERROR "diagnostics of ${SOURCE} differ from its expectations:\n${failures}")
endif()
