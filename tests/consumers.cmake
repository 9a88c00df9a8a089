# CMake consumer projects as the docs show them (tests/consumers/run_consumer.cmake): FetchContent
# of this checkout (shared, no build type, every doc snippet with -Werror), and find_package and
# pkg-config on an install prefix (static). They build ember again, so they are skipped in
# sanitizer builds. The model is resolved when the test runs (tests/cli/shared_data.cmake).
set(EMBER_CONSUMER_MODEL "@SHARED@/models/stories260K.gguf")
if(NOT EMBER_SANITIZE AND NOT EMBER_TSAN)
  foreach(kind fetch_content find_package)
    add_test(NAME consumer_${kind}
             COMMAND ${CMAKE_COMMAND} -DKIND=${kind} -DEMBER_SOURCE=${PROJECT_SOURCE_DIR}
                     -DEMBER_BUILD=${PROJECT_BINARY_DIR} -DWORK=${PROJECT_BINARY_DIR}/consumer-${kind}
                     -DMODEL=${EMBER_CONSUMER_MODEL} -DSHARED_DEFAULT=${EMBER_SHARED_DIR}
                     -DCXX=${CMAKE_CXX_COMPILER} -DCC=${CMAKE_C_COMPILER}
                     -DLAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER}
                     -P ${CMAKE_CURRENT_SOURCE_DIR}/consumers/run_consumer.cmake)
    set_tests_properties(consumer_${kind} PROPERTIES LABELS "consumer;no-sanitizer" TIMEOUT 900)
  endforeach()
  set_tests_properties(consumer_find_package PROPERTIES RUN_SERIAL ON)
endif()
