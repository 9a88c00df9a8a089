# Runs the example programs against the shared stories260K model (skipped when it is absent).
set(EMBER_STORIES "${EMBER_SHARED_DIR}/models/stories260K.gguf")
if(EXISTS "${EMBER_STORIES}" AND EMBER_BUILD_EXAMPLES)
  add_test(NAME example_embed
           COMMAND ember-embed-example "${EMBER_STORIES}" "Once upon a time" 16)
  set_tests_properties(example_embed PROPERTIES
    PASS_REGULAR_EXPRESSION "^Once upon a time, there was a little girl named Lily")
  # ember-chat prints the prompt and the greedy continuation, nothing else, on stdout.
  add_test(NAME chat_stories_greedy
           COMMAND ${CMAKE_COMMAND} -DCHAT=$<TARGET_FILE:ember-chat> -DMODEL=${EMBER_STORIES}
                   -DREFERENCE=${EMBER_SHARED_DIR}/reference/stories260K-greedy.txt
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/check_chat_reference.cmake)
  add_test(NAME chat_bad_model
           COMMAND ${CMAKE_COMMAND} -DCHAT=$<TARGET_FILE:ember-chat>
                   -DBAD=${CMAKE_CURRENT_SOURCE_DIR}/cli/not_a_model.gguf
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/check_chat_bad_model.cmake)
else()
  message(STATUS "ember: ${EMBER_STORIES} not found: example and CLI tests skipped")
endif()

if(EXISTS "${EMBER_STORIES}" AND EMBER_BUILD_EXAMPLES)
  # The interactive chat on a pipe: answers, /stats, /save and /load, /exit, exit code 0.
  add_test(NAME chat_repl_pipe
           COMMAND ${CMAKE_COMMAND} -DCHAT=$<TARGET_FILE:ember-chat> -DMODEL=${EMBER_STORIES}
                   -DWORK=${CMAKE_CURRENT_BINARY_DIR}
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/check_chat_repl.cmake)
  # Flags: unknown flags and bad values exit 2 naming the flag; a prompt longer than -c exits 1.
  add_test(NAME chat_flags
           COMMAND ${CMAKE_COMMAND} -DCHAT=$<TARGET_FILE:ember-chat> -DMODEL=${EMBER_STORIES}
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/check_chat_flags.cmake)
endif()
