# The C API (include/ember/ember.h) from C: a C11 test program against the library users link
# (ember::ember), and the header alone as C99. Both with -Wall -Wextra -Wpedantic -Werror.
enable_language(C)
set(EMBER_C_STRICT -Wall -Wextra -Wpedantic -Werror)

add_library(ember_c99_header OBJECT ${CMAKE_CURRENT_SOURCE_DIR}/c_api/c99_header.c)
target_link_libraries(ember_c99_header PRIVATE ember::ember)
set_target_properties(ember_c99_header PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
target_compile_options(ember_c99_header PRIVATE ${EMBER_C_STRICT})

add_executable(test_c_api ${CMAKE_CURRENT_SOURCE_DIR}/c_api/test_c_api.c $<TARGET_OBJECTS:ember_c99_header>)
target_link_libraries(test_c_api PRIVATE ember::ember)
set_target_properties(test_c_api PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
target_compile_options(test_c_api PRIVATE ${EMBER_C_STRICT})

# The model is resolved when the test runs (tests/cli/shared_data.cmake): missing shared data
# fails in CI and skips elsewhere.
add_test(NAME test_c_api
         COMMAND ${CMAKE_COMMAND} -DSHARED_DEFAULT=${EMBER_SHARED_DIR} -DREQUIRE=@SHARED@/models/stories260K.gguf
                 "-DCMD=$<TARGET_FILE:test_c_api>|@SHARED@/models/stories260K.gguf|${CMAKE_CURRENT_BINARY_DIR}"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/run_with_shared.cmake)
set_tests_properties(test_c_api PROPERTIES LABELS "unit;c_api"
                     SKIP_REGULAR_EXPRESSION "SKIPPED: shared data not found")
