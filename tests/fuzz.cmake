# Fuzz targets (tests/fuzz/fuzz_target.hpp): every tests/fuzz/fuzz_NAME.cpp is one target.
# - fuzz_replay (every test build) runs each target over its committed inputs
#   (tests/fuzz/corpus/NAME/, earlier findings among them) and over the shared files of its
#   kind, under the sanitizers in their builds: tests fuzz_replay_NAME.
# - With -DEMBER_FUZZ=ON (Clang), fuzz_NAME is a libFuzzer executable for a campaign:
#   cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DEMBER_FUZZ=ON -DEMBER_SANITIZE=ON
#   cmake --build build-fuzz --target fuzz_json && build-fuzz/bin/fuzz_json -max_total_time=600 DIR
file(GLOB EMBER_FUZZ_SOURCES CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_*.cpp")
set(EMBER_FUZZ_DIR ${CMAKE_CURRENT_SOURCE_DIR}/fuzz)

# fuzz_NAME: one target as a libFuzzer executable (EMBER_FUZZ), on library `lib`.
function(ember_libfuzzer_executable name source lib)
  add_executable(fuzz_${name} ${source})
  target_link_libraries(fuzz_${name} PRIVATE ${lib})
  target_include_directories(fuzz_${name} PRIVATE ${PROJECT_SOURCE_DIR}/src ${EMBER_FUZZ_DIR})
  target_compile_definitions(fuzz_${name} PRIVATE EMBER_LIBFUZZER EMBER_DEFAULT_SHARED_DIR="${EMBER_SHARED_DIR}")
  target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
endfunction()

add_executable(fuzz_replay ${EMBER_FUZZ_DIR}/replay_main.cpp ${EMBER_FUZZ_SOURCES})
target_link_libraries(fuzz_replay PRIVATE ember_internal)
target_include_directories(fuzz_replay PRIVATE ${PROJECT_SOURCE_DIR}/src ${EMBER_FUZZ_DIR})
target_compile_definitions(fuzz_replay PRIVATE EMBER_DEFAULT_SHARED_DIR="${EMBER_SHARED_DIR}")
ember_test_flags(fuzz_replay)

# Shared files each target also replays, where ../shared is present at configure time.
set(EMBER_FUZZ_SHARED_chat_template ${EMBER_SHARED_DIR}/chat-templates)
set(EMBER_FUZZ_SHARED_gguf ${EMBER_SHARED_DIR}/models/stories260K-Q4_0.gguf
                           ${EMBER_SHARED_DIR}/models/arch/stories260K-gemma2.gguf)
set(EMBER_FUZZ_SHARED_sentencepiece ${EMBER_SHARED_DIR}/tokenizer/llama2-tokenizer.model)

foreach(source ${EMBER_FUZZ_SOURCES})
  get_filename_component(file_name ${source} NAME_WE)
  string(REGEX REPLACE "^fuzz_" "" target ${file_name})
  set(inputs "")
  if(EXISTS ${EMBER_FUZZ_DIR}/corpus/${target})
    list(APPEND inputs ${EMBER_FUZZ_DIR}/corpus/${target})
  endif()
  foreach(shared ${EMBER_FUZZ_SHARED_${target}})
    if(EXISTS ${shared})
      list(APPEND inputs ${shared})
    endif()
  endforeach()
  if(inputs)
    add_test(NAME fuzz_replay_${target} COMMAND fuzz_replay ${target} ${inputs})
    set_tests_properties(fuzz_replay_${target} PROPERTIES LABELS "unit;fuzz")
  endif()
  if(EMBER_FUZZ)
    ember_libfuzzer_executable(${target} ${source} ember_internal)
  endif()
endforeach()

# ember-server's request parser: a target of its own executable, since it links the server's
# OpenAI layer (ember_server_core, on the exported library) where fuzz_replay links the internals.
if(TARGET ember_server_core)
  add_executable(fuzz_replay_server ${EMBER_FUZZ_DIR}/replay_main.cpp ${EMBER_FUZZ_DIR}/server/fuzz_server_request.cpp)
  target_link_libraries(fuzz_replay_server PRIVATE ember_server_core)
  target_include_directories(fuzz_replay_server PRIVATE ${EMBER_FUZZ_DIR})
  ember_test_flags(fuzz_replay_server)
  add_test(NAME fuzz_replay_server_request
           COMMAND fuzz_replay_server server_request ${EMBER_FUZZ_DIR}/corpus/server_request)
  set_tests_properties(fuzz_replay_server_request PROPERTIES LABELS "unit;fuzz;server")
  if(EMBER_FUZZ)
    ember_libfuzzer_executable(server_request ${EMBER_FUZZ_DIR}/server/fuzz_server_request.cpp ember_server_core)
  endif()
endif()
