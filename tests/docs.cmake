# The documentation's example programs must be the files the build compiles.
add_test(NAME docs_examples_match
         COMMAND ${CMAKE_COMMAND} -DROOT=${PROJECT_SOURCE_DIR}
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/check_docs_examples.cmake)
