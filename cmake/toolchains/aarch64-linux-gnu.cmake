# Cross-compiling ember for ARM64 Linux with Debian's g++-aarch64-linux-gnu.
#   cmake -S . -B DIR -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake \
#         -DEMBER_AARCH64_SYSROOT=DIR/sysroot
# EMBER_AARCH64_SYSROOT holds the arm64 .debs unpacked with dpkg-deb -x (sentencepiece, protobuf-lite,
# PCRE2: they cannot be co-installed with the amd64 packages); scripts/build-aarch64.sh makes it.
# The header-only dependencies (Eigen, xsimd, Catch2) come from the host.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

set(EMBER_AARCH64_SYSROOT "" CACHE PATH "Unpacked arm64 packages (usr/include, usr/lib/aarch64-linux-gnu)")
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES EMBER_AARCH64_SYSROOT)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu ${EMBER_AARCH64_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)  # host config files of Eigen, xsimd, Catch2

if(EMBER_AARCH64_SYSROOT)
  set(_lib "${EMBER_AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu")
  # pkg-config reads only the sysroot's .pc files and prefixes their paths with the sysroot.
  set(ENV{PKG_CONFIG_LIBDIR} "${_lib}/pkgconfig:${EMBER_AARCH64_SYSROOT}/usr/share/pkgconfig")
  set(ENV{PKG_CONFIG_SYSROOT_DIR} "${EMBER_AARCH64_SYSROOT}")
  # The unpacked libraries' own dependencies (libsentencepiece -> libprotobuf-lite) at link time.
  string(APPEND CMAKE_EXE_LINKER_FLAGS_INIT " -Wl,-rpath-link,${_lib} -Wl,-rpath-link,${EMBER_AARCH64_SYSROOT}/lib/aarch64-linux-gnu")
  string(APPEND CMAKE_SHARED_LINKER_FLAGS_INIT " -Wl,-rpath-link,${_lib}")
endif()
# xsimd is header-only but Debian ships its config under the host's multiarch folder.
file(GLOB _xsimd_dirs /usr/lib/*-linux-gnu/cmake/xsimd)
if(_xsimd_dirs AND NOT EXISTS "${xsimd_DIR}/xsimdConfig.cmake")
  list(GET _xsimd_dirs 0 _xsimd_dir)
  set(xsimd_DIR "${_xsimd_dir}" CACHE PATH "xsimd CMake config (header-only, from the host)" FORCE)
endif()
# Header-only host packages (Eigen, xsimd, Catch2) live in /usr/include: searched after the
# cross compiler's own headers, never before them.
string(APPEND CMAKE_CXX_FLAGS_INIT " -idirafter /usr/include")
