# Hostile inputs against every tool and the ember-chat REPL (issue #16): a Catch2 executable
# that runs the built programs as child processes under a time limit and (outside sanitizer
# builds) a 300 MiB address-space limit.
if(NOT EMBER_BUILD_TOOLS OR NOT EMBER_BUILD_EXAMPLES)
  return()
endif()
file(GLOB EMBER_HOSTILE_SOURCES CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/hostile/*.cpp")
add_executable(test_cli_hostile ${EMBER_HOSTILE_SOURCES} $<TARGET_OBJECTS:ember_test_main>)
target_link_libraries(test_cli_hostile PRIVATE ember_internal Catch2::Catch2)
target_include_directories(test_cli_hostile PRIVATE ${PROJECT_SOURCE_DIR}/src ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_definitions(test_cli_hostile PRIVATE
  EMBER_DEFAULT_SHARED_DIR="${EMBER_SHARED_DIR}"
  EMBER_BINARY_DIR="${PROJECT_BINARY_DIR}"
  $<$<OR:$<BOOL:${EMBER_SANITIZE}>,$<BOOL:${EMBER_TSAN}>>:EMBER_TEST_SANITIZED>)
ember_test_flags(test_cli_hostile)
# Every program the table runs must be built first.
get_property(EMBER_HOSTILE_TOOLS DIRECTORY ${PROJECT_SOURCE_DIR}/tools PROPERTY BUILDSYSTEM_TARGETS)
add_dependencies(test_cli_hostile ember-chat ${EMBER_HOSTILE_TOOLS})
if(TARGET ember-server)
  add_dependencies(test_cli_hostile ember-server)
endif()
add_test(NAME test_cli_hostile COMMAND test_cli_hostile)
set_tests_properties(test_cli_hostile PROPERTIES LABELS "cli;hostile" TIMEOUT 300)
