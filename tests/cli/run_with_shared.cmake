# Runs a program whose arguments name shared data: -DCMD=program|arg|@SHARED@/models/x.gguf|...
# -DREQUIRE=@SHARED@/... (the files it needs) -DSHARED_DEFAULT=<the CMake option>. Its output
# goes straight through; a non-zero exit fails the test.
include(${CMAKE_CURRENT_LIST_DIR}/shared_data.cmake)
ember_resolve_shared(REQUIRE)
string(REPLACE "@SHARED@" "${EMBER_SHARED_RESOLVED}" CMD "${CMD}")
string(REPLACE "|" ";" CMD "${CMD}")
execute_process(COMMAND ${CMD} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${CMD} exited with ${rc}")
endif()
