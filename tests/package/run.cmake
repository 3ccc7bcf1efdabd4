# Installs the build into a scratch prefix, then configures, builds and runs
# the consumer project against that prefix only.
set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}")
  endif()
endfunction()
run(${CMAKE_COMMAND} --install ${RIOMESH_BUILD_DIR} --prefix ${prefix})
# The installed surface: the runtime's headers and what they include, no
# layer's internals.
file(GLOB_RECURSE installed RELATIVE ${prefix}/include ${prefix}/include/riomesh/*)
list(LENGTH installed count)
foreach(h ${installed})
  if(h MATCHES "^riomesh/(actors|channels)/")
    message(FATAL_ERROR "an internal header is installed: ${h}")
  endif()
endforeach()
# What including riomesh/runtime.hpp alone pulls in of riomesh's.
file(WRITE ${WORK_DIR}/surface.cpp "#include <riomesh/runtime.hpp>\n")
execute_process(COMMAND ${CXX} -std=c++17 -M -I${prefix}/include ${WORK_DIR}/surface.cpp
                OUTPUT_VARIABLE deps RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "riomesh/runtime.hpp does not compile alone against the installed tree")
endif()
string(REGEX MATCHALL "[^ \\\n]*/include/riomesh/[^ \\\n]*" pulled "${deps}")
list(REMOVE_DUPLICATES pulled)
list(LENGTH pulled pulled_count)
message("surface: ${count} headers installed; riomesh/runtime.hpp pulls in ${pulled_count} of them")
run(${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${WORK_DIR}/build -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/consumer ${CONSUMER_SOURCE_DIR}/../../examples/node.yaml)
