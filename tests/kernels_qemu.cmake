# Runs the kernel tests on an emulated AVX2-only CPU (Haswell) with EMBER_ISA=avx2: checks that
# cpuid detection never picks AVX-512 there and that the AVX2 kernels use no newer instruction.
find_program(EMBER_QEMU_X86_64 qemu-x86_64)
# Not in sanitizer builds: ASan/TSan runtimes do not run under qemu-user.
if(EMBER_QEMU_X86_64 AND TARGET test_kernels AND NOT EMBER_SANITIZE AND NOT EMBER_TSAN)
  add_test(NAME test_kernels_qemu_haswell
           COMMAND ${EMBER_QEMU_X86_64} -cpu Haswell $<TARGET_FILE:test_kernels>)
  set_tests_properties(test_kernels_qemu_haswell PROPERTIES
    ENVIRONMENT "EMBER_ISA=avx2;EMBER_EXPECT_AVX2_ONLY=1"
    LABELS "unit;kernels;qemu"
    TIMEOUT 600)
endif()
