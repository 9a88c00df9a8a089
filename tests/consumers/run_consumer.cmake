# Configures, builds and runs one consumer project. For find_package, installs ember first.
#   -DKIND=fetch_content|find_package -DEMBER_SOURCE=... -DEMBER_BUILD=... -DWORK=... -DMODEL=...
# A missing model fails in CI; elsewhere the consumer is built and run without one.
include(${CMAKE_CURRENT_LIST_DIR}/../cli/shared_data.cmake)
string(REPLACE "@SHARED@" "${EMBER_SHARED_RESOLVED}" MODEL "${MODEL}")
if(NOT EXISTS "${MODEL}")
  if("$ENV{CI}" STREQUAL "true" OR "$ENV{CI}" STREQUAL "1")
    message(FATAL_ERROR "shared data not found in CI: ${MODEL} (set EMBER_SHARED_DIR)")
  endif()
  message(STATUS "no ${MODEL}: the consumer runs without a model")
  set(MODEL "")
endif()
file(REMOVE_RECURSE "${WORK}")
set(extra_args "")
if(KIND STREQUAL "find_package")
  execute_process(COMMAND ${CMAKE_COMMAND} --install "${EMBER_BUILD}" --prefix "${WORK}/prefix"
                  RESULT_VARIABLE rc OUTPUT_QUIET)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cmake --install failed (${rc})")
  endif()
  set(extra_args "-DCMAKE_PREFIX_PATH=${WORK}/prefix")
else()
  set(extra_args "-DEMBER_SOURCE=${EMBER_SOURCE}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S "${EMBER_SOURCE}/tests/consumers/${KIND}"
                        -B "${WORK}/build" -G Ninja -DCMAKE_BUILD_TYPE=Release ${extra_args}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configure failed:\n${out}\n${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build "${WORK}/build" -j 2
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "build failed:\n${out}\n${err}")
endif()
execute_process(COMMAND "${WORK}/build/consumer" ${MODEL}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "consumer failed (${rc}):\n${out}\n${err}")
endif()
if(MODEL AND NOT out MATCHES "Once upon a time, there was a little girl")
  message(FATAL_ERROR "unexpected consumer output:\n${out}")
endif()
message(STATUS "${KIND} consumer:\n${out}")
