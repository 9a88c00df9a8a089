# ember-perplexity -c 128 on an architecture file: within 0.5% of llama.cpp's value in
# REFERENCE ("<file> <ppl>" lines); then ember-quantize makes Q8_0 and Q4_K_M copies in WORK,
# which must load and stay within 2% (Q8_0) and 3% (Q4_K_M) of the F32 file's perplexity. The
# files' rows are 64 wide, so Q4_K_M's K-quants fall back as in llama.cpp (Q4_K -> Q5_0,
# Q6_K -> Q8_0, 172-wide rows -> F16): measured +2.5% (qwen2), +2.0% (phi3), -2.4% (gemma3);
# the same mixture on the llama stories260K gives +3.4%.
include(${CMAKE_CURRENT_LIST_DIR}/../cli/shared_data.cmake)
ember_resolve_shared(MODEL TEXT REFERENCE)

function(perplexity model out_var)
  execute_process(COMMAND "${PERPLEXITY}" -m "${model}" -f "${TEXT}" -c 128 -t 1
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "ember-perplexity failed on ${model} (${rc}): ${err}")
  endif()
  if(NOT out MATCHES "PPL = ([0-9]+\\.[0-9]+)")
    message(FATAL_ERROR "no 'PPL = ' line in: ${out}")
  endif()
  set(${out_var} ${CMAKE_MATCH_1} PARENT_SCOPE)
endfunction()

# |ours - theirs| <= permille / 1000 * theirs, on values with four decimals.
function(check_close label ours theirs permille)
  foreach(v ours theirs)
    if(NOT ${v} MATCHES "^([0-9]+)\\.([0-9][0-9][0-9][0-9])$")
      message(FATAL_ERROR "${label}: not a 4-decimal number: '${${v}}'")
    endif()
    math(EXPR ${v}_fixed "${CMAKE_MATCH_1} * 10000 + 1${CMAKE_MATCH_2} - 10000")
  endforeach()
  math(EXPR diff "${ours_fixed} - ${theirs_fixed}")
  if(diff LESS 0)
    math(EXPR diff "0 - ${diff}")
  endif()
  math(EXPR scaled "${diff} * 1000")
  math(EXPR limit "${theirs_fixed} * ${permille}")
  if(scaled GREATER limit)
    message(FATAL_ERROR "${label}: ${ours} vs ${theirs}: more than ${permille} per mille apart")
  endif()
  message(STATUS "${label}: ${ours} vs ${theirs}")
endfunction()

get_filename_component(name "${MODEL}" NAME)
file(STRINGS "${REFERENCE}" lines REGEX "^${name} ")
if(NOT lines MATCHES "^[^ ]+ ([0-9]+\\.[0-9]+)")
  message(FATAL_ERROR "no line for ${name} in ${REFERENCE}")
endif()
set(reference ${CMAKE_MATCH_1})

perplexity("${MODEL}" f32)
check_close("${name} F32 vs llama.cpp" ${f32} ${reference} 5)

file(MAKE_DIRECTORY "${WORK}")
foreach(type_limit Q8_0:20 Q4_K_M:30)
  string(REPLACE ":" ";" type_limit "${type_limit}")
  list(GET type_limit 0 type)
  list(GET type_limit 1 limit)
  set(out_file "${WORK}/${type}.gguf")
  execute_process(COMMAND "${QUANTIZE}" "${MODEL}" "${out_file}" ${type} --quiet
                  ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "ember-quantize ${type} failed on ${name} (${rc}): ${err}")
  endif()
  perplexity("${out_file}" q)
  check_close("${name} ${type} vs F32" ${q} ${f32} ${limit})
endforeach()
