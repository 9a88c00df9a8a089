# Runs the example programs against the shared stories260K model. Shared paths are resolved when
# the tests run (tests/cli/shared_data.cmake): EMBER_SHARED_DIR in the environment wins, missing
# data fails in CI and skips elsewhere.
if(NOT EMBER_BUILD_EXAMPLES)
  return()
endif()
set(EMBER_STORIES "@SHARED@/models/stories260K.gguf")
set(EMBER_SHARED_ARGS -DSHARED_DEFAULT=${EMBER_SHARED_DIR})
add_test(NAME example_embed
         COMMAND ${CMAKE_COMMAND} ${EMBER_SHARED_ARGS} -DREQUIRE=${EMBER_STORIES}
                 "-DCMD=$<TARGET_FILE:ember-embed-example>|${EMBER_STORIES}|Once upon a time|16"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/run_with_shared.cmake)
set_tests_properties(example_embed PROPERTIES
  PASS_REGULAR_EXPRESSION "^Once upon a time, there was a little girl named Lily")
# Structured output: a JSON object with the schema's required keys, complete (exit code 0).
add_test(NAME example_json_output
         COMMAND ${CMAKE_COMMAND} ${EMBER_SHARED_ARGS} -DREQUIRE=${EMBER_STORIES}
                 "-DCMD=$<TARGET_FILE:ember-json-example>|${EMBER_STORIES}|{\"type\": \"object\", \"properties\": {\"name\": {\"type\": \"string\", \"maxLength\": 10}, \"age\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 9}}, \"required\": [\"name\", \"age\"]}|Once upon a time"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/run_with_shared.cmake)
set_tests_properties(example_json_output PROPERTIES
  PASS_REGULAR_EXPRESSION "^{ *\"name\" *: *\"[^\"]*\" *, *\"age\" *: *[1-9] *}")
# ember-chat prints the prompt and the greedy continuation, nothing else, on stdout.
add_test(NAME chat_stories_greedy
         COMMAND ${CMAKE_COMMAND} ${EMBER_SHARED_ARGS} -DCHAT=$<TARGET_FILE:ember-chat> -DMODEL=${EMBER_STORIES}
                 -DREFERENCE=@SHARED@/reference/stories260K-greedy.txt
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/check_chat_reference.cmake)
# The same text with speculative decoding: a Q4_0 draft model, and prompt lookup.
set(EMBER_STORIES_Q4 "@SHARED@/models/stories260K-Q4_0.gguf")
add_test(NAME chat_stories_greedy_draft
         COMMAND ${CMAKE_COMMAND} ${EMBER_SHARED_ARGS} -DCHAT=$<TARGET_FILE:ember-chat> -DMODEL=${EMBER_STORIES}
                 -DREFERENCE=@SHARED@/reference/stories260K-greedy.txt -DDRAFT=${EMBER_STORIES_Q4}
                 "-DEXTRA=--draft-max;6;-t;1"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/check_chat_reference.cmake)
add_test(NAME chat_stories_greedy_lookup
         COMMAND ${CMAKE_COMMAND} ${EMBER_SHARED_ARGS} -DCHAT=$<TARGET_FILE:ember-chat> -DMODEL=${EMBER_STORIES}
                 -DREFERENCE=@SHARED@/reference/stories260K-greedy.txt "-DEXTRA=--lookup;3;-t;1"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/check_chat_reference.cmake)
# The same text with the file read into (huge-page) memory and locked, as llama.cpp's flags.
add_test(NAME chat_stories_greedy_no_mmap
         COMMAND ${CMAKE_COMMAND} ${EMBER_SHARED_ARGS} -DCHAT=$<TARGET_FILE:ember-chat> -DMODEL=${EMBER_STORIES}
                 -DREFERENCE=@SHARED@/reference/stories260K-greedy.txt "-DEXTRA=--no-mmap;--mlock;-t;1"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/check_chat_reference.cmake)
