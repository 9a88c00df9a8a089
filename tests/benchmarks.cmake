# Benchmarks with a check of their own: run it (no timing) so their prototypes stay correct.
if(TARGET bench_attention)
  # Every key/value layout bench_attention times (and its transposed-keys prototype) gives the
  # library kernel's outputs.
  add_test(NAME bench_attention_check COMMAND bench_attention --check)
  set_tests_properties(bench_attention_check PROPERTIES LABELS "benchmarks" PASS_REGULAR_EXPRESSION "Q8_0: the layouts agree")
endif()
