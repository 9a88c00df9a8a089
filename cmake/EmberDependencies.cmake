# Third-party dependencies, all from Debian 12 packages.
find_package(Threads REQUIRED)
find_package(Eigen3 3.4 REQUIRED NO_MODULE)
find_package(xsimd REQUIRED)
# Header-only; used inside the library only (JSON Schema, chat templates). See docs/grammars.md.
find_package(nlohmann_json 3.11 REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(EMBER_SENTENCEPIECE REQUIRED IMPORTED_TARGET sentencepiece)
pkg_check_modules(EMBER_PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)

# Debian's xsimd target names an `xtl` library it does not ship (xsimd 8 is header-only):
# give it an empty interface target so the link line stays valid.
if(NOT TARGET xtl)
  add_library(xtl INTERFACE IMPORTED GLOBAL)
endif()
