# Command-line errors: exit 2 with one line naming the flag; runtime errors: exit 1.
include(${CMAKE_CURRENT_LIST_DIR}/shared_data.cmake)
ember_resolve_shared(MODEL)
include(${CMAKE_CURRENT_LIST_DIR}/expect_failure.cmake)
expect_failure(2 "--bogus" -m "${MODEL}" --bogus)
expect_failure(2 "--temp" -m "${MODEL}" --temp hot)
expect_failure(2 "-n" -m "${MODEL}" -n)
expect_failure(2 "-t" -m "${MODEL}" -t 1x)
expect_failure(2 "-m" -p hello)
expect_failure(2 "--kv-type: 'f8' is not one of f32, f16, q8_0" -m "${MODEL}" -p hi --kv-type f8)
expect_failure(1 "multiple of 32" -m "${MODEL}" -p hi -n 4 --kv-type q8_0)
execute_process(COMMAND "${CHAT}" -m "${MODEL}" -p "Once upon a time" -n 24 --temp 0 --kv-type f16 --quiet
                OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out MATCHES "^Once upon a time, there was")
  message(FATAL_ERROR "--kv-type f16: exit ${rc}: '${out}'")
endif()
expect_failure(1 "does not fit in the context" -m "${MODEL}" -c 8 --completion
               -p "Once upon a time there was a very long prompt that cannot fit")
execute_process(COMMAND "${CHAT}" --help OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out MATCHES "--top-p")
  message(FATAL_ERROR "--help: exit ${rc}\n${out}")
endif()
# -t 1 and -t 2 give the same sampled text for the same seed.
foreach(t 1 2)
  execute_process(COMMAND "${CHAT}" -m "${MODEL}" -p "Once upon a time" -n 200 --temp 0.8 --seed 42 -t ${t} --quiet
                  OUTPUT_VARIABLE out_${t} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "seeded run with -t ${t} failed")
  endif()
endforeach()
if(NOT out_1 STREQUAL out_2)
  message(FATAL_ERROR "-t 1 and -t 2 differ:\n${out_1}\n---\n${out_2}")
endif()
# A stop string ends the output before it.
execute_process(COMMAND "${CHAT}" -m "${MODEL}" -p "Once upon a time" -n 100 --temp 0 --stop Lily --quiet
                OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT out STREQUAL "Once upon a time, there was a little girl named \n")
  message(FATAL_ERROR "--stop: got '${out}'")
endif()
