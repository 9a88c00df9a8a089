# ember-perplexity's KL-divergence mode on stories260K (context 128): save the F32 run's
# log-probabilities (--kl-divergence-base), compare F32 with itself (KLD ~0, same top token 100%)
# and Q8_0 / Q4_0 with it (small, then larger KLD), and reject a damaged or mismatched base file.
include(${CMAKE_CURRENT_LIST_DIR}/../cli/shared_data.cmake)
ember_resolve_shared(F32 Q8 Q4 TEXT)
set(base "${WORK_DIR}/stories260K-f32.kld")
file(MAKE_DIRECTORY "${WORK_DIR}")

execute_process(COMMAND "${TOOL}" -m "${F32}" -f "${TEXT}" -c 128 -t 2 --kl-divergence-base "${base}"
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out MATCHES "PPL = 3\\.98")
  message(FATAL_ERROR "saving the base failed (${rc}): ${out} ${err}")
endif()
file(SIZE "${base}" size)
# "_logits_" + 3 words + 640 tokens + 5 chunks x 63 rows x (512 + 4) u16
if(NOT size EQUAL 327660)
  message(FATAL_ERROR "base file has ${size} bytes, expected 327660")
endif()

# Runs the comparison for MODEL; sets KLD (mean, as "0.001234") and TOP (same top p, percent).
function(compare model)
  execute_process(COMMAND "${TOOL}" -m "${model}" --kl-divergence --kl-divergence-base "${base}" -t 2
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "--kl-divergence failed on ${model} (${rc}): ${err}")
  endif()
  foreach(line "Mean PPL\\(Q\\)/PPL\\(base\\) *: *[0-9.]+" "Mean    KLD: *([0-9.]+)" "Same top p: *([0-9.]+)"
               "Median  KLD" "RMS Δp" "Maximum Δp")
    if(NOT out MATCHES "${line}")
      message(FATAL_ERROR "no '${line}' in the report for ${model}: ${out}")
    endif()
  endforeach()
  string(REGEX MATCH "Mean    KLD: *([0-9.]+)" _ "${out}")
  set(KLD ${CMAKE_MATCH_1} PARENT_SCOPE)
  string(REGEX MATCH "Same top p: *([0-9.]+)" _ "${out}")
  set(TOP ${CMAKE_MATCH_1} PARENT_SCOPE)
  string(REGEX MATCH "Mean PPL\\(Q\\)/PPL\\(base\\) *: *([0-9.]+)" _ "${out}")
  set(RATIO ${CMAKE_MATCH_1} PARENT_SCOPE)
  message(STATUS "${model}: KLD ${CMAKE_MATCH_1} ...")
endfunction()

# The same model: only the 16-bit storage of the base's log-probabilities differs.
compare("${F32}")
if(KLD GREATER 0.0001 OR NOT TOP STREQUAL "100.000" OR RATIO LESS 0.9999 OR RATIO GREATER 1.0001)
  message(FATAL_ERROR "F32 against its own base: KLD ${KLD}, same top ${TOP}%, PPL ratio ${RATIO}")
endif()
# Q8_0: llama.cpp's Q8_0 against this base gives KLD 0.00073, same top 97.5%.
compare("${Q8}")
set(kld_q8 ${KLD})
if(NOT KLD GREATER 0.0001 OR KLD GREATER 0.005 OR TOP LESS 90)
  message(FATAL_ERROR "Q8_0: KLD ${KLD}, same top ${TOP}%")
endif()
# Q4_0 (llama.cpp's mixture): clearly further away than Q8_0.
compare("${Q4}")
if(NOT KLD GREATER ${kld_q8} OR KLD GREATER 0.3 OR TOP LESS 70)
  message(FATAL_ERROR "Q4_0: KLD ${KLD} (Q8_0 ${kld_q8}), same top ${TOP}%")
endif()

# A truncated base, a base of another context (-c), and -f with --kl-divergence are errors.
set(cut "${WORK_DIR}/cut.kld")
execute_process(COMMAND head -c 4000 "${base}" OUTPUT_FILE "${cut}")
foreach(case "${cut}|holds 4000 bytes" "${base}|-c 64|made with context 128")
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts 0 file)
  list(LENGTH parts n)
  math(EXPR last "${n} - 1")
  list(GET parts ${last} expect)
  set(extra)
  if(n EQUAL 3)
    list(GET parts 1 flag)
    separate_arguments(extra UNIX_COMMAND "${flag}")
  endif()
  execute_process(COMMAND "${TOOL}" -m "${F32}" --kl-divergence --kl-divergence-base "${file}" ${extra}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 1 OR NOT err MATCHES "${expect}")
    message(FATAL_ERROR "expected exit 1 and '${expect}', got ${rc}: ${err}")
  endif()
endforeach()
execute_process(COMMAND "${TOOL}" -m "${F32}" --kl-divergence --kl-divergence-base "${base}" -f "${TEXT}"
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 2 OR NOT err MATCHES "not -f")
  message(FATAL_ERROR "--kl-divergence with -f: expected exit 2 (a bad command line), got ${rc}: ${err}")
endif()
