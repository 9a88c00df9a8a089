# ember-server (examples/server, #15): a Catch2 test of its OpenAI layer (request validation,
# response and SSE formatting, metrics text), and an end-to-end test that starts the server on
# stories260K on a free loopback port and talks HTTP to it (tests/server/check_server.py,
# Python standard library only). Both need cpp-httplib (the server is not built without it).
if(NOT TARGET ember_server_core)
  return()
endif()
add_executable(test_server_openai server/test_openai.cpp $<TARGET_OBJECTS:ember_test_main>)
target_link_libraries(test_server_openai PRIVATE ember_server_core Catch2::Catch2)
ember_test_flags(test_server_openai)
add_test(NAME test_server_openai COMMAND test_server_openai)
set_tests_properties(test_server_openai PROPERTIES LABELS "unit;server")

if(NOT EMBER_PYTHON3)
  message(WARNING "ember: python3 not found: ember-server's end-to-end test is left out")
  return()
endif()
set(stories "@SHARED@/models/stories260K.gguf")
set(reference "@SHARED@/reference/stories260K-greedy.txt")

# ember_server_script(NAME SCRIPT TIMEOUT PASS_REGEX ARGS...): a Python script of tests/server/
# run with ember-server and stories260K first, then ARGS ('@SHARED@/...' paths allowed); it
# passes when its output matches PASS_REGEX and skips when it prints "SKIPPED: ".
function(ember_server_script name script timeout pass_regex)
  set(extra "")
  foreach(arg IN LISTS ARGN)
    string(APPEND extra "|${arg}")
  endforeach()
  add_test(NAME ${name}
           COMMAND ${CMAKE_COMMAND} -DSHARED_DEFAULT=${EMBER_SHARED_DIR} -DREQUIRE=${stories}
                   "-DCMD=${EMBER_PYTHON3}|${CMAKE_CURRENT_SOURCE_DIR}/server/${script}|$<TARGET_FILE:ember-server>|${stories}${extra}"
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/run_with_shared.cmake)
  set_tests_properties(${name} PROPERTIES LABELS "e2e;server" TIMEOUT ${timeout}
    PASS_REGULAR_EXPRESSION "${pass_regex}" SKIP_REGULAR_EXPRESSION "SKIPPED: ")
endfunction()

ember_server_script(server_e2e check_server.py 120 "server checks passed" ${reference})
# Load and abuse: 32 concurrent streams, bad bodies, dropped clients, 1,000 requests with flat
# memory, 100 seeded JSON Schema generations.
ember_server_script(server_stress check_server_stress.py 300 "server stress checks passed")
# Two replicas behind nginx with the config of docs/deploy.md (examples/server/deploy/nginx.conf).
# scripts/test.sh installs Debian's nginx; without it the test is left out.
find_program(EMBER_NGINX NAMES nginx PATHS /usr/sbin /usr/local/sbin)
if(EMBER_NGINX)
  ember_server_script(server_nginx check_nginx.py 120 "nginx checks passed"
                      ${EMBER_NGINX} ${PROJECT_SOURCE_DIR}/examples/server/deploy/nginx.conf)
else()
  message(STATUS "ember: nginx not found: the load-balancer test (server_nginx) is left out")
endif()
# The official openai npm client (installed with npm into the build tree, once) and curl, with
# Qwen 2.5's chat template for tool calls (check_openai_client.py, openai_client.mjs).
find_program(EMBER_NODE NAMES node nodejs)
find_program(EMBER_NPM NAMES npm)
find_program(EMBER_CURL NAMES curl)
if(EMBER_NODE AND EMBER_NPM AND EMBER_CURL)
  ember_server_script(server_openai_client check_openai_client.py 400 "openai client checks passed \\(node and curl\\)"
                      @SHARED@/chat-templates/Qwen-Qwen2.5-7B-Instruct.jinja ${EMBER_NODE} ${EMBER_NPM}
                      ${CMAKE_CURRENT_BINARY_DIR}/npm-openai)
else()
  message(STATUS "ember: node, npm or curl not found: the openai client test is left out")
endif()
