# The whole forward pass of one ISA against the scalar twins, on a model file: ember-perplexity
# saves the log-probabilities of MODEL computed with EMBER_ISA=scalar (--kl-divergence-base), then
# compares the run with the kernels cpuid picks (the environment's EMBER_EXPECT_ISA, when set,
# must be the one used):
# mean KL divergence at most 5e-5 and the same top token at >= 98% of positions. Measured on
# quant-ref's kq-Q4_K_M.gguf (llama-quantize's K-quants on 256-wide rows, Q6_K output): AVX2
# 3e-6 and AVX-512 1e-6, 99.7%; its Q4_K_S sibling is 4.9e-4 and 87.6% away, the F32 original
# 1.3e-3 and 75.9%, so a kernel that is wrong anywhere fails.
# EMULATOR: a '|'-separated command to run the tool under (the cross build's runner, qemu -cpu);
# BASE_NATIVE: the scalar run goes without it (an emulated x86 CPU computes the same scalar
# results, only slower).
include(${CMAKE_CURRENT_LIST_DIR}/../cli/shared_data.cmake)
ember_resolve_shared(MODEL TEXT)
string(REPLACE "|" ";" emulator "${EMULATOR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(base "${WORK_DIR}/scalar.kld")

set(ENV{EMBER_ISA} scalar)
set(base_emulator ${emulator})
if(BASE_NATIVE)
  set(base_emulator "")
endif()
execute_process(COMMAND ${base_emulator} "${TOOL}" -m "${MODEL}" -f "${TEXT}" -c 128 -t 2 --kl-divergence-base "${base}"
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT err MATCHES "kernels scalar")
  message(FATAL_ERROR "the scalar run failed (${rc}): ${out} ${err}")
endif()
unset(ENV{EMBER_ISA})
execute_process(COMMAND ${emulator} "${TOOL}" -m "${MODEL}" --kl-divergence --kl-divergence-base "${base}" -t 2
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT err MATCHES "kernels ([a-z0-9_]+)")
  message(FATAL_ERROR "the comparison failed (${rc}): ${out} ${err}")
endif()
set(isa ${CMAKE_MATCH_1})
if(DEFINED ENV{EMBER_EXPECT_ISA} AND NOT isa STREQUAL "$ENV{EMBER_EXPECT_ISA}")
  message(FATAL_ERROR "the kernels in use are ${isa}, expected $ENV{EMBER_EXPECT_ISA}")
endif()
if(NOT out MATCHES "Mean    KLD: *([0-9.]+)")
  message(FATAL_ERROR "no mean KLD in: ${out}")
endif()
set(kld ${CMAKE_MATCH_1})
if(NOT out MATCHES "Same top p: *([0-9.]+)")
  message(FATAL_ERROR "no 'Same top p' in: ${out}")
endif()
set(top ${CMAKE_MATCH_1})
message(STATUS "${isa} against scalar: mean KLD ${kld}, same top token ${top}%")
if(kld GREATER 0.00005 OR top LESS 98)
  message(FATAL_ERROR "${isa} disagrees with the scalar kernels: mean KLD ${kld}, same top token ${top}%")
endif()
