# ember-chat's speculative-decoding flags: --draft, --draft-max, --lookup. Bad values exit 2
# naming the flag, a draft that is not a model exits 1 naming the file, and the metrics line
# reports the acceptance rate.
include(${CMAKE_CURRENT_LIST_DIR}/shared_data.cmake)
ember_resolve_shared(MODEL DRAFT)
function(expect_failure code needle)
  execute_process(COMMAND "${CHAT}" ${ARGN} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL ${code} OR NOT err MATCHES "${needle}")
    message(FATAL_ERROR "ember-chat ${ARGN}: expected exit ${code} and '${needle}', got ${rc}: ${err}")
  endif()
endfunction()
expect_failure(2 "--draft-max" -m "${MODEL}" --draft "${DRAFT}" --draft-max 0 -p x)
expect_failure(2 "--draft-max" -m "${MODEL}" --draft "${DRAFT}" --draft-max 65 -p x)
expect_failure(2 "--draft-max" -m "${MODEL}" --draft "${DRAFT}" --draft-max many -p x)
expect_failure(2 "--lookup" -m "${MODEL}" --lookup 17 -p x)
expect_failure(2 "--lookup" -m "${MODEL}" --lookup -1 -p x)
expect_failure(2 "--draft" -m "${MODEL}" --draft "${DRAFT}" --lookup 2 -p x)
expect_failure(2 "--draft" -m "${MODEL}" --draft)
expect_failure(1 "not_a_model.gguf" -m "${MODEL}" --draft "${BAD}" -p x -t 1)

foreach(flags "--draft;${DRAFT}" "--lookup;2")
  execute_process(COMMAND "${CHAT}" -m "${MODEL}" -p "Once upon a time" -n 60 --temp 0 -t 1 ${flags}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR NOT err MATCHES "decode 60 tokens at [0-9.]+ tok/s, draft accepted [0-9]+/[0-9]+ \\([0-9.]+%\\)")
    message(FATAL_ERROR "ember-chat ${flags}: exit ${rc}, metrics line without the acceptance rate:\n${err}")
  endif()
endforeach()
# Seeded sampling with a draft gives the same text every run and at any thread count.
unset(first)
foreach(t 1 2 1)
  execute_process(COMMAND "${CHAT}" -m "${MODEL}" -p "Once upon a time" -n 80 --temp 1 --seed 7 --quiet
                          -t ${t} --draft "${DRAFT}"
                  OUTPUT_VARIABLE out RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "seeded run with --draft -t ${t}: exit ${rc}")
  elseif(NOT DEFINED first)
    set(first "${out}")
  elseif(NOT out STREQUAL first)
    message(FATAL_ERROR "seeded runs with --draft differ (-t ${t}):\n${first}\n---\n${out}")
  endif()
endforeach()
