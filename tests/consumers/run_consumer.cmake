# Builds and runs one consumer project the way the docs show it (tests/consumers/KIND), with
# README's program (docs/snippets/readme.cpp) as its main.cpp.
#   find_package:  installs this build (static libember) into a fresh prefix, builds the project
#                  against it (Release), then builds main.cpp again with only `pkg-config
#                  --static ember` (the prefix differs from the configure-time one: ember.pc must
#                  be relocatable).
#   fetch_content: the project pulls this checkout (FETCHCONTENT_SOURCE_DIR_EMBER) with no
#                  CMAKE_BUILD_TYPE, BUILD_SHARED_LIBS=ON and CMAKE_UNITY_BUILD=ON (a consumer's
#                  global setting that reaches ember: its sources must build merged, and the
#                  test takes half the time), compiles every documented snippet
#                  with -Werror, and checks the compile commands: ember's sources optimised,
#                  no OpenMP flag or private include directory on the consumer's files. Then
#                  installs that shared libember and builds the find_package project against it.
# The program runs on MODEL when one is given and must print the reference continuation.
#                  The C snippet (docs/snippets/c_api.c) is built the same way with ember-c.pc.
#   -DKIND=... -DEMBER_SOURCE=... -DEMBER_BUILD=... -DWORK=... -DMODEL=@SHARED@/...
#   -DSHARED_DEFAULT=... -DCXX=... -DCC=... [-DLAUNCHER=...]
cmake_minimum_required(VERSION 3.25)
# A missing model fails in CI; elsewhere the consumer is built and run without one.
include(${CMAKE_CURRENT_LIST_DIR}/../cli/shared_data.cmake)
string(REPLACE "@SHARED@" "${EMBER_SHARED_RESOLVED}" MODEL "${MODEL}")
if(NOT EXISTS "${MODEL}")
  if("$ENV{CI}" STREQUAL "true" OR "$ENV{CI}" STREQUAL "1")
    message(FATAL_ERROR "shared data not found in CI: ${MODEL} (set EMBER_SHARED_DIR)")
  endif()
  message(STATUS "no ${MODEL}: the consumer runs without a model")
  set(MODEL "")
endif()
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/src")
file(COPY_FILE "${EMBER_SOURCE}/tests/consumers/${KIND}/CMakeLists.txt" "${WORK}/src/CMakeLists.txt")
file(COPY_FILE "${EMBER_SOURCE}/docs/snippets/readme.cpp" "${WORK}/src/main.cpp")
set(expected "Once upon a time, there was a little girl")

