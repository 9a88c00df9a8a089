# Shared data for CMake-script tests, resolved when the test runs (not when CMake configures), so
# EMBER_SHARED_DIR in the environment works for these tests as for the Catch2 ones.
# Paths are passed as "@SHARED@/models/x.gguf" with -DSHARED_DEFAULT=<the CMake option>;
# ember_resolve_shared(VAR...) replaces @SHARED@ in each variable and checks that the file exists.
# A missing file fails the test in CI (CI=true or CI=1) and skips it elsewhere: the script prints
# "SKIPPED: shared data not found", which the tests' SKIP_REGULAR_EXPRESSION turns into a skip.
if(DEFINED ENV{EMBER_SHARED_DIR} AND NOT "$ENV{EMBER_SHARED_DIR}" STREQUAL "")
  set(EMBER_SHARED_RESOLVED "$ENV{EMBER_SHARED_DIR}")
else()
  set(EMBER_SHARED_RESOLVED "${SHARED_DEFAULT}")
endif()

macro(ember_resolve_shared)
  foreach(_ember_var ${ARGN})
    string(REPLACE "@SHARED@" "${EMBER_SHARED_RESOLVED}" ${_ember_var} "${${_ember_var}}")
    if(NOT EXISTS "${${_ember_var}}")
      if("$ENV{CI}" STREQUAL "true" OR "$ENV{CI}" STREQUAL "1")
        message(FATAL_ERROR "shared data not found in CI: ${${_ember_var}} (set EMBER_SHARED_DIR)")
      endif()
      message("SKIPPED: shared data not found: ${${_ember_var}} (set EMBER_SHARED_DIR)")
      return()
    endif()
  endforeach()
endmacro()
