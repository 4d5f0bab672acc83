# Checks that `cgc --help` and the cgc table of docs/configuration.md name the
# same flags, and that each value a flag takes (--emit=cpp, --schedule=cost...)
# is named in that flag's row: a flag added to cgc, or dropped from it, fails
# here until the page says so.
#
# cmake -DCGC=<cgc> -DDOC=<docs/configuration.md> -P CheckCgcHelp.cmake
cmake_policy(VERSION 3.25)

# Lines as a CMake list: ';' in a line would split it, so it is kept as '<semi>'.
function(read_lines text out)
  string(REPLACE ";" "<semi>" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  set(${out} "${lines}" PARENT_SCOPE)
endfunction()

execute_process(COMMAND ${CGC} --help RESULT_VARIABLE status OUTPUT_VARIABLE help
                ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "cgc --help exited with ${status}:\n${help}${err}")
endif()

# --help: a flag per line indented by two spaces ("  --emit=<value>  - ..."),
# each of its values below it indented by four ("    =cpp  - ...").
read_lines("${help}" help_lines)
set(help_flags "")
set(flag "")
foreach(line IN LISTS help_lines)
  if(line MATCHES "^  (--?[a-z][a-z0-9-]*)")
    set(flag "${CMAKE_MATCH_1}")
    list(APPEND help_flags "${flag}")
    set(values_of_${flag} "")
  elseif(line MATCHES "^    =([a-z][a-z0-9-]*)" AND NOT flag STREQUAL "")
    list(APPEND values_of_${flag} "${CMAKE_MATCH_1}")
  endif()
endforeach()
if(NOT help_flags)
  message(FATAL_ERROR "cgc --help names no flag:\n${help}")
endif()

# The page: the table under "| flag | default | meaning |" in "## cgc", up to
# its first line that is not a row. A row's first cell names its flags.
file(READ "${DOC}" doc)
read_lines("${doc}" doc_lines)
set(doc_flags "")
set(section "")
set(in_table FALSE)
foreach(line IN LISTS doc_lines)
  if(line MATCHES "^## (.*)$")
    set(section "${CMAKE_MATCH_1}")
    set(in_table FALSE)
  elseif(section STREQUAL "cgc" AND line STREQUAL "| flag | default | meaning |")
    set(in_table TRUE)
  elseif(in_table AND line MATCHES "^\\|([^|]*)\\|")
    string(REGEX MATCHALL "`--?[a-z][a-z0-9-]*" cell_flags "${CMAKE_MATCH_1}")
    foreach(cell_flag IN LISTS cell_flags)
      string(SUBSTRING "${cell_flag}" 1 -1 cell_flag)
      list(APPEND doc_flags "${cell_flag}")
      set(row_of_${cell_flag} "${line}")
    endforeach()
  elseif(in_table)
    set(in_table FALSE)
  endif()
endforeach()
if(NOT doc_flags)
  message(FATAL_ERROR "${DOC} has no '| flag | default | meaning |' table under '## cgc'")
endif()

set(problems "")
foreach(flag IN LISTS help_flags)
  if(NOT flag IN_LIST doc_flags)
    string(APPEND problems "cgc --help names ${flag}, which the cgc table of ${DOC} lacks\n")
    continue()
  endif()
  foreach(value IN LISTS values_of_${flag})
    if(NOT row_of_${flag} MATCHES "(^|[^a-z0-9-])${value}([^a-z0-9-]|$)")
      string(APPEND problems
             "cgc --help names ${flag}=${value}, which its row in ${DOC} does not: ${row_of_${flag}}\n")
    endif()
  endforeach()
endforeach()
foreach(flag IN LISTS doc_flags)
  if(NOT flag IN_LIST help_flags)
    string(APPEND problems "the cgc table of ${DOC} names ${flag}, which cgc --help lacks\n")
  endif()
endforeach()
if(NOT problems STREQUAL "")
  string(REPLACE "<semi>" ";" problems "${problems}")
  message(NOTICE "${problems}") # as written: FATAL_ERROR would wrap the lines
  message(FATAL_ERROR "cgc --help and ${DOC} name different flags")
endif()
