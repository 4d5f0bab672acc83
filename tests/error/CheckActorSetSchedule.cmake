# Runs cgc --emit=ir,schedule on a source with an actor set and checks what it
# writes for the set: `<set>.schedule.txt` equal to EXPECTED byte for byte, and
# each graph's IR naming its set and carrying the set's GPUs for its actors.
#
# cmake -DCGC=<cgc> -DSOURCE=<file> -DSET=<set> -DGRAPHS=<g1,g2,...> -DEXPECTED=<file>
#       -DOUT=<dir> -DINCLUDE=<runtime include> -P CheckActorSetSchedule.cmake
file(REMOVE_RECURSE "${OUT}")
execute_process(
  COMMAND "${CGC}" "${SOURCE}" -o "${OUT}" --emit=ir,schedule -fno-color-diagnostics
          -- "-I${INCLUDE}"
  RESULT_VARIABLE rc
  ERROR_VARIABLE stderr)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cgc --emit=ir,schedule must accept ${SOURCE}, got exit code '${rc}':\n${stderr}")
endif()
file(READ "${OUT}/${SET}.schedule.txt" written)
file(READ "${EXPECTED}" expected)
if(NOT written STREQUAL expected)
  message(FATAL_ERROR "${OUT}/${SET}.schedule.txt is\n${written}\ninstead of\n${expected}")
endif()
string(REPLACE "," ";" graphs "${GRAPHS}")
foreach(graph IN LISTS graphs)
  file(READ "${OUT}/${graph}.ir.json" ir)
  foreach(wanted "\"actorSet\": \"${SET}\"" "\"gpus\": 1")
    string(FIND "${ir}" "${wanted}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${OUT}/${graph}.ir.json lacks ${wanted}:\n${ir}")
    endif()
  endforeach()
endforeach()
