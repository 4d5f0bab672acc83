# Checks what add_compiled_graph(schedule_options ... OVERLAP_GPU_COMMUNICATION
# SCHEDULE cost COSTS ...) left in its output directory DIR: every artefact of
# graph ns::pipeline, built with the options and the profile's costs.
#
# cmake -DDIR=<target>.cg -P CheckScheduleOptions.cmake
foreach(suffix IN ITEMS .ir.json .schedule.txt .schedule.json .dot)
  if(NOT EXISTS "${DIR}/ns_pipeline${suffix}")
    message(FATAL_ERROR "missing ${DIR}/ns_pipeline${suffix}")
  endif()
endforeach()
file(READ "${DIR}/ns_pipeline.schedule.txt" text)
string(FIND "${text}" "# built with --schedule=cost --overlap-gpu-communication\n" at)
if(at EQUAL -1)
  message(FATAL_ERROR "ns_pipeline.schedule.txt does not say how it was built:\n${text}")
endif()
file(READ "${DIR}/ns_pipeline.ir.json" ir)
string(JSON cost GET "${ir}" tasks 3 cost)
if(NOT cost EQUAL 3)
  message(FATAL_ERROR "the cost profile did not reach cgc: tasks[3].cost is '${cost}'")
endif()
