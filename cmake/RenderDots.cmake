# RenderDots.cmake - renders every <graph>.dot cgc wrote to <graph>.svg:
# add_compiled_graph(... SVG) runs it after cgc, as
#   cmake -DDOT=<Graphviz dot> -DDIRECTORY=<target>.cg -P RenderDots.cmake
file(GLOB dot_files "${DIRECTORY}/*.dot")
foreach(dot_file IN LISTS dot_files)
  string(REGEX REPLACE "\\.dot$" ".svg" svg_file "${dot_file}")
  execute_process(COMMAND "${DOT}" -Tsvg -o "${svg_file}" "${dot_file}"
                  RESULT_VARIABLE result ERROR_VARIABLE error)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "Graphviz's dot could not render ${dot_file}: ${error}")
  endif()
endforeach()
