# Per-ISA compile flags of the kernel translation units, for the target architecture only.
# The library itself is built for the architecture's baseline (x86-64, ARMv8-A); only files named
# *_<isa>.cpp get an ISA's flags, and they hold kernel code only (docs/architecture.md).
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set(EMBER_ARCH x86_64)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64|ARM64)$")
  set(EMBER_ARCH aarch64)
else()
  set(EMBER_ARCH generic)  # scalar kernels only
endif()

set(EMBER_FLAGS_AVX2 -mavx2 -mfma -mf16c -mbmi2)
set(EMBER_FLAGS_AVX2_VNNI ${EMBER_FLAGS_AVX2} -mavxvnni)
set(EMBER_FLAGS_AVX512 ${EMBER_FLAGS_AVX2} -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx512vnni -mavx512bf16)
set(EMBER_FLAGS_AVX512_GFNI ${EMBER_FLAGS_AVX512} -mgfni)
set(EMBER_FLAGS_NEON "")
set(EMBER_FLAGS_NEON_DOTPROD -march=armv8.2-a+dotprod)
set(EMBER_FLAGS_NEON_I8MM -march=armv8.2-a+dotprod+i8mm)

# ember_isa_sources(<out-var> <dir>): the kernel TUs of <dir> for EMBER_ARCH, each given its flags.
function(ember_isa_sources out dir)
  file(GLOB scalar CONFIGURE_DEPENDS "${dir}/*_scalar.cpp")
  set(sources ${scalar})
  if(EMBER_ARCH STREQUAL "x86_64")
    set(isas AVX2 AVX2_VNNI AVX512 AVX512_GFNI)
  elseif(EMBER_ARCH STREQUAL "aarch64")
    set(isas NEON NEON_DOTPROD NEON_I8MM)
  endif()
  foreach(isa ${isas})
    string(TOLOWER ${isa} suffix)
    file(GLOB files CONFIGURE_DEPENDS "${dir}/*_${suffix}.cpp")
    if(EMBER_FLAGS_${isa})
      set_source_files_properties(${files} PROPERTIES COMPILE_OPTIONS "${EMBER_FLAGS_${isa}}")
    endif()
    list(APPEND sources ${files})
  endforeach()
  set(${out} ${sources} PARENT_SCOPE)
endfunction()
