# Compile settings for ember's own targets (never propagated to users).
function(ember_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wno-unused-parameter)
endfunction()

# ember is useless unoptimised (its kernels run 10-50x slower at -O0), so its own targets are
# optimised whatever the build type of the project that includes it: a build type without an
# optimisation level of its own (none, Debug, or a custom one) gets -O2, after the build type's
# flags so that it wins; debug information is kept. Release (-O3), RelWithDebInfo (-O2) and
# MinSizeRel (-Os) keep theirs, and so do sanitizer builds (-O1). EMBER_OPTIMIZE=OFF turns this
# off (to step through ember's own code at -O0).
option(EMBER_OPTIMIZE "Optimise ember's own targets whatever the build type" ON)
function(ember_optimize target)
  if(EMBER_OPTIMIZE AND NOT EMBER_SANITIZE AND NOT EMBER_TSAN)
    target_compile_options(${target} PRIVATE
      $<$<NOT:$<CONFIG:Release,RelWithDebInfo,MinSizeRel>>:-O2>)
  endif()
endfunction()
