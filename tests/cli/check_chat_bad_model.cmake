# A bad model file: one line on stderr naming the file, exit code 1, no crash.
execute_process(COMMAND "${CHAT}" -m "${BAD}" -p "x" -n 1 --temp 0
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "expected exit code 1, got '${rc}'; stderr: ${err}")
endif()
string(REGEX MATCHALL "\n" newlines "${err}")
list(LENGTH newlines n_lines)
if(NOT n_lines EQUAL 1 OR NOT err MATCHES "not_a_model.gguf")
  message(FATAL_ERROR "expected one stderr line naming the file, got: ${err}")
endif()
