# Warning flags for ember's own targets (never propagated to users).
function(ember_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wno-unused-parameter)
endfunction()
