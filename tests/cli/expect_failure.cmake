# expect_failure(CODE NEEDLE ARGS...): runs ${CHAT} ARGS and fails unless it exits with CODE and
# its stderr matches NEEDLE.
function(expect_failure code needle)
  execute_process(COMMAND "${CHAT}" ${ARGN} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL ${code} OR NOT err MATCHES "${needle}")
    message(FATAL_ERROR "ember-chat ${ARGN}: expected exit ${code} and '${needle}', got ${rc}: ${err}")
  endif()
endfunction()
