# Runs the kernel and K-quant tests, the greedy reference ids and (tools.cmake) the perplexity
# checks on an emulated AVX2-only CPU (Haswell: no AVX-VNNI, no AVX-512) so the AVX2 paths run on
# a CPU that has nothing newer: cpuid detection must pick avx2
# (EMBER_EXPECT_ISA, checked by test_kernels' dispatch test) and no kernel reached from there may
# use a newer instruction (qemu raises SIGILL).
find_program(EMBER_QEMU_X86_64 qemu-x86_64)
# Not in sanitizer builds: ASan/TSan runtimes do not run under qemu-user.
if(EMBER_QEMU_X86_64 AND EMBER_ARCH STREQUAL "x86_64" AND NOT EMBER_SANITIZE AND NOT EMBER_TSAN)
  # tools.cmake runs the perplexity checks under it too.
  set(EMBER_HASWELL_EMULATOR "${EMBER_QEMU_X86_64}|-cpu|Haswell")
  # The greedy reference ids end to end (the rest of test_model does not depend on kernels).
  if(TARGET test_model)
    add_test(NAME test_model_e2e_qemu_haswell COMMAND ${EMBER_QEMU_X86_64} -cpu Haswell $<TARGET_FILE:test_model> "[e2e]")
    set_tests_properties(test_model_e2e_qemu_haswell PROPERTIES
      ENVIRONMENT "EMBER_EXPECT_ISA=avx2" LABELS "unit;model;qemu" TIMEOUT 600)
  endif()
  foreach(module kernels kquants)
    if(TARGET test_${module})
      # Not the reference quantizers against quant-ref ([quantize]): baseline x86-64 code, the
      # same as the native run's, and 10x slower under qemu.
      add_test(NAME test_${module}_qemu_haswell
               COMMAND ${EMBER_QEMU_X86_64} -cpu Haswell $<TARGET_FILE:test_${module}> "~[quantize]")
      set_tests_properties(test_${module}_qemu_haswell PROPERTIES
        ENVIRONMENT "EMBER_EXPECT_ISA=avx2"
        LABELS "unit;${module};qemu"
        TIMEOUT 600)
    endif()
  endforeach()
endif()
