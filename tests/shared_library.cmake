# A shared libember for the tests that need one (exported symbols; later the Python binding):
# ember itself with BUILD_SHARED_LIBS=ON, else a shared library made of the same objects
# (one extra link step, in ${PROJECT_BINARY_DIR}/shared/libember.so).
if(BUILD_SHARED_LIBS)
  set(EMBER_TEST_SHARED_TARGET ember)
else()
  add_library(ember_shared_for_tests SHARED $<TARGET_OBJECTS:ember_internal>)
  set_target_properties(ember_shared_for_tests PROPERTIES
    OUTPUT_NAME ember
    LINKER_LANGUAGE CXX
    LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/shared)
  target_link_libraries(ember_shared_for_tests PRIVATE
    PkgConfig::EMBER_SENTENCEPIECE PkgConfig::EMBER_PCRE2 OpenMP::OpenMP_CXX Threads::Threads)
  set(EMBER_TEST_SHARED_TARGET ember_shared_for_tests)
endif()

# #11 item 6: a shared libember exports the public API and nothing internal.
add_test(NAME exported_symbols
         COMMAND ${CMAKE_COMMAND} -DLIB=$<TARGET_FILE:${EMBER_TEST_SHARED_TARGET}>
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/check_exported_symbols.cmake)