# --draft, --draft-max, --lookup: bad values, a bad draft file, the acceptance rate on stderr.
add_test(NAME chat_speculative_flags
         COMMAND ${CMAKE_COMMAND} ${EMBER_SHARED_ARGS} -DCHAT=$<TARGET_FILE:ember-chat> -DMODEL=${EMBER_STORIES}
                 -DDRAFT=${EMBER_STORIES_Q4} -DBAD=${CMAKE_CURRENT_SOURCE_DIR}/cli/not_a_model.gguf
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/check_chat_speculative.cmake)
add_test(NAME chat_bad_model
         COMMAND ${CMAKE_COMMAND} -DCHAT=$<TARGET_FILE:ember-chat>
                 -DBAD=${CMAKE_CURRENT_SOURCE_DIR}/cli/not_a_model.gguf
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/check_chat_bad_model.cmake)
# The interactive chat on a pipe: answers, /stats, /save and /load, /exit, exit code 0.
add_test(NAME chat_repl_pipe
         COMMAND ${CMAKE_COMMAND} ${EMBER_SHARED_ARGS} -DCHAT=$<TARGET_FILE:ember-chat> -DMODEL=${EMBER_STORIES}
                 -DWORK=${CMAKE_CURRENT_BINARY_DIR}
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/check_chat_repl.cmake)
# --grammar, --json-schema, --json-object: answers match; bad grammar files are usage errors.
add_test(NAME chat_grammar
         COMMAND ${CMAKE_COMMAND} ${EMBER_SHARED_ARGS} -DCHAT=$<TARGET_FILE:ember-chat> -DMODEL=${EMBER_STORIES}
                 -DWORK=${CMAKE_CURRENT_BINARY_DIR}
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/check_chat_grammar.cmake)
# Flags: unknown flags and bad values exit 2 naming the flag; a prompt longer than -c exits 1.
add_test(NAME chat_flags
         COMMAND ${CMAKE_COMMAND} ${EMBER_SHARED_ARGS} -DCHAT=$<TARGET_FILE:ember-chat> -DMODEL=${EMBER_STORIES}
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/check_chat_flags.cmake)
# --beams: the shared beam-search reference text for every case; --samples N: N separate runs.
add_test(NAME chat_stories_beams
         COMMAND ${CMAKE_COMMAND} ${EMBER_SHARED_ARGS} -DCHAT=$<TARGET_FILE:ember-chat> -DMODEL=${EMBER_STORIES}
                 -DREFERENCE=@SHARED@/reference/stories260K-beam.txt
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/check_chat_beams.cmake)
add_test(NAME chat_stories_samples
         COMMAND ${CMAKE_COMMAND} ${EMBER_SHARED_ARGS} -DCHAT=$<TARGET_FILE:ember-chat> -DMODEL=${EMBER_STORIES}
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/check_chat_samples.cmake)
set_tests_properties(example_embed example_json_output chat_stories_greedy chat_repl_pipe chat_grammar chat_flags
                     chat_stories_greedy_draft chat_stories_greedy_lookup chat_speculative_flags
                     chat_stories_beams chat_stories_samples PROPERTIES
  SKIP_REGULAR_EXPRESSION "SKIPPED: shared data not found")
# ember-batch: the greedy reference text at every --parallel, --json, usage errors.
add_test(NAME batch_stories_greedy
         COMMAND ${CMAKE_COMMAND} ${EMBER_SHARED_ARGS} -DBATCH=$<TARGET_FILE:ember-batch> -DMODEL=${EMBER_STORIES}
                 -DREFERENCE=@SHARED@/reference/stories260K-greedy.txt
                 -DWORK=${CMAKE_CURRENT_BINARY_DIR}
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/check_batch_reference.cmake)
set_tests_properties(batch_stories_greedy PROPERTIES LABELS "e2e"
  SKIP_REGULAR_EXPRESSION "SKIPPED: shared data not found")
