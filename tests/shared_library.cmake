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
    PkgConfig::EMBER_SENTENCEPIECE PkgConfig::EMBER_PCRE2 Threads::Threads)
  set(EMBER_TEST_SHARED_TARGET ember_shared_for_tests)
endif()

# #11 item 6: a shared libember exports the public API and nothing internal.
add_test(NAME exported_symbols
         COMMAND ${CMAKE_COMMAND} -DLIB=$<TARGET_FILE:${EMBER_TEST_SHARED_TARGET}>
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/check_exported_symbols.cmake)

# examples/python: a ctypes binding of the C API, run with the system's python3 (Debian's
# /usr/bin/python3 where it exists; only the standard library is used). The model is resolved
# when the tests run (tests/cli/shared_data.cmake).
if(NOT EMBER_PYTHON3)
  message(WARNING "ember: python3 not found: the Python example is not tested")
  return()
endif()
set(stories "@SHARED@/models/stories260K.gguf")
set(run_with_shared ${CMAKE_COMMAND} -DSHARED_DEFAULT=${EMBER_SHARED_DIR} -DREQUIRE=${stories})
set(library $<TARGET_FILE:${EMBER_TEST_SHARED_TARGET}>)
set(example ${PROJECT_SOURCE_DIR}/examples/python/generate.py)
add_test(NAME example_python
         COMMAND ${run_with_shared}
                 "-DCMD=${EMBER_PYTHON3}|${example}|--library|${library}|${stories}|Once upon a time|24"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/run_with_shared.cmake)
set_tests_properties(example_python PROPERTIES
  PASS_REGULAR_EXPRESSION "^Once upon a time, there was a little girl named Lily. She loved to play")
add_test(NAME example_python_bad_model
         COMMAND ${EMBER_PYTHON3} ${example} --library ${library} /nonexistent/model.gguf "x")
set_tests_properties(example_python_bad_model PROPERTIES
  PASS_REGULAR_EXPRESSION "error: /nonexistent/model.gguf")
# Every call of the binding, beyond what the example uses.
add_test(NAME python_binding
         COMMAND ${run_with_shared}
                 "-DCMD=${EMBER_PYTHON3}|${CMAKE_CURRENT_SOURCE_DIR}/python/check_binding.py|${library}|${stories}"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/run_with_shared.cmake)
set_tests_properties(python_binding PROPERTIES PASS_REGULAR_EXPRESSION "binding ok")
set_tests_properties(example_python python_binding PROPERTIES
                     SKIP_REGULAR_EXPRESSION "SKIPPED: shared data not found")
# python3 cannot load a sanitizer-instrumented library (the runtime must come first).
set_tests_properties(example_python example_python_bad_model python_binding PROPERTIES
                     LABELS "python;no-sanitizer")
