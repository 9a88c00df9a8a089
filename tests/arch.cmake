# The architecture files (stories260K as qwen2, qwen3, phi3, gemma2, gemma3) end to end:
#  - greedy text against llama.cpp's on every ISA (test_arch's hidden "[e2e]" cases);
#  - ember-chat --completion prints the same text;
#  - perplexity (context 128) within 0.5% of llama.cpp's, and Q8_0 / Q4_K_M quantizations by
#    ember-quantize within 2% / 3% of the F32 file's.
# Shared paths resolve when the tests run (tests/cli/shared_data.cmake).
if(NOT TARGET test_arch)
  return()
endif()
foreach(isa scalar avx2 avx512)
  add_test(NAME arch_greedy_${isa} COMMAND test_arch "[e2e]")
  set_tests_properties(arch_greedy_${isa} PROPERTIES ENVIRONMENT "EMBER_ISA=${isa}" LABELS "e2e;arch")
endforeach()

set(EMBER_ARCH_SHARED_ARGS -DSHARED_DEFAULT=${EMBER_SHARED_DIR})
if(EMBER_BUILD_EXAMPLES)
  add_test(NAME arch_chat_greedy
           COMMAND ${CMAKE_COMMAND} ${EMBER_ARCH_SHARED_ARGS} -DCHAT=$<TARGET_FILE:ember-chat>
                   -DMODEL_DIR=@SHARED@/models/arch -DREFERENCE=@SHARED@/reference/arch-greedy.txt
                   -DTHREADS=1 -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/check_chat_reference.cmake)
  set_tests_properties(arch_chat_greedy PROPERTIES LABELS "e2e;arch;cli"
                       SKIP_REGULAR_EXPRESSION "SKIPPED: shared data not found")
endif()

if(EMBER_BUILD_TOOLS)
  foreach(arch qwen2 qwen3 phi3 gemma2 gemma3)
    add_test(NAME arch_perplexity_${arch}
             COMMAND ${CMAKE_COMMAND} ${EMBER_ARCH_SHARED_ARGS}
                     -DPERPLEXITY=$<TARGET_FILE:ember-perplexity>
                     -DQUANTIZE=$<TARGET_FILE:ember-quantize>
                     -DMODEL=@SHARED@/models/arch/stories260K-${arch}.gguf
                     -DTEXT=@SHARED@/reference/stories.txt
                     -DREFERENCE=@SHARED@/reference/arch-perplexity.txt
                     -DWORK=${CMAKE_CURRENT_BINARY_DIR}/arch_${arch}
                     -P ${CMAKE_CURRENT_SOURCE_DIR}/tools/check_arch_perplexity.cmake)
    set_tests_properties(arch_perplexity_${arch} PROPERTIES LABELS "e2e;arch;tools"
                         SKIP_REGULAR_EXPRESSION "SKIPPED: shared data not found")
  endforeach()
endif()
