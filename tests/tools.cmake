# Tests of the tools (ember-quantize, ember-generate-model, ember-perplexity, ember-bench):
# a Catch2 executable over their library functions, and CLI checks run by CMake scripts.
if(NOT EMBER_BUILD_TOOLS)
  return()
endif()

file(GLOB EMBER_TOOLS_TEST_SOURCES CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/tools/*.cpp")
add_executable(test_tools ${EMBER_TOOLS_TEST_SOURCES} $<TARGET_OBJECTS:ember_test_main>)
target_link_libraries(test_tools PRIVATE ember_tools_common ember::ember Catch2::Catch2)
target_include_directories(test_tools PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tools
                                              ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_definitions(test_tools PRIVATE
  EMBER_DEFAULT_SHARED_DIR="${EMBER_SHARED_DIR}"
  EMBER_BINARY_DIR="${PROJECT_BINARY_DIR}")
ember_set_warnings(test_tools)
add_dependencies(test_tools ember-quantize ember-generate-model ember-perplexity ember-bench)
add_test(NAME test_tools COMMAND test_tools)
set_tests_properties(test_tools PROPERTIES LABELS "unit;tools")

# CLI usage errors: exit code 1 and a message, no crash.
add_test(NAME quantize_bad_type
         COMMAND ${CMAKE_COMMAND} -DTOOL=$<TARGET_FILE:ember-quantize> -DARGS=in.gguf|out.gguf|Q3_X
                 -DEXPECT=unknown\ type -P ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_cli_error.cmake)
add_test(NAME quantize_missing_input
         COMMAND ${CMAKE_COMMAND} -DTOOL=$<TARGET_FILE:ember-quantize>
                 -DARGS=${CMAKE_CURRENT_BINARY_DIR}/no_such_model.gguf|${CMAKE_CURRENT_BINARY_DIR}/out.gguf|Q8_0
                 -DEXPECT=no_such_model.gguf -P ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_cli_error.cmake)
set_tests_properties(quantize_bad_type quantize_missing_input PROPERTIES LABELS "tools;cli")

set(EMBER_TOOLS_STORIES "${EMBER_SHARED_DIR}/models/stories260K.gguf")
set(EMBER_TOOLS_PPL_REF "${EMBER_SHARED_DIR}/reference/stories-perplexity.txt")
set(EMBER_TOOLS_TEXT "${EMBER_SHARED_DIR}/reference/stories.txt")
if(EXISTS "${EMBER_TOOLS_STORIES}" AND EXISTS "${EMBER_TOOLS_PPL_REF}" AND EXISTS "${EMBER_TOOLS_TEXT}")
  # Perplexity within 1% of llama.cpp's (every running value and the final one).
  foreach(model stories260K stories260K-Q8_0 stories260K-Q4_0)
    add_test(NAME perplexity_${model}
             COMMAND ${CMAKE_COMMAND} -DTOOL=$<TARGET_FILE:ember-perplexity>
                     -DMODEL=${EMBER_SHARED_DIR}/models/${model}.gguf -DNAME=${model}.gguf
                     -DTEXT=${EMBER_TOOLS_TEXT} -DREFERENCE=${EMBER_TOOLS_PPL_REF}
                     -P ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_perplexity.cmake)
    set_tests_properties(perplexity_${model} PROPERTIES LABELS "tools;e2e")
  endforeach()
  add_test(NAME perplexity_text_too_short
           COMMAND ${CMAKE_COMMAND} -DTOOL=$<TARGET_FILE:ember-perplexity>
                   -DARGS=-m|${EMBER_TOOLS_STORIES}|-f|${EMBER_TOOLS_TEXT}|-c|512
                   -DEXPECT=needs\ at\ least -P ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_cli_error.cmake)
  # ember-bench smoke test in each output format.
  foreach(format md csv json)
    add_test(NAME bench_smoke_${format}
             COMMAND ${CMAKE_COMMAND} -DTOOL=$<TARGET_FILE:ember-bench> -DMODEL=${EMBER_TOOLS_STORIES}
                     -DFORMAT=${format} -P ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_bench.cmake)
    set_tests_properties(bench_smoke_${format} PROPERTIES LABELS "tools;cli")
  endforeach()
else()
  message(STATUS "ember: ${EMBER_SHARED_DIR} has no stories260K data: perplexity and bench tests skipped")
endif()