function(run_checked what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

function(run_program exe)
  if(NOT MODEL)
    return()
  endif()
  run_checked("${exe}" "${exe}" "${MODEL}")
  if(NOT out MATCHES "^${expected}")
    message(FATAL_ERROR "unexpected output of ${exe}:\n${out}")
  endif()
  message(STATUS "${exe}: ${out}")
endfunction()

set(args -DEMBER_SOURCE=${EMBER_SOURCE} -DCMAKE_CXX_COMPILER=${CXX})
if(LAUNCHER)
  list(APPEND args -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()
if(KIND STREQUAL "find_package")
  run_checked("cmake --install" ${CMAKE_COMMAND} --install "${EMBER_BUILD}" --prefix "${WORK}/prefix")
  list(APPEND args -DCMAKE_PREFIX_PATH=${WORK}/prefix -DCMAKE_BUILD_TYPE=Release)
else()
  list(APPEND args -DFETCHCONTENT_SOURCE_DIR_EMBER=${EMBER_SOURCE} -DBUILD_SHARED_LIBS=ON
                   -DCMAKE_UNITY_BUILD=ON -DEMBER_CHECK_SNIPPETS=ON -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DEMBER_INSTALL=ON)
endif()
run_checked("configure" ${CMAKE_COMMAND} -S "${WORK}/src" -B "${WORK}/build" -G Ninja ${args})
run_checked("build" ${CMAKE_COMMAND} --build "${WORK}/build" -j 2)
run_program("${WORK}/build/app")

if(KIND STREQUAL "find_package")
  # pkg-config alone, from the installed (moved) prefix, with the consumer's strict flags.
  file(GLOB_RECURSE pc_file "${WORK}/prefix/*/ember.pc")
  get_filename_component(pc_dir "${pc_file}" DIRECTORY)
  run_checked("pkg-config" ${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${pc_dir}
              pkg-config --cflags --libs --static ember)
  string(STRIP "${out}" pc_flags)
  string(FIND "${pc_flags}" "-I${WORK}/prefix/" at_prefix)
  string(FIND "${pc_flags}" "-std=c++20" at_std)
  if(at_prefix LESS 0 OR at_std LESS 0)
    message(FATAL_ERROR "ember.pc does not point into the prefix it was installed to, or lacks "
                        "-std=c++20: ${pc_flags}")
  endif()
  separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
  run_checked("compiling with pkg-config flags" ${CXX} -Wall -Wextra -Wpedantic -Werror
              "${WORK}/src/main.cpp" -o "${WORK}/app-pkg-config" ${pc_flags})
  run_program("${WORK}/app-pkg-config")
  # A C program on ember.h with ember-c.pc, static libember.
  run_checked("pkg-config ember-c" ${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${pc_dir}
              pkg-config --cflags --libs --static ember-c)
  string(STRIP "${out}" pc_c_flags)
  separate_arguments(pc_c_flags UNIX_COMMAND "${pc_c_flags}")
  run_checked("compiling C with pkg-config flags" ${CC} -std=c11 -Wall -Wextra -Wpedantic -Werror
              "${EMBER_SOURCE}/docs/snippets/c_api.c" -o "${WORK}/app-c" ${pc_c_flags})
  run_program("${WORK}/app-c")
  return()
endif()

# fetch_content: what the consumer's build actually compiled.
file(READ "${WORK}/build/compile_commands.json" commands)
string(JSON n LENGTH "${commands}")
math(EXPR last "${n} - 1")
set(n_ember 0)
set(n_consumer 0)
foreach(i RANGE ${last})
  string(JSON file GET "${commands}" ${i} file)
  string(JSON command GET "${commands}" ${i} command)
  string(FIND "${file}" "${EMBER_SOURCE}/src/" in_ember)
  string(FIND "${file}" "/_deps/ember-build/" in_ember_unity)  # ember's merged (unity) sources
  if(in_ember EQUAL 0 OR in_ember_unity GREATER_EQUAL 0)
    # The last -O flag wins: ember's own sources must be optimised without a build type.
    string(REGEX MATCHALL " -O[0-9a-z]*" levels "${command}")
    list(POP_BACK levels level)
    if(NOT level MATCHES "^ -O[23]$")
      message(FATAL_ERROR "${file} is compiled without -O2/-O3 (last: '${level}'):\n${command}")
    endif()
    math(EXPR n_ember "${n_ember} + 1")
  else()
    foreach(leak -fopenmp eigen3 sentencepiece xsimd "${EMBER_SOURCE}/src")
      string(FIND "${command}" "${leak}" at)
      if(at GREATER_EQUAL 0)
        message(FATAL_ERROR "ember's private '${leak}' reached the consumer's ${file}:\n${command}")
      endif()
    endforeach()
    math(EXPR n_consumer "${n_consumer} + 1")
  endif()
endforeach()
if(n_ember EQUAL 0 OR n_consumer LESS 3)
  message(FATAL_ERROR "compile_commands.json has ${n_ember} ember and ${n_consumer} consumer files")
endif()
message(STATUS "${n_ember} ember sources optimised; ${n_consumer} consumer files (snippets "
               "included) compiled with -Werror and no ember-private flags")

# The shared libember installed, and found again by the find_package project.
run_checked("cmake --install (shared)" ${CMAKE_COMMAND} --install "${WORK}/build" --prefix "${WORK}/prefix")
file(MAKE_DIRECTORY "${WORK}/fp")
file(COPY_FILE "${EMBER_SOURCE}/tests/consumers/find_package/CMakeLists.txt" "${WORK}/fp/CMakeLists.txt")
file(COPY_FILE "${EMBER_SOURCE}/docs/snippets/readme.cpp" "${WORK}/fp/main.cpp")
run_checked("configure against the shared install" ${CMAKE_COMMAND} -S "${WORK}/fp" -B "${WORK}/fp/build" -G Ninja
            -DCMAKE_PREFIX_PATH=${WORK}/prefix -DCMAKE_CXX_COMPILER=${CXX} -DEMBER_SOURCE=${EMBER_SOURCE})
run_checked("build against the shared install" ${CMAKE_COMMAND} --build "${WORK}/fp/build")
run_program("${WORK}/fp/build/app")
