# scripts/bench_compare.sh against a stand-in llama-bench whose CSV has today's column order
# (n_prompt, n_gen, n_depth and avg_ts far from where older versions had them) and a quoted
# cpu_info holding a comma: the llama.cpp column must carry its avg_ts for "pp8 @ d4" and
# "tg4 @ d4", which it only prints when -d 4 reached it, beside ember's own figures.
include(${CMAKE_CURRENT_LIST_DIR}/../cli/shared_data.cmake)
ember_resolve_shared(MODEL)
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}/llama")
set(fake "${WORK_DIR}/llama/llama-bench")
file(WRITE "${fake}" [=[#!/bin/sh
case " $* " in *" -d 4 "*) ;; *) echo "no -d 4 in: $*" >&2; exit 1 ;; esac
echo 'build_commit,cpu_info,model_filename,n_threads,type_k,flash_attn,tensor_split,n_prompt,n_gen,n_depth,test_time,avg_ns,stddev_ns,avg_ts,stddev_ts'
echo '"abc1234","AMD EPYC 9B45, 2 cores","m.gguf","2","f16","0","0.00","8","0","4","2026-12-07T00:00:00Z","1","0","123.450000","0.000000"'
echo '"abc1234","AMD EPYC 9B45, 2 cores","m.gguf","2","f16","0","0.00","0","4","4","2026-12-07T00:00:00Z","1","0","67.890000","0.000000"'
]=])
file(CHMOD "${fake}" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
get_filename_component(bin_dir "${TOOL}" DIRECTORY)
get_filename_component(build_dir "${bin_dir}" DIRECTORY)
execute_process(COMMAND bash "${SCRIPT}" "${build_dir}" "${build_dir}" -r 1 -t 1 -p 8 -n 4 -d 4
                        --llama "${WORK_DIR}/llama" "${MODEL}"
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "bench_compare.sh failed (${rc}): ${err}\n${out}")
endif()
set(num "[0-9]+\\.[0-9][0-9]")
foreach(row "pp8 @ d4 \\| ${num} \\| ${num} \\| ${num}x \\| 123\\.45 \\| ${num}x \\|"
            "tg4 @ d4 \\| ${num} \\| ${num} \\| ${num}x \\| 67\\.89 \\| ${num}x \\|")
  if(NOT out MATCHES "\\| stories260K\\.gguf \\| ${row}")
    message(FATAL_ERROR "no row matching '${row}':\n${out}")
  endif()
endforeach()
if(out MATCHES "\\| 0\\.00 \\|")
  message(FATAL_ERROR "a side without figures:\n${out}")
endif()
