# Included at the end of a consumer project by the test suite (not part of what the docs show).
# The consumer's own code is compiled with -Wall -Wextra -Wpedantic -Werror: the documented
# style (`{.threads = 2}`) must not warn. With EMBER_CHECK_SNIPPETS, every code file the docs
# show is compiled the same way (tests/cli/check_docs_examples.cmake keeps the docs equal to
# these files).
set(ember_strict_flags -Wall -Wextra -Wpedantic -Werror)
target_compile_options(app PRIVATE ${ember_strict_flags})

if(EMBER_CHECK_SNIPPETS)
  file(GLOB ember_cxx_snippets CONFIGURE_DEPENDS "${EMBER_SOURCE}/docs/snippets/*.cpp")
  add_library(ember_doc_snippets OBJECT ${ember_cxx_snippets}
              "${EMBER_SOURCE}/examples/embed/main.cpp"
              "${EMBER_SOURCE}/tests/consumers/designated_init.cpp")
  target_link_libraries(ember_doc_snippets PRIVATE ember::ember)
  target_compile_options(ember_doc_snippets PRIVATE ${ember_strict_flags})
  set_target_properties(ember_doc_snippets PROPERTIES UNITY_BUILD OFF)  # separate programs

  file(GLOB ember_c_snippets CONFIGURE_DEPENDS "${EMBER_SOURCE}/docs/snippets/*.c")
  if(ember_c_snippets)
    enable_language(C)
    add_library(ember_doc_c_snippets OBJECT ${ember_c_snippets})
    target_link_libraries(ember_doc_c_snippets PRIVATE ember::ember)
    set_target_properties(ember_doc_c_snippets PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON
                                                          C_EXTENSIONS OFF)
    target_compile_options(ember_doc_c_snippets PRIVATE ${ember_strict_flags})
    set_target_properties(ember_doc_c_snippets PROPERTIES UNITY_BUILD OFF)
  endif()
endif()
